//! From hunks to the final contents of every file the patch touches, computed in memory
//! before anything is written (so a failing hunk anywhere means nothing changes).
//!
//! Hunks apply in order on top of each other, as Codex applies them one by one on disk: an
//! overlay of pending states stands in for the disk, so `Add` then `Update` of one path, or
//! two `Update`s of one file, compose exactly as they would there.

use super::beneath::{Confinement, Located, Refusal};
use super::error::PatchError;
use super::lexical::{self, PathProblem};
use super::parser::{Chunk, Hunk, LineKind};
use super::seek::seek_sequence;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a path holds once the patch is applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinalState {
    Present(String),
    Absent,
}

/// One entry of the patch's summary, with the path as the patch wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Affected {
    Added(PathBuf),
    Modified(PathBuf),
    Deleted(PathBuf),
}

/// A file change as reported in events: absolute paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub kind: ChangeKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    Add,
    Delete,
    Update { move_to: Option<PathBuf> },
}

/// Everything to write, and what to tell the user.
#[derive(Debug, Default)]
pub struct Plan {
    /// Final state of every touched path (absolute, as the patch named it), in path order.
    pub files: BTreeMap<PathBuf, FinalState>,
    /// Where each entry of `files` is written: located when planned, walked again without
    /// symlinks when written.
    pub targets: BTreeMap<PathBuf, Located>,
    /// The disk contents of each touched path before the patch (None: it did not exist).
    pub before: BTreeMap<PathBuf, Option<String>>,
    pub affected: Vec<Affected>,
    pub changes: Vec<Change>,
    confinement: Confinement,
    /// Texts an editor holds for some paths (unsaved buffers), read instead of the disk once
    /// the path is located.
    buffers: BTreeMap<PathBuf, String>,
}

/// Why the disk could not give a path's current text.
enum ReadFailure {
    Refused(Refusal),
    Io(std::io::Error),
}

impl Plan {
    /// The state of `path` as earlier hunks left it, reading the disk the first time. Bytes:
    /// only an update needs the text to be UTF-8, a deletion takes any file.
    fn current(&mut self, path: &Path) -> Result<Option<Vec<u8>>, ReadFailure> {
        if let Some(state) = self.files.get(path) {
            return Ok(match state {
                FinalState::Present(text) => Some(text.clone().into_bytes()),
                FinalState::Absent => None,
            });
        }
        let before = self.read_disk(path)?;
        self.before
            .insert(path.to_path_buf(), before.as_deref().map(shown_text));
        Ok(before)
    }

    fn read_disk(&self, path: &Path) -> Result<Option<Vec<u8>>, ReadFailure> {
        let located = self
            .confinement
            .locate(path, true)
            .map_err(ReadFailure::Refused)?;
        if let Some(text) = self.buffers.get(path) {
            return Ok(Some(text.clone().into_bytes()));
        }
        self.confinement.read(&located).map_err(ReadFailure::Io)
    }

    /// Records the path's new state, and where it will be written (a deletion removes a
    /// symlink itself, a write goes to what it points to). Its old contents are kept only
    /// for the turn diff, so an unreadable one (binary, permissions) is not an error here:
    /// writing it will tell.
    fn set(&mut self, path: &Path, shown: &Path, state: FinalState) -> Result<(), PatchError> {
        let follow = matches!(state, FinalState::Present(_));
        let target = self
            .confinement
            .locate(path, follow)
            .map_err(|reason| refused(shown, reason))?;
        if !self.before.contains_key(path) {
            let before = match self.read_disk(path) {
                Err(ReadFailure::Refused(reason)) => return Err(refused(shown, reason)),
                Err(ReadFailure::Io(_)) => None,
                Ok(before) => before.as_deref().map(shown_text),
            };
            self.before.insert(path.to_path_buf(), before);
        }
        self.targets.insert(path.to_path_buf(), target);
        self.files.insert(path.to_path_buf(), state);
        Ok(())
    }
}

/// A file's old contents as the turn diff shows them: bytes that are not UTF-8 (a deleted
/// binary or Latin-1 file) are shown lossily rather than left out.
fn shown_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Where `shown` lies, from `cwd`, with `.` and `..` applied to the text.
fn absolute(cwd: &Path, shown: &Path) -> Result<PathBuf, PatchError> {
    lexical::resolve(cwd, shown).map_err(|problem| match problem {
        PathProblem::EscapesCwd => PatchError::EscapesCwd {
            path: shown.to_path_buf(),
            cwd: cwd.to_path_buf(),
        },
        PathProblem::NoFileName => refused(shown, Refusal::NoFileName),
    })
}

fn refused(shown: &Path, reason: Refusal) -> PatchError {
    PatchError::Refused {
        path: shown.to_path_buf(),
        reason,
    }
}

/// Computes the plan for `hunks`, with relative paths taken from `cwd`; every path is
/// located (and refused) under `confinement`.
pub fn plan_hunks(
    hunks: &[Hunk],
    cwd: &Path,
    confinement: &Confinement,
) -> Result<Plan, PatchError> {
    plan_hunks_over(hunks, cwd, confinement, BTreeMap::new())
}

