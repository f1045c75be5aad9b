//! The supervising trampoline: an unconfined command's whole process tree dies with troupe.
//!
//! `PR_SET_PDEATHSIG` reaches only the process that set it: when troupe is killed outright,
//! `bash -lc 'sleep 3; echo x'` loses its shell but the `sleep` the shell forked lives on.
//! A confined command needs nothing more (its PID namespace dies with the sandbox helper), an
//! unconfined one has no such boundary, so this small process stands between troupe and the
//! command:
//! - it is a *child subreaper*, so whatever the command starts — a double fork, a `setsid`
//!   daemon, a `nohup` job — stays its descendant whichever group or session it moves to;
//! - its parent-death signal is a catchable one: when troupe dies it kills every descendant
//!   (freezing each subtree first, so nothing forks away meanwhile) and exits;
//! - it blocks every other signal (a signal sent to the command's group is the command's), so
//!   it lives exactly as long as the command, and exits with the command's status (re-raising
//!   the signal that killed it), which is what troupe waits for;
//! - once the command has exited, what it left running gets the same grace troupe's reader
//!   gives late output: it is killed at once if nothing of it holds the command's output, else
//!   when it lets go of it or after [`DRAIN_GRACE`]. Background processes therefore never
//!   outlive the call that started them, as the runtime already promised for the command's
//!   group.
//!
//! The command itself also gets `PR_SET_PDEATHSIG(SIGKILL)` tied to this process, so killing
//! the supervisor alone (SIGKILL cannot be blocked) takes the command along.
#![allow(
    clippy::print_stderr,
    reason = "a sandbox helper reports its own failures on the stderr it shares with the command"
)]

use crate::containment::Containment;
use crate::descendants::{kill_all_descendants, snapshot, subtree};
use std::ffi::{CString, OsString};
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

/// First argument that turns the helper binary into the supervisor:
/// `SUPERVISE_ARG PARENT_PID session|group|keep -- PATH ARGV0 ARGS...` (as
/// [`crate::spawn_trampoline::SPAWN_ARG`], plus `keep`: leave the session and group as the
/// spawner made them, for a command in a pseudo-terminal of its own).
pub const SUPERVISE_ARG: &str = "--troupe-sandbox-supervise";

/// How long descendants still holding the command's output may run after it exited.
pub const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// How often the exited command's leftovers are looked at while they hold its output.
const DRAIN_POLL: Duration = Duration::from_millis(10);

/// What the supervisor does to its own session and group before it starts the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Contain(Containment),
    /// The spawner already placed it (a pseudo-terminal's session, a pipe session's group).
    Keep,
}

impl Placement {
    pub fn as_arg(self) -> &'static str {
        match self {
            Placement::Contain(containment) => containment.as_arg(),
            Placement::Keep => "keep",
        }
    }

    pub fn from_arg(arg: &str) -> Option<Self> {
        match arg {
            "keep" => Some(Placement::Keep),
            other => Containment::from_arg(other).map(Placement::Contain),
        }
    }
}

/// The argv that runs `argv` (whose program is already resolved to `resolved`) under the
/// supervisor, when this process can start one; `None` leaves the command as it was.
pub fn supervised_argv(
    placement: Placement,
    resolved: &std::path::Path,
    argv: &[String],
) -> Option<Vec<String>> {
    let trampoline = crate::probe::trampoline_exe()?.to_str()?;
    let resolved = resolved.to_str()?;
    let mut wrapped = vec![
        trampoline.to_string(),
        SUPERVISE_ARG.to_string(),
        std::process::id().to_string(),
        placement.as_arg().to_string(),
        "--".to_string(),
        resolved.to_string(),
    ];
    wrapped.extend(argv.iter().cloned());
    Some(wrapped)
}

/// How long a supervisor [`stop`] left standing has to reap the command and exit before it
/// is killed with its group.
const STOP_PATIENCE: Duration = Duration::from_secs(1);

