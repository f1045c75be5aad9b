//! One command running in a PTY, or on plain pipes (the set a turn holds is in
//! `sessions.rs`).
//!
//! Each session has two plain threads (reads and `wait` both block): a reader that appends
//! output to a shared buffer, and a waiter that records the exit status. Async callers wait
//! on a `Notify` for either. The child leads its own process group (portable-pty calls
//! `setsid`; the pipe mode asks for a new group), so killing that group takes its children
//! along; an unconfined command's group is led by its supervisor, which is asked instead
//! (everything below it is killed and it reaps the command). On pipes, stdout and stderr share one pipe (the order the command wrote them in is
//! kept) and stdin is closed: nothing can be typed into such a session.
//!
//! The reader also streams the output live (`ExecCommandOutputDelta`, through a
//! [`StreamCoalescer`] like a one-shot command's pipe readers): it waits on the PTY with
//! `poll` until the coalescer's deadline, so a trickle is sent within `FLUSH_AFTER`, and it
//! hands the last piece on before it records end of file — before the call that sees the
//! exit reports the end.

use crate::locking::lock;
use portable_pty::{native_pty_system, CommandBuilder, PtySize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use troupe_messages::events::ExecOutputStream;
use troupe_messages::tools::{ExecOutputSink, STREAMED_OUTPUT_PER_COMMAND};
use troupe_sandbox::live_output::{LiveOutput, StreamCoalescer};
use troupe_sandbox::process::kill_group;
use troupe_sandbox::supervisor::SUPERVISE_ARG;

/// How long to keep reading after the process exited, for output still in the PTY.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(300);

/// Why nothing can be typed into a session started on pipes.
pub const STDIN_CLOSED: &str = "stdin is closed for this session: it was started without a \
terminal; run the command again with exec_command's `tty: true` to type into it";

/// A PTY's input and master; both `None` on pipes.
type TerminalEnds = (
    Option<Box<dyn Write + Send>>,
    Option<Box<dyn portable_pty::MasterPty + Send>>,
);

/// What the reader and waiter threads share with callers.
#[derive(Default)]
struct Shared {
    /// Output not yet returned to the model.
    pending: Vec<u8>,
    /// Set once the reader hit end of file (the PTY closed).
    eof: bool,
    /// Set once the child was reaped: its exit code (-1 when killed by a signal).
    exit_code: Option<i32>,
}

/// A command running in a PTY.
pub struct PtySession {
    shared: Arc<Mutex<Shared>>,
    changed: Arc<Notify>,
    /// The terminal's input; `None` on pipes (stdin is closed).
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    pub(super) pgid: Option<i32>,
    /// Whether `pgid` leads a supervisor (`troupe_sandbox::supervisor`), stopped through it.
    supervised: bool,
    /// Kept open: dropping the master would hang up the child. `None` on pipes.
    _master: Mutex<Option<Box<dyn portable_pty::MasterPty + Send>>>,
    /// The command as the model asked for it (not the sandbox or supervisor around it).
    pub command: Vec<String>,
    /// The `exec_command` call that started it (its begin/end events share this id).
    pub call_id: String,
    pub started: Instant,
    /// Everything it printed, for the end event (bounded by the caller).
    transcript: Mutex<Vec<u8>>,
    /// What must live as long as the command (its network proxy).
    companions: Mutex<Vec<Box<dyn std::any::Any + Send>>>,
}

/// What one wait for output produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    pub output: Vec<u8>,
    /// The exit code once the process has exited and its output is drained.
    pub exit_code: Option<i32>,
}

