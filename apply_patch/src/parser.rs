//! The patch grammar: `*** Begin Patch` … `*** End Patch` text → a list of file hunks.
//!
//! Follows Codex's parser, leniencies included, so a patch Codex accepts parses the same:
//! the text is trimmed, marker lines are compared trimmed, a heredoc wrapper
//! (`<<'EOF'` … `EOF`) around the patch is tolerated, blank lines between update chunks are
//! skipped, the first chunk of an update may omit its `@@`, and an empty line inside a chunk
//! (or before the first) is an empty context line.

use super::error::ParseError;
use std::path::PathBuf;

pub const BEGIN_PATCH: &str = "*** Begin Patch";
pub const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";
const EMPTY_CONTEXT: &str = "@@";
const CONTEXT_PREFIX: &str = "@@ ";

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    /// Create (or overwrite) a file with these contents.
    Add { path: PathBuf, contents: String },
    /// Remove a file.
    Delete { path: PathBuf },
    /// Change a file in place, optionally renaming it.
    Update {
        path: PathBuf,
        move_to: Option<PathBuf>,
        chunks: Vec<Chunk>,
        /// Patch line of the `*** Update File:` header, for error messages.
        line: usize,
    },
}

impl Hunk {
    /// The path the hunk names first (the source of a move).
    pub fn path(&self) -> &PathBuf {
        match self {
            Hunk::Add { path, .. } | Hunk::Delete { path } | Hunk::Update { path, .. } => path,
        }
    }
}

/// One `@@` section of an update: old lines to find, new lines to put in their place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Text after `@@ `: a line to find before looking for the old lines.
    pub context: Option<String>,
    /// The chunk's lines in order, each marked context, removed or added.
    pub lines: Vec<(LineKind, String)>,
    /// `*** End of File`: `old_lines` must sit at the end of the file.
    pub end_of_file: bool,
    /// Patch line where the chunk starts, for error messages.
    pub line: usize,
}

/// What a chunk line does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// ` ` (or an empty line): in the file before and after.
    Context,
    /// `-`: only before.
    Remove,
    /// `+`: only after.
    Add,
}

impl Chunk {
    /// The lines the file must contain (context and removed).
    pub fn old_lines(&self) -> Vec<String> {
        self.texts(|kind| kind != LineKind::Add)
    }

    /// The lines that replace them (context and added).
    pub fn new_lines(&self) -> Vec<String> {
        self.texts(|kind| kind != LineKind::Remove)
    }

    fn texts(&self, keep: impl Fn(LineKind) -> bool) -> Vec<String> {
        self.lines
            .iter()
            .filter(|(kind, _)| keep(*kind))
            .map(|(_, text)| text.clone())
            .collect()
    }
}

/// Parses a whole patch.
pub fn parse_patch(patch: &str) -> Result<Vec<Hunk>, ParseError> {
    let lines: Vec<&str> = patch.trim().lines().collect();
    let body = match check_boundaries(&lines) {
        Ok(()) => &lines[..],
        Err(strict_error) => strip_heredoc(&lines).ok_or(strict_error)?,
    };
    let last = body.len().saturating_sub(1);
    let mut remaining = body.get(1..last).unwrap_or_default();
    let mut line_number = 2;
    let mut hunks = Vec::new();
    while !remaining.is_empty() {
        let (hunk, used) = parse_hunk(remaining, line_number)?;
        hunks.push(hunk);
        line_number += used;
        remaining = &remaining[used..];
    }
    Ok(hunks)
}

fn check_boundaries(lines: &[&str]) -> Result<(), ParseError> {
    let first = lines.first().map(|line| line.trim());
    let last = lines.last().map(|line| line.trim());
    match (first, last) {
        (Some(BEGIN_PATCH), Some(END_PATCH)) if lines.len() >= 2 => Ok(()),
        (Some(first), _) if first != BEGIN_PATCH => Err(ParseError::Patch(
            "The first line of the patch must be '*** Begin Patch'".into(),
        )),
        (None, _) => Err(ParseError::Patch(
            "The first line of the patch must be '*** Begin Patch'".into(),
        )),
        _ => Err(ParseError::Patch(
            "The last line of the patch must be '*** End Patch'".into(),
        )),
    }
}

