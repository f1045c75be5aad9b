//! Programs the runtime starts for the user get the user's file-creation mask back (the
//! runtime's own is private, see `troupe_messages::file_mask`).

use troupe_messages::file_mask::user_mask;

/// Makes `command` start with the user's mask, when the runtime replaced it.
pub fn restore_user_mask(command: &mut tokio::process::Command) {
    if let Some(mask) = user_mask() {
        // SAFETY: `umask` is async-signal-safe and touches no memory of the parent.
        unsafe {
            command.pre_exec(move || {
                libc::umask(mask as libc::mode_t);
                Ok(())
            });
        }
    }
}
