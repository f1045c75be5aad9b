//! The zygote: a helper that builds the sandbox of one profile once — namespaces, the mount
//! view, the seccomp programs, the Landlock ruleset — and then, for each command the runtime
//! sends, clones a child into a fresh PID namespace that applies its copy of the prepared
//! layers and execs. Spawning a confined command then costs a clone and an exec instead of
//! an exec of the helper plus a namespace and mount setup.
//!
//! It stays single-threaded (children are plain clones of it) and lives as long as the
//! runtime keeps the control socket open; when it goes, its PID namespace and with it every
//! command it started are killed by the kernel.
#![allow(
    clippy::print_stderr,
    reason = "a sandbox helper reports its own failures on the stderr it shares with the command"
)]

use super::{Confinement, Failure, HelperBackend, HelperSpec, Plan};
use crate::zygote_wire::{self as wire, Reply, Request, CONTROL_FD};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{CString, OsString};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Runs the zygote; returns the process's exit code.
pub(super) fn run(args: &[OsString]) -> i32 {
    // SAFETY: the runtime put the control socket on this descriptor for us alone.
    let control = unsafe { OwnedFd::from_raw_fd(CONTROL_FD) };
    let _ = nix::fcntl::fcntl(
        control.as_raw_fd(),
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
    );
    // Nothing else the runtime's process happened to leave open stays open here.
    // SAFETY: close_range with plain integers; descriptors 0-3 are kept.
    unsafe { libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32) };
    match setup(args) {
        Ok(prepared) => {
            let mut zygote = Zygote {
                control,
                prepared,
                running: HashMap::new(),
                buffer: wire::buffer(),
            };
            if send(&zygote.control, &Reply::Ready, &[]).is_err() {
                return 1;
            }
            zygote.serve()
        }
        // The namespace parent: the zygote (its child) has ended.
        Err(Failure::Exit(code)) => code,
        Err(Failure::Setup(message)) => {
            let _ = send(&control, &Reply::SetupFailed { message }, &[]);
            super::SETUP_FAILED_EXIT
        }
    }
}

fn setup(args: &[OsString]) -> Result<Prepared, Failure> {
    let spec = args.first().ok_or_else(|| {
        Failure::Setup("usage: troupe-sandbox --troupe-sandbox-zygote SPEC".into())
    })?;
    let spec: HelperSpec = serde_json::from_slice(spec.as_bytes())
        .map_err(|e| Failure::Setup(format!("bad sandbox spec: {e}")))?;
    if spec.backend != HelperBackend::Linux {
        return Err(Failure::Setup(
            "the zygote serves the linux backend only".into(),
        ));
    }
    let plan = Plan::from_spec(&spec)?;
    if plan.proxy.is_some() {
        return Err(Failure::Setup(
            "the network proxy runs through the one-shot helper, not a zygote".into(),
        ));
    }
    let mut host_sockets = plan.enter_linux_view()?;
    let masked_sockets = match host_sockets.as_mut() {
        Some(table) => table.sockets_to_mask()?,
        None => Default::default(),
    };
    let confinement =
        Confinement::prepare(&plan.writable, &[], &[], plan.network_on, None, false, &[])?
            .hiding(plan.hidden_outside_writable_roots());
    let mut blocked = SigSet::empty();
    blocked.add(Signal::SIGCHLD);
    blocked
        .thread_block()
        .map_err(|e| Failure::Setup(format!("blocking SIGCHLD: {e}")))?;
    let exits = SignalFd::with_flags(&blocked, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(|e| Failure::Setup(format!("signalfd: {e}")))?;
    let mut watched: Vec<PathBuf> = plan.file_system.deny_read.clone();
    for root in &plan.file_system.writable_roots {
        watched.push(root.root.clone());
        watched.extend(root.read_only_subpaths.iter().cloned());
    }
    watched.extend(masked_sockets.iter().cloned());
    let fingerprint = fingerprint(&watched);
    Ok(Prepared {
        confinement: Some(confinement),
        exits,
        watched,
        fingerprint,
        host_sockets,
        masked_sockets,
    })
}

/// What a watched path looks like: gone, or which inode on which device in which mount.
/// The mount matters: every watched path that exists is a mount of the view (a bind or a
/// mask), and when the host deletes the path the kernel detaches that mount here — the path
/// then resolves to the parent's mount, even if a new file reuses the inode number.
type Identity = Option<(u64, u64, u64)>;

fn fingerprint(paths: &[PathBuf]) -> Vec<Identity> {
    paths.iter().map(|p| identity(p)).collect()
}

fn identity(path: &std::path::Path) -> Identity {
    let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statx writes into `buf`, a properly sized and aligned struct we own.
    let mut buf: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c_path.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            libc::STATX_BASIC_STATS | libc::STATX_MNT_ID,
            &mut buf,
        )
    };
    if rc != 0 {
        return None;
    }
    let dev = (u64::from(buf.stx_dev_major) << 32) | u64::from(buf.stx_dev_minor);
    Some((dev, buf.stx_ino, buf.stx_mnt_id))
}

