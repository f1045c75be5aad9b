//! What a rewind would do, shown before it is done (the TUI's `/rewind`): a thread's turns
//! with the first line of each prompt and how many files each changed, and for a chosen turn
//! the files a code rewind would change, each with a unified diff (capped), and the files
//! changed since the last turn by something other than the agent. Nothing is written: the
//! work is [`super::rewind`]'s own dry run, which hashes the current tree without storing it.
//! A thread this process holds open may be previewed (nothing of it changes).

use super::ops;
use super::rewind::{plan, RewindError, RewindOutcome, RewindRequest};
use super::ThreadStore;
use crate::rollout_recorder::loader;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use troupe_checkpoint::index::{IndexLine, Phase};
use troupe_checkpoint::{diff, Change, ChangeKind, Manifest, Node, Store};
use troupe_messages::agent_notice::{parse_report, task_of_first_message};
use troupe_messages::events::EventMsg;
use troupe_messages::items::{ContentItem, ResponseItem, Role};
use troupe_messages::rollout::RolloutRecord;

/// Lines of one file's diff shown at most; the rest is counted.
pub const MAX_DIFF_LINES: usize = 200;
/// Files shown with a diff at most; the others are listed with their change only.
pub const MAX_DIFF_FILES: usize = 50;
/// A file larger than this (on either side) is not diffed.
const MAX_DIFF_BYTES: u64 = 1 << 20;

/// One turn of a thread, as the picker lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TurnRow {
    pub turn: u64,
    /// The prompt that started it (empty when none was recorded).
    pub prompt: String,
    /// Files, directories and links the turn changed; `None` when no checkpoint was taken
    /// before it (only its conversation can be rewound).
    pub files_changed: Option<usize>,
}

impl TurnRow {
    /// What the picker shows of the prompt.
    pub fn first_line(&self) -> &str {
        self.prompt.lines().next().unwrap_or("").trim()
    }
}

/// One path a code rewind would change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    pub path: PathBuf,
    pub kind: ChangeKind,
    /// A unified diff from the file now to the file after the rewind, or a line saying why
    /// there is none (a directory, a binary or large file, a mode or type change).
    pub diff: String,
}

/// What a rewind to a turn would do.
#[derive(Debug, Clone, Serialize)]
pub struct RewindPreview {
    pub outcome: RewindOutcome,
    /// Files changed since the thread's last turn ended by something other than the agent:
    /// the rewind is refused over them unless forced.
    pub conflicts: Vec<PathBuf>,
    /// The first [`MAX_DIFF_FILES`] changes with their diffs.
    pub diffs: Vec<FileDiff>,
}

/// The thread's turns, newest first.
pub fn turns(
    home: &Path,
    threads: Option<&ThreadStore>,
    thread: &str,
) -> Result<Vec<TurnRow>, RewindError> {
    let summary = ops::find(home, threads, thread)?;
    let loaded = loader::load(&summary.rollout_path).map_err(ops::OpsError::from)?;
    let store = Store::open(&crate::session::checkpoints::store_dir(home))?;
    let index_lines = store.read_index(&summary.id.to_string())?;
    let mut manifests: HashMap<String, Option<Manifest>> = HashMap::new();
    let mut rows = Vec::new();
    let mut input: Option<String> = None;
    for line in &loaded.lines {
        match &line.record {
            // A turn's own message follows its context and any skill bodies.
            RolloutRecord::TurnContext(_) => input = None,
            RolloutRecord::ResponseItem(ResponseItem::Message {
                role: Role::User,
                content,
                ..
            }) => {
                let text: Vec<&str> = content.iter().filter_map(ContentItem::text).collect();
                let text = text.join("\n");
                if parse_report(&text).is_none() {
                    input = Some(task_of_first_message(&text).to_string());
                }
            }
            RolloutRecord::Event(EventMsg::TurnStarted { turn_id }) => {
                let prompt = input.take().unwrap_or_default();
                rows.push(TurnRow {
                    turn: turn_id.0,
                    prompt,
                    files_changed: files_changed(&store, &index_lines, turn_id.0, &mut manifests),
                });
            }
            _ => {}
        }
    }
    rows.reverse();
    Ok(rows)
}

/// How many paths turn `turn` changed: its latest *before* checkpoint against the *after*
/// one that follows it (none yet while it runs: nothing counted).
fn files_changed(
    store: &Store,
    lines: &[IndexLine],
    turn: u64,
    manifests: &mut HashMap<String, Option<Manifest>>,
) -> Option<usize> {
    let before_at = lines
        .iter()
        .rposition(|l| l.turn == turn && l.phase == Phase::Before && l.checkpoint.is_some())?;
    let before_id = lines[before_at].checkpoint.clone()?;
    let after_id = lines[before_at..]
        .iter()
        .find(|l| l.turn == turn && l.phase == Phase::After)
        .and_then(|l| l.checkpoint.clone());
    let mut load = |id: &str| {
        manifests
            .entry(id.to_string())
            .or_insert_with(|| store.load_manifest(id).ok())
            .clone()
    };
    let before = load(&before_id)?;
    Some(match after_id.and_then(|id| load(&id)) {
        Some(after) => diff(&before, &after).len(),
        None => 0,
    })
}

