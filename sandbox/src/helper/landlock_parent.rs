//! The landlock backend's parent: without a PID namespace nothing takes the command's tree
//! down when troupe dies, so the helper stays as the command's parent and does it itself.
//!
//! The helper's parent-death signal (SIGKILL, set by troupe before exec) is swapped for a
//! blocked real-time signal before the fork, so when troupe dies the helper wakes, kills every
//! process in the command's session (seccomp keeps anything from leaving it) and exits. Once
//! the command exits on its own, the same sweep ends what it left running.

use super::Failure;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::time::Duration;

/// How often the helper looks at its parent while nothing else wakes it (a signal from
/// someone other than troupe's death is not trusted: the parent is checked).
const PARENT_CHECK: Duration = Duration::from_secs(1);

/// The signal mask the command must get back before it execs.
pub(super) struct SavedMask(libc::sigset_t);

/// Ties the helper to troupe with a catchable parent-death signal. Call before the fork,
/// while single-threaded. `Err` when troupe is already gone.
pub(super) fn tie_to_troupe() -> Result<(Pid, SavedMask), Failure> {
    let troupe = nix::unistd::getppid();
    // SAFETY: plain syscalls on this single-threaded process; the sets live on the stack.
    unsafe {
        let mut wake: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut wake);
        libc::sigaddset(&mut wake, libc::SIGRTMIN());
        libc::sigaddset(&mut wake, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &wake, &mut old);
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGRTMIN(), 0, 0, 0) != 0 {
            return Err(Failure::Setup(format!(
                "pdeathsig: {}",
                std::io::Error::last_os_error()
            )));
        }
        // Troupe died while the old signal was still the one set: it never comes now.
        if nix::unistd::getppid() != troupe {
            return Err(Failure::Exit(crate::spawn_trampoline::PARENT_GONE_EXIT));
        }
        Ok((troupe, SavedMask(old)))
    }
}

/// The command's half: the mask it inherited back, and tied to the helper.
pub(super) fn untie_child(mask: &SavedMask) -> Result<(), Failure> {
    // SAFETY: a plain syscall restoring a mask saved by `tie_to_troupe`.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, &mask.0, std::ptr::null_mut()) };
    nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)
        .map_err(|e| Failure::Setup(format!("pdeathsig: {e}")))
}

/// Waits for `child`, kills what is left in `session` and returns the child's end; if
/// troupe dies first, kills the session at once and ends as a helper whose parent is gone.
pub(super) fn relay_exit(troupe: Pid, child: Pid, session: Pid) -> Failure {
    let end = loop {
        match waitpid(child, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => break Failure::Exit(code),
            Ok(WaitStatus::Signaled(_, signal, _)) => break Failure::Exit(128 + signal as i32),
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => break Failure::Setup(format!("waiting for the sandbox: {e}")),
        }
        if nix::unistd::getppid() != troupe {
            crate::session_kill::kill_session(session.as_raw());
            let _ = waitpid(child, None);
            break Failure::Exit(crate::spawn_trampoline::PARENT_GONE_EXIT);
        }
        wait_for_wake(PARENT_CHECK);
    };
    crate::session_kill::kill_session(session.as_raw());
    end
}

/// Sleeps until a blocked SIGRTMIN or SIGCHLD is pending, or `limit` passes.
fn wait_for_wake(limit: Duration) {
    // SAFETY: plain syscalls with stack values.
    unsafe {
        let mut wake: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut wake);
        libc::sigaddset(&mut wake, libc::SIGRTMIN());
        libc::sigaddset(&mut wake, libc::SIGCHLD);
        let timeout = libc::timespec {
            tv_sec: limit.as_secs() as libc::time_t,
            tv_nsec: limit.subsec_nanos() as libc::c_long,
        };
        libc::sigtimedwait(&wake, std::ptr::null_mut(), &timeout);
    }
}
