//! Runs one process in its own process group and captures its output, bounded.
//!
//! Used by every backend once the confinement is set up; the `none` backend calls it as is.
//! Each process gets `PR_SET_PDEATHSIG(SIGKILL)`, so it dies with troupe even when troupe is
//! killed outright; the kernel sends that signal when the *thread* that forked it exits, so
//! every spawn happens on one thread that lives as long as the process ([`spawner`]), never
//! on a tokio blocking thread that may leave after a few idle seconds. The signal is set by
//! the spawn trampoline where one is available (`spawn_trampoline.rs`), so the runtime itself
//! never forks.

pub use crate::containment::Containment;
use crate::descendants::{self, OrphanFilter, RUN_MARKER_VAR};
use crate::head_tail::HeadTailBuffer;
use crate::live_output::{LiveOutput, StreamCoalescer, STREAMED_OUTPUT_PER_COMMAND};
use crate::locking::lock;
use std::collections::HashSet;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};
use troupe_messages::events::ExecOutputStream;
use troupe_messages::file_mask::{user_mask, TRAMPOLINE_MASK_VAR};
use troupe_messages::tools::{ExecOutputSink, ExecRequest, ExecResult};

/// How long to keep reading after the main process exited, for pipes held by grandchildren.
const DRAIN_AFTER_EXIT: std::time::Duration = std::time::Duration::from_millis(500);

/// The process groups of one backend (one turn): those running, so they can be killed from
/// outside (interrupt), and every one it started plus its run marker, so the orphans its
/// commands leave behind can be found at the end ([`sweep_orphans`]).
#[derive(Clone)]
pub struct LiveGroups {
    inner: Arc<GroupsInner>,
}

struct GroupsInner {
    containment: Containment,
    running: Mutex<HashSet<i32>>,
    started: Mutex<HashSet<i32>>,
    /// The running groups led by a supervisor (`supervisor.rs`), stopped through it.
    supervised: Mutex<HashSet<i32>>,
    marker: String,
    /// Woken each time the last running group is removed ([`reap`] waits on it).
    emptied: tokio::sync::Notify,
}

impl Default for LiveGroups {
    fn default() -> Self {
        Self::new(Containment::default())
    }
}

impl LiveGroups {
    /// The groups of a backend whose commands are started with `containment`.
    pub fn new(containment: Containment) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let marker = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        Self {
            inner: Arc::new(GroupsInner {
                containment,
                running: Mutex::default(),
                started: Mutex::default(),
                supervised: Mutex::default(),
                marker,
                emptied: tokio::sync::Notify::new(),
            }),
        }
    }

    /// How this backend's commands are started and killed.
    pub fn containment(&self) -> Containment {
        self.inner.containment
    }

    /// The value of `TROUPE_RUN_ID` this backend's commands get.
    pub fn marker(&self) -> &str {
        &self.inner.marker
    }

    /// Whether no process group is running.
    pub fn is_empty(&self) -> bool {
        lock(&self.inner.running).is_empty()
    }

    fn insert(&self, pgid: i32, supervised: bool) {
        lock(&self.inner.running).insert(pgid);
        lock(&self.inner.started).insert(pgid);
        if supervised {
            lock(&self.inner.supervised).insert(pgid);
        }
    }

    /// Kills the running commands `pids`: a supervised one through its supervisor, so the
    /// supervisor reaps it ([`crate::supervisor::stop`]), any other with what it started
    /// ([`Containment::kill`]).
    fn kill(&self, pids: &[i32]) {
        let supervised = lock(&self.inner.supervised).clone();
        let (stopped, killed): (Vec<i32>, Vec<i32>) =
            pids.iter().partition(|pid| supervised.contains(pid));
        for pid in stopped {
            crate::supervisor::stop(pid);
        }
        self.containment().kill(&killed);
    }

    fn remove(&self, pgid: i32) {
        lock(&self.inner.supervised).remove(&pgid);
        let mut running = lock(&self.inner.running);
        running.remove(&pgid);
        if running.is_empty() {
            self.inner.emptied.notify_waiters();
        }
    }
}