/// [`plan_hunks`], reading the paths in `buffers` (absolute, as the patch names them) from
/// there rather than the disk; each is still located (and refused) under `confinement`.
pub fn plan_hunks_over(
    hunks: &[Hunk],
    cwd: &Path,
    confinement: &Confinement,
    buffers: BTreeMap<PathBuf, String>,
) -> Result<Plan, PatchError> {
    if hunks.is_empty() {
        return Err(PatchError::Empty);
    }
    // Every path is checked before any is read: a later hunk climbing out refuses the patch
    // without an earlier one having touched the disk.
    for hunk in hunks {
        absolute(cwd, hunk.path())?;
        if let Hunk::Update {
            move_to: Some(to), ..
        } = hunk
        {
            absolute(cwd, to)?;
        }
    }
    let mut plan = Plan {
        confinement: confinement.clone(),
        buffers,
        ..Plan::default()
    };
    for hunk in hunks {
        let shown = hunk.path().clone();
        let path = absolute(cwd, &shown)?;
        match hunk {
            Hunk::Add { contents, .. } => {
                plan.set(&path, &shown, FinalState::Present(contents.clone()))?;
                plan.affected.push(Affected::Added(shown));
                plan.changes.push(Change {
                    path,
                    kind: ChangeKind::Add,
                });
            }
            Hunk::Delete { .. } => {
                let existing = match plan.current(&path) {
                    Ok(existing) => existing,
                    Err(ReadFailure::Refused(reason)) => return Err(refused(&shown, reason)),
                    Err(ReadFailure::Io(source)) => {
                        return Err(PatchError::ReadDelete {
                            path: shown.clone(),
                            source,
                        })
                    }
                };
                if existing.is_none() {
                    return Err(PatchError::ReadDelete {
                        path: shown,
                        source: std::io::ErrorKind::NotFound.into(),
                    });
                }
                plan.set(&path, &shown, FinalState::Absent)?;
                plan.affected.push(Affected::Deleted(shown));
                plan.changes.push(Change {
                    path,
                    kind: ChangeKind::Delete,
                });
            }
            Hunk::Update {
                move_to, chunks, ..
            } => {
                let original = match plan.current(&path) {
                    Ok(Some(bytes)) => match String::from_utf8(bytes) {
                        Ok(text) => text,
                        Err(_) => return Err(PatchError::NotUtf8 { path: shown }),
                    },
                    Ok(None) => {
                        return Err(PatchError::ReadUpdate {
                            path: shown,
                            source: std::io::ErrorKind::NotFound.into(),
                        })
                    }
                    Err(ReadFailure::Refused(reason)) => return Err(refused(&shown, reason)),
                    Err(ReadFailure::Io(source)) => {
                        return Err(PatchError::ReadUpdate {
                            path: shown,
                            source,
                        })
                    }
                };
                let updated = apply_chunks(&original, chunks, &shown)?;
                // A move onto itself is an update: Codex would delete the file it just wrote.
                let dest = move_to
                    .as_ref()
                    .map(|to| absolute(cwd, to).map(|dest_path| (dest_path, to.clone())))
                    .transpose()?
                    .filter(|(dest_path, _)| *dest_path != path);
                match &dest {
                    Some((dest_path, dest_shown)) => {
                        // Codex writes the destination, then removes the source.
                        plan.set(dest_path, dest_shown, FinalState::Present(updated))?;
                        plan.set(&path, &shown, FinalState::Absent)?;
                        plan.affected.push(Affected::Modified(dest_shown.clone()));
                    }
                    None => {
                        plan.set(&path, &shown, FinalState::Present(updated))?;
                        plan.affected.push(Affected::Modified(shown.clone()));
                    }
                }
                plan.changes.push(Change {
                    path,
                    kind: ChangeKind::Update {
                        move_to: dest.map(|(dest_path, _)| dest_path),
                    },
                });
            }
        }
    }
    Ok(plan)
}

/// Applies update chunks to a file's text, with Codex's line model: the text is split on
/// `\n` (a final newline ends the last line rather than adding an empty one), and every
/// line of the result ends with a newline (so trailing blank lines survive, and an empty
/// result is an empty file). Context lines keep the file's own text (its whitespace, its
/// line ending); a file whose first line ends in CRLF gets CRLF on every added line.
///
/// A file whose first line ends in a lone `\r` (classic Mac OS) has `\r` as its line
/// separator: it is split and joined on `\r` instead, so it matches and keeps its endings.
pub fn apply_chunks(original: &str, chunks: &[Chunk], path: &Path) -> Result<String, PatchError> {
    let separator = line_separator(original);
    let mut lines: Vec<String> = original.split(separator).map(str::to_string).collect();
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let crlf = separator == '\n'
        && original
            .split_once('\n')
            .is_some_and(|(first, _)| first.ends_with('\r'));
    if crlf && !original.ends_with('\n') {
        // The unterminated last line will get a line ending, in the file's style.
        if let Some(last) = lines.last_mut().filter(|last| !last.ends_with('\r')) {
            last.push('\r');
        }
    }
    let mut replacements = compute_replacements(&lines, chunks, path, crlf)?;
    replacements.sort_by_key(|(start, _, _)| *start);
    for (start, old_len, new_lines) in replacements.into_iter().rev() {
        lines.splice(start..start + old_len, new_lines);
    }
    if lines.is_empty() {
        return Ok(String::new());
    }
    let mut text = lines.join(&separator.to_string());
    text.push(separator);
    Ok(text)
}

