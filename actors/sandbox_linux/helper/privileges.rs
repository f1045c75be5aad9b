//! Dropping privileges before exec: no_new_privs, every capability (effective, permitted,
//! inheritable, ambient, bounding) and the securebits that stop uid 0 regaining them on exec.

/// `_LINUX_CAPABILITY_VERSION_3`.
const CAP_VERSION_3: u32 = 0x2008_0522;
/// `CAP_SETPCAP` (linux/capability.h).
const CAP_SETPCAP: libc::c_ulong = 8;
/// SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP(_LOCKED) | SECBIT_KEEP_CAPS_LOCKED
/// | SECBIT_NO_CAP_AMBIENT_RAISE(_LOCKED).
const SECURE_BITS: libc::c_ulong = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

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

/// Whether this process holds CAP_SETPCAP (needed to shrink the bounding set).
fn has_setpcap() -> bool {
    // SAFETY: PR_CAPBSET_READ only reads.
    let in_bounding = unsafe { libc::prctl(libc::PR_CAPBSET_READ, CAP_SETPCAP, 0, 0, 0) };
    let header = CapHeader {
        version: CAP_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: header and a two-element data array as capget(2) requires.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &header, data.as_mut_ptr()) };
    in_bounding == 1 && rc == 0 && data[0].effective & (1 << CAP_SETPCAP) != 0
}

/// Drops every capability for good. Without CAP_SETPCAP (an unprivileged user outside a user
/// namespace) there is nothing to drop but the sets, which are already empty.
pub fn drop_all_capabilities() -> Result<(), String> {
    if has_setpcap() {
        // SAFETY: prctl with integer arguments only.
        if unsafe { libc::prctl(libc::PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0) } != 0 {
            return Err(format!("setting securebits: {}", errno()));
        }
        for cap in 0..=63 {
            // SAFETY: as above; EINVAL past the last capability ends the loop.
            if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
                break;
            }
        }
    }
    // SAFETY: prctl with integer arguments only.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    let header = CapHeader {
        version: CAP_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: header and a two-element data array as capset(2) requires.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) };
    if rc != 0 {
        return Err(format!("dropping capabilities: {}", errno()));
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
