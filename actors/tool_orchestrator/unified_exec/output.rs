//! What the model reads back from `exec_command` / `write_stdin`.

use super::session::Collected;
use crate::tool_orchestrator::registry::ToolOutcome;
use std::time::Instant;

/// Bytes per token when turning `max_output_tokens` into a byte budget (a rough average).
const BYTES_PER_TOKEN: usize = 4;

/// `Wall time`, then either the exit code or the session id to continue with, then output.
pub fn outcome(
    started: Instant,
    collected: &Collected,
    running_session: Option<u32>,
    max_output_tokens: usize,
) -> ToolOutcome {
    let text = String::from_utf8_lossy(&collected.output);
    let output = truncate_middle(&text, max_output_tokens.saturating_mul(BYTES_PER_TOKEN));
    let status = match (running_session, collected.exit_code) {
        (Some(id), _) => format!("Process running with session ID {id}"),
        (None, Some(code)) => format!("Process exited with code {code}"),
        (None, None) => "Process state unknown".to_string(),
    };
    ToolOutcome {
        content: format!(
            "Wall time: {:.3} seconds\n{status}\nOutput:\n{output}",
            started.elapsed().as_secs_f64()
        ),
        success: collected.exit_code.is_none_or(|code| code == 0),
    }
}

/// `text` cut to at most about `max_bytes`, keeping its head and tail (on char boundaries)
/// and saying how much was dropped.
pub fn truncate_middle(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let half = max_bytes / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    format!(
        "{}\n[… {} bytes omitted …]\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod tests;
