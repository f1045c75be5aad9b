//! The file-creation mask of the user, kept aside: the `troupe` binary creates its own files
//! with a private mask (its home's files 0600, directories 0700, whatever the home's own
//! mode), and every program it starts for the user (commands, hooks, MCP servers, the notify
//! program) and every file it writes into the user's work tree (`apply_patch`) gets the
//! user's mask back. Unset (`None`) when the process never changed its mask.

use std::sync::atomic::{AtomicU32, Ordering};

const UNSET: u32 = u32::MAX;
static USER_MASK: AtomicU32 = AtomicU32::new(UNSET);

/// Records the mask the process started with (called once, where the mask is changed).
pub fn set_user_mask(mask: u32) {
    USER_MASK.store(mask & 0o777, Ordering::SeqCst);
}

/// The user's mask, when the process replaced it with a private one.
pub fn user_mask() -> Option<u32> {
    match USER_MASK.load(Ordering::SeqCst) {
        UNSET => None,
        mask => Some(mask),
    }
}

/// The environment variable that carries the user's mask (octal) to the spawn trampoline,
/// which applies it and removes the variable before it execs the command.
pub const TRAMPOLINE_MASK_VAR: &str = "TROUPE_SPAWN_USER_UMASK";
