//! Each thread's checkpoints, in the order they were taken: `threads/<thread>.jsonl` in the
//! store, one line per checkpoint, appended (and fsynced) once its manifest is durable. A
//! torn last line (a crash mid-append) is skipped when read.

use crate::error::CheckpointError;
use crate::objects::Store;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

/// When a checkpoint was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Before the turn's first tool could run: what rewinding to this turn restores.
    Before,
    /// When the turn ended (or a rewind finished): what the tree is expected to be until
    /// the next turn; anything else found there was changed by someone else.
    After,
    /// Just before a rewind changed anything: what `--undo` restores.
    Rewind,
}

/// One line of a thread's index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexLine {
    pub turn: u64,
    pub phase: Phase,
    /// The manifest id; none when a rewind changed only the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// A rewind of the conversation: the rollout it replaced, kept here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_backup: Option<PathBuf>,
    pub at_ms: u64,
}

impl Store {
    /// Appends `line` to `thread`'s index, durably.
    pub fn append_index(&self, thread: &str, line: &IndexLine) -> Result<(), CheckpointError> {
        let path = self.thread_index(thread);
        let mut bytes = serde_json::to_vec(line).map_err(|err| CheckpointError::Corrupt {
            id: thread.to_string(),
            reason: err.to_string(),
        })?;
        bytes.push(b'\n');
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(&path)
            .map_err(CheckpointError::io("cannot open", &path))?;
        // A torn line left by a crash gets closed first, so this one stays whole.
        let len = file
            .metadata()
            .map_err(CheckpointError::io("cannot read", &path))?
            .len();
        if len > 0 && !ends_with_newline(&path) {
            bytes.insert(0, b'\n');
        }
        file.write_all(&bytes)
            .and_then(|()| file.sync_data())
            .map_err(CheckpointError::io("cannot write", &path))
    }

    /// `thread`'s index, oldest first.
    pub fn read_index(&self, thread: &str) -> Result<Vec<IndexLine>, CheckpointError> {
        let path = self.thread_index(thread);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(CheckpointError::io("cannot read", &path)(err)),
        };
        Ok(text
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect())
    }
}

fn ends_with_newline(path: &std::path::Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return true;
    };
    let mut last = [0u8; 1];
    file.seek(SeekFrom::End(-1))
        .and_then(|_| file.read_exact(&mut last))
        .map_or(true, |()| last[0] == b'\n')
}

/// The last checkpoint of `phase` for `turn` (a later line wins: a conversation rewind
/// makes turn numbers count again from the cut).
pub fn find(lines: &[IndexLine], turn: u64, phase: Phase) -> Option<&IndexLine> {
    lines
        .iter()
        .rev()
        .find(|l| l.turn == turn && l.phase == phase && l.checkpoint.is_some())
}

/// The newest line with a checkpoint of `phase`.
pub fn last_of(lines: &[IndexLine], phase: Phase) -> Option<&IndexLine> {
    lines
        .iter()
        .rev()
        .find(|l| l.phase == phase && (l.checkpoint.is_some() || l.rollout_backup.is_some()))
}

/// The newest line with a checkpoint (for the stat cache of the next one).
pub fn latest(lines: &[IndexLine]) -> Option<&IndexLine> {
    lines.iter().rev().find(|l| l.checkpoint.is_some())
}
