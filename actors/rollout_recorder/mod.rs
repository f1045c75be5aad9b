//! RolloutRecorder: appends a thread's items and events to its JSONL file, in order.
//!
//! Each `Append` is serialised here and handed to the runtime's shared writer ([`writer`]: a
//! small pool of threads serving every open rollout), which writes it as soon as a worker is
//! free (a killed process loses at most what was not yet written, none of it acknowledged) and
//! batches whatever queued up meanwhile into one write. An idle recorder costs no OS thread. `Flush` is answered once everything appended before it
//! is written and fsynced; the session decides when to flush (its fsync policy) and
//! acknowledges items only after that. The recorder holds the rollout's lock file ([`lock`])
//! for as long as it runs.

mod file_io;
pub mod loader;
pub mod lock;
pub mod meta;
pub mod path;
pub mod replay;
pub mod writer;

use lock::RolloutLock;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use troupe_messages::mailboxes::{RolloutMsg, SessionMsg};
use troupe_messages::rollout::{RolloutLine, RolloutRecord, SessionMeta};
use writer::{FileWriter, RolloutWriter};

/// Actor owning one rollout file.
pub struct RolloutRecorderActor;

/// How the file is opened.
pub enum RolloutOpen {
    /// A new thread: create the file (it must not exist) and write the meta line.
    Create(Box<SessionMeta>),
    /// A resumed thread: append to the existing file.
    Append,
}

/// Startup arguments.
pub struct RolloutArgs {
    pub path: PathBuf,
    pub open: RolloutOpen,
    /// The runtime's shared writer, which does this file's I/O.
    pub writer: RolloutWriter,
    /// Told `RolloutFailed` as soon as the file cannot be written.
    pub session: Option<ActorRef<SessionMsg>>,
}

pub struct RolloutState {
    path: PathBuf,
    writer: FileWriter,
    _lock: RolloutLock,
}

/// Serialises lines, one JSON object and `\n` each.
pub fn encode(lines: &[RolloutLine]) -> Result<Vec<u8>, serde_json::Error> {
    let mut buffer = Vec::with_capacity(256 * lines.len());
    for line in lines {
        serde_json::to_writer(&mut buffer, line)?;
        buffer.push(b'\n');
    }
    Ok(buffer)
}

/// Opens `path` for appending; a torn last line (crash mid-write) is closed with a newline so
/// the next line starts clean. Nothing already in the file is changed.
fn open_for_append(path: &Path) -> std::io::Result<std::fs::File> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(path)?;
    let len = file.metadata()?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            file.write_all(b"\n")?;
        }
    }
    Ok(file)
}

fn create(path: &Path, meta: SessionMeta) -> Result<std::fs::File, String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create_new(true)
        .append(true)
        .open(path)
        .map_err(|err| format!("cannot create rollout {}: {err}", path.display()))?;
    let bytes = encode(&[RolloutLine {
        timestamp: path::now_rfc3339(),
        record: RolloutRecord::SessionMeta(meta),
    }])
    .map_err(|err| err.to_string())?;
    if let Err(err) = file.write_all(&bytes).and_then(|()| file.sync_data()) {
        // An empty or torn rollout is not a thread: leave nothing behind.
        drop(file);
        let _ = std::fs::remove_file(path);
        return Err(file_io::describe(path, "writing", &err));
    }
    Ok(file)
}

impl Actor for RolloutRecorderActor {
    type Msg = RolloutMsg;
    type State = RolloutState;
    type Arguments = RolloutArgs;

    async fn pre_start(
        &self,
        _myself: ActorRef<Self::Msg>,
        args: RolloutArgs,
    ) -> Result<Self::State, ActorProcessingErr> {
        let file = match args.open {
            RolloutOpen::Create(meta) => {
                let file = create(&args.path, *meta)?;
                match RolloutLock::acquire(&args.path) {
                    Ok(lock) => (lock, file),
                    Err(err) => {
                        // The thread does not start: its new rollout goes with it.
                        drop(file);
                        let _ = std::fs::remove_file(&args.path);
                        return Err(err.into());
                    }
                }
            }
            RolloutOpen::Append => {
                let lock = RolloutLock::acquire(&args.path)?;
                let file = open_for_append(&args.path)
                    .map_err(|err| format!("cannot open rollout {}: {err}", args.path.display()))?;
                (lock, file)
            }
        };
        let (lock, file) = file;
        let writer = args.writer.open(args.path.clone(), file);
        if let Some(session) = args.session {
            let failure = writer.on_failure();
            // Ends with the writer (the sender is dropped) when nothing failed.
            tokio::spawn(async move {
                if let Ok(error) = failure.await {
                    let _ = session.send_message(SessionMsg::RolloutFailed { error });
                }
            });
        }
        Ok(RolloutState {
            path: args.path,
            writer,
            _lock: lock,
        })
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RolloutMsg::Append(lines) => {
                let sent = encode(&lines)
                    .map_err(|err| err.to_string())
                    .and_then(|bytes| state.writer.write(bytes).map_err(|err| err.to_string()));
                if let Err(err) = sent {
                    tracing::error!(path = %state.path.display(), %err, "rollout append failed");
                }
            }
            RolloutMsg::Flush { reply } => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                if let Err(err) = state.writer.sync(tx) {
                    let _ = reply.send(Err(err.to_string()));
                    return Ok(());
                }
                // Answer from a task, so appends keep flowing to the writer meanwhile.
                tokio::spawn(async move {
                    let result = rx
                        .await
                        .unwrap_or_else(|_| Err("the rollout writer stopped".to_string()));
                    let _ = reply.send(result);
                });
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        state.writer.finish().await;
        Ok(())
    }
}
