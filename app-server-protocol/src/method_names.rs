//! The methods Troupe implements by name, and what a client hears for any other (Codex's
//! unknown-variant error, or [`crate::unsupported`]'s reason).

/// The methods Troupe implements (a request for any other gets Codex's unknown-variant error).
pub const METHODS: &[&str] = &[
    "initialize",
    "thread/start",
    "thread/resume",
    "thread/fork",
    "thread/list",
    "thread/read",
    "thread/archive",
    "thread/unarchive",
    "thread/name/set",
    "thread/loaded/list",
    "turn/start",
    "turn/steer",
    "turn/interrupt",
    "thread/compact/start",
    "thread/unsubscribe",
    "thread/shellCommand",
    "fuzzyFileSearch",
    "model/list",
    "config/read",
    "review/start",
    "command/exec",
    "thread/turns/list",
    "thread/items/list",
    "skills/list",
    "fs/readFile",
    "fs/writeFile",
    "fs/createDirectory",
    "fs/getMetadata",
    "fs/readDirectory",
    "fs/remove",
    "fs/copy",
    "troupe/thread/lastTurns",
    "troupe/thread/rewind",
    "thread/revert",
];

/// Codex's words for a method it does not know.
pub fn unknown_method(method: &str) -> String {
    let expected = METHODS
        .iter()
        .map(|m| format!("`{m}`"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("Invalid request: unknown variant `{method}`, expected one of {expected}")
}
