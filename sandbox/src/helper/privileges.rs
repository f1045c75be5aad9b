//! Dropping privileges before exec: no_new_privs, every capability (effective, permitted,
//! inheritable, ambient, bounding) and the securebits that stop uid 0 regaining them on exec.

use caps::{CapSet, Capability};

/// SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP(_LOCKED) | SECBIT_KEEP_CAPS_LOCKED
/// | SECBIT_NO_CAP_AMBIENT_RAISE(_LOCKED). The `caps` crate has no securebits call.
const SECURE_BITS: libc::c_ulong = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80;

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// Sets `no_new_privs`: setuid bits and file capabilities no longer raise privileges.
pub fn set_no_new_privs() -> Result<(), String> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc != 0 {
        return Err(format!("setting no_new_privs: {}", errno()));
    }
    Ok(())
}

/// Drops every capability for good. Without CAP_SETPCAP (an unprivileged user outside a user
/// namespace) there is nothing to drop but the sets, which are already empty.
///
/// The bounding set is emptied of every capability the `caps` crate knows; one added to the
/// kernel after it could stay there, but it can never be gained back: the permitted and
/// inheritable sets are empty, ambient raising is locked and `no_new_privs` ignores file
/// capabilities.
pub fn drop_all_capabilities() -> Result<(), String> {
    let has_setpcap =
        caps::has_cap(None, CapSet::Effective, Capability::CAP_SETPCAP).unwrap_or(false);
    if has_setpcap {
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0) } != 0 {
            return Err(format!("setting securebits: {}", errno()));
        }
        caps::clear(None, CapSet::Bounding)
            .map_err(|e| format!("dropping the bounding set: {e}"))?;
    }
    // Kernels without ambient capabilities have nothing to clear; the error is not a failure.
    let _ = caps::clear(None, CapSet::Ambient);
    for set in [CapSet::Inheritable, CapSet::Effective, CapSet::Permitted] {
        caps::clear(None, set).map_err(|e| format!("dropping capabilities: {e}"))?;
    }
    Ok(())
}

/// Marks every descriptor above stderr close-on-exec, so nothing inherited (a directory fd,
/// a socket) reaches the command.
pub fn close_inherited_fds() -> Result<(), String> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range with plain integers.
    let rc = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if rc != 0 {
        return Err(format!("closing inherited descriptors: {}", errno()));
    }
    Ok(())
}