impl PtySession {
    /// Starts `argv` in a fresh PTY; its output also goes to `live` as it comes, if given.
    /// `shown` is the command as events name it.
    pub fn spawn(
        argv: &[String],
        shown: &[String],
        cwd: &Path,
        env: &BTreeMap<String, String>,
        call_id: String,
        live: Option<ExecOutputSink>,
    ) -> Result<Arc<Self>, String> {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 120,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|err| format!("could not open a pseudo-terminal: {err}"))?;
        let mut builder = CommandBuilder::from_argv(argv.iter().map(Into::into).collect());
        builder.cwd(cwd);
        builder.umask(troupe_messages::file_mask::user_mask().map(|m| m as libc::mode_t));
        builder.env_clear();
        for (key, value) in env {
            builder.env(key, value);
        }
        let mut child = pair.slave.spawn_command(builder).map_err(|err| {
            format!(
                "failed to start `{}` in {}: {err}",
                argv.join(" "),
                cwd.display()
            )
        })?;
        // Our copy of the slave must close, or the reader never sees end of file.
        drop(pair.slave);
        let pgid = child.process_id().map(|pid| pid as i32);
        let reader = own_reader(pair.master.as_ref())?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|err| format!("could not write to the pseudo-terminal: {err}"))?;
        let session = Self::start(
            argv,
            shown,
            call_id,
            pgid,
            (Some(writer), Some(pair.master)),
            reader,
            live,
        );
        let (shared, changed) = (session.shared.clone(), session.changed.clone());
        std::thread::spawn(move || {
            let code = match child.wait() {
                Ok(status) if status.signal().is_none() => status.exit_code() as i32,
                _ => -1,
            };
            lock(&shared).exit_code = Some(code);
            changed.notify_waiters();
        });
        Ok(session)
    }

    /// Starts `argv` on plain pipes: no terminal (programs see no TTY, lines end in `\n`),
    /// stdout and stderr on one pipe, stdin closed.
    pub fn spawn_piped(
        argv: &[String],
        shown: &[String],
        cwd: &Path,
        env: &BTreeMap<String, String>,
        call_id: String,
        live: Option<ExecOutputSink>,
    ) -> Result<Arc<Self>, String> {
        use std::os::unix::process::{CommandExt, ExitStatusExt};
        let Some((program, args)) = argv.split_first() else {
            return Err("no command to run".into());
        };
        let (reader, writer) =
            std::io::pipe().map_err(|err| format!("could not open a pipe: {err}"))?;
        let stderr = writer
            .try_clone()
            .map_err(|err| format!("could not open a pipe: {err}"))?;
        let mut command = std::process::Command::new(program);
        command
            .args(args)
            .current_dir(cwd)
            .env_clear()
            .envs(env)
            .stdin(std::process::Stdio::null())
            .stdout(writer)
            .stderr(stderr)
            .process_group(0);
        if let Some(mask) = troupe_messages::file_mask::user_mask() {
            // SAFETY: `umask` is async-signal-safe.
            unsafe {
                command.pre_exec(move || {
                    libc::umask(mask as libc::mode_t);
                    Ok(())
                });
            }
        }
        let spawned = command.spawn();
        // The command's copies of the write end must be the only ones left, or the reader
        // never sees end of file.
        drop(command);
        let mut child = spawned.map_err(|err| {
            format!(
                "failed to start `{}` in {}: {err}",
                argv.join(" "),
                cwd.display()
            )
        })?;
        let pgid = i32::try_from(child.id()).ok();
        let reader = File::from(std::os::fd::OwnedFd::from(reader));
        let session = Self::start(argv, shown, call_id, pgid, (None, None), reader, live);
        let (shared, changed) = (session.shared.clone(), session.changed.clone());
        std::thread::spawn(move || {
            let code = match child.wait() {
                Ok(status) if status.signal().is_none() => status.code().unwrap_or(-1),
                _ => -1,
            };
            lock(&shared).exit_code = Some(code);
            changed.notify_waiters();
        });
        Ok(session)
    }

    /// The session around a started child: its reader thread runs from here on.
    fn start(
        argv: &[String],
        shown: &[String],
        call_id: String,
        pgid: Option<i32>,
        (writer, master): TerminalEnds,
        reader: File,
        live: Option<ExecOutputSink>,
    ) -> Arc<Self> {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let changed = Arc::new(Notify::new());
        let session = Arc::new(Self {
            shared: shared.clone(),
            changed: changed.clone(),
            writer: Mutex::new(writer),
            pgid,
            supervised: argv.get(1).map(String::as_str) == Some(SUPERVISE_ARG),
            _master: Mutex::new(master),
            command: shown.to_vec(),
            call_id,
            started: Instant::now(),
            transcript: Mutex::new(Vec::new()),
            companions: Mutex::new(Vec::new()),
        });
        let coalescer = live.map(|sink| {
            LiveOutput::new(sink, STREAMED_OUTPUT_PER_COMMAND).stream(ExecOutputStream::Stdout)
        });
        std::thread::spawn(move || read_output(reader, coalescer, &shared, &changed));
        session
    }

    /// Keeps `companion` until the session is dropped (a proxy the command talks to).
    pub fn keep_alive(&self, companion: Box<dyn std::any::Any + Send>) {
        lock(&self.companions).push(companion);
    }

    /// Writes `chars` to the terminal (a `\n` is Enter).
    pub fn write(&self, chars: &str) -> Result<(), String> {
        let mut writer = lock(&self.writer);
        let Some(writer) = writer.as_mut() else {
            return Err(STDIN_CLOSED.into());
        };
        writer
            .write_all(chars.as_bytes())
            .and_then(|()| writer.flush())
            .map_err(|err| format!("could not write to the session: {err}"))
    }

    /// Waits up to `yield_time` (less if the process exits and its output is drained),
    /// then returns the output gathered since the last call.
    pub async fn collect(&self, yield_time: Duration) -> Collected {
        let mut deadline = tokio::time::Instant::now() + yield_time;
        let mut draining = false;
        loop {
            let notified = self.changed.notified();
            let (exited, eof) = {
                let shared = lock(&self.shared);
                (shared.exit_code.is_some(), shared.eof)
            };
            if exited && eof {
                break;
            }
            if exited && !draining {
                // Output written just before exit may still be in the PTY; a grandchild
                // holding the terminal open must not keep us past a short drain, though.
                draining = true;
                deadline = deadline.min(tokio::time::Instant::now() + DRAIN_AFTER_EXIT);
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break;
            }
        }
        let mut shared = lock(&self.shared);
        let output = std::mem::take(&mut shared.pending);
        lock(&self.transcript).extend_from_slice(&output);
        Collected {
            output,
            exit_code: shared.exit_code,
        }
    }

    /// Everything printed so far, including what no `collect` has returned yet.
    pub fn transcript(&self) -> Vec<u8> {
        let pending = std::mem::take(&mut lock(&self.shared).pending);
        let mut transcript = lock(&self.transcript);
        transcript.extend_from_slice(&pending);
        transcript.clone()
    }

    /// The exit code, once the process has been reaped.
    pub fn exit_code(&self) -> Option<i32> {
        lock(&self.shared).exit_code
    }

    /// Kills the process group, then waits briefly for the exit to be recorded.
    pub async fn kill(&self) {
        self.kill_now();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        loop {
            let notified = self.changed.notified();
            if lock(&self.shared).exit_code.is_some() {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return;
            }
        }
    }
}

