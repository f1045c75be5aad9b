//! Command rules: `.rules` files in Starlark with Codex-compatible `prefix_rule(...)`.
//!
//! A rule matches a command whose argv starts with its pattern (each pattern element a string
//! or a list of alternatives). When several rules match, the strictest decision wins:
//! `forbidden` > `prompt` > `allow`. Each rule may carry `match` / `not_match` examples that
//! are checked when the file loads, so a wrong rule fails loudly (with file:line) instead of
//! silently matching nothing.

mod parse;

use std::path::{Path, PathBuf};
use thiserror::Error;

pub use parse::parse_rules;

/// What a rule says about a command; ordered from weakest to strictest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RuleDecision {
    Allow,
    Prompt,
    Forbidden,
}

impl RuleDecision {
    fn parse(raw: &str) -> Result<Self, String> {
        match raw {
            "allow" => Ok(RuleDecision::Allow),
            "prompt" => Ok(RuleDecision::Prompt),
            "forbidden" => Ok(RuleDecision::Forbidden),
            other => Err(format!(
                "decision must be \"allow\", \"prompt\" or \"forbidden\" (got \"{other}\")"
            )),
        }
    }
}

/// One `prefix_rule`: argv prefix, each position a set of accepted words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixRule {
    pub pattern: Vec<Vec<String>>,
    pub decision: RuleDecision,
    pub justification: Option<String>,
}

impl PrefixRule {
    /// Whether `argv` starts with this rule's pattern.
    pub fn matches(&self, argv: &[String]) -> bool {
        argv.len() >= self.pattern.len()
            && self
                .pattern
                .iter()
                .zip(argv)
                .all(|(alternatives, word)| alternatives.iter().any(|alt| alt == word))
    }
}

/// A loaded rule set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    pub rules: Vec<PrefixRule>,
}

/// The strictest matching decision and the justification of the rule that gave it.
pub type Verdict = (RuleDecision, Option<String>);

impl Rules {
    /// The strictest decision over the rules matching `argv`, if any matches.
    pub fn evaluate(&self, argv: &[String]) -> Option<Verdict> {
        self.rules
            .iter()
            .filter(|rule| rule.matches(argv))
            .max_by_key(|rule| rule.decision)
            .map(|rule| (rule.decision, rule.justification.clone()))
    }

    /// The strictest decision over every part of a compound command. A part no rule matches
    /// does not count, so `allow` on one part never vouches for another: the caller treats
    /// unmatched parts by its default path (`all_parts_matched` tells whether any were).
    pub fn evaluate_parts(&self, parts: &[Vec<String>]) -> Option<Verdict> {
        parts
            .iter()
            .filter_map(|part| self.evaluate(part))
            .max_by_key(|(decision, _)| *decision)
    }

    /// True when every part is matched by some rule.
    pub fn all_parts_matched(&self, parts: &[Vec<String>]) -> bool {
        !parts.is_empty() && parts.iter().all(|part| self.evaluate(part).is_some())
    }

    /// Loads every `*.rules` file of each directory in order; a missing directory is fine.
    pub fn load_dirs(dirs: &[PathBuf]) -> Result<Self, RulesError> {
        let mut all = Rules::default();
        for dir in dirs {
            let entries = match std::fs::read_dir(dir) {
                Ok(entries) => entries,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => {
                    return Err(RulesError::Read {
                        path: dir.clone(),
                        source,
                    })
                }
            };
            let mut files: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|ext| ext == "rules"))
                .collect();
            files.sort();
            for file in files {
                all.rules.extend(load_file(&file)?.rules);
            }
        }
        Ok(all)
    }
}

/// Loads one `.rules` file.
pub fn load_file(path: &Path) -> Result<Rules, RulesError> {
    let text = std::fs::read_to_string(path).map_err(|source| RulesError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_rules(&path.display().to_string(), &text)
}

/// Why a rules file could not be used; each names the file and, where known, the line.
#[derive(Debug, Error)]
pub enum RulesError {
    #[error("cannot read rules {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Starlark syntax or evaluation error; the message carries `file:line:col`.
    #[error("invalid rules file: {0}")]
    Starlark(String),
    /// A `match` / `not_match` example disagrees with its rule.
    #[error("{location}: {message}; fix the rule's pattern or the example")]
    Example { location: String, message: String },
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
