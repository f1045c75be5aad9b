//! RolloutRecorder: appends a thread's items and events to its JSONL file, in order.
//!
//! Lines are written as they arrive (one write per batch); `Flush` also fsyncs, and the
//! session flushes at every turn boundary, so a finished turn survives a crash.

pub mod path;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use troupe_messages::mailboxes::RolloutMsg;
use troupe_messages::rollout::{RolloutLine, RolloutRecord, SessionMeta};

/// Actor owning one rollout file.
pub struct RolloutRecorderActor;

/// Startup arguments.
pub struct RolloutArgs {
    pub path: PathBuf,
    pub meta: SessionMeta,
}

pub struct RolloutState {
    path: PathBuf,
    file: File,
    /// Reused serialisation buffer.
    buffer: Vec<u8>,
}

impl RolloutState {
    fn append(&mut self, lines: &[RolloutLine]) -> std::io::Result<()> {
        self.buffer.clear();
        for line in lines {
            serde_json::to_writer(&mut self.buffer, line)?;
            self.buffer.push(b'\n');
        }
        self.file.write_all(&self.buffer)
    }
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
        if let Some(dir) = args.path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&args.path)
            .map_err(|err| format!("cannot open rollout {}: {err}", args.path.display()))?;
        let mut state = RolloutState {
            path: args.path,
            file,
            buffer: Vec::with_capacity(4096),
        };
        state.append(&[RolloutLine {
            timestamp: path::now_rfc3339(),
            record: RolloutRecord::SessionMeta(args.meta),
        }])?;
        Ok(state)
    }

    async fn handle(
        &self,
        _myself: ActorRef<Self::Msg>,
        message: Self::Msg,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            RolloutMsg::Append(lines) => {
                if let Err(err) = state.append(&lines) {
                    tracing::error!(path = %state.path.display(), %err, "rollout append failed");
                }
            }
            RolloutMsg::Flush { reply } => {
                let result = state
                    .file
                    .sync_data()
                    .map_err(|err| format!("fsync of {} failed: {err}", state.path.display()));
                let _ = reply.send(result);
            }
        }
        Ok(())
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<Self::Msg>,
        state: &mut Self::State,
    ) -> Result<(), ActorProcessingErr> {
        let _ = state.file.sync_data();
        Ok(())
    }
}