/// `\r` when the first line ending of `text` is a lone carriage return, else `\n`.
fn line_separator(text: &str) -> char {
    match text.find(['\r', '\n']) {
        Some(at) if text[at..].starts_with('\r') && !text[at..].starts_with("\r\n") => '\r',
        _ => '\n',
    }
}

type Replacement = (usize, usize, Vec<String>);

fn compute_replacements(
    lines: &[String],
    chunks: &[Chunk],
    path: &Path,
    crlf: bool,
) -> Result<Vec<Replacement>, PatchError> {
    let mut replacements = Vec::with_capacity(chunks.len());
    let mut cursor = 0;
    for (index, chunk) in chunks.iter().enumerate() {
        if let Some(context) = &chunk.context {
            let wanted = std::slice::from_ref(context);
            match seek_sequence(lines, wanted, cursor, false) {
                Some(at) => cursor = at + 1,
                None => {
                    return Err(PatchError::ContextNotFound {
                        path: path.to_path_buf(),
                        context: context.clone(),
                        chunk: index + 1,
                        line: chunk.line,
                    })
                }
            }
        }
        let old_lines = chunk.old_lines();
        if old_lines.is_empty() {
            // Pure addition: goes at the very end of the file, after any blank lines.
            replacements.extend(edits(&chunk.lines, lines.len(), crlf));
            continue;
        }
        let mut tagged: &[(LineKind, String)] = &chunk.lines;
        let mut old: &[String] = &old_lines;
        let mut found = seek_sequence(lines, old, cursor, chunk.end_of_file);
        let trimmed;
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            // A trailing empty line in the chunk often stands for the file's final newline.
            old = &old[..old.len() - 1];
            trimmed = without_trailing_empty(tagged);
            tagged = &trimmed;
            found = seek_sequence(lines, old, cursor, chunk.end_of_file);
        }
        let Some(start) = found else {
            return Err(PatchError::LinesNotFound {
                path: path.to_path_buf(),
                expected: old_lines.join("\n"),
                chunk: index + 1,
                line: chunk.line,
            });
        };
        replacements.extend(edits(tagged, start, crlf));
        cursor = start + old.len();
    }
    Ok(replacements)
}

/// A chunk's changes as separate replacements, one per run of `-`/`+` lines, positioned
/// from `start` (where its old lines matched). Context lines are never rewritten, so they
/// keep the file's own text, and a run that meets another edit at one line is ordered the
/// way Codex orders it.
fn edits(tagged: &[(LineKind, String)], start: usize, crlf: bool) -> Vec<Replacement> {
    let mut out = Vec::new();
    let mut at = start;
    let mut run: Option<Replacement> = None;
    for (kind, text) in tagged {
        match kind {
            LineKind::Context => {
                out.extend(run.take());
                at += 1;
            }
            LineKind::Remove => {
                run.get_or_insert((at, 0, Vec::new())).1 += 1;
                at += 1;
            }
            LineKind::Add => {
                let mut line = text.clone();
                if crlf && !line.ends_with('\r') {
                    line.push('\r');
                }
                run.get_or_insert((at, 0, Vec::new())).2.push(line);
            }
        }
    }
    out.extend(run);
    out
}

/// The chunk without the empty line(s) its retry dropped: the last line of the old side
/// (context or removed) and the last of the new side (context or added), when empty.
fn without_trailing_empty(tagged: &[(LineKind, String)]) -> Vec<(LineKind, String)> {
    let mut lines = tagged.to_vec();
    let empty_at = |lines: &[(LineKind, String)], skip: LineKind| {
        lines
            .iter()
            .rposition(|(kind, _)| *kind != skip)
            .filter(|&i| lines[i].1.is_empty())
    };
    let last_old = empty_at(&lines, LineKind::Add);
    let last_new = empty_at(&lines, LineKind::Remove);
    if last_old.is_some() && last_old == last_new {
        if let Some(i) = last_old {
            lines.remove(i);
        }
        return lines;
    }
    // Different lines: take each off its own side only (a context line becomes one-sided).
    let mut drop = Vec::new();
    for (at, other) in [(last_old, LineKind::Add), (last_new, LineKind::Remove)] {
        if let Some(i) = at {
            match lines[i].0 {
                LineKind::Context => lines[i].0 = other,
                LineKind::Add | LineKind::Remove => drop.push(i),
            }
        }
    }
    drop.sort_unstable();
    for i in drop.into_iter().rev() {
        lines.remove(i);
    }
    lines
}
