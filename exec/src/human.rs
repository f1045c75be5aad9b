//! Human-readable progress on stderr (the final message goes to stdout). Every line passes
//! through [`visible`]: command output, model text, hook messages and errors are shown, never
//! interpreted by the terminal.

use super::json_events::{command_line, error_text};
use super::render::EventRenderer;
use std::io::Write;
use troupe_cli::output::StdoutError;
use troupe_messages::agents::CollabCallStatus;
use troupe_messages::events::EventMsg;
use troupe_messages::terminal_text::visible;
use troupe_messages::tools::{FileChangeKind, StepStatus};

/// Writes progress lines to stderr; the user's prompt follows the session header.
pub struct HumanOutput {
    /// Shown after the first event (the header), then `None`.
    prompt: Option<String>,
    /// While rendering a sub-agent's event: its task path, put before each line.
    agent: Option<String>,
    /// `--color`: style labels and outcomes.
    color: bool,
}

/// Lines of command output shown per command.
const OUTPUT_LINES: usize = 20;

impl HumanOutput {
    pub fn new(prompt: String, color: bool) -> Self {
        Self {
            prompt: Some(prompt),
            agent: None,
            color,
        }
    }

    /// `text` with every line prefixed by the sub-agent's path, when rendering one.
    fn prefixed(&self, text: &str) -> String {
        match &self.agent {
            None => text.to_string(),
            Some(path) => text
                .lines()
                .map(|line| format!("[{path}] {line}"))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// A line on stderr, control characters made visible (before the colours are added);
    /// one that cannot be written is dropped (there is nowhere else).
    fn line(&self, text: &str) {
        let text = visible(&self.prefixed(text));
        let text = if self.color {
            super::color::paint(&text)
        } else {
            text
        };
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    }
}

impl EventRenderer for HumanOutput {
    fn render(&mut self, msg: &EventMsg) -> Result<(), StdoutError> {
        self.show(msg);
        if let Some(prompt) = self.prompt.take() {
            self.line(&format!("user\n{prompt}\n"));
        }
        Ok(())
    }
}

impl HumanOutput {
    fn show(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::SessionConfigured { .. }
            | EventMsg::TurnComplete { .. }
            | EventMsg::TurnAborted { .. }
            | EventMsg::StreamRetry { .. }
            | EventMsg::Warning { .. }
            | EventMsg::Error { .. } => self.show_lifecycle(msg),
            EventMsg::AgentReasoning { .. } | EventMsg::AgentMessage { .. } => {
                self.show_stream(msg)
            }
            EventMsg::ExecCommandBegin { .. }
            | EventMsg::ExecCommandEnd { .. }
            | EventMsg::PatchApplyEnd { .. }
            | EventMsg::PlanUpdated { .. } => self.show_work(msg),
            EventMsg::HookStarted { .. }
            | EventMsg::HookCompleted { .. }
            | EventMsg::PermissionsGranted { .. }
            | EventMsg::CollabToolCall { .. }
            | EventMsg::AgentEvent { .. }
            | EventMsg::GoalUpdated { .. } => self.show_beside(msg),
            // Deltas: the finished message/reasoning is shown whole. Approval requests are
            // answered (and said) by the exec loop. The rest is bookkeeping the finished
            // items already show.
            EventMsg::TurnStarted { .. }
            | EventMsg::InputInjected { .. }
            | EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::ExecCommandOutputDelta { .. }
            | EventMsg::ExecApprovalRequest { .. }
            | EventMsg::ApplyPatchApprovalRequest { .. }
            | EventMsg::RequestUserInput { .. }
            | EventMsg::ToolCallBegin { .. }
            | EventMsg::ToolCallEnd { .. }
            | EventMsg::McpToolCallBegin { .. }
            | EventMsg::McpToolCallEnd { .. }
            | EventMsg::PatchApplyBegin { .. }
            | EventMsg::TurnDiff { .. }
            | EventMsg::ItemRecorded { .. }
            | EventMsg::ContextCompacted { .. }
            | EventMsg::TokenCount { .. }
            | EventMsg::ShutdownComplete => {}
        }
    }

    /// The session's header, the turn's end, retries, warnings and errors.
    fn show_lifecycle(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::SessionConfigured {
                thread_id,
                model,
                model_provider,
                cwd,
                sandbox_mode,
                ..
            } => self.line(&format!(
                "troupe {}\n--------\nworkdir: {}\nmodel: {model}\nprovider: {model_provider}\nsandbox: {}\nsession id: {thread_id}\n--------",
                env!("CARGO_PKG_VERSION"),
                cwd.display(),
                sandbox_mode.as_str()
            )),
            EventMsg::TurnComplete { usage, .. } => {
                self.line(&format!("tokens used\n{}", usage.total_tokens))
            }
            EventMsg::TurnAborted { reason, .. } => {
                self.line(&format!("turn aborted: {reason:?}"))
            }
            EventMsg::StreamRetry {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => self.line(&format!(
                "reconnecting {attempt}/{max_attempts} in {delay_ms}ms: {reason}"
            )),
            EventMsg::Warning { message } => self.line(&format!("warning: {message}")),
            EventMsg::Error { error, .. } => {
                let text = visible(&self.prefixed(&format!("ERROR: {}", error_text(error))));
                let _ = writeln!(std::io::stderr().lock(), "{text}");
            }
            _ => {}
        }
    }

    /// The model's finished message and reasoning (deltas are not shown).
    fn show_stream(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::AgentReasoning { text } => self.line(&format!("thinking\n{text}")),
            EventMsg::AgentMessage { message } => self.line(&format!("troupe\n{message}")),
            _ => {}
        }
    }

