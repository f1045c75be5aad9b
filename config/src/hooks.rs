//! `[hooks]` in config.toml and `hooks.json` beside it, in Codex's format:
//!
//! ```toml
//! [[hooks.PreToolUse]]
//! matcher = "Bash|apply_patch"
//! [[hooks.PreToolUse.hooks]]
//! type = "command"
//! command = "~/bin/check.sh"
//! timeout = 30
//! ```
//!
//! Hooks are collected per layer and concatenated (system, user, then trusted and pinned
//! project files), never merged key by key: a later layer adds hooks, it cannot drop one.
//! An unknown event, key or hook type is an error naming the file (and line, in TOML).

use crate::error::ConfigError;
use serde::Deserialize;
use std::path::Path;
use troupe_messages::hooks::{HookEventName, HookHandler, DEFAULT_HOOK_TIMEOUT_SEC};

/// `[hooks]`: one list of matcher groups per event.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksToml {
    #[serde(rename = "SessionStart")]
    pub session_start: Vec<MatcherGroupToml>,
    #[serde(rename = "UserPromptSubmit")]
    pub user_prompt_submit: Vec<MatcherGroupToml>,
    #[serde(rename = "PreToolUse")]
    pub pre_tool_use: Vec<MatcherGroupToml>,
    #[serde(rename = "PostToolUse")]
    pub post_tool_use: Vec<MatcherGroupToml>,
    #[serde(rename = "PermissionRequest")]
    pub permission_request: Vec<MatcherGroupToml>,
    #[serde(rename = "Stop")]
    pub stop: Vec<MatcherGroupToml>,
}

/// `hooks.json`: `{"hooks": {<Event>: [groups]}}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksFile {
    #[serde(default)]
    pub hooks: HooksToml,
}

/// One `[[hooks.<Event>]]` group.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatcherGroupToml {
    pub matcher: Option<String>,
    pub hooks: Vec<HookEntryToml>,
}

/// One `[[hooks.<Event>.hooks]]` entry; only `type = "command"` runs here.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum HookEntryToml {
    Command {
        command: String,
        /// Seconds (default 600).
        #[serde(default)]
        timeout: Option<u64>,
    },
}

impl HooksToml {
    fn groups(self) -> [(HookEventName, Vec<MatcherGroupToml>); 6] {
        [
            (HookEventName::SessionStart, self.session_start),
            (HookEventName::UserPromptSubmit, self.user_prompt_submit),
            (HookEventName::PreToolUse, self.pre_tool_use),
            (HookEventName::PostToolUse, self.post_tool_use),
            (HookEventName::PermissionRequest, self.permission_request),
            (HookEventName::Stop, self.stop),
        ]
    }

    /// The handlers this layer configures, in order; `source` names the file in errors.
    pub fn into_handlers(self, source: &Path) -> Result<Vec<HookHandler>, ConfigError> {
        let mut handlers = Vec::new();
        for (event, groups) in self.groups() {
            for (index, group) in groups.into_iter().enumerate() {
                let matcher = group.matcher.filter(|_| event.uses_matcher());
                if let Some(pattern) = matcher.as_deref() {
                    validate_matcher(pattern).map_err(|message| ConfigError::InvalidKey {
                        key: format!(
                            "{}: hooks.{}[{index}].matcher",
                            source.display(),
                            event.as_str()
                        ),
                        message,
                    })?;
                }
                for entry in group.hooks {
                    let HookEntryToml::Command { command, timeout } = entry;
                    if command.trim().is_empty() {
                        return Err(ConfigError::InvalidKey {
                            key: format!(
                                "{}: hooks.{}[{index}].hooks",
                                source.display(),
                                event.as_str()
                            ),
                            message: "a hook's `command` is empty".into(),
                        });
                    }
                    handlers.push(HookHandler {
                        event,
                        matcher: matcher.clone(),
                        command,
                        timeout_sec: timeout.unwrap_or(DEFAULT_HOOK_TIMEOUT_SEC).max(1),
                        source: source.to_path_buf(),
                    });
                }
            }
        }
        Ok(handlers)
    }
}

/// Reads `hooks.json` in `dir` (beside a config.toml); `Ok(empty)` when there is none.
pub fn read_hooks_json(dir: &Path) -> Result<Vec<HookHandler>, ConfigError> {
    let path = dir.join("hooks.json");
    let text = match crate::regular_file::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let file: HooksFile = serde_json::from_str(&text).map_err(|err| ConfigError::Parse {
        path: path.clone(),
        message: err.to_string(),
    })?;
    file.hooks.into_handlers(&path)
}

/// How a matcher is read (Codex's rule): empty or `*` matches everything; a plain name
/// (letters, digits, `_`, `-`) matches exactly; `A|B` matches any of the names; anything
/// else is a regular expression searched in the value.
#[derive(Debug, Clone)]
pub enum Matcher {
    Any,
    Names(Vec<String>),
    Regex(regex::Regex),
}

impl Matcher {
    pub fn parse(pattern: Option<&str>) -> Result<Self, String> {
        let Some(pattern) = pattern
            .map(str::trim)
            .filter(|p| !p.is_empty() && *p != "*")
        else {
            return Ok(Self::Any);
        };
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '|';
        if pattern.chars().all(plain) {
            return Ok(Self::Names(
                pattern.split('|').map(str::to_string).collect(),
            ));
        }
        regex::Regex::new(pattern)
            .map(Self::Regex)
            .map_err(|err| format!("invalid matcher `{pattern}`: {err}"))
    }

    pub fn matches(&self, value: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Names(names) => names.iter().any(|name| name == value),
            Self::Regex(regex) => regex.is_match(value),
        }
    }
}

fn validate_matcher(pattern: &str) -> Result<(), String> {
    Matcher::parse(Some(pattern)).map(|_| ())
}
