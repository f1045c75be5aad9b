//! What the model reads back from `exec_command` / `write_stdin`.

use crate::tool_orchestrator::contract::ToolOutcome;
use crate::tool_orchestrator::unified_exec::session::Collected;
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
        parts: Vec::new(),
    }
}

/// Shared with MCP results: one rule for how a long tool output is cut.
pub use troupe_messages::tools::truncate_middle;

#[cfg(test)]
#[path = "exec_output_tests.rs"]
mod tests;
