//! Zygotes of the `linux` backend: one long-lived helper per permission profile that has
//! built the sandbox once and clones a child per command (see `helper/zygote.rs` for the
//! process side). The pool keeps a few per backend actor — so per turn — keyed by profile.
//!
//! A zygote never runs a command under a view that no longer matches the policy: before each
//! spawn it re-checks the identity of every watched path (writable roots, `.git`, deny-read
//! paths) and answers `Stale` when one changed, and the pool starts a fresh zygote.

mod client;

use client::ZygoteClient;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::OnceCell;
use troupe_messages::tools::{ExecOutputSink, ExecRequest, ExecResult};
use troupe_sandbox::process::OutputCapture;
use troupe_sandbox::zygote_wire as wire;
use wire::Reply;

use crate::locking::lock;
use troupe_sandbox::helper::HelperSpec;

/// Idle zygotes kept beyond this many are stopped (profiles vary with the working
/// directory and escalations).
const MAX_IDLE: usize = 4;
/// How long stopping waits for killed commands to be reported ended.
const STOP_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

type Slot = Arc<OnceCell<Arc<ZygoteClient>>>;

/// The zygotes of one backend actor.
pub struct ZygotePool {
    helper_exe: PathBuf,
    slots: Mutex<Vec<(String, Slot, Instant)>>,
}

/// How a request went through a zygote.
pub enum ZygoteRun {
    Done(ExecResult),
    /// The zygote's view is out of date; nothing ran.
    Stale,
}

impl ZygotePool {
    pub fn new(helper_exe: PathBuf) -> Self {
        Self {
            helper_exe,
            slots: Mutex::new(Vec::new()),
        }
    }

    /// Whether `request` fits in one control message (else the one-shot helper runs it).
    pub fn fits(request: &ExecRequest) -> bool {
        let size: usize = request.argv.iter().map(|a| a.len() + 4).sum::<usize>()
            + request
                .env
                .iter()
                .map(|(k, v)| k.len() + v.len() + 8)
                .sum::<usize>()
            + request.cwd.as_os_str().len();
        size < wire::MAX_MESSAGE / 2
    }

    /// Runs `request` under `spec` in a zygote (started on first use).
    pub async fn run(
        &self,
        spec: &HelperSpec,
        request: &ExecRequest,
        output: Option<&ExecOutputSink>,
    ) -> Result<ZygoteRun, String> {
        let client = self.client(spec).await.map_err(|setup| {
            format!("the sandbox could not be set up, so the command did not run: {setup}")
        })?;
        let outcome = run_in(&client, request, output).await;
        if matches!(outcome, Ok(ZygoteRun::Stale)) || !client.is_alive() {
            self.retire(&client);
        }
        outcome
    }

    async fn client(&self, spec: &HelperSpec) -> Result<Arc<ZygoteClient>, String> {
        let key = serde_json::to_string(&(spec.backend, &spec.profile))
            .map_err(|e| format!("encoding the sandbox spec: {e}"))?;
        let slot = {
            let mut slots = lock(&self.slots);
            let found = slots.iter_mut().find(|(k, _, _)| *k == key);
            match found {
                // A zygote that died (killed from outside) is replaced, not reused.
                Some((_, slot, used)) if slot.get().is_none_or(|c| c.is_alive()) => {
                    *used = Instant::now();
                    slot.clone()
                }
                Some((_, slot, used)) => {
                    *slot = Slot::default();
                    *used = Instant::now();
                    slot.clone()
                }
                None => {
                    let slot = Slot::default();
                    slots.push((key, slot.clone(), Instant::now()));
                    evict_idle(&mut slots);
                    slot
                }
            }
        };
        let exe = &self.helper_exe;
        slot.get_or_try_init(|| async { ZygoteClient::start(exe, spec).await.map(Arc::new) })
            .await
            .cloned()
    }

    fn retire(&self, client: &Arc<ZygoteClient>) {
        lock(&self.slots)
            .retain(|(_, slot, _)| !slot.get().is_some_and(|c| Arc::ptr_eq(c, client)));
    }

    fn clients(&self) -> Vec<Arc<ZygoteClient>> {
        lock(&self.slots)
            .iter()
            .filter_map(|(_, slot, _)| slot.get().cloned())
            .collect()
    }

    /// SIGKILLs every command of every zygote.
    pub fn kill_all(&self) {
        for client in self.clients() {
            client.kill_all();
        }
    }

    /// Kills every command, waits (briefly) until each is reported ended, then stops the
    /// zygotes — whatever is left dies with their PID namespaces.
    pub async fn shutdown(&self) {
        let clients = self.clients();
        for client in &clients {
            client.kill_all();
        }
        let deadline = tokio::time::Instant::now() + STOP_PATIENCE;
        while clients.iter().any(|c| c.is_alive() && c.running() > 0)
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        lock(&self.slots).clear();
    }
}

/// Stops the least recently used idle zygotes beyond [`MAX_IDLE`].
fn evict_idle(slots: &mut Vec<(String, Slot, Instant)>) {
    let idle = |slot: &Slot| slot.get().is_some_and(|c| c.running() == 0);
    while slots.iter().filter(|(_, s, _)| idle(s)).count() > MAX_IDLE {
        let Some(oldest) = slots
            .iter()
            .enumerate()
            .filter(|(_, (_, s, _))| idle(s))
            .min_by_key(|(_, (_, _, used))| *used)
            .map(|(i, _)| i)
        else {
            break;
        };
        slots.remove(oldest);
    }
}

async fn run_in(
    client: &ZygoteClient,
    request: &ExecRequest,
    output: Option<&ExecOutputSink>,
) -> Result<ZygoteRun, String> {
    let started = Instant::now();
    let (stdout_read, stdout_write) = pipe()?;
    let (stderr_read, stderr_write) = pipe()?;
    let (command, ended) = client.spawn(request, stdout_write, stderr_write).await?;
    let capture = OutputCapture::start(
        Some(receiver(stdout_read)?),
        Some(receiver(stderr_read)?),
        request.max_output_bytes,
        output,
    );
    let gone = || "the sandbox helper ended while the command ran".to_string();
    let mut ended = ended;
    let (reply, timed_out) = match tokio::time::timeout(request.timeout, &mut ended).await {
        Ok(reply) => (reply.map_err(|_| gone())?, false),
        Err(_) => {
            command.kill();
            (ended.await.map_err(|_| gone())?, true)
        }
    };
    command.ended();
    let code = match reply {
        Reply::Exited { code, .. } => code,
        Reply::Stale { .. } => return Ok(ZygoteRun::Stale),
        Reply::SpawnFailed { message, .. } => {
            return Err(format!(
                "the sandbox could not start the command, so it did not run: {message}"
            ))
        }
        Reply::Ready | Reply::SetupFailed { .. } => return Err(gone()),
    };
    let exit_code = if timed_out { None } else { Some(code) };
    Ok(ZygoteRun::Done(
        capture.finish(exit_code, timed_out, started).await,
    ))
}

/// A pipe: the read end non-blocking for tokio, the write end blocking for the command.
fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)
        .map_err(|e| format!("creating an output pipe: {e}"))?;
    nix::fcntl::fcntl(
        read.as_raw_fd(),
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
    )
    .map_err(|e| format!("output pipe: {e}"))?;
    Ok((read, write))
}

fn receiver(fd: OwnedFd) -> Result<tokio::net::unix::pipe::Receiver, String> {
    tokio::net::unix::pipe::Receiver::from_owned_fd(fd).map_err(|e| format!("output pipe: {e}"))
}
