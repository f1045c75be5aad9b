//! `troupe rewind`: a thread's work tree and conversation taken back to before turn N.
//!
//! The code: the checkpoint taken before turn N's first tool ran is restored over the turn's
//! writable roots ([`troupe_checkpoint`]), after checking that nobody but the agent changed
//! them since the thread's last turn ended (the "after" checkpoint) — unless forced. The
//! conversation: the rollout is cut before turn N, as `fork --at-turn N-1` would copy it,
//! but in the same thread (the prompt-cache prefix is kept). Both are undoable: the tree is
//! checkpointed and the rollout kept in the store before anything changes (`--undo`).
//! Only a thread no process holds is rewound.

use super::ops::{self, OpsError};
use super::ThreadStore;
use crate::rollout_recorder::loader;
use crate::rollout_recorder::replay;
use serde::Serialize;
use std::path::{Path, PathBuf};
use thiserror::Error;
use troupe_checkpoint::index::{self, IndexLine, Phase};
use troupe_checkpoint::{diff, Change, CheckpointError, Manifest, Options, Skipped, Store};
use troupe_messages::rollout::{RolloutLine, RolloutRecord};
use troupe_messages::threads::ThreadSummary;

#[derive(Debug, Error)]
pub enum RewindError {
    #[error(transparent)]
    Ops(#[from] OpsError),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error("thread {id} has {turns} turn(s); --to-turn must be between 1 and {turns}")]
    NoSuchTurn { id: String, turns: u64 },
    #[error("no checkpoint of the work tree before turn {turn} (checkpoints were off, pruned, or the turn ran no tool); rewind the conversation only with --conversation")]
    NoCheckpoint { turn: u64 },
    #[error("these files changed since the thread's last turn ended, by something other than the agent; a rewind would lose that (use --force to rewind anyway):\n{}", list(.files))]
    ChangedOutside { files: Vec<PathBuf> },
    #[error("nothing to undo: thread {0} has not been rewound")]
    NothingToUndo(String),
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

fn list(files: &[PathBuf]) -> String {
    files
        .iter()
        .map(|f| format!("  {}", f.display()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What to rewind.
#[derive(Debug, Clone)]
pub struct RewindRequest {
    pub thread: String,
    /// Rewind to the state before this turn; `None` undoes the last rewind.
    pub to_turn: Option<u64>,
    pub code: bool,
    pub conversation: bool,
    pub dry_run: bool,
    pub force: bool,
    /// The limits and exclusions of checkpoints (from the settings of the moment).
    pub options: Options,
}

/// What a rewind did (or, dry, would do).
#[derive(Debug, Clone, Serialize)]
pub struct RewindOutcome {
    pub thread_id: String,
    pub dry_run: bool,
    /// Present when the code was (to be) rewound.
    pub code: Option<CodeOutcome>,
    /// Present when the conversation was (to be) rewound.
    pub conversation: Option<ConversationOutcome>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CodeOutcome {
    pub changes: Vec<Change>,
    pub failed: Vec<(PathBuf, String)>,
    pub kept_dirs: Vec<PathBuf>,
    pub not_covered: Vec<(PathBuf, Skipped)>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConversationOutcome {
    pub turns_before: u64,
    pub turns_after: u64,
}

/// Rewinds (or undoes the last rewind of) a thread no process holds.
#[allow(
    clippy::too_many_lines,
    reason = "a sequence of stages that read best in order; split when it grows"
)]
pub fn rewind(
    home: &Path,
    threads: Option<&ThreadStore>,
    request: &RewindRequest,
) -> Result<RewindOutcome, RewindError> {
    let summary = ops::find(home, threads, &request.thread)?;
    ops::ensure_not_running(&summary)?;
    let plan = plan(home, summary, request)?;
    if !request.force && !plan.conflicts.is_empty() {
        return Err(RewindError::ChangedOutside {
            files: plan.conflicts,
        });
    }
    if request.dry_run {
        return Ok(plan.outcome);
    }
    carry_out(home, threads, request, plan)
}

/// What a rewind would do, worked out without writing anything (with `request.dry_run`
/// the current tree is hashed, not stored; otherwise its contents are stored, ready to be
/// named by the undo checkpoint).
pub(super) struct Plan {
    pub(super) outcome: RewindOutcome,
    /// Files changed since the thread's last turn ended by something other than the agent.
    pub(super) conflicts: Vec<PathBuf>,
    /// The tree now (present when the code is rewound).
    pub(super) current: Option<Manifest>,
    /// What the code goes back to.
    pub(super) code_target: Option<Manifest>,
    pub(super) store: Store,
    summary: ThreadSummary,
    new_rollout: Option<Vec<u8>>,
}

pub(super) fn plan(
    home: &Path,
    summary: ThreadSummary,
    request: &RewindRequest,
) -> Result<Plan, RewindError> {
    let loaded = loader::load(&summary.rollout_path).map_err(OpsError::from)?;
    loader::check_writable(&loaded).map_err(OpsError::from)?;
    let thread = summary.id.to_string();
    let turns = replay::replay(&loaded.lines).tracker.turns;
    let store = Store::open(&crate::session::checkpoints::store_dir(home))?;
    let index_lines = store.read_index(&thread)?;

    // What each part goes back to: a checkpoint and a rollout.
    let (code_target, rollout_target): (Option<Manifest>, Option<RolloutSource>) =
        match request.to_turn {
            Some(turn) => {
                if turn == 0 || turn > turns {
                    return Err(RewindError::NoSuchTurn { id: thread, turns });
                }
                let code = if request.code {
                    let line = index::find(&index_lines, turn, Phase::Before)
                        .ok_or(RewindError::NoCheckpoint { turn })?;
                    let id = line.checkpoint.as_deref().unwrap_or_default();
                    Some(store.load_manifest(id)?)
                } else {
                    None
                };
                let conversation = request
                    .conversation
                    .then_some(RolloutSource::CutBefore(turn));
                (code, conversation)
            }
            None => {
                let last = index::last_of(&index_lines, Phase::Rewind)
                    .ok_or_else(|| RewindError::NothingToUndo(thread.clone()))?;
                let code = match (&last.checkpoint, request.code) {
                    (Some(id), true) => Some(store.load_manifest(id)?),
                    _ => None,
                };
                let conversation = match (&last.rollout_backup, request.conversation) {
                    (Some(path), true) => Some(RolloutSource::Backup(path.clone())),
                    _ => None,
                };
                if code.is_none() && conversation.is_none() {
                    return Err(RewindError::NothingToUndo(thread));
                }
                (code, conversation)
            }
        };

    let mut outcome = RewindOutcome {
        thread_id: thread,
        dry_run: request.dry_run,
        code: None,
        conversation: None,
    };
    let new_rollout = match &rollout_target {
        Some(source) => {
            let (bytes, turns_after) = source.contents(&summary.rollout_path)?;
            outcome.conversation = Some(ConversationOutcome {
                turns_before: turns,
                turns_after,
            });
            Some(bytes)
        }
        None => None,
    };

    // The tree now, checked against how the last turn left it.
    let mut current = None;
    let mut conflicts = Vec::new();
    if let Some(target) = &code_target {
        let roots: Vec<PathBuf> = target.roots.iter().map(|r| r.root.clone()).collect();
        let previous = index::latest(&index_lines)
            .and_then(|l| l.checkpoint.as_deref())
            .and_then(|id| store.load_manifest(id).ok());
        let options = Options {
            keep: !request.dry_run,
            ..request.options.clone()
        };
        let now = store.take(&roots, previous.as_ref(), &options)?;
        let last_after = index::last_of(&index_lines, Phase::After)
            .and_then(|l| l.checkpoint.as_deref())
            .and_then(|id| store.load_manifest(id).ok());
        if let Some(after) = last_after {
            conflicts = diff(&after, &now).iter().map(Change::full_path).collect();
        }
        let mut not_covered: Vec<(PathBuf, Skipped)> = Vec::new();
        for state in now.roots.iter().chain(&target.roots) {
            for skipped in &state.skipped {
                let entry = (state.root.clone(), skipped.clone());
                if !not_covered.contains(&entry) {
                    not_covered.push(entry);
                }
            }
        }
        outcome.code = Some(CodeOutcome {
            changes: diff(&now, target),
            failed: Vec::new(),
            kept_dirs: Vec::new(),
            not_covered,
        });
        current = Some(now);
    }
    Ok(Plan {
        outcome,
        conflicts,
        current,
        code_target,
        store,
        summary,
        new_rollout,
    })
}

/// Writes what `plan` worked out: the undo record first, then the tree and the rollout.
fn carry_out(
    home: &Path,
    threads: Option<&ThreadStore>,
    request: &RewindRequest,
    plan: Plan,
) -> Result<RewindOutcome, RewindError> {
    let Plan {
        mut outcome,
        current,
        code_target,
        store,
        summary,
        new_rollout,
        ..
    } = plan;
    let thread = outcome.thread_id.clone();
    // Undo first: the tree as it is and the rollout as it is, kept.
    let rewind_id = Store::new_id();
    if let Some(now) = &current {
        store.write_manifest(now)?;
    }
    let backup = match &new_rollout {
        Some(_) => {
            let path = store.rollout_backup(&thread, &rewind_id);
            copy_durably(&summary.rollout_path, &path, store.dir())?;
            Some(path)
        }
        None => None,
    };
    store.append_index(
        &thread,
        &IndexLine {
            turn: request.to_turn.unwrap_or(0),
            phase: Phase::Rewind,
            checkpoint: current.as_ref().map(|m| m.id.clone()),
            rollout_backup: backup,
            at_ms: now_ms(),
        },
    )?;

    if let (Some(now), Some(target), Some(code)) = (&current, &code_target, outcome.code.as_mut()) {
        let report = store.restore(now, target)?;
        code.failed = report.failed;
        code.kept_dirs = report.kept_dirs;
        // The tree as the rewind left it: what the next rewind compares against.
        let roots: Vec<PathBuf> = target.roots.iter().map(|r| r.root.clone()).collect();
        let after = store.take(&roots, Some(now), &request.options)?;
        store.write_manifest(&after)?;
        store.append_index(
            &thread,
            &IndexLine {
                turn: request.to_turn.unwrap_or(0),
                phase: Phase::After,
                checkpoint: Some(after.id),
                rollout_backup: None,
                at_ms: now_ms(),
            },
        )?;
    }
    if let Some(bytes) = new_rollout {
        troupe_checkpoint::write_atomically(
            &store.dir().join("tmp"),
            &summary.rollout_path,
            &bytes,
        )?;
        ops::refresh(home, threads, &summary.rollout_path)?;
    }
    Ok(outcome)
}

/// Where the rewound conversation comes from.
enum RolloutSource {
    /// This rollout, cut before turn N.
    CutBefore(u64),
    /// A rollout a rewind kept (undo).
    Backup(PathBuf),
}

impl RolloutSource {
    /// The new rollout's bytes and how many turns it holds. A cut keeps the file's bytes up
    /// to the first line of turn N exactly (nothing before it is re-encoded); an undo puts
    /// the kept file back as it was.
    fn contents(&self, rollout: &Path) -> Result<(Vec<u8>, u64), RewindError> {
        let path = match self {
            RolloutSource::CutBefore(_) => rollout,
            RolloutSource::Backup(path) => path.as_path(),
        };
        let bytes = std::fs::read(path).map_err(|source| RewindError::Io {
            action: "cannot read",
            path: path.to_path_buf(),
            source,
        })?;
        let bytes = match self {
            RolloutSource::CutBefore(turn) => cut_before_turn(bytes, *turn),
            RolloutSource::Backup(_) => bytes,
        };
        let lines: Vec<RolloutLine> = bytes
            .split(|b| *b == b'\n')
            .filter_map(|line| serde_json::from_slice(line).ok())
            .filter(|line: &RolloutLine| !matches!(line.record, RolloutRecord::SessionMeta(_)))
            .collect();
        Ok((bytes, replay::replay(&lines).tracker.turns))
    }
}

/// The bytes of a rollout before the `turn_context` line of turn `turn`.
fn cut_before_turn(bytes: Vec<u8>, turn: u64) -> Vec<u8> {
    let mut end = 0;
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        if let Ok(parsed) = serde_json::from_slice::<RolloutLine>(line) {
            if matches!(&parsed.record, RolloutRecord::TurnContext(c) if c.turn_id.0 >= turn) {
                break;
            }
        }
        end += line.len();
    }
    let mut kept = bytes;
    kept.truncate(end);
    kept
}

fn copy_durably(from: &Path, to: &Path, store: &Path) -> Result<(), RewindError> {
    let bytes = std::fs::read(from).map_err(|source| RewindError::Io {
        action: "cannot read",
        path: from.to_path_buf(),
        source,
    })?;
    troupe_checkpoint::write_atomically(&store.join("tmp"), to, &bytes)?;
    Ok(())
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