/// Kills a whole process group with SIGKILL; a group already gone is fine.
pub fn kill_group(pgid: i32) {
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// Kills every running command of `live`, with what it started that is still in its group,
/// process tree or session ([`Containment::kill`]).
pub fn kill_all(live: &LiveGroups) {
    let groups: Vec<i32> = lock(&live.inner.running).iter().copied().collect();
    live.kill(&groups);
}

/// Waits (briefly) until every killed process has been reaped, so "stopped" means "gone".
pub async fn reap(live: &LiveGroups) {
    let deadline = tokio::time::Instant::now() + REAP_PATIENCE;
    loop {
        // Registered before the check, so a removal between the two is not missed.
        let emptied = live.inner.emptied.notified();
        tokio::pin!(emptied);
        emptied.as_mut().enable();
        if live.is_empty() {
            return;
        }
        tokio::select! {
            () = emptied => {}
            () = tokio::time::sleep_until(deadline) => return,
        }
    }
}

/// How long stopping waits for killed processes to be reaped.
const REAP_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Kills what the backend's commands left behind: orphans re-parented to this process (a
/// `setsid` daemon, a double fork) and their descendants. Runs on a blocking thread.
pub async fn sweep_orphans(live: &LiveGroups) -> usize {
    let live = live.clone();
    tokio::task::spawn_blocking(move || {
        let groups = lock(&live.inner.started).clone();
        let running = lock(&live.inner.running).clone();
        descendants::sweep_orphans(&OrphanFilter {
            marker: &live.inner.marker,
            groups: &groups,
            groups_lead_sessions: live.containment().sessions_identify_commands(),
            running: &running,
        })
    })
    .await
    .unwrap_or(0)
}

/// Starts `request`, waits for it (or its timeout), and returns what it printed; `output`
/// (when given) gets the output while it runs.
pub async fn run_process(
    request: &ExecRequest,
    live: &LiveGroups,
    output: Option<&ExecOutputSink>,
) -> Result<ExecResult, String> {
    let (program, args) = request
        .argv
        .split_first()
        .ok_or_else(|| "empty command".to_string())?;
    let started = Instant::now();
    let (mut command, supervised) = contained_command(program, args, request, live.containment())?;
    command
        .current_dir(&request.cwd)
        .env_clear()
        .envs(&request.env)
        .env(RUN_MARKER_VAR, live.marker())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let (Some(mask), Some(_)) = (user_mask(), crate::probe::trampoline_exe()) {
        // The trampoline applies the user's mask and drops the variable before it execs.
        command.env(TRAMPOLINE_MASK_VAR, format!("{mask:o}"));
    }
    let mut child = spawner::spawn(command).await.map_err(|err| {
        format!(
            "failed to start `{program}` in {}: {err}",
            request.cwd.display()
        )
    })?;
    let pgid = child.id().map(|id| id as i32);
    if let Some(pgid) = pgid {
        live.insert(pgid, supervised);
    }
    let _unregister = GroupGuard {
        pgid,
        live: live.clone(),
    };

    let capture = OutputCapture::start(
        child.stdout.take(),
        child.stderr.take(),
        request.max_output_bytes,
        output,
    );

    let (status, timed_out) = match tokio::time::timeout(request.timeout, child.wait()).await {
        Ok(status) => (
            status.map_err(|err| format!("waiting for `{program}`: {err}"))?,
            false,
        ),
        Err(_) => {
            if let Some(pgid) = pgid {
                live.kill(&[pgid]);
            }
            let status = child
                .wait()
                .await
                .map_err(|err| format!("waiting for `{program}`: {err}"))?;
            (status, true)
        }
    };
    let exit_code = if timed_out { None } else { status.code() };
    let result = capture.finish(exit_code, timed_out, started).await;
    if let Some(pgid) = pgid {
        // Background children that still hold the pipes do not outlive the call.
        kill_group(pgid);
    }
    Ok(result)
}

/// The command for `program args`: through the spawn trampoline when one is available (see
/// `spawn_trampoline.rs` for why), else forked here with the same two settings; and whether
/// it runs under the supervisor.
fn contained_command(
    program: &str,
    args: &[String],
    request: &ExecRequest,
    containment: Containment,
) -> Result<(Command, bool), String> {
    let Some(trampoline) = crate::probe::trampoline_exe() else {
        let mut command = Command::new(program);
        contain(&mut command, containment);
        spawner::die_with_runtime(&mut command);
        command.args(args);
        return Ok((command, false));
    };
    let path_var = request.env.get("PATH").map(std::ffi::OsStr::new);
    let resolved = crate::spawn_trampoline::resolve_program(
        std::ffi::OsStr::new(program),
        &request.cwd,
        path_var,
    )
    .ok_or_else(|| {
        format!(
            "failed to start `{program}` in {}: {}",
            request.cwd.display(),
            std::io::Error::from(std::io::ErrorKind::NotFound)
        )
    })?;
    // An unconfined command's tree has no namespace to die with: it runs under the
    // supervisor (`supervisor.rs`). A confined one's helper takes its sandbox down itself.
    let entry = match containment {
        Containment::Group => crate::supervisor::SUPERVISE_ARG,
        Containment::Session => crate::spawn_trampoline::SPAWN_ARG,
    };
    let mut command = Command::new(trampoline);
    command
        .arg(entry)
        .arg(std::process::id().to_string())
        .arg(containment.as_arg())
        .arg("--")
        .arg(resolved)
        .arg(program)
        .args(args);
    Ok((command, containment == Containment::Group))
}

/// The forked process enters `containment` (its own session, or its own group without the
/// controlling terminal) before it execs.
fn contain(command: &mut Command, containment: Containment) {
    let mask = user_mask();
    // SAFETY: `Containment::enter` and `umask` are async-signal-safe and touch no memory of
    // the parent.
    unsafe {
        command.pre_exec(move || {
            if let Some(mask) = mask {
                libc::umask(mask as libc::mode_t);
            }
            containment.enter()
        });
    }
}

/// Readers of one process's stdout and stderr: each kept bounded on its own, plus both
/// interleaved in arrival order.
pub struct OutputCapture {
    aggregated: Arc<Mutex<HeadTailBuffer>>,
    stdout: Option<tokio::task::JoinHandle<HeadTailBuffer>>,
    stderr: Option<tokio::task::JoinHandle<HeadTailBuffer>>,
}

impl OutputCapture {
    /// Starts reading both pipes (either may be absent), streaming to `output` if given.
    pub fn start<Out, Err>(
        stdout: Option<Out>,
        stderr: Option<Err>,
        max_bytes: usize,
        output: Option<&ExecOutputSink>,
    ) -> Self
    where
        Out: AsyncRead + Unpin + Send + 'static,
        Err: AsyncRead + Unpin + Send + 'static,
    {
        let aggregated = Arc::new(Mutex::new(HeadTailBuffer::new(max_bytes)));
        let live = output.map(|sink| LiveOutput::new(sink.clone(), STREAMED_OUTPUT_PER_COMMAND));
        let coalescer = |stream| live.as_ref().map(|live| live.stream(stream));
        let stdout = stdout.map(|pipe| {
            let live = coalescer(ExecOutputStream::Stdout);
            tokio::spawn(read_stream(pipe, max_bytes, aggregated.clone(), live))
        });
        let stderr = stderr.map(|pipe| {
            let live = coalescer(ExecOutputStream::Stderr);
            tokio::spawn(read_stream(pipe, max_bytes, aggregated.clone(), live))
        });
        Self {
            aggregated,
            stdout,
            stderr,
        }
    }

    /// Once the process has exited: reads what is left (briefly, for pipes still held by
    /// grandchildren) and builds the result.
    pub async fn finish(
        self,
        exit_code: Option<i32>,
        timed_out: bool,
        started: Instant,
    ) -> ExecResult {
        let deadline = tokio::time::Instant::now() + DRAIN_AFTER_EXIT;
        let stdout = collect(self.stdout, deadline).await;
        let stderr = collect(self.stderr, deadline).await;
        let aggregated = lock(&self.aggregated).clone();
        ExecResult {
            exit_code,
            stdout: stdout.render(),
            stderr: stderr.render(),
            aggregated_output: aggregated.render(),
            truncated_bytes: aggregated.dropped(),
            duration: started.elapsed(),
            timed_out,
        }
    }
}

async fn read_stream(
    mut pipe: impl AsyncRead + Unpin,
    max_bytes: usize,
    aggregated: Arc<Mutex<HeadTailBuffer>>,
    mut live: Option<StreamCoalescer>,
) -> HeadTailBuffer {
    let mut own = HeadTailBuffer::new(max_bytes);
    let mut chunk = vec![0u8; 8192];
    loop {
        let deadline = live.as_ref().and_then(StreamCoalescer::deadline);
        let read = match deadline {
            // Pending live output is sent when the pipe stays quiet past its deadline (a
            // pipe read is cancel-safe: nothing read is lost).
            Some(deadline) => {
                match tokio::time::timeout_at(deadline, pipe.read(&mut chunk)).await {
                    Ok(read) => read,
                    Err(_) => {
                        if let Some(live) = live.as_mut() {
                            live.flush();
                        }
                        continue;
                    }
                }
            }
            None => pipe.read(&mut chunk).await,
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                own.push(&chunk[..n]);
                lock(&aggregated).push(&chunk[..n]);
                if let Some(live) = live.as_mut() {
                    live.push(&chunk[..n]);
                }
            }
        }
    }
    if let Some(live) = live {
        live.finish();
    }
    own
}

