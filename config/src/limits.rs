//! Limits that keep a thread bounded — context window, compaction limit, per-turn caps,
//! response stream bounds — checked once settings are resolved. An absurd value (a window of
//! 1 token, a compaction limit of 0 or above the window) is an error naming the file, line
//! and key that set it, so it never reaches a turn.

use crate::error::ConfigError;
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};
use toml::Table;
use troupe_messages::settings::{SessionSettings, WebSearchMode, WireApi};

/// Smallest context window accepted: instructions, tool specs and environment alone take
/// about 1,100 tokens.
pub const MIN_CONTEXT_WINDOW: u64 = 4_000;
/// Smallest compaction limit accepted (the fixed context must fit under it, with room).
pub const MIN_AUTO_COMPACT_TOKEN_LIMIT: u64 = 2_000;
/// Smallest response stream bound, in bytes.
pub const MIN_STREAM_MAX_BYTES: u64 = 1_024;
/// Smallest response stream duration bound, in milliseconds.
pub const MIN_STREAM_MAX_DURATION_MS: u64 = 1_000;

/// Deepest sub-agent level accepted (`[agents] max_depth`). Each level's turn waits on the
/// next one's and every level holds a session, a rollout and its lock for as long as the chain
/// lives; past a few levels a chain only multiplies context and cost without parallelism.
pub const MAX_AGENT_DEPTH: u32 = 16;
/// Most live sub-agents per root accepted (`[agents] max_threads`). Each holds a session, an
/// open rollout with its lock and, while it works, running commands; commands across all of
/// them are already capped by `max_concurrent_commands`, so more threads only queue.
pub const MAX_AGENT_THREADS: usize = 64;

/// Context window of known model families (tokens).
pub fn builtin_context_window(model: &str) -> Option<u64> {
    let table: &[(&str, u64)] = &[
        ("gpt-5", 272_000),
        ("codex-", 272_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-4o", 128_000),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("gpt-oss", 96_000),
    ];
    table
        .iter()
        .find(|(prefix, _)| model.starts_with(prefix))
        .map(|(_, window)| *window)
}

/// A value out of bounds: the dotted key (as a path) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub key: Vec<String>,
    pub message: String,
}

fn violation(key: &[&str], message: String) -> Violation {
    Violation {
        key: key.iter().map(std::string::ToString::to_string).collect(),
        message,
    }
}

fn wire_name(wire: WireApi) -> &'static str {
    match wire {
        WireApi::Responses => "responses",
        WireApi::Chat => "chat",
        WireApi::Anthropic => "anthropic",
    }
}

/// Checks the resolved limits; the first violation found.
pub fn check(settings: &SessionSettings) -> Result<(), Violation> {
    let context = &settings.context;
    if let Some(window) = context.model_context_window {
        if window < MIN_CONTEXT_WINDOW {
            return Err(violation(
                &["model_context_window"],
                format!(
                    "{window} tokens is too small: instructions, tools and environment need \
                     at least {MIN_CONTEXT_WINDOW}; remove the key to use the model's window"
                ),
            ));
        }
    }
    let window = context
        .model_context_window
        .or_else(|| builtin_context_window(&settings.model));
    if let Some(limit) = context.auto_compact_token_limit {
        if limit < MIN_AUTO_COMPACT_TOKEN_LIMIT {
            return Err(violation(
                &["model_auto_compact_token_limit"],
                format!(
                    "{limit} tokens is too small: every request would need a compaction \
                     first (at least {MIN_AUTO_COMPACT_TOKEN_LIMIT})"
                ),
            ));
        }
        if let Some(window) = window.filter(|w| limit > *w) {
            return Err(violation(
                &["model_auto_compact_token_limit"],
                format!(
                    "{limit} tokens is above the context window of `{}` ({window} tokens): \
                     the thread would overflow before it is compacted",
                    settings.model
                ),
            ));
        }
    }
    if context.max_requests_per_turn == 0 {
        return Err(violation(
            &["max_requests_per_turn"],
            "0 would let no turn ask the model anything (at least 1)".into(),
        ));
    }
    let agents = &settings.agents;
    if agents.max_depth > MAX_AGENT_DEPTH {
        return Err(violation(
            &["agents", "max_depth"],
            format!(
                "{} is more than Troupe runs ({MAX_AGENT_DEPTH}): every level keeps a session, \
                 its rollout and its lock open while it waits on the next, and deeper chains \
                 add cost, not parallelism",
                agents.max_depth
            ),
        ));
    }
    if agents.max_threads > MAX_AGENT_THREADS {
        return Err(violation(
            &["agents", "max_threads"],
            format!(
                "{} is more than Troupe runs ({MAX_AGENT_THREADS}): every live agent keeps a \
                 session and an open rollout, and their commands share \
                 `agents.max_concurrent_commands` anyway",
                agents.max_threads
            ),
        ));
    }
    let provider = &settings.provider;
    if settings.tools.web_search != WebSearchMode::Disabled
        && provider.wire_api != WireApi::Responses
    {
        return Err(violation(
            &["web_search"],
            format!(
                "`{}` needs a provider that runs web searches: provider `{}` speaks the {} \
                 wire, which has no web search tool (only `responses` does); set \
                 web_search = \"disabled\" or use a responses provider",
                settings.tools.web_search.as_str(),
                provider.id,
                wire_name(provider.wire_api)
            ),
        ));
    }
    let provider_key = |key: &'static str| ["model_providers", provider.id.as_str(), key];
    if provider.stream_max_bytes < MIN_STREAM_MAX_BYTES {
        return Err(violation(
            &provider_key("stream_max_bytes"),
            format!(
                "{} bytes is too small for any response (at least {MIN_STREAM_MAX_BYTES})",
                provider.stream_max_bytes
            ),
        ));
    }
    if provider.stream_max_duration_ms < MIN_STREAM_MAX_DURATION_MS {
        return Err(violation(
            &provider_key("stream_max_duration_ms"),
            format!(
                "{} ms is too short for any response (at least {MIN_STREAM_MAX_DURATION_MS})",
                provider.stream_max_duration_ms
            ),
        ));
    }
    Ok(())
}