/// Stops the supervised command whose supervisor is `supervisor` (a child of this process):
/// kills everything below the supervisor (frozen first, so nothing forks away), so the
/// supervisor reaps the command and exits the way it ended (by SIGKILL). Killing the
/// supervisor along with them would orphan the command's corpse to this process, a
/// subreaper that waits only for the children it spawned: a zombie until troupe exits. If
/// the supervisor is still there after [`STOP_PATIENCE`] (the command stopped it, say), its
/// group is killed outright.
pub fn stop(supervisor: i32) {
    crate::descendants::kill_below(supervisor);
    let spawned = std::thread::Builder::new()
        .name("troupe-stop".into())
        .spawn(move || {
            let deadline = Instant::now() + STOP_PATIENCE;
            while still_ours(supervisor) {
                if Instant::now() >= deadline {
                    crate::process::kill_group(supervisor);
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
    if spawned.is_err() {
        crate::process::kill_group(supervisor);
    }
}

/// Whether `pid` is still a live (not yet exited) child of this process.
fn still_ours(pid: i32) -> bool {
    crate::descendants::read_stat(pid)
        .and_then(|line| crate::descendants::parse_stat(&line))
        .is_some_and(|stat| stat.ppid == std::process::id() as i32 && stat.state != 'Z')
}

/// The signal troupe's death sends the supervisor: real-time, so no shell job control or
/// terminal sends it by accident, and anyone else sending it is ignored (the parent is
/// checked).
fn death_signal() -> libc::c_int {
    libc::SIGRTMIN()
}

/// The supervisor. Returns its exit code when it cannot re-raise the command's signal.
pub fn run(args: &[OsString]) -> i32 {
    let parsed = crate::spawn_trampoline::parse_with(args, Placement::from_arg, || {
        format!(
            "usage: troupe-sandbox {SUPERVISE_ARG} PARENT_PID session|group|keep -- PATH ARGV0 \
             [ARGS...]"
        )
    });
    let (parent, placement, path, argv) = match parsed {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("troupe: {message}");
            return 2;
        }
    };
    crate::spawn_trampoline::apply_user_mask();
    // SAFETY: plain syscalls on this single-threaded process; the sets live on the stack.
    let old_mask = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, &mut old);
        if libc::prctl(libc::PR_SET_PDEATHSIG, death_signal(), 0, 0, 0) != 0
            || libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0
        {
            eprintln!("troupe: supervising: {}", std::io::Error::last_os_error());
            return 126;
        }
        // Troupe died before the line above: the signal will never come.
        if libc::getppid() != parent {
            return crate::spawn_trampoline::PARENT_GONE_EXIT;
        }
        if let Placement::Contain(containment) = placement {
            if let Err(err) = containment.enter() {
                eprintln!("troupe: entering its own {}: {err}", containment.as_arg());
                return 126;
            }
        }
        old
    };
    let outputs = output_identities();
    // SAFETY: this process is single-threaded, so the child may run anything before exec.
    let command = unsafe { libc::fork() };
    if command < 0 {
        eprintln!("troupe: fork: {}", std::io::Error::last_os_error());
        return 126;
    }
    if command == 0 {
        exec_command(&old_mask, &path, &argv);
    }
    release_standard_streams();
    supervise(parent, command, &outputs)
}

/// The child half: back to the mask the command should have, tied to the supervisor, exec.
fn exec_command(old_mask: &libc::sigset_t, path: &CString, argv: &[CString]) -> ! {
    let supervisor = unsafe { libc::getppid() };
    // SAFETY: plain syscalls before exec.
    unsafe {
        libc::sigprocmask(libc::SIG_SETMASK, old_mask, std::ptr::null_mut());
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        if libc::getppid() != supervisor {
            libc::_exit(crate::spawn_trampoline::PARENT_GONE_EXIT);
        }
    }
    let code = crate::spawn_trampoline::exec(path, argv);
    // SAFETY: leaving the forked child without running the parent's exit handlers.
    unsafe { libc::_exit(code) }
}

/// The (device, inode) of what the command writes to: a descendant holding one of them after
/// the command exited still has output on its way.
fn output_identities() -> Vec<(u64, u64)> {
    [1, 2]
        .iter()
        .filter_map(|fd| std::fs::metadata(format!("/proc/self/fd/{fd}")).ok())
        .map(|meta| (meta.dev(), meta.ino()))
        .collect()
}

/// The supervisor's own copies of the command's streams go, so they close when the command's
/// tree lets go of them, not when the supervisor exits.
fn release_standard_streams() {
    let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    else {
        return;
    };
    use std::os::fd::AsRawFd;
    for fd in 0..3 {
        // SAFETY: replacing our own standard descriptors with /dev/null.
        unsafe { libc::dup2(null.as_raw_fd(), fd) };
    }
}

/// Waits for the command, keeping its tree tied to troupe; never returns once the command's
/// status is known (it is re-raised or exited with).
fn supervise(parent: libc::pid_t, command: libc::pid_t, outputs: &[(u64, u64)]) -> i32 {
    let mut status: Option<libc::c_int> = None;
    let mut drain_until: Option<Instant> = None;
    loop {
        // SAFETY: a plain syscall.
        if unsafe { libc::getppid() } != parent {
            kill_all_descendants();
            reap_all();
            return crate::spawn_trampoline::PARENT_GONE_EXIT;
        }
        let children_left = reap(command, &mut status);
        if let Some(code) = status {
            if !children_left {
                return exit_like(code);
            }
            let until = *drain_until.get_or_insert_with(|| Instant::now() + DRAIN_GRACE);
            if Instant::now() >= until || !holds_output(outputs) {
                kill_all_descendants();
                reap_all();
                return exit_like(code);
            }
        }
        let wait = if status.is_some() {
            DRAIN_POLL
        } else {
            Duration::from_secs(1)
        };
        wait_for_signal(wait);
    }
}

/// Reaps every exited child, noting the command's status; whether any child is left.
fn reap(command: libc::pid_t, status: &mut Option<libc::c_int>) -> bool {
    loop {
        let mut raw = 0;
        // SAFETY: a plain syscall writing to a local.
        let pid = unsafe { libc::waitpid(-1, &mut raw, libc::WNOHANG) };
        if pid == command {
            *status = Some(raw);
        } else if pid == 0 {
            return true;
        } else if pid < 0 {
            return false;
        }
    }
}

/// Reaps until no child is left (after everything was killed).
fn reap_all() {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let mut raw = 0;
        // SAFETY: a plain syscall writing to a local.
        let pid = unsafe { libc::waitpid(-1, &mut raw, libc::WNOHANG) };
        if pid < 0 {
            return;
        }
        if pid == 0 {
            if Instant::now() >= deadline {
                return;
            }
            // A straggler re-parented to us after the kill: kill it too.
            kill_all_descendants();
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// Whether a descendant of ours still holds the command's stdout or stderr.
fn holds_output(outputs: &[(u64, u64)]) -> bool {
    let me = std::process::id() as i32;
    let tree = subtree(&snapshot(), &[me]);
    tree.iter().filter(|pid| **pid != me).any(|pid| {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return false;
        };
        fds.flatten().any(|fd| {
            std::fs::metadata(fd.path())
                .is_ok_and(|meta| outputs.contains(&(meta.dev(), meta.ino())))
        })
    })
}

/// Sleeps until a signal is pending (a child exited, troupe died) or `timeout` passed; every
/// signal is blocked, so this is where they are taken, and each is otherwise ignored.
fn wait_for_signal(timeout: Duration) {
    let spec = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
    };
    // SAFETY: the set and timespec live on the stack for the call.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigtimedwait(&all, std::ptr::null_mut(), &spec);
    }
}

/// Ends this process the way the command ended: its exit code, or its signal re-raised (with
/// no core file of ours).
fn exit_like(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        return libc::WEXITSTATUS(status);
    }
    let signal = libc::WTERMSIG(status);
    // SAFETY: plain syscalls; the process ends here.
    unsafe {
        let no_core = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &no_core);
        libc::signal(signal, libc::SIG_DFL);
        let mut only: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut only);
        libc::sigaddset(&mut only, signal);
        libc::sigprocmask(libc::SIG_UNBLOCK, &only, std::ptr::null_mut());
        libc::kill(libc::getpid(), signal);
    }
    128 + signal
}

#[cfg(test)]
#[path = "supervisor_tests.rs"]
mod tests;