/// The sandbox as built once, before any command.
struct Prepared {
    /// `Some` in the zygote; each child takes its own copy.
    confinement: Option<Confinement>,
    exits: SignalFd,
    /// Writable roots, protected subpaths and deny-read paths, as the view was built.
    watched: Vec<PathBuf>,
    fingerprint: Vec<Identity>,
    /// With the network off: the host's socket table, re-read before each spawn, and the
    /// sockets masked when the view was built (a new one makes the view stale).
    host_sockets: Option<super::sockets::HostSockets>,
    masked_sockets: std::collections::BTreeSet<PathBuf>,
}

impl Prepared {
    /// Whether the view no longer matches the host: a watched path changed, or a Unix
    /// socket was bound on the host since (or the table cannot be read: fail closed).
    fn is_stale(&mut self) -> bool {
        if fingerprint(&self.watched) != self.fingerprint {
            return true;
        }
        match self
            .host_sockets
            .as_mut()
            .map(super::sockets::HostSockets::sockets_to_mask)
        {
            None => false,
            Some(Ok(now)) => !now.is_subset(&self.masked_sockets),
            Some(Err(_)) => true,
        }
    }
}

struct Zygote {
    control: OwnedFd,
    prepared: Prepared,
    /// PID (in the zygote's namespace) → request id.
    running: HashMap<i32, u64>,
    /// Where requests are received.
    buffer: Vec<u8>,
}

impl Zygote {
    fn serve(&mut self) -> i32 {
        loop {
            let (control_ready, exits_ready) = {
                let mut fds = [
                    PollFd::new(self.control.as_fd(), PollFlags::POLLIN),
                    PollFd::new(self.prepared.exits.as_fd(), PollFlags::POLLIN),
                ];
                match poll(&mut fds, PollTimeout::NONE) {
                    Ok(_) => {}
                    Err(nix::errno::Errno::EINTR) => continue,
                    Err(_) => return self.stop(1),
                }
                let ready = |fd: &PollFd| fd.revents().is_some_and(|r| !r.is_empty());
                (ready(&fds[0]), ready(&fds[1]))
            };
            if exits_ready {
                while let Ok(Some(_)) = self.prepared.exits.read_signal() {}
                if self.reap().is_err() {
                    return self.stop(1);
                }
            }
            if control_ready {
                match wire::recv::<Request>(self.control.as_fd(), &mut self.buffer) {
                    // The runtime is gone (or closed us): nothing may outlive it.
                    Ok(None) => return self.stop(0),
                    Ok(Some((request, fds))) => {
                        if self.handle(request, fds).is_err() {
                            return self.stop(1);
                        }
                    }
                    Err(wire::WireError::Io(nix::errno::Errno::EINTR)) => {}
                    // A message we cannot read means a broken channel: stop cleanly.
                    Err(_) => return self.stop(1),
                }
            }
        }
    }

    fn stop(&mut self, code: i32) -> i32 {
        self.kill_all();
        code
    }

    fn handle(&mut self, request: Request, fds: Vec<OwnedFd>) -> Result<(), wire::WireError> {
        match request {
            Request::Spawn { id, argv, env, cwd } => {
                if self.prepared.is_stale() {
                    return send(&self.control, &Reply::Stale { id }, &[]);
                }
                let reply = match self.spawn(&argv, &env, &cwd, fds) {
                    Ok(pid) => {
                        self.running.insert(pid, id);
                        return Ok(());
                    }
                    Err(message) => Reply::SpawnFailed { id, message },
                };
                send(&self.control, &reply, &[])
            }
            Request::Kill { id } => {
                for (pid, running_id) in &self.running {
                    if *running_id == id {
                        kill(*pid);
                    }
                }
                Ok(())
            }
            Request::KillAll => {
                self.kill_all();
                Ok(())
            }
        }
    }

    fn kill_all(&self) {
        for pid in self.running.keys() {
            kill(*pid);
        }
    }

