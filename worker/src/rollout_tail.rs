//! Reads the lines a thread's rollout writer has appended since the last look: only whole
//! lines (a line still being written stays for the next look).

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The read position in one rollout file.
#[derive(Debug)]
pub struct RolloutTail {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
}

impl RolloutTail {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            offset: 0,
            partial: Vec::new(),
        }
    }

    /// A tail that starts after the first `offset` bytes (already published).
    pub fn starting_at(path: PathBuf, offset: u64) -> Self {
        Self {
            path,
            offset,
            partial: Vec::new(),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whole lines appended since the last call (a missing file has none yet). Blocking
    /// file I/O: call it from `spawn_blocking`.
    pub fn read_new_lines(&mut self) -> std::io::Result<Vec<String>> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(err),
        };
        file.seek(SeekFrom::Start(self.offset))?;
        let mut fresh = Vec::new();
        file.read_to_end(&mut fresh)?;
        self.offset += fresh.len() as u64;
        self.partial.extend_from_slice(&fresh);
        let Some(last_newline) = self.partial.iter().rposition(|b| *b == b'\n') else {
            return Ok(Vec::new());
        };
        let rest = self.partial.split_off(last_newline + 1);
        let complete = std::mem::replace(&mut self.partial, rest);
        Ok(String::from_utf8_lossy(&complete)
            .lines()
            .filter(|line| !line.is_empty())
            .map(str::to_string)
            .collect())
    }
}

#[cfg(test)]
#[path = "rollout_tail_tests.rs"]
mod tests;