/// The patch inside `<<EOF` / `<<'EOF'` / `<<"EOF"` … `EOF`, when that is what was sent.
fn strip_heredoc<'a>(lines: &'a [&'a str]) -> Option<&'a [&'a str]> {
    if lines.len() < 4 {
        return None;
    }
    let first = lines[0].trim();
    let last = lines[lines.len() - 1].trim();
    let opens = matches!(first, "<<EOF" | "<<'EOF'" | "<<\"EOF\"");
    if !opens || !last.ends_with("EOF") {
        return None;
    }
    let inner = &lines[1..lines.len() - 1];
    check_boundaries(inner).ok().map(|()| inner)
}

/// Parses the hunk at the start of `lines`; returns it and how many lines it used.
fn parse_hunk(lines: &[&str], line_number: usize) -> Result<(Hunk, usize), ParseError> {
    let header = lines[0].trim();
    if let Some(path) = header.strip_prefix(ADD_FILE) {
        let mut contents = String::new();
        let mut used = 1;
        for line in &lines[1..] {
            let Some(text) = line.strip_prefix('+') else {
                break;
            };
            contents.push_str(text);
            contents.push('\n');
            used += 1;
        }
        let path = PathBuf::from(path);
        return Ok((Hunk::Add { path, contents }, used));
    }
    if let Some(path) = header.strip_prefix(DELETE_FILE) {
        let path = PathBuf::from(path);
        return Ok((Hunk::Delete { path }, 1));
    }
    if let Some(path) = header.strip_prefix(UPDATE_FILE) {
        return parse_update(path, lines, line_number);
    }
    Err(ParseError::Hunk {
        message: format!(
            "'{header}' is not a valid hunk header. Valid hunk headers: '*** Add File: {{path}}', \
             '*** Delete File: {{path}}', '*** Update File: {{path}}'"
        ),
        line: line_number,
    })
}

fn parse_update(
    path: &str,
    lines: &[&str],
    line_number: usize,
) -> Result<(Hunk, usize), ParseError> {
    let mut remaining = &lines[1..];
    let mut used = 1;
    let move_to = remaining
        .first()
        .and_then(|line| line.strip_prefix(MOVE_TO))
        .map(PathBuf::from);
    if move_to.is_some() {
        remaining = &remaining[1..];
        used += 1;
    }
    let mut chunks = Vec::new();
    while let Some(line) = remaining.first() {
        // Blank lines between chunks are skipped; before the first one, a blank line is an
        // (empty) context line of a chunk without `@@`, as Codex reads it.
        if line.trim().is_empty() && !chunks.is_empty() {
            remaining = &remaining[1..];
            used += 1;
            continue;
        }
        if line.starts_with("***") {
            break;
        }
        let (chunk, chunk_lines) = parse_chunk(remaining, line_number + used, chunks.is_empty())?;
        chunks.push(chunk);
        remaining = &remaining[chunk_lines..];
        used += chunk_lines;
    }
    if chunks.is_empty() {
        return Err(ParseError::Hunk {
            message: format!("Update file hunk for path '{path}' is empty"),
            line: line_number,
        });
    }
    let hunk = Hunk::Update {
        path: PathBuf::from(path),
        move_to,
        chunks,
        line: line_number,
    };
    Ok((hunk, used))
}

/// Parses one `@@` chunk; `first` allows the very first chunk to omit its `@@` line.
fn parse_chunk(
    lines: &[&str],
    line_number: usize,
    first: bool,
) -> Result<(Chunk, usize), ParseError> {
    // Trailing blanks of a header line are not part of the line it names.
    let header = lines[0].trim_end();
    let (context, start) = if header == EMPTY_CONTEXT {
        (None, 1)
    } else if let Some(context) = header.strip_prefix(CONTEXT_PREFIX) {
        // `@@ ` followed by nothing but blanks names no line.
        let named = !context.trim().is_empty();
        (named.then(|| context.to_string()), 1)
    } else if first {
        (None, 0)
    } else {
        return Err(ParseError::Hunk {
            message: format!(
                "Expected update hunk to start with a @@ context marker, got: '{}'",
                lines[0]
            ),
            line: line_number,
        });
    };
    if start >= lines.len() {
        return Err(ParseError::Hunk {
            message: "Update hunk does not contain any lines".into(),
            line: line_number + 1,
        });
    }
    let mut chunk = Chunk {
        context,
        lines: Vec::new(),
        end_of_file: false,
        line: line_number,
    };
    let mut parsed = 0;
    for line in &lines[start..] {
        if *line == END_OF_FILE {
            if parsed == 0 {
                return Err(ParseError::Hunk {
                    message: "Update hunk does not contain any lines".into(),
                    line: line_number + 1,
                });
            }
            chunk.end_of_file = true;
            parsed += 1;
            break;
        }
        match line.chars().next() {
            None => chunk.lines.push((LineKind::Context, String::new())),
            Some(' ') => chunk.lines.push((LineKind::Context, line[1..].to_string())),
            Some('+') => chunk.lines.push((LineKind::Add, line[1..].to_string())),
            Some('-') => chunk.lines.push((LineKind::Remove, line[1..].to_string())),
            Some(_) => {
                if parsed == 0 {
                    return Err(ParseError::Hunk {
                        message: format!(
                            "Unexpected line found in update hunk: '{line}'. Every line should \
                             start with ' ' (context line), '+' (added line), or '-' (removed line)"
                        ),
                        line: line_number + start,
                    });
                }
                // Not part of this chunk: the next chunk or hunk starts here.
                break;
            }
        }
        parsed += 1;
    }
    Ok((chunk, parsed + start))
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