    /// Reports every ended command. Other PIDs (orphans of ended commands, reparented to us
    /// as PID 1) are reaped silently.
    fn reap(&mut self) -> Result<(), wire::WireError> {
        loop {
            let (pid, code) = match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(pid, code)) => (pid, code),
                Ok(WaitStatus::Signaled(pid, signal, _)) => (pid, 128 + signal as i32),
                Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::ECHILD) => return Ok(()),
                Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => return Ok(()),
            };
            if let Some(id) = self.running.remove(&pid.as_raw()) {
                send(&self.control, &Reply::Exited { id, code }, &[])?;
            }
        }
    }

    /// Clones the command's process into a new PID namespace (so it and everything it starts
    /// die together) and a copy of the mount namespace (for its own /proc), and returns its
    /// PID; the child never returns.
    fn spawn(
        &mut self,
        argv: &[String],
        env: &BTreeMap<String, String>,
        cwd: &std::path::Path,
        fds: Vec<OwnedFd>,
    ) -> Result<i32, String> {
        let [stdout, stderr]: [OwnedFd; 2] = fds
            .try_into()
            .map_err(|_| "a spawn request must carry stdout and stderr".to_string())?;
        let command = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| "the command contains a NUL byte".to_string())?;
        if command.is_empty() {
            return Err("empty command".into());
        }
        let flags = (libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::SIGCHLD) as libc::c_long;
        // SAFETY: a fork-like clone (no CLONE_VM, no new stack) of a single-threaded process:
        // the child owns a private copy of everything and only runs `child` before exec.
        let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
        if pid < 0 {
            return Err(format!("clone: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            let confinement = self.prepared.confinement.take();
            let code = child(confinement, &stdout, &stderr, env, cwd, &command);
            // SAFETY: _exit ends the child without running the zygote's destructors.
            unsafe { libc::_exit(code) };
        }
        Ok(pid as i32)
    }
}

/// In the cloned child: stdio, session, environment, then every layer and exec.
fn child(
    confinement: Option<Confinement>,
    stdout: &OwnedFd,
    stderr: &OwnedFd,
    env: &BTreeMap<String, String>,
    cwd: &std::path::Path,
    command: &[CString],
) -> i32 {
    // The mask survives exec: undo the zygote's blocked SIGCHLD.
    let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
    // SAFETY: plain descriptor syscalls on descriptors this process owns.
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
        if null < 0
            || libc::dup2(null, 0) < 0
            || libc::dup2(stdout.as_raw_fd(), 1) < 0
            || libc::dup2(stderr.as_raw_fd(), 2) < 0
        {
            return super::SETUP_FAILED_EXIT;
        }
        // Its own group in the zygote's session (the runtime's), without the terminal: a
        // session per command would weigh each like the whole runtime where the scheduler
        // groups by session (see `containment.rs`). The PID namespace already kills
        // everything the command starts along with it.
        if let Err(err) = crate::containment::Containment::Group.enter() {
            eprintln!("{} leaving the terminal: {err}", super::SETUP_FAILED_PREFIX);
            return super::SETUP_FAILED_EXIT;
        }
    }
    // A /proc of the command's own PID namespace (tools compare /proc/self with getpid()),
    // in a copy of the zygote's mount namespace so the zygote's view stays as built.
    if let Err(message) = super::mounts::fresh_proc() {
        eprintln!("{} {message}", super::SETUP_FAILED_PREFIX);
        return super::SETUP_FAILED_EXIT;
    }
    for (key, _) in std::env::vars_os() {
        std::env::remove_var(key);
    }
    for (key, value) in env {
        if !key.is_empty() && !key.contains('=') && !key.contains('\0') && !value.contains('\0') {
            std::env::set_var(key, value);
        }
    }
    let Some(confinement) = confinement else {
        eprintln!(
            "{} the zygote has no prepared confinement",
            super::SETUP_FAILED_PREFIX
        );
        return super::SETUP_FAILED_EXIT;
    };
    match confinement.exec(cwd, command) {
        Ok(never) => match never {},
        Err(Failure::Setup(message)) => {
            eprintln!("{} {message}", super::SETUP_FAILED_PREFIX);
            super::SETUP_FAILED_EXIT
        }
        Err(Failure::Exit(code)) => code,
    }
}

fn kill(pid: i32) {
    let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
}

fn send(control: &OwnedFd, reply: &Reply, fds: &[i32]) -> Result<(), wire::WireError> {
    let bytes = wire::encode(reply)?;
    loop {
        match wire::send(control.as_fd(), &bytes, fds) {
            Err(wire::WireError::Io(nix::errno::Errno::EINTR)) => continue,
            other => return other,
        }
    }
}
