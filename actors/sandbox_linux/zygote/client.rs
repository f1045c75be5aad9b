//! The runtime's end of one zygote: starts the process, waits until its sandbox is built,
//! sends spawn/kill requests and routes each command's exit back to its waiter.

use crate::locking::lock;
use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::oneshot;
use tokio_util::task::AbortOnDropHandle;
use troupe_sandbox::helper::HelperSpec;
use troupe_sandbox::zygote_wire::{self as wire, Reply, Request, CONTROL_FD, ZYGOTE_ARG};

/// How long a zygote may take to build its sandbox.
const SETUP_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

type Waiters = Arc<Mutex<HashMap<u64, oneshot::Sender<Reply>>>>;

/// A running zygote. Dropping it kills it, and with it every command it started.
pub struct ZygoteClient {
    socket: Arc<AsyncFd<OwnedFd>>,
    waiters: Waiters,
    next_id: AtomicU64,
    /// Commands started and not yet reported ended.
    running: Arc<AtomicUsize>,
    alive: Arc<AtomicBool>,
    _reader: AbortOnDropHandle<()>,
    _process: tokio::process::Child,
}

impl ZygoteClient {
    /// Starts a zygote for `spec` (its `cwd` is ignored: each command brings its own) and
    /// waits until it is ready. An error is the zygote's own account of why the sandbox
    /// could not be built.
    pub async fn start(helper_exe: &Path, spec: &HelperSpec) -> Result<Self, String> {
        let spec_json =
            serde_json::to_string(spec).map_err(|e| format!("encoding the sandbox spec: {e}"))?;
        let (host, zygote_end) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|e| format!("creating the sandbox control socket: {e}"))?;
        let zygote_fd = zygote_end.as_raw_fd();
        let mut command = tokio::process::Command::new(helper_exe);
        command
            .arg(ZYGOTE_ARG)
            .arg(spec_json)
            .current_dir("/")
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // Not in the terminal's foreground group: Ctrl-C is the runtime's to handle.
            .process_group(0)
            .kill_on_drop(true);
        // The commands the zygote forks get the user's file-creation mask.
        let mask = troupe_messages::file_mask::user_mask();
        // SAFETY: only async-signal-safe calls (umask/dup2/fcntl) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if let Some(mask) = mask {
                    libc::umask(mask as libc::mode_t);
                }
                place_control_fd(zygote_fd)
            });
        }
        let process = command.spawn().map_err(|e| {
            format!(
                "cannot start the sandbox helper {}: {e}",
                helper_exe.display()
            )
        })?;
        drop(zygote_end);
        nix::fcntl::fcntl(
            host.as_raw_fd(),
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .map_err(|e| format!("sandbox control socket: {e}"))?;
        // SAFETY: the AsyncFd owns the OwnedFd, which stays open and unchanged until it drops.
        let socket = unsafe { AsyncFd::register(host) }
            .map_err(|e| format!("sandbox control socket: {e}"))?;
        let socket = Arc::new(socket);
        let mut buffer = wire::buffer();
        match tokio::time::timeout(SETUP_PATIENCE, receive(&socket, &mut buffer)).await {
            Ok(Ok(Some(Reply::Ready))) => {}
            Ok(Ok(Some(Reply::SetupFailed { message }))) => return Err(message),
            Ok(Ok(Some(other))) => return Err(format!("the sandbox helper said {other:?} first")),
            Ok(Ok(None)) => {
                return Err("the sandbox helper exited while building the sandbox".into())
            }
            Ok(Err(err)) => return Err(err.to_string()),
            Err(_) => return Err("the sandbox helper did not finish building the sandbox".into()),
        }
        let waiters: Waiters = Arc::default();
        let alive = Arc::new(AtomicBool::new(true));
        let reader = AbortOnDropHandle::new(tokio::spawn(route_replies(
            socket.clone(),
            waiters.clone(),
            alive.clone(),
        )));
        Ok(Self {
            socket,
            waiters,
            next_id: AtomicU64::new(1),
            running: Arc::new(AtomicUsize::new(0)),
            alive,
            _reader: reader,
            _process: process,
        })
    }

    /// Whether the zygote still answers (its socket is open).
    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Acquire)
    }

    /// Commands started and not yet ended.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::Acquire)
    }

    /// Asks for `argv` to run with `stdout`/`stderr` as its output; the receiver gets the
    /// end (`Exited`, or `Stale`/`SpawnFailed` when nothing ran). The returned guard kills
    /// the command if dropped before it ended.
    pub async fn spawn(
        &self,
        request: &troupe_messages::tools::ExecRequest,
        stdout: OwnedFd,
        stderr: OwnedFd,
    ) -> Result<(RunningCommand<'_>, oneshot::Receiver<Reply>), String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let bytes = wire::encode(&Request::Spawn {
            id,
            argv: request.argv.clone(),
            env: request.env.clone(),
            cwd: request.cwd.clone(),
        })
        .map_err(|e| e.to_string())?;
        let (tx, rx) = oneshot::channel();
        lock(&self.waiters).insert(id, tx);
        self.running.fetch_add(1, Ordering::AcqRel);
        let guard = RunningCommand {
            client: self,
            id,
            ended: false,
        };
        let fds = [stdout.as_raw_fd(), stderr.as_raw_fd()];
        self.socket
            .async_io(Interest::WRITABLE, |socket| {
                wire::send(socket.as_fd(), &bytes, &fds).map_err(into_io)
            })
            .await
            .map_err(|e| format!("sending to the sandbox helper: {e}"))?;
        // The zygote holds its own copies now; ours must close so EOF comes when it ends.
        drop((stdout, stderr));
        Ok((guard, rx))
    }

    /// SIGKILLs every command of this zygote (best effort: a dead zygote took them along).
    pub fn kill_all(&self) {
        self.request(&Request::KillAll);
    }

    fn request(&self, request: &Request) {
        if let Ok(bytes) = wire::encode(request) {
            let _ = wire::send(self.socket.get_ref().as_fd(), &bytes, &[]);
        }
    }
}

