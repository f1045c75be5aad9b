//! Model-visible names of MCP tools: `mcp__<server>__<tool>`, sanitised to `[A-Za-z0-9_]`,
//! at most 64 bytes, unique. A collision is resolved by a suffix hashed (SHA-1) from the
//! tool's raw identity, never by a counter, and the list is sorted by raw identity: the
//! same tool gets the same name in every session whatever order servers connect in, so the
//! prompt prefix (and the provider's cache of it) stays stable.

use sha1::{Digest, Sha1};
use std::collections::{BTreeMap, BTreeSet};

pub const PREFIX: &str = "mcp__";
pub const DELIMITER: &str = "__";
pub const MAX_NAME_BYTES: usize = 64;
const HASH_LEN: usize = 12;

/// One tool as a server advertised it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawToolName {
    pub server: String,
    pub tool: String,
}

/// A tool with the name the model calls it by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedTool {
    pub model_name: String,
    pub raw: RawToolName,
}

/// Keeps `[A-Za-z0-9_]`, each other character becomes one `_`; empty becomes `_`.
pub fn sanitize(name: &str) -> String {
    let sanitized: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if sanitized.is_empty() {
        "_".into()
    } else {
        sanitized
    }
}

fn hash_suffix(identity: &str) -> String {
    let digest = Sha1::digest(identity.as_bytes());
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("_{}", &hex[..HASH_LEN])
}

fn namespace_identity(server: &str) -> String {
    // The server's name stands for both the server and its namespace (no connectors here).
    format!("{server}\0{server}\0")
}

fn tool_identity(raw: &RawToolName) -> String {
    format!(
        "{}\0{}\0{}",
        namespace_identity(&raw.server),
        raw.tool,
        raw.tool
    )
}

struct Candidate {
    raw: RawToolName,
    namespace_identity: String,
    tool_identity: String,
    namespace: String,
    name: String,
}

/// Names every tool; exact duplicates (same server, same tool name) are dropped and
/// returned apart so the caller can warn about them.
pub fn name_tools(tools: Vec<RawToolName>) -> (Vec<NamedTool>, Vec<RawToolName>) {
    let mut seen = BTreeSet::new();
    let mut duplicates = Vec::new();
    let mut candidates = Vec::new();
    for raw in tools {
        let tool_identity = tool_identity(&raw);
        if !seen.insert(tool_identity.clone()) {
            duplicates.push(raw);
            continue;
        }
        candidates.push(Candidate {
            namespace: format!("{PREFIX}{}", sanitize(&raw.server)),
            name: sanitize(&raw.tool),
            namespace_identity: namespace_identity(&raw.server),
            tool_identity,
            raw,
        });
    }

    // Round one: one sanitised namespace standing for several servers.
    let mut servers_by_namespace: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for candidate in &candidates {
        servers_by_namespace
            .entry(candidate.namespace.clone())
            .or_default()
            .insert(candidate.namespace_identity.clone());
    }
    for candidate in &mut candidates {
        if servers_by_namespace[&candidate.namespace].len() > 1 {
            candidate
                .namespace
                .push_str(&hash_suffix(&candidate.namespace_identity));
        }
    }

    // Round two: one (namespace, name) standing for several tools.
    let mut tools_by_name: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for candidate in &candidates {
        tools_by_name
            .entry((candidate.namespace.clone(), candidate.name.clone()))
            .or_default()
            .insert(candidate.tool_identity.clone());
    }
    for candidate in &mut candidates {
        let key = (candidate.namespace.clone(), candidate.name.clone());
        if tools_by_name[&key].len() > 1 {
            candidate
                .name
                .push_str(&hash_suffix(&candidate.tool_identity));
        }
    }

    candidates.sort_by(|a, b| a.tool_identity.cmp(&b.tool_identity));
    let mut used = BTreeSet::new();
    let named = candidates
        .into_iter()
        .map(|candidate| NamedTool {
            model_name: unique_name(&candidate, &mut used),
            raw: candidate.raw,
        })
        .collect();
    (named, duplicates)
}

/// `namespace__name` if it fits and is free; else shortened around a hash suffix (salted
/// by an attempt number in the unlikely case that is taken too).
fn unique_name(candidate: &Candidate, used: &mut BTreeSet<String>) -> String {
    let plain = format!("{}{DELIMITER}{}", candidate.namespace, candidate.name);
    if plain.len() <= MAX_NAME_BYTES && used.insert(plain.clone()) {
        return plain;
    }
    let mut attempt = 0u32;
    loop {
        let identity = if attempt == 0 {
            candidate.tool_identity.clone()
        } else {
            format!("{}\0{attempt}", candidate.tool_identity)
        };
        let name = fit_with_hash(&candidate.namespace, &candidate.name, &identity);
        if used.insert(name.clone()) {
            return name;
        }
        attempt = attempt.saturating_add(1);
    }
}

/// Sanitised names are ASCII, so byte lengths and character counts agree.
fn fit_with_hash(namespace: &str, name: &str, identity: &str) -> String {
    let suffix = hash_suffix(identity);
    let room_for_name = MAX_NAME_BYTES.saturating_sub(namespace.len() + DELIMITER.len());
    if room_for_name >= suffix.len() {
        let keep = room_for_name - suffix.len();
        let head: String = name.chars().take(keep).collect();
        return format!("{namespace}{DELIMITER}{head}{suffix}");
    }
    let room_for_namespace = MAX_NAME_BYTES.saturating_sub(suffix.len() + DELIMITER.len());
    let head: String = namespace.chars().take(room_for_namespace).collect();
    format!("{head}{DELIMITER}{suffix}")
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
