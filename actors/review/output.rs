//! The result of a review run: the JSON object the review instructions ask the model for
//! (Codex's shape: `findings`, `overall_correctness`, `overall_explanation`,
//! `overall_confidence_score`), checked, and rendered for people as Codex prints it.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// One problem the reviewer found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub title: String,
    pub body: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence_score: Option<f64>,
    /// 0 (drop everything) to 3 (nice to have); absent when the reviewer could not tell.
    #[serde(default)]
    pub priority: Option<u8>,
    pub code_location: CodeLocation,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeLocation {
    pub absolute_file_path: String,
    pub line_range: LineRange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineRange {
    pub start: u64,
    pub end: u64,
}

/// The whole review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewOutput {
    pub findings: Vec<Finding>,
    /// `"patch is correct"` or `"patch is incorrect"`.
    pub overall_correctness: String,
    pub overall_explanation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overall_confidence_score: Option<f64>,
}

/// Why the model's answer is not a usable review.
#[derive(Debug, Error, PartialEq)]
pub enum ReviewFormatError {
    #[error("the model gave no final message")]
    Empty,
    #[error("its final message is not the review JSON object: {0}")]
    NotJson(String),
    #[error("finding {index} (`{title}`): priority {priority} is not 0-3")]
    Priority {
        index: usize,
        title: String,
        priority: u8,
    },
    #[error("finding {index} (`{title}`): line range {start}-{end} is not a range of lines (1-based, start <= end)")]
    LineRange {
        index: usize,
        title: String,
        start: u64,
        end: u64,
    },
    #[error("overall_correctness is `{0}`, not `patch is correct` or `patch is incorrect`")]
    Verdict(String),
}

const CORRECT: &str = "patch is correct";
const INCORRECT: &str = "patch is incorrect";

/// Parses and checks the model's final message. Models sometimes wrap the object in a code
/// fence or a sentence: the outermost `{…}` is tried when the whole text is not JSON.
pub fn parse(text: &str) -> Result<ReviewOutput, ReviewFormatError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ReviewFormatError::Empty);
    }
    let review: ReviewOutput = match serde_json::from_str(text) {
        Ok(review) => review,
        Err(first) => {
            let inner = text
                .find('{')
                .zip(text.rfind('}'))
                .filter(|(start, end)| start < end)
                .map(|(start, end)| &text[start..=end]);
            match inner.map(serde_json::from_str::<ReviewOutput>) {
                Some(Ok(review)) => review,
                Some(Err(err)) => return Err(ReviewFormatError::NotJson(err.to_string())),
                None => return Err(ReviewFormatError::NotJson(first.to_string())),
            }
        }
    };
    check(&review)?;
    Ok(review)
}

fn check(review: &ReviewOutput) -> Result<(), ReviewFormatError> {
    if review.overall_correctness != CORRECT && review.overall_correctness != INCORRECT {
        return Err(ReviewFormatError::Verdict(
            review.overall_correctness.clone(),
        ));
    }
    for (n, finding) in review.findings.iter().enumerate() {
        let index = n + 1;
        if let Some(priority) = finding.priority.filter(|p| *p > 3) {
            return Err(ReviewFormatError::Priority {
                index,
                title: finding.title.clone(),
                priority,
            });
        }
        let LineRange { start, end } = finding.code_location.line_range;
        if start == 0 || end < start {
            return Err(ReviewFormatError::LineRange {
                index,
                title: finding.title.clone(),
                start,
                end,
            });
        }
    }
    Ok(())
}

/// The review as Codex prints it: the explanation, then each finding as
/// `- TITLE — PATH:START-END` with its body indented below.
pub fn render(review: &ReviewOutput) -> String {
    let mut out = review.overall_explanation.trim().to_string();
    if review.findings.is_empty() {
        return out;
    }
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(if review.findings.len() == 1 {
        "Review comment:"
    } else {
        "Full review comments:"
    });
    for finding in &review.findings {
        let LineRange { start, end } = finding.code_location.line_range;
        out.push_str(&format!(
            "\n\n- {} — {}:{start}-{end}",
            finding.title.trim(),
            finding.code_location.absolute_file_path
        ));
        for line in finding.body.trim().lines() {
            out.push_str("\n  ");
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