/// One command in flight; killed if dropped before it ended.
pub struct RunningCommand<'a> {
    client: &'a ZygoteClient,
    id: u64,
    ended: bool,
}

impl RunningCommand<'_> {
    pub fn kill(&self) {
        self.client.request(&Request::Kill { id: self.id });
    }

    /// The zygote reported the end (or that nothing ran).
    pub fn ended(mut self) {
        self.ended = true;
    }
}

impl Drop for RunningCommand<'_> {
    fn drop(&mut self) {
        if !self.ended {
            self.kill();
            lock(&self.client.waiters).remove(&self.id);
        }
        self.client.running.fetch_sub(1, Ordering::AcqRel);
    }
}

/// In the forked child: the control socket onto [`CONTROL_FD`], without close-on-exec.
fn place_control_fd(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: dup2/fcntl are async-signal-safe and touch only descriptors.
    let rc = unsafe {
        if fd == CONTROL_FD {
            libc::fcntl(fd, libc::F_SETFD, 0)
        } else {
            libc::dup2(fd, CONTROL_FD)
        }
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

async fn receive(
    socket: &AsyncFd<OwnedFd>,
    buffer: &mut [u8],
) -> Result<Option<Reply>, wire::WireError> {
    let received = socket
        .async_io(Interest::READABLE, |socket| {
            wire::recv::<Reply>(socket.as_fd(), buffer).map_err(into_io)
        })
        .await;
    match received {
        Ok(message) => Ok(message.map(|(reply, _fds)| reply)),
        Err(err) => Err(wire::WireError::Io(nix::errno::Errno::from_raw(
            err.raw_os_error().unwrap_or(libc::EIO),
        ))),
    }
}

/// Delivers each reply to whoever waits for its id; when the zygote goes, every waiter
/// learns it (its sender is dropped).
async fn route_replies(socket: Arc<AsyncFd<OwnedFd>>, waiters: Waiters, alive: Arc<AtomicBool>) {
    let mut buffer = wire::buffer();
    while let Ok(Some(reply)) = receive(&socket, &mut buffer).await {
        let id = match &reply {
            Reply::Stale { id } | Reply::SpawnFailed { id, .. } | Reply::Exited { id, .. } => *id,
            Reply::Ready | Reply::SetupFailed { .. } => continue,
        };
        if let Some(waiter) = lock(&waiters).remove(&id) {
            let _ = waiter.send(reply);
        }
    }
    alive.store(false, Ordering::Release);
    lock(&waiters).clear();
}

/// `EAGAIN` must reach tokio as `WouldBlock` so it waits for readiness.
fn into_io(err: wire::WireError) -> std::io::Error {
    match err {
        wire::WireError::Io(errno) => std::io::Error::from_raw_os_error(errno as i32),
        other => std::io::Error::other(other.to_string()),
    }
}
