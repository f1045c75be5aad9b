//! The prompt history, `$TROUPE_HOME/history.jsonl` in Codex's format: one JSON object per
//! line, `{"session_id","ts","text"}` (`ts` in Unix seconds), the file private to the user.
//! `[history] persistence = "none"` turns it off; `max_bytes` drops the oldest entries past
//! that size.

use anyhow::{Context, Result};
use serde::Serialize;
use std::io::Write;
use std::path::Path;
use troupe_config::file::{HistoryPersistence, HistoryToml};

/// The history file under `home`.
pub const HISTORY_FILE: &str = "history.jsonl";

#[derive(Serialize)]
struct Entry<'a> {
    session_id: &'a str,
    ts: u64,
    text: &'a str,
}

/// Appends `text` (the prompt of thread `session_id`), as `config` allows.
pub fn record(home: &Path, config: &HistoryToml, session_id: &str, text: &str) -> Result<()> {
    if config.persistence == Some(HistoryPersistence::None) {
        return Ok(());
    }
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default();
    let mut line = serde_json::to_string(&Entry {
        session_id,
        ts,
        text,
    })?;
    line.push('\n');
    let path = home.join(HISTORY_FILE);
    let mut file = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?
    };
    // One write of the whole line: concurrent appenders (O_APPEND) do not interleave.
    file.write_all(line.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    drop(file);
    if let Some(max) = config.max_bytes {
        trim(&path, max)?;
    }
    Ok(())
}

/// Bytes read from the end of the history file for the UI's Up/Down (older entries stay on
/// disk, unread).
pub const LOAD_TAIL_BYTES: u64 = 256 * 1024;

/// The texts of the newest entries (oldest first), as `config` allows: none when persistence
/// is `none`, nothing when the file is missing; a line that is not an entry is skipped.
pub fn load_texts(home: &Path, config: &HistoryToml) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    if config.persistence == Some(HistoryPersistence::None) {
        return Vec::new();
    }
    let Ok(mut file) = std::fs::File::open(home.join(HISTORY_FILE)) else {
        return Vec::new();
    };
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = size.saturating_sub(LOAD_TAIL_BYTES);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err()
        || file.take(LOAD_TAIL_BYTES).read_to_end(&mut bytes).is_err()
    {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    // A cut first line is not an entry.
    let whole = if start > 0 {
        text.split_once('\n').map_or("", |(_, rest)| rest)
    } else {
        &text
    };
    whole
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|entry| entry.get("text")?.as_str().map(str::to_string))
        .collect()
}

/// Drops the oldest whole lines until the file is at most `max` bytes.
fn trim(path: &Path, max: u64) -> Result<()> {
    let size = std::fs::metadata(path)?.len();
    if size <= max {
        return Ok(());
    }
    let text = std::fs::read_to_string(path)?;
    let kept = keep_newest(&text, max);
    let tmp = path.with_extension("jsonl.tmp");
    std::fs::write(&tmp, kept)?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// The newest whole lines of `text` that fit in `max` bytes.
pub fn keep_newest(text: &str, max: u64) -> &str {
    let mut start = 0;
    while (text.len() - start) as u64 > max {
        match text[start..].find('\n') {
            Some(at) => start += at + 1,
            None => return "",
        }
    }
    &text[start..]
}

#[cfg(test)]
#[path = "history_tests.rs"]
mod tests;