async fn collect(
    reader: Option<tokio::task::JoinHandle<HeadTailBuffer>>,
    deadline: tokio::time::Instant,
) -> HeadTailBuffer {
    let Some(mut reader) = reader else {
        return HeadTailBuffer::new(0);
    };
    match tokio::time::timeout_at(deadline, &mut reader).await {
        Ok(Ok(buffer)) => buffer,
        _ => {
            reader.abort();
            HeadTailBuffer::new(0)
        }
    }
}

struct GroupGuard {
    pgid: Option<i32>,
    live: LiveGroups,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            self.live.remove(pgid);
        }
    }
}

/// The one thread every command is forked from (see the module docs: PDEATHSIG follows the
/// forking thread).
pub mod spawner {
    use super::{Child, Command};
    use std::sync::mpsc;
    use std::sync::{Mutex, OnceLock};

    type Job = Box<dyn FnOnce() + Send>;

    fn queue() -> Option<&'static Mutex<mpsc::Sender<Job>>> {
        static QUEUE: OnceLock<Option<Mutex<mpsc::Sender<Job>>>> = OnceLock::new();
        QUEUE
            .get_or_init(|| {
                let (tx, rx) = mpsc::channel::<Job>();
                std::thread::Builder::new()
                    .name("troupe-spawner".into())
                    .spawn(move || {
                        for job in rx {
                            job();
                        }
                    })
                    .ok()
                    .map(|_| Mutex::new(tx))
            })
            .as_ref()
    }

    /// Makes the forked child set `PR_SET_PDEATHSIG(SIGKILL)` before it execs.
    pub fn die_with_runtime(command: &mut Command) {
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: prctl and getppid are async-signal-safe; nothing else runs between fork
        // and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // Troupe died before the line above: the signal will never come.
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("troupe exited while starting"));
                }
                Ok(())
            });
        }
    }

    /// Spawns `command` from the spawner thread, within the caller's tokio runtime (whose
    /// driver reaps the child): a child tied to the runtime with `PR_SET_PDEATHSIG` is tied
    /// to the thread that started it.
    pub async fn spawn(mut command: Command) -> std::io::Result<Child> {
        let runtime = tokio::runtime::Handle::current();
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let _entered = runtime.enter();
            let _ = tx.send(command.spawn());
        });
        let sent = queue().and_then(|queue| crate::locking::lock(queue).send(job).ok());
        if sent.is_none() {
            return Err(std::io::Error::other("the process spawner thread is gone"));
        }
        rx.await
            .unwrap_or_else(|_| Err(std::io::Error::other("the process spawner thread is gone")))
    }
}
