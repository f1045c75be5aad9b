//! What is printed under the scrollback when the user quits: the tokens the session used and
//! how to continue each thread (`troupe resume <id>`).

use crate::app::App;
use troupe_messages::usage::TokenUsage;

/// The lines to print after the terminal is restored; empty when nothing was said.
pub fn exit_lines(app: &App) -> Vec<String> {
    let mut usage = TokenUsage::default();
    for entry in &app.threads {
        usage.add(&entry.view.total_usage);
    }
    let resumable: Vec<(String, &str)> = app
        .threads
        .iter()
        .filter(|t| !t.is_agent)
        .filter(|t| !t.view.prompts.is_empty() || t.view.total_usage.total_tokens > 0)
        .filter_map(|t| t.id.map(|id| (id.to_string(), t.path.as_str())))
        .collect();
    let mut lines = Vec::new();
    if usage.total_tokens > 0 {
        lines.push(format!(
            "Token usage: total={} input={} (+ {} cached) output={}{}",
            grouped(usage.total_tokens),
            grouped(usage.input_tokens.saturating_sub(usage.cached_input_tokens)),
            grouped(usage.cached_input_tokens),
            grouped(usage.output_tokens),
            if usage.reasoning_output_tokens > 0 {
                format!(" (reasoning {})", grouped(usage.reasoning_output_tokens))
            } else {
                String::new()
            }
        ));
    }
    match resumable.as_slice() {
        [] => {}
        [(id, _)] => lines.push(format!("To continue this session, run troupe resume {id}")),
        many => {
            lines.push("To continue a thread, run:".to_string());
            for (id, name) in many {
                lines.push(format!(
                    "  troupe resume {id}   # {}",
                    crate::sanitize::sanitize_line(name)
                ));
            }
        }
    }
    lines
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        let left_in_group = (digits.len() - i) % 3;
        if i > 0 && left_in_group == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "farewell_tests.rs"]
mod tests;
