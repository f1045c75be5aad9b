//! Reading a rollout back: every line in order, tolerant of what a crash or a newer build
//! leaves behind, strict about everything else.
//!
//! - A line that is the start of a JSON object cut short (a write a crash interrupted) is
//!   skipped with a warning.
//! - A line that is not JSON at all after the session meta (garbage pasted or written into
//!   the file) is damage: skipped with a warning too, so the thread can still be resumed, and
//!   listed in [`LoadedRollout::damaged`] so that `troupe doctor` reports it as a problem.
//! - A line of a type this build does not know (a newer build wrote it) is skipped with a
//!   warning.
//! - A line of a known type whose payload does not parse is corruption: an error naming the
//!   file and line, so nothing is silently dropped from a history.
//! - A file whose format version is newer than this build's is refused for appending by
//!   [`check_writable`]; it can still be listed.

use std::path::{Path, PathBuf};
use thiserror::Error;
use troupe_messages::rollout::{
    record_types, RolloutLine, RolloutRecord, SessionMeta, ROLLOUT_FORMAT_VERSION,
};

#[derive(Debug, Error)]
pub enum RolloutError {
    #[error("cannot read rollout {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a troupe rollout: {reason}")]
    NotARollout { path: PathBuf, reason: String },
    #[error("{path} line {line} is damaged: {reason}; the file was edited or corrupted (fix or remove that line by hand; `troupe doctor` lists damaged rollouts)")]
    Corrupt {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error("{path} was written by a newer troupe (rollout format {found}, this build reads up to {supported}); upgrade troupe to continue this thread")]
    NewerFormat {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
}

/// A rollout as read from disk.
#[derive(Debug, Clone)]
pub struct LoadedRollout {
    pub path: PathBuf,
    pub meta: SessionMeta,
    /// Every line after the session meta, in file order.
    pub lines: Vec<RolloutLine>,
    /// What was skipped, one human-readable sentence each.
    pub warnings: Vec<String>,
    /// The sentences of `warnings` that are damage rather than a crash's or a newer build's
    /// trace: lines that are not JSON at all.
    pub damaged: Vec<String>,
    /// Size of the file as read.
    pub bytes: u64,
}

/// Reads and parses the whole rollout at `path`.
pub fn load(path: &Path) -> Result<LoadedRollout, RolloutError> {
    // Only a regular file: a FIFO named like a rollout must not hang `list` or `doctor`.
    let data = troupe_config::regular_file::read(path).map_err(|source| RolloutError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &data)
}

/// The longest first line [`read_meta`] reads: a session meta is a few hundred bytes.
const META_LINE_LIMIT: u64 = 1 << 20;

/// The session meta of the rollout at `path`, from its first line alone (finding a thread's
/// agents among many rollouts must not read every history whole).
pub fn read_meta(path: &Path) -> Result<SessionMeta, RolloutError> {
    use std::io::{BufRead, Read};
    let io = |source| RolloutError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = troupe_config::regular_file::open(path).map_err(io)?;
    let mut reader = std::io::BufReader::new(file.take(META_LINE_LIMIT));
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
            return Err(RolloutError::NotARollout {
                path: path.to_path_buf(),
                reason: "it has no session_meta line (empty file?)".into(),
            });
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            break;
        }
    }
    match serde_json::from_slice::<RolloutLine>(&line) {
        Ok(RolloutLine {
            record: RolloutRecord::SessionMeta(meta),
            ..
        }) => Ok(meta),
        Ok(_) => Err(RolloutError::NotARollout {
            path: path.to_path_buf(),
            reason: "line 1 is not the session_meta line".into(),
        }),
        Err(err) => Err(RolloutError::NotARollout {
            path: path.to_path_buf(),
            reason: format!("line 1: {err}"),
        }),
    }
}

