//! Command rules: `.rules` files in Starlark with Codex-compatible `prefix_rule(...)`.
//!
//! A rule matches a command whose argv starts with its pattern (each pattern element a string
//! or a list of alternatives). When several rules match, the strictest decision wins:
//! `forbidden` > `prompt` > `allow`. Each rule may carry `match` / `not_match` examples that
//! are checked when the file loads, so a wrong rule fails loudly (with file:line) instead of
//! silently matching nothing.

pub mod confined;
mod load;
mod parse;

use std::path::PathBuf;
use thiserror::Error;

pub use parse::parse_rules;

/// What a rule says about a command; ordered from weakest to strictest.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

    /// The strictest restrictive decision (`prompt` or `forbidden`) for `argv`. The program
    /// is also tried by its base name, so `/bin/rm` cannot slip past a rule on `rm`.
    fn restrictive(&self, argv: &[String]) -> Option<Verdict> {
        let by_name = argv.split_first().and_then(|(program, args)| {
            let name = program.rsplit('/').next()?;
            (name != program).then(|| {
                let mut renamed = vec![name.to_string()];
                renamed.extend_from_slice(args);
                renamed
            })
        });
        [Some(argv), by_name.as_deref()]
            .into_iter()
            .flatten()
            .filter_map(|candidate| self.evaluate(candidate))
            .filter(|(decision, _)| *decision >= RuleDecision::Prompt)
            .max_by_key(|(decision, _)| *decision)
    }

    /// The rules' verdict on a whole command, given what it runs (see
    /// `troupe_messages::shell_split`).
    ///
    /// - `forbidden`, then `prompt`, wins when it matches any of `commands` or `wrapped`
    ///   (whatever the command may run, found even in scripts that are not fully parsed).
    /// - `allow` only when the command is `plain` (exactly `commands` runs) and every command
    ///   is matched by an allow rule or is `known_safe`, with at least one allow match: an
    ///   allow rule for one part never vouches for another.
    /// - Otherwise `None`: the caller's default path decides.
    pub fn evaluate_command(
        &self,
        commands: &[Vec<String>],
        wrapped: &[Vec<String>],
        plain: bool,
        known_safe: impl Fn(&[String]) -> bool,
    ) -> Option<Verdict> {
        let restrictive = commands
            .iter()
            .chain(wrapped)
            .filter_map(|argv| self.restrictive(argv))
            .max_by_key(|(decision, _)| *decision);
        if restrictive.is_some() {
            return restrictive;
        }
        if !plain || commands.is_empty() {
            return None;
        }
        let mut allowed: Option<Verdict> = None;
        for argv in commands {
            match self.evaluate(argv) {
                Some(verdict) => {
                    allowed.get_or_insert(verdict);
                }
                None if known_safe(argv) => {}
                None => return None,
            }
        }
        allowed
    }

    /// Loads every `*.rules` file of each directory in order; a missing directory is fine.
    /// Each file is evaluated off the caller's thread, bounded in steps and time (see `load`).
    pub async fn load_dirs(dirs: &[PathBuf]) -> Result<Self, RulesError> {
        load::load_dirs(dirs).await
    }
}

pub use load::{load_file, load_file_if};

/// Why a rules file could not be used; each names the file and, where known, the line.
#[derive(Debug, Error)]
pub enum RulesError {
    #[error("cannot read rules {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Not a regular file (a FIFO, a device, a directory…), too big, or evaluation that ran
    /// too long, too deep, or crashed; `path` names the file.
    #[error("rules file {path}: {reason}")]
    Unusable { path: PathBuf, reason: String },
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
