//! Composer completion: `@` completes a file path of the working directory (fuzzy, the
//! walk respecting `.gitignore`), `$` a skill name (the skills the runtime lists to the
//! model; `$name` in a message attaches that skill's body).

use std::path::Path;

/// Files listed for `@` at most (a huge tree costs a bounded walk).
pub const MAX_FILES: usize = 50_000;
/// Choices the popup shows.
pub const POPUP_ROWS: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// `@path`
    File,
    /// `$skill`
    Skill,
}

/// The word the cursor is in when it starts with a trigger: byte range of the word
/// (trigger included) and the query after the trigger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub trigger: Trigger,
    pub start: usize,
    pub end: usize,
    pub query: String,
}

/// One choice: what is inserted and a note shown next to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub insert: String,
    pub label: String,
    pub note: String,
}

/// A skill offered for `$`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillEntry {
    pub name: String,
    pub description: String,
}

/// The trigger word around byte offset `cursor` of `text`, if any: it begins at the start of
/// the text or after whitespace and holds no whitespace.
pub fn token_at(text: &str, cursor: usize) -> Option<Token> {
    let before = text.get(..cursor)?;
    let start = before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    });
    let end = text[cursor..]
        .find(char::is_whitespace)
        .map_or(text.len(), |i| cursor + i);
    let word = &text[start..end];
    let trigger = match word.chars().next()? {
        '@' => Trigger::File,
        '$' => Trigger::Skill,
        _ => return None,
    };
    Some(Token {
        trigger,
        start,
        end,
        query: word[1..].to_string(),
    })
}

/// A fuzzy score of `candidate` for `query` (every query character in order, case-
/// insensitive), higher is better; `None` when it does not match. Consecutive characters,
/// matches at a word or path-segment start and short candidates score higher.
pub fn fuzzy_score(candidate: &str, query: &str) -> Option<i64> {
    if query.is_empty() {
        return Some(-(candidate.len() as i64));
    }
    let lower: Vec<char> = candidate.chars().flat_map(char::to_lowercase).collect();
    let mut score = 0i64;
    let mut last: Option<usize> = None;
    let mut from = 0usize;
    for wanted in query.chars().flat_map(char::to_lowercase) {
        let found = (from..lower.len()).find(|&i| lower[i] == wanted)?;
        score += 10;
        if last.is_some_and(|l| l + 1 == found) {
            score += 15;
        }
        if found == 0 || matches!(lower[found - 1], '/' | '_' | '-' | '.' | ' ') {
            score += 10;
        }
        last = Some(found);
        from = found + 1;
    }
    // A match in the file name beats one spread over the directories.
    let name_start = candidate.rfind('/').map_or(0, |i| i + 1);
    if let Some(first) = candidate[name_start..]
        .to_lowercase()
        .find(&query.to_lowercase())
    {
        score += 30 - (first.min(30) as i64);
    }
    Some(score * 4 - candidate.len() as i64)
}

/// The best choices for `token` among `files` and `skills`.
pub fn choices(token: &Token, files: &[String], skills: &[SkillEntry]) -> Vec<Choice> {
    let mut scored: Vec<(i64, Choice)> = match token.trigger {
        Trigger::File => files
            .iter()
            .filter_map(|path| {
                fuzzy_score(path, &token.query).map(|score| {
                    (
                        score,
                        Choice {
                            insert: path.clone(),
                            label: path.clone(),
                            note: String::new(),
                        },
                    )
                })
            })
            .collect(),
        Trigger::Skill => skills
            .iter()
            .filter_map(|skill| {
                fuzzy_score(&skill.name, &token.query).map(|score| {
                    (
                        score,
                        Choice {
                            insert: format!("${}", skill.name),
                            label: format!("${}", skill.name),
                            note: skill.description.clone(),
                        },
                    )
                })
            })
            .collect(),
    };
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.label.cmp(&b.1.label)));
    scored.truncate(POPUP_ROWS);
    scored.into_iter().map(|(_, choice)| choice).collect()
}

/// The files under `root`, relative, sorted; hidden files and what `.gitignore` (and
/// `.ignore`, git's exclude file) excludes are left out; at most [`MAX_FILES`]. Blocking.
pub fn list_files(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        // A .gitignore counts even outside a git repository (a fresh project).
        .require_git(false)
        .build();
    for entry in walker.flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Ok(relative) = entry.path().strip_prefix(root) {
            files.push(relative.to_string_lossy().into_owned());
        }
        if files.len() >= MAX_FILES {
            break;
        }
    }
    files.sort();
    files
}

/// The skills a thread in `cwd` sees (user skills, then the project's), as the runtime
/// discovers them. Blocking.
pub fn list_skills(home: &Path, cwd: &Path, root_markers: &[String]) -> Vec<SkillEntry> {
    let project = troupe_config::layers::project_root(cwd, root_markers);
    troupe_actors::session::context::skills::discover_skills(&[
        home.join("skills"),
        project.join(".agents").join("skills"),
    ])
    .skills
    .into_iter()
    .map(|skill| SkillEntry {
        name: skill.name,
        description: skill.description,
    })
    .collect()
}

#[cfg(test)]
#[path = "completion_tests.rs"]
mod tests;
