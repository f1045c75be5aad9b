//! No confined command shares a terminal session with the user: with the user's terminal as
//! its controlling tty, a command could push keystrokes into it (`TIOCSTI`, still honoured
//! where `dev.tty.legacy_tiocsti=1`) or read what is typed there.
//!
//! Whoever starts the helper decides: a helper that leads its own session was given one on
//! purpose (the runtime's process spawner calls `setsid`; a PTY session's child leads the
//! session of its own pty), so the command stays in it. Any other helper (`troupe sandbox`
//! from a shell) moves the command into a new session without a controlling terminal.
//! Seccomp refusing `TIOCSTI` and `TIOCLINUX` (`seccomp.rs`) is the second layer.

use nix::unistd::{getpid, getsid, setsid};

/// Whether this process leads its session (so its controlling terminal, if any, is its own).
pub(super) fn leads_own_session() -> bool {
    getsid(None).is_ok_and(|sid| sid == getpid())
}

/// Starts a new session unless this process already leads one. `Err(EPERM)` means this
/// process leads a process group and must fork first.
pub(super) fn detach(leads_session: bool) -> nix::Result<()> {
    if leads_session {
        return Ok(());
    }
    setsid().map(|_| ())
}
