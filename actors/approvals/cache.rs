//! "Approved for session" memory. Commands are keyed by canonical argv (a `bash -lc` script
//! by its split parts), patches by file, so approving one patch does not approve a later patch
//! that touches other files.

use std::collections::HashSet;
use std::path::PathBuf;

/// One thing a user can approve for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ApprovalKey {
    /// A command, canonicalised by [`command_key`].
    Command(Vec<String>),
    /// A file a patch writes (absolute).
    PatchFile(PathBuf),
    /// One tool of one MCP server (raw names).
    McpTool { server: String, tool: String },
    /// A host sandboxed commands may reach through the network proxy (lower case).
    NetworkHost(String),
}

/// Keys approved for the session; shared by the session's turns.
#[derive(Debug, Clone, Default)]
pub struct ApprovalCache {
    approved: HashSet<ApprovalKey>,
}

impl ApprovalCache {
    /// True only when there is at least one key and every key is approved: a patch touching
    /// one new file is asked about again even if its other files were approved.
    pub fn all_approved(&self, keys: &[ApprovalKey]) -> bool {
        !keys.is_empty() && keys.iter().all(|key| self.approved.contains(key))
    }

    /// Remembers every key (after `ApprovedForSession`).
    pub fn approve(&mut self, keys: &[ApprovalKey]) {
        self.approved.extend(keys.iter().cloned());
    }
}

/// The cache key of a command: a `bash -lc`/`sh -c` wrapper is dropped so the same script
/// approved under either shell is one key; otherwise the argv as is.
pub fn command_key(argv: &[String]) -> ApprovalKey {
    match troupe_messages::shell_split::shell_script(argv) {
        Some(script) => ApprovalKey::Command(vec![script.trim().to_string()]),
        None => ApprovalKey::Command(argv.to_vec()),
    }
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
