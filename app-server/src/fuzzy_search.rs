//! `fuzzyFileSearch`: files under the given roots whose relative path holds the query's
//! characters in order (case-insensitive), best first. The walk leaves out hidden files and
//! what `.gitignore`, `.ignore` and git's exclude file exclude, and stops at a bounded
//! number of files per root; it runs on a blocking thread.

use std::path::Path;
use troupe_app_server_protocol::protocol::{
    FuzzyFileSearchParams, FuzzyFileSearchResponse, FuzzyFileSearchResult,
};

/// Files looked at per root at most (a huge tree costs a bounded walk).
const MAX_FILES_PER_ROOT: usize = 50_000;
/// Matches answered at most.
const MAX_RESULTS: usize = 100;

/// Answers a search; a root that is not an absolute directory is an error.
pub async fn search(params: FuzzyFileSearchParams) -> Result<FuzzyFileSearchResponse, String> {
    for root in &params.roots {
        let path = Path::new(root);
        if !path.is_absolute() || !path.is_dir() {
            return Err(format!(
                "Invalid request: root {root} is not an absolute directory"
            ));
        }
    }
    tokio::task::spawn_blocking(move || search_blocking(&params))
        .await
        .map_err(|err| format!("the file search failed: {err}"))
}

fn search_blocking(params: &FuzzyFileSearchParams) -> FuzzyFileSearchResponse {
    let mut files = Vec::new();
    for root in &params.roots {
        for path in walk(Path::new(root)) {
            if let Some((score, indices)) = score(&path, &params.query) {
                let file_name = path.rsplit('/').next().unwrap_or(&path).to_string();
                files.push(FuzzyFileSearchResult {
                    root: root.clone(),
                    path,
                    file_name,
                    match_type: "file".into(),
                    score,
                    indices: Some(indices),
                });
            }
        }
    }
    files.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
    files.truncate(MAX_RESULTS);
    FuzzyFileSearchResponse { files }
}

/// The files under `root`, as `/`-separated paths relative to it.
fn walk(root: &Path) -> Vec<String> {
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        // A .gitignore counts outside a git repository too (a fresh project).
        .require_git(false)
        .build();
    walker
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|entry| {
            entry
                .path()
                .strip_prefix(root)
                .ok()
                .map(|relative| relative.to_string_lossy().replace('\\', "/"))
        })
        .take(MAX_FILES_PER_ROOT)
        .collect()
}

/// How well `path` matches `query`, and the character positions matched; `None` when the
/// query's characters are not all in it, in order. Every matched character counts; one
/// right after the previous match, or at the start of a path segment or word, counts more;
/// matches in the file name count more than in the directories; shorter paths win ties.
pub fn score(path: &str, query: &str) -> Option<(u32, Vec<u32>)> {
    let chars: Vec<char> = path.chars().collect();
    let lower: Vec<char> = chars
        .iter()
        .map(|c| c.to_lowercase().next().unwrap_or(*c))
        .collect();
    let name_start = chars.iter().rposition(|c| *c == '/').map_or(0, |i| i + 1);
    let mut indices = Vec::new();
    let mut points: i64 = 0;
    let mut from = 0;
    for wanted in query.chars().flat_map(char::to_lowercase) {
        let found = (from..lower.len()).find(|&i| lower[i] == wanted)?;
        points += 16;
        if indices.last().is_some_and(|last| last + 1 == found as u32) {
            points += 24;
        }
        if found == 0 || matches!(chars[found - 1], '/' | '_' | '-' | '.' | ' ') {
            points += 16;
        }
        if found >= name_start {
            points += 8;
        }
        indices.push(u32::try_from(found).ok()?);
        from = found + 1;
    }
    let score = (points * 8 - chars.len() as i64).max(0);
    Some((u32::try_from(score).unwrap_or(u32::MAX), indices))
}

#[cfg(test)]
#[path = "fuzzy_search_tests.rs"]
mod tests;
