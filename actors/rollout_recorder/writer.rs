//! The rollout's writer thread: blocking file I/O off the async runtime, with group commit.
//!
//! Lines are written as soon as they arrive (so a killed process loses at most the line being
//! written); an fsync request is answered after every line queued before it is written and
//! synced. Everything queued while one write or fsync runs goes out in the next single write,
//! and one fsync answers every sync request of that batch.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;
use tokio::sync::oneshot;

/// Answer to a sync request.
pub type SyncReply = oneshot::Sender<Result<(), String>>;

enum WriterCmd {
    Write(Vec<u8>),
    Sync(SyncReply),
}

/// Handle of the writer thread; dropping it (or `finish`) drains and syncs what is queued.
pub struct Writer {
    tx: Option<mpsc::Sender<WriterCmd>>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts the thread that owns `file` (opened for appending).
    pub fn start(path: PathBuf, file: File) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("rollout-writer".into())
            .spawn(move || run(path, file, rx))?;
        Ok(Self {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Queues bytes (whole lines) for writing.
    pub fn write(&self, bytes: Vec<u8>) -> Result<(), String> {
        self.send(WriterCmd::Write(bytes))
    }

    /// Queues an fsync of everything queued so far; `reply` gets its result.
    pub fn sync(&self, reply: SyncReply) -> Result<(), String> {
        self.send(WriterCmd::Sync(reply))
    }

    fn send(&self, cmd: WriterCmd) -> Result<(), String> {
        self.tx
            .as_ref()
            .ok_or_else(|| "the rollout writer is closed".to_string())?
            .send(cmd)
            .map_err(|_| "the rollout writer thread stopped".to_string())
    }

    /// Closes the queue and waits (off the async runtime) until all is written and synced.
    pub async fn finish(&mut self) {
        self.tx = None;
        if let Some(thread) = self.thread.take() {
            let _ = tokio::task::spawn_blocking(move || thread.join()).await;
        }
    }
}

fn run(path: PathBuf, mut file: File, rx: mpsc::Receiver<WriterCmd>) {
    // The first write error sticks: later lines would leave a hole, so none are written.
    let mut failed: Option<String> = None;
    while let Ok(first) = rx.recv() {
        let mut buffer = Vec::new();
        let mut replies = Vec::new();
        let mut take = |cmd| match cmd {
            WriterCmd::Write(bytes) => buffer.extend_from_slice(&bytes),
            WriterCmd::Sync(reply) => replies.push(reply),
        };
        take(first);
        while let Ok(cmd) = rx.try_recv() {
            take(cmd);
        }
        if failed.is_none() && !buffer.is_empty() {
            if let Err(err) = file.write_all(&buffer) {
                tracing::error!(path = %path.display(), %err, "rollout write failed");
                failed = Some(format!("writing {} failed: {err}", path.display()));
            }
        }
        if !replies.is_empty() {
            let result = match &failed {
                Some(err) => Err(err.clone()),
                None => file
                    .sync_data()
                    .map_err(|err| format!("fsync of {} failed: {err}", path.display())),
            };
            for reply in replies {
                let _ = reply.send(result.clone());
            }
        }
    }
    let _ = file.sync_data();
}