/// What `request` would do (it is run dry whatever it says), with the diffs.
pub fn preview(
    home: &Path,
    threads: Option<&ThreadStore>,
    request: &RewindRequest,
) -> Result<RewindPreview, RewindError> {
    let request = RewindRequest {
        dry_run: true,
        ..request.clone()
    };
    let summary = ops::find(home, threads, &request.thread)?;
    let plan = plan(home, summary, &request)?;
    let mut diffs = Vec::new();
    if let (Some(code), Some(now), Some(target)) =
        (&plan.outcome.code, &plan.current, &plan.code_target)
    {
        for change in code.changes.iter().take(MAX_DIFF_FILES) {
            diffs.push(FileDiff {
                path: change.full_path(),
                kind: change.kind,
                diff: file_diff(&plan.store, change, now, target),
            });
        }
    }
    Ok(RewindPreview {
        outcome: plan.outcome,
        conflicts: plan.conflicts,
        diffs,
    })
}

/// One side of a change.
enum Side {
    Absent,
    Text(String),
    /// Why its content is not shown.
    Opaque(String),
}

/// The diff of one changed path, from the tree now to the tree after the rewind.
fn file_diff(store: &Store, change: &Change, now: &Manifest, target: &Manifest) -> String {
    let node = |manifest: &Manifest| {
        manifest
            .root(&change.root)
            .and_then(|state| state.entries.get(&change.path))
            .cloned()
    };
    let (old, new) = (node(now), node(target));
    match (&old, &new) {
        (
            Some(Node::File {
                mode: a, hash: x, ..
            }),
            Some(Node::File {
                mode: b, hash: y, ..
            }),
        ) if x == y => {
            return format!("mode {a:o} → {b:o}\n");
        }
        (Some(Node::Dir { mode: a }), Some(Node::Dir { mode: b })) => {
            return format!("directory mode {a:o} → {b:o}\n");
        }
        _ => {}
    }
    let old_side = side_now(change, old.as_ref());
    let new_side = side_stored(store, new.as_ref());
    unified(&change.path, &old_side, &new_side)
}

/// A path as it is on disk now (the dry run hashed it but kept no copy).
fn side_now(change: &Change, node: Option<&Node>) -> Side {
    match node {
        None => Side::Absent,
        Some(Node::Dir { .. }) => Side::Opaque("a directory".into()),
        Some(Node::Symlink { target }) => Side::Text(format!("symlink → {target}\n")),
        Some(Node::File { size, .. }) if *size > MAX_DIFF_BYTES => {
            Side::Opaque(format!("{size} bytes, too large to show"))
        }
        Some(Node::File { .. }) => {
            match troupe_checkpoint::read_beneath(&change.root, &change.path, MAX_DIFF_BYTES) {
                Ok(Some(bytes)) => text_or_binary(bytes),
                Ok(None) => Side::Opaque("too large to show".into()),
                Err(err) => Side::Opaque(format!("cannot read it now: {err}")),
            }
        }
    }
}

/// A path as the checkpoint recorded it.
fn side_stored(store: &Store, node: Option<&Node>) -> Side {
    match node {
        None => Side::Absent,
        Some(Node::Dir { .. }) => Side::Opaque("a directory".into()),
        Some(Node::Symlink { target }) => Side::Text(format!("symlink → {target}\n")),
        Some(Node::File { size, .. }) if *size > MAX_DIFF_BYTES => {
            Side::Opaque(format!("{size} bytes, too large to show"))
        }
        Some(Node::File { hash, .. }) => match store.read_object(hash) {
            Ok(bytes) => text_or_binary(bytes),
            Err(err) => Side::Opaque(err.to_string()),
        },
    }
}

fn text_or_binary(bytes: Vec<u8>) -> Side {
    let size = bytes.len();
    match String::from_utf8(bytes) {
        Ok(text) if !text.contains('\0') => Side::Text(text),
        _ => Side::Opaque(format!("binary, {size} bytes")),
    }
}

/// `a/` is the file now, `b/` after the rewind; at most [`MAX_DIFF_LINES`] lines.
fn unified(path: &str, old: &Side, new: &Side) -> String {
    let text = |side: &Side| match side {
        Side::Text(text) => Some(text.clone()),
        Side::Absent => Some(String::new()),
        Side::Opaque(_) => None,
    };
    let (Some(old_text), Some(new_text)) = (text(old), text(new)) else {
        let describe = |side: &Side| match side {
            Side::Absent => "absent".to_string(),
            Side::Text(text) => format!("text, {} bytes", text.len()),
            Side::Opaque(why) => why.clone(),
        };
        return format!("now: {}; after: {}\n", describe(old), describe(new));
    };
    let (from, to) = (
        match old {
            Side::Absent => "/dev/null".to_string(),
            _ => format!("a/{path}"),
        },
        match new {
            Side::Absent => "/dev/null".to_string(),
            _ => format!("b/{path}"),
        },
    );
    let full = similar::TextDiff::from_lines(&old_text, &new_text)
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string();
    let total = full.lines().count();
    if total <= MAX_DIFF_LINES {
        return full;
    }
    let mut kept: String = full
        .lines()
        .take(MAX_DIFF_LINES)
        .map(|line| format!("{line}\n"))
        .collect();
    kept.push_str(&format!("… {} more lines\n", total - MAX_DIFF_LINES));
    kept
}

#[cfg(test)]
#[path = "rewind_preview_tests.rs"]
mod tests;
