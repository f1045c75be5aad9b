//! Commands as ACP tool calls: their title and kind, and how their output is shown — as
//! text content, or in a display-only terminal of the editor when the client opted into
//! Zed's `terminal_output` extension.
//!
//! ACP's own `terminal/create` asks the *client* to execute a command in its environment;
//! Troupe never uses it (a command the sandbox and the approval policy admitted would run
//! unconfined in the editor). The extension is display only: Troupe runs the command in its
//! sandbox, embeds `{type: "terminal", terminalId}` in the tool call with
//! `_meta.terminal_info`, streams the output as `_meta.terminal_output` and ends with
//! `_meta.terminal_exit`, as Zed's own `codex-acp` does (docs/acp.md, *Commands and the
//! editor's terminal*).

use serde_json::{json, Value};
use std::path::Path;

/// Output streamed to a display-only terminal per command; past it the terminal is told
/// how much was left out (the model still gets the head and tail).
pub const TERMINAL_STREAM_LIMIT: usize = 1024 * 1024;

/// The command as a shell line (the `bash -lc SCRIPT` wrapper shows as its script).
pub fn command_title(command: &[String]) -> String {
    match command {
        [shell, flag, script] if is_shell(shell) && (flag == "-lc" || flag == "-c") => {
            script.clone()
        }
        _ => shlex::try_join(command.iter().map(String::as_str))
            .unwrap_or_else(|_| command.join(" ")),
    }
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(name, "bash" | "sh" | "zsh")
}

/// ACP's kind of a command: a read (`cat`, `head`, …), a search (`rg`, `grep`, `find`,
/// `ls`), a fetch (`curl`, `wget`), otherwise an execution.
pub fn command_kind(command: &[String]) -> &'static str {
    let line = command_title(command);
    let program = line.split_whitespace().next().unwrap_or_default();
    let program = program.rsplit('/').next().unwrap_or(program);
    if line.contains('|') || line.contains(';') || line.contains("&&") || line.contains('>') {
        return "execute";
    }
    match program {
        "cat" | "head" | "tail" | "nl" | "less" | "wc" => "read",
        "rg" | "grep" | "find" | "ls" | "fd" | "tree" => "search",
        "curl" | "wget" => "fetch",
        _ => "execute",
    }
}

/// Whether a command shows in a display-only terminal: only executions (a read or a search
/// reads better as text), and only for a client that opted in.
pub fn shows_in_terminal(client_terminal_output: bool, command: &[String]) -> bool {
    client_terminal_output && command_kind(command) == "execute"
}

/// The fields that open a display-only terminal for the call (its id is the call's id).
pub fn terminal_begin(call_id: &str, cwd: &Path) -> Value {
    json!({
        "content": [{"type": "terminal", "terminalId": call_id}],
        "_meta": {"terminal_info": {"terminal_id": call_id, "cwd": cwd}},
    })
}

/// The fields that append `data` to the call's terminal.
pub fn terminal_output(call_id: &str, data: &str) -> Value {
    json!({"_meta": {"terminal_output": {"terminal_id": call_id, "data": data}}})
}

/// What the terminal is told once [`TERMINAL_STREAM_LIMIT`] is reached.
pub fn terminal_cut_notice() -> String {
    format!(
        "\r\n[troupe: the terminal shows the first {} KiB of output; the model gets its head and tail]\r\n",
        TERMINAL_STREAM_LIMIT / 1024
    )
}

/// The `_meta` of the call's last update: its terminal's exit (no signal is known: a
/// command killed by a signal or a timeout has no exit code).
pub fn terminal_exit(call_id: &str, exit_code: Option<i32>) -> Value {
    json!({"terminal_exit": {"terminal_id": call_id, "exit_code": exit_code, "signal": null}})
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