/// Where the settings came from, highest precedence first being searched last-to-first.
pub struct Sources<'a> {
    /// The `-c` overrides, merged, and as typed.
    pub cli: &'a Table,
    pub cli_raw: &'a [String],
    /// System then user `config.toml` (those that exist).
    pub base_files: &'a [PathBuf],
    /// Trusted project files, root first.
    pub project_files: &'a [PathBuf],
    /// The selected profile.
    pub profile: Option<&'a str>,
}

/// The error for `violation`, naming the file and line that set the key (or the `-c`
/// override).
pub fn locate(violation: Violation, sources: &Sources<'_>) -> ConfigError {
    let dotted = violation.key.join(".");
    let key: Vec<&str> = violation.key.iter().map(String::as_str).collect();
    if table_has(sources.cli, &key) {
        let raw = sources
            .cli_raw
            .iter()
            .rev()
            .find(|raw| raw.split_once('=').is_some_and(|(k, _)| k.trim() == dotted))
            .cloned()
            .unwrap_or_else(|| dotted.clone());
        return ConfigError::InvalidOverride {
            raw,
            reason: format!("key `{dotted}`: {}", violation.message),
        };
    }
    let mut candidates: Vec<(&Path, Vec<&str>)> = Vec::new();
    for path in sources.project_files.iter().rev() {
        candidates.push((path, key.clone()));
    }
    if let Some(profile) = sources.profile {
        for path in sources.base_files.iter().rev() {
            let mut in_profile = vec!["profiles", profile];
            in_profile.extend(&key);
            candidates.push((path, in_profile));
        }
    }
    for path in sources.base_files.iter().rev() {
        candidates.push((path, key.clone()));
    }
    for (path, key_path) in candidates {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if let Some(line) = key_line(&text, &key_path) {
            return ConfigError::Located {
                path: path.to_path_buf(),
                line: Some(line),
                key: key_path.join("."),
                message: violation.message,
            };
        }
    }
    // A default out of bounds (e.g. a limit above the window of the model chosen by `-m`).
    ConfigError::InvalidKey {
        key: dotted,
        message: violation.message,
    }
}

fn table_has(table: &Table, key: &[&str]) -> bool {
    let Some((last, parents)) = key.split_last() else {
        return false;
    };
    let mut current = table;
    for part in parents {
        match current.get(*part).and_then(toml::Value::as_table) {
            Some(inner) => current = inner,
            None => return false,
        }
    }
    current.contains_key(*last)
}

/// The 1-based line where `key` (a path of table names) is set in `text`.
pub fn key_line(text: &str, key: &[&str]) -> Option<usize> {
    let document = DeTable::parse(text).ok()?;
    let (last, parents) = key.split_last()?;
    let mut table = document.get_ref();
    for part in parents {
        let (_, value) = table.iter().find(|(k, _)| k.get_ref().as_ref() == *part)?;
        match value.get_ref() {
            DeValue::Table(inner) => table = inner,
            _ => return None,
        }
    }
    let (found, _) = table.iter().find(|(k, _)| k.get_ref().as_ref() == *last)?;
    let start = found.span().start.min(text.len());
    Some(text[..start].matches('\n').count() + 1)
}