    /// Commands, patches and plans.
    fn show_work(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::ExecCommandBegin { command, cwd, .. } => self.line(&format!(
                "exec\n{} in {}",
                command_line(command),
                cwd.display()
            )),
            EventMsg::ExecCommandEnd {
                exit_code,
                aggregated_output,
                duration_ms,
                timed_out,
                ..
            } => {
                let verdict = match (exit_code, timed_out) {
                    (_, true) => format!("timed out after {duration_ms}ms"),
                    (Some(0), _) => format!("succeeded in {duration_ms}ms"),
                    (Some(code), _) => format!("exited {code} in {duration_ms}ms"),
                    (None, _) => format!("failed in {duration_ms}ms"),
                };
                let lines: Vec<&str> = aggregated_output.lines().collect();
                let mut text = format!("{verdict}:");
                for line in lines.iter().take(OUTPUT_LINES) {
                    text.push('\n');
                    text.push_str(line);
                }
                if lines.len() > OUTPUT_LINES {
                    text.push_str(&format!("\n… +{} lines", lines.len() - OUTPUT_LINES));
                }
                self.line(&text);
            }
            EventMsg::PatchApplyEnd {
                changes,
                success,
                output,
                ..
            } => {
                let mut text = String::from(if *success {
                    "file update:"
                } else {
                    "file update failed:"
                });
                for change in changes {
                    let letter = match change.kind {
                        FileChangeKind::Add => 'A',
                        FileChangeKind::Delete => 'D',
                        FileChangeKind::Update => 'M',
                    };
                    text.push_str(&format!("\n{letter} {}", change.path.display()));
                    if let Some(to) = &change.move_path {
                        text.push_str(&format!(" → {}", to.display()));
                    }
                }
                if !success {
                    text.push_str(&format!("\n{output}"));
                }
                self.line(&text);
            }
            EventMsg::PlanUpdated { explanation, plan } => {
                let mut text = String::from("plan:");
                if let Some(why) = explanation {
                    text.push_str(&format!(" {why}"));
                }
                for item in plan {
                    let mark = match item.status {
                        StepStatus::Completed => "✓",
                        StepStatus::InProgress => "→",
                        StepStatus::Pending => "•",
                    };
                    text.push_str(&format!("\n  {mark} {}", item.step));
                }
                self.line(&text);
            }
            _ => {}
        }
    }

    /// Hooks, granted permissions, goals and sub-agents.
    fn show_beside(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::HookStarted {
                event_name,
                command,
                tool_name,
                ..
            } => {
                let about = tool_name
                    .as_deref()
                    .map(|t| format!(" ({t})"))
                    .unwrap_or_default();
                self.line(&format!("hook {}{about}: {command}", event_name.as_str()))
            }
            EventMsg::HookCompleted {
                event_name,
                duration_ms,
                decision,
                message,
                ..
            } => {
                let about = message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default();
                self.line(&format!(
                    "hook {} {} in {duration_ms} ms{about}",
                    event_name.as_str(),
                    decision.as_str()
                ))
            }
            EventMsg::PermissionsGranted {
                scope, permissions, ..
            } => self.line(&format!(
                "permissions granted for the {}: {}",
                scope.as_str(),
                permissions.summary()
            )),
            EventMsg::CollabToolCall {
                tool,
                status: CollabCallStatus::InProgress,
                prompt,
                ..
            } => {
                let about = prompt
                    .as_deref()
                    .map(|p| format!(": {p}"))
                    .unwrap_or_default();
                self.line(&format!("collab {tool}{about}"))
            }
            // The ending is the tool output the model reads; agents report on their own.
            EventMsg::CollabToolCall { .. } => {}
            EventMsg::AgentEvent { task_path, msg, .. } => {
                let outer = self.agent.replace(task_path.clone());
                match msg.as_ref() {
                    EventMsg::TurnStarted { .. } => self.line("started"),
                    EventMsg::TurnComplete { .. } => self.line("finished"),
                    EventMsg::ShutdownComplete => self.line("closed"),
                    // The agent's own header and token counts are noise in the parent's log.
                    EventMsg::SessionConfigured { .. } => {}
                    inner => self.show(inner),
                }
                self.agent = outer;
            }
            EventMsg::GoalUpdated { goal, continuing } => {
                let budget = goal
                    .token_budget
                    .map(|b| format!(" of {b}"))
                    .unwrap_or_default();
                let next = if *continuing { "; continuing" } else { "" };
                self.line(&format!(
                    "goal {}: {} ({} tokens used{budget}){next}",
                    goal.status.as_str(),
                    goal.objective,
                    goal.tokens_used
                ))
            }
            _ => {}
        }
    }
}
