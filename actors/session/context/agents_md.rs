//! AGENTS.md discovery (Codex's rules): find the project root by markers, walk root → cwd,
//! take in each directory the first of `AGENTS.override.md`, `AGENTS.md`, then the configured
//! fallback names; concatenate under one shared byte budget. The file that crosses the budget
//! is truncated (with a warning), later ones are not read, blank files cost nothing, and the
//! `--- project-doc ---` marker appears once, where user instructions give way to project ones.

use super::bounded_read::{read_bounded, ReadError};
use std::path::{Path, PathBuf};
use troupe_config::layers::{dirs_root_to_cwd, project_root};

/// Name tried first in every directory; replaces `AGENTS.md` of the same directory only.
pub const OVERRIDE_FILENAME: &str = "AGENTS.override.md";
/// The standard name.
pub const DEFAULT_FILENAME: &str = "AGENTS.md";
/// Budget of the user's own instructions (`$TROUPE_HOME/AGENTS.md`), apart from the projects'.
pub const USER_INSTRUCTIONS_MAX_BYTES: usize = 32 * 1024;
/// Put between user (or internal) instructions and the first project doc.
pub const PROJECT_DOC_MARKER: &str = "\n\n--- project-doc ---\n\n";

/// Where discovery looks and how much it may read.
#[derive(Debug, Clone)]
pub struct DiscoveryOptions<'a> {
    pub cwd: &'a Path,
    pub root_markers: &'a [String],
    pub fallback_filenames: &'a [String],
    /// Shared budget of all project docs; 0 disables them.
    pub max_bytes: usize,
    /// `$TROUPE_HOME`: its `AGENTS.override.md`, else its `AGENTS.md`, holds the user's
    /// instructions, with their own budget ([`USER_INSTRUCTIONS_MAX_BYTES`]).
    pub user_dir: Option<&'a Path>,
}

/// The combined instructions and what was found on the way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Instructions {
    /// The text for the model; `None` when there is nothing.
    pub text: Option<String>,
    /// Files that contributed, in order.
    pub sources: Vec<PathBuf>,
    /// Truncations and unreadable files, naming the file.
    pub warnings: Vec<String>,
}

/// One contributing file.
struct Entry {
    text: String,
    is_project: bool,
}

/// Runs discovery; reading errors become warnings, never failures.
pub fn discover(options: &DiscoveryOptions<'_>) -> Instructions {
    let mut found = Instructions::default();
    let mut entries = Vec::new();
    if let Some((path, text)) = options
        .user_dir
        .and_then(|dir| user_instructions(dir, &mut found.warnings))
    {
        entries.push(Entry {
            text,
            is_project: false,
        });
        found.sources.push(path);
    }
    if options.max_bytes > 0 {
        let mut remaining = options.max_bytes;
        for path in project_doc_paths(options) {
            if remaining == 0 {
                break;
            }
            let budget = "project doc exceeds the remaining budget";
            let Some(text) = read_text(&path, remaining, budget, &mut found.warnings) else {
                continue;
            };
            if text.trim().is_empty() {
                continue;
            }
            remaining = remaining.saturating_sub(text.len());
            entries.push(Entry {
                text,
                is_project: true,
            });
            found.sources.push(path);
        }
    }
    found.text = join(&entries);
    found
}

/// The user's instructions in `dir`: `AGENTS.override.md` when it has any text, else
/// `AGENTS.md` (as Codex reads its home; a blank or unreadable override falls through).
fn user_instructions(dir: &Path, warnings: &mut Vec<String>) -> Option<(PathBuf, String)> {
    [OVERRIDE_FILENAME, DEFAULT_FILENAME]
        .iter()
        .map(|name| dir.join(name))
        .find_map(|path| {
            let budget = "user instructions exceed their budget";
            let text = read_text(&path, USER_INSTRUCTIONS_MAX_BYTES, budget, warnings)?;
            (!text.trim().is_empty()).then_some((path, text))
        })
}

/// The chosen file of each directory from the project root down to cwd.
pub fn project_doc_paths(options: &DiscoveryOptions<'_>) -> Vec<PathBuf> {
    let root = project_root(options.cwd, options.root_markers);
    let dirs = dirs_root_to_cwd(&root, options.cwd);
    let mut names = vec![OVERRIDE_FILENAME.to_string(), DEFAULT_FILENAME.to_string()];
    for name in options.fallback_filenames {
        if !name.is_empty() && !names.contains(name) {
            names.push(name.clone());
        }
    }
    dirs.into_iter()
        .filter_map(|dir| {
            names
                .iter()
                .map(|name| dir.join(name))
                .find(|path| path.is_file())
        })
        .collect()
}

/// Reads at most `limit` bytes (never more into memory); a cut file gets a warning, non-UTF-8
/// is replaced and warned.
fn read_text(
    path: &Path,
    limit: usize,
    budget: &str,
    warnings: &mut Vec<String>,
) -> Option<String> {
    let read = match read_bounded(path, limit) {
        Ok(read) => read,
        Err(ReadError::NotFound) => return None,
        Err(err) => {
            warnings.push(format!("{}: cannot read: {err}", path.display()));
            return None;
        }
    };
    if read.lossy {
        warnings.push(format!(
            "{}: not valid UTF-8; invalid bytes replaced",
            path.display()
        ));
    }
    if read.truncated {
        warnings.push(format!(
            "{}: {budget} ({limit} of {} bytes kept); truncating",
            path.display(),
            read.file_bytes
        ));
    }
    Some(read.text)
}

fn join(entries: &[Entry]) -> Option<String> {
    let mut text = String::new();
    let mut previous_was_project: Option<bool> = None;
    for entry in entries {
        if let Some(previous) = previous_was_project {
            text.push_str(if entry.is_project && !previous {
                PROJECT_DOC_MARKER
            } else {
                "\n\n"
            });
        }
        text.push_str(&entry.text);
        previous_was_project = Some(entry.is_project);
    }
    (!text.is_empty()).then_some(text)
}
