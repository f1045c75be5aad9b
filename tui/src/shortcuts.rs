//! The shortcut sheet `?` writes into the transcript on an empty composer: the UI's real key
//! map, one row each (in the scrollback, so it is readable whole at any terminal size).

/// (keys, what they do), in the order the sheet lists them.
pub const KEYS: &[(&str, &str)] = &[
    ("Enter", "send the message (while a turn runs: steer it)"),
    ("Tab", "while a turn runs: queue the message for after it"),
    ("Shift/Alt+Enter · Ctrl+J", "new line"),
    ("↑ / ↓", "earlier / later messages (prompt history)"),
    (
        "Ctrl+R",
        "search the prompt history (again: an older match)",
    ),
    ("Ctrl+A / E / U", "line start / line end / clear the line"),
    ("/", "slash commands (/help lists them)"),
    ("!cmd", "run cmd in your shell (the model sees it)"),
    ("@ · $", "complete a file path · a skill"),
    ("Esc", "interrupt the running turn"),
    ("Esc Esc", "edit a previous message (an empty composer)"),
    ("/rewind", "take files/conversation back before a turn"),
    ("Ctrl+T", "threads panel (sub-agents, other threads)"),
    (
        "Ctrl+O",
        "transcript: full screen, every output line, / search (Codex: Ctrl+T)",
    ),
    ("Ctrl+C", "interrupt · clear the composer · quit"),
    ("Ctrl+D", "quit (an empty composer)"),
    (
        "y · a · n · Esc",
        "approve · approve for the session · deny · stop",
    ),
    ("d (approval)", "deny and tell the model what to do instead"),
    ("o (approval)", "open the asking thread (Esc comes back)"),
    (
        "u (sandbox retry)",
        "run again without the sandbox (y allows only what was missing)",
    ),
    ("?", "this sheet (an empty composer)"),
];

/// The sheet as text, one key per line, the keys in a column.
pub fn sheet() -> String {
    let width = KEYS
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    let mut text = String::from("keyboard shortcuts");
    for (keys, what) in KEYS {
        let pad = width.saturating_sub(keys.chars().count());
        text.push_str(&format!("\n  {keys}{}  {what}", " ".repeat(pad)));
    }
    text
}