/// Parses rollout bytes read from `path`.
pub fn parse(path: &Path, data: &[u8]) -> Result<LoadedRollout, RolloutError> {
    let mut meta: Option<SessionMeta> = None;
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    let mut damaged = Vec::new();
    for (index, raw) in data.split(|b| *b == b'\n').enumerate() {
        let number = index + 1;
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let line = match serde_json::from_slice::<RolloutLine>(raw) {
            Ok(line) => line,
            Err(err) => {
                match classify(raw) {
                    Skip::Torn => warnings.push(format!(
                        "{} line {number} is incomplete (a write cut short by a crash?); skipped",
                        path.display()
                    )),
                    Skip::Garbage if meta.is_some() => {
                        let sentence = format!(
                            "{} line {number} is damaged (not JSON: {err}); resuming the thread \
                             skips that line and goes on without it (delete the line to keep \
                             this from being reported)",
                            path.display()
                        );
                        damaged.push(sentence.clone());
                        warnings.push(sentence);
                    }
                    Skip::UnknownType(kind) => warnings.push(format!(
                        "{} line {number} has type `{kind}`, unknown to this build; skipped",
                        path.display()
                    )),
                    Skip::Damaged | Skip::Garbage if meta.is_none() => {
                        return Err(RolloutError::NotARollout {
                            path: path.to_path_buf(),
                            reason: format!("line {number}: {err}"),
                        })
                    }
                    Skip::Damaged | Skip::Garbage => {
                        return Err(RolloutError::Corrupt {
                            path: path.to_path_buf(),
                            line: number,
                            reason: err.to_string(),
                        })
                    }
                }
                continue;
            }
        };
        match (&meta, line.record) {
            (None, RolloutRecord::SessionMeta(found)) => meta = Some(found),
            (None, _) => {
                return Err(RolloutError::NotARollout {
                    path: path.to_path_buf(),
                    reason: format!("line {number} comes before the session_meta line"),
                })
            }
            (Some(_), RolloutRecord::SessionMeta(_)) => warnings.push(format!(
                "{} line {number} is a second session_meta; skipped",
                path.display()
            )),
            (Some(_), record) => lines.push(RolloutLine {
                timestamp: line.timestamp,
                record,
            }),
        }
    }
    let meta = meta.ok_or_else(|| RolloutError::NotARollout {
        path: path.to_path_buf(),
        reason: "it has no session_meta line (empty file?)".into(),
    })?;
    Ok(LoadedRollout {
        path: path.to_path_buf(),
        meta,
        lines,
        warnings,
        damaged,
        bytes: data.len() as u64,
    })
}

/// Refuses to append to a rollout written in a newer format.
pub fn check_writable(rollout: &LoadedRollout) -> Result<(), RolloutError> {
    if rollout.meta.version > ROLLOUT_FORMAT_VERSION {
        return Err(RolloutError::NewerFormat {
            path: rollout.path.clone(),
            found: rollout.meta.version,
            supported: ROLLOUT_FORMAT_VERSION,
        });
    }
    Ok(())
}

enum Skip {
    /// A JSON object cut short: what an interrupted write leaves.
    Torn,
    /// Not JSON, and not the start of any.
    Garbage,
    UnknownType(String),
    Damaged,
}

fn classify(raw: &[u8]) -> Skip {
    let value = match serde_json::from_slice::<serde_json::Value>(raw) {
        Ok(value) => value,
        // Every line is written as one object: a cut one starts with `{` and runs out.
        Err(err)
            if raw.trim_ascii_start().starts_with(b"{") && (err.is_eof() || cut_in_a_char(raw)) =>
        {
            return Skip::Torn
        }
        Err(_) => return Skip::Garbage,
    };
    match value.get("type").and_then(|t| t.as_str()) {
        Some(kind) if !record_types().contains(&kind) => Skip::UnknownType(kind.to_string()),
        // Events are not history: one a newer build added is skipped, not fatal.
        Some("event") => {
            let inner = value
                .pointer("/payload/type")
                .and_then(|t| t.as_str())
                .unwrap_or("?");
            Skip::UnknownType(format!("event/{inner}"))
        }
        _ => Skip::Damaged,
    }
}

/// The bytes end inside a multi-byte character (a cut there is not a syntax error's sign).
fn cut_in_a_char(raw: &[u8]) -> bool {
    std::str::from_utf8(raw).is_err_and(|err| err.error_len().is_none())
}

#[cfg(test)]
#[path = "loader_tests.rs"]
mod tests;