impl PtySession {
    /// Kills the command and what it started: through its supervisor when it has one (so
    /// the supervisor reaps it), else its whole group.
    fn kill_now(&self) {
        match self.pgid {
            Some(pgid) if self.supervised => troupe_sandbox::supervisor::stop(pgid),
            Some(pgid) => kill_group(pgid),
            None => {}
        }
    }
}

/// Our own descriptor of the PTY master for the reader thread: it can be polled (portable-pty's
/// reader is opaque) and stays valid for as long as the thread runs, whatever happens to the
/// session.
fn own_reader(master: &(dyn portable_pty::MasterPty + Send)) -> Result<File, String> {
    let fd = master
        .as_raw_fd()
        .ok_or_else(|| "could not read the pseudo-terminal: it has no descriptor".to_string())?;
    // SAFETY: `master` owns `fd` and is borrowed for this whole call; the borrow only lives
    // until the descriptor is duplicated.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    borrowed
        .try_clone_to_owned()
        .map(File::from)
        .map_err(|err| format!("could not read the pseudo-terminal: {err}"))
}

/// The reader thread: appends what the PTY prints to `pending` and streams it through
/// `coalescer`, until end of file (or an error: the PTY hung up).
fn read_output(
    mut reader: File,
    mut coalescer: Option<StreamCoalescer>,
    shared: &Mutex<Shared>,
    changed: &Notify,
) {
    let mut buf = [0u8; 8192];
    loop {
        if let Some(live) = coalescer.as_mut() {
            if let Some(deadline) = live.deadline() {
                let wait = deadline.saturating_duration_since(tokio::time::Instant::now());
                if !readable_within(reader.as_fd(), wait) {
                    live.flush();
                    continue;
                }
            }
        }
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                lock(shared).pending.extend_from_slice(&buf[..n]);
                if let Some(live) = coalescer.as_mut() {
                    live.push(&buf[..n]);
                }
            }
        }
        changed.notify_waiters();
    }
    if let Some(live) = coalescer {
        live.finish();
    }
    lock(shared).eof = true;
    changed.notify_waiters();
}

/// Waits up to `wait` for `fd` to have something to read (or to hang up); false on timeout.
fn readable_within(fd: BorrowedFd<'_>, wait: Duration) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let millis = u16::try_from(wait.as_millis().saturating_add(1)).unwrap_or(u16::MAX);
    loop {
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(0) => return false,
            Err(nix::errno::Errno::EINTR) => continue,
            // Readable, hung up, or an error the read will report.
            Ok(_) | Err(_) => return true,
        }
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        // A session is never left running behind its owner.
        if lock(&self.shared).exit_code.is_none() {
            self.kill_now();
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
