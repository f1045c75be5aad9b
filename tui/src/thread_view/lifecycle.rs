//! Events of the turn's lifecycle: started, steered, ended; usage, notices.

use super::*;

impl ThreadView {
    /// The turn's lifecycle and what the runtime reports about the thread itself.
    pub(super) fn on_lifecycle(&mut self, msg: &EventMsg, now: Instant) {
        match msg {
            EventMsg::SessionConfigured {
                thread_id,
                model,
                cwd,
                ..
            } => {
                self.status = ThreadStatus::Idle;
                self.notice(
                    NoticeKind::Info,
                    format!("thread {thread_id} · {model} · {}", cwd.display()),
                );
            }
            EventMsg::TurnStarted { turn_id } => {
                // The oldest message typed here and not yet seen is the one this turn began
                // with; any others were steered into an earlier turn or join this one.
                if let Some(text) = self.unassigned.pop_front() {
                    self.prompts.push((turn_id.0, text));
                }
                self.unassigned.clear();
                self.status = ThreadStatus::Running;
                self.turn_started = Some(now);
                self.turn_usage_start = self.total_usage;
                self.turn_diff.clear();
                // Input queued after the last turn ended starts this one.
                self.finish_pending_inputs(None);
            }
            EventMsg::InputInjected { text, .. } => {
                // A sub-agent's report entering this thread's history: not something typed.
                if let Some(report) = troupe_messages::agent_notice::parse_report(text) {
                    self.notice(NoticeKind::Info, report.headline());
                    return;
                }
                // Steered into a running turn: it started none.
                if let Some(at) = self.unassigned.iter().position(|t| t.trim() == text.trim()) {
                    self.unassigned.remove(at);
                }
                self.finish_pending_inputs(Some(text))
            }
            EventMsg::TurnComplete { .. } => {
                self.end_turn("turn complete", ThreadStatus::Idle, now, false)
            }
            EventMsg::TurnAborted { reason, .. } => {
                let (outcome, status) = match reason {
                    AbortReason::Interrupted => ("interrupted", ThreadStatus::Interrupted),
                    AbortReason::Failed => ("turn failed", ThreadStatus::Failed),
                    AbortReason::Shutdown => ("stopped", ThreadStatus::Done),
                };
                self.end_turn(outcome, status, now, true);
            }
            EventMsg::ShutdownComplete => {
                self.finish_all(true);
                self.status = ThreadStatus::Done;
            }
            EventMsg::TokenCount { last, total } => {
                self.total_usage = *total;
                self.context_tokens = last.input_tokens + last.output_tokens;
            }
            EventMsg::ContextCompacted {
                tokens_before,
                tokens_after,
                ..
            } => {
                self.notice(
                    NoticeKind::Info,
                    format!("context compacted: ~{tokens_before} → ~{tokens_after} tokens"),
                );
            }
            EventMsg::StreamRetry {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => self.notice(
                NoticeKind::Warning,
                format!(
                    "model request failed ({reason}); retry {attempt}/{max_attempts} in {}",
                    crate::cells::format_duration(*delay_ms)
                ),
            ),
            EventMsg::Warning { message } => self.notice(NoticeKind::Warning, message.clone()),
            EventMsg::Error { error, .. } => self.notice(NoticeKind::Error, error.to_string()),
            _ => {}
        }
    }

    /// Pending user cells become plain ones: all of them, or the first whose text matches.
    fn finish_pending_inputs(&mut self, text: Option<&String>) {
        while let Some(index) = self.live.iter().position(|c| match c {
            Cell::User {
                pending: true,
                text: t,
            } => text.is_none_or(|wanted| wanted.trim() == t.trim()),
            _ => false,
        }) {
            if let Cell::User { pending, .. } = &mut self.live[index] {
                *pending = false;
            }
            self.finish(index);
            if text.is_some() {
                return;
            }
        }
        if let Some(text) = text {
            // Injected text we did not type here (another client): shown as it was sent.
            self.push(Cell::User {
                text: text.clone(),
                pending: false,
            });
        }
    }

    fn end_turn(&mut self, outcome: &str, status: ThreadStatus, now: Instant, killed: bool) {
        // Pending input outlives an interrupted turn: it starts the next one.
        let pending: Vec<Cell> = self
            .live
            .iter()
            .filter(|c| matches!(c, Cell::User { pending: true, .. }))
            .cloned()
            .collect();
        self.live
            .retain(|c| !matches!(c, Cell::User { pending: true, .. }));
        self.finish_all(killed);
        self.reasoning.clear();
        let elapsed_ms = self
            .turn_started
            .take()
            .map_or(0, |t| now.duration_since(t).as_millis() as u64);
        let mut usage = self.total_usage;
        usage.input_tokens = usage
            .input_tokens
            .saturating_sub(self.turn_usage_start.input_tokens);
        usage.output_tokens = usage
            .output_tokens
            .saturating_sub(self.turn_usage_start.output_tokens);
        usage.total_tokens = usage
            .total_tokens
            .saturating_sub(self.turn_usage_start.total_tokens);
        self.push(Cell::TurnFooter {
            outcome: outcome.into(),
            usage,
            elapsed_ms,
        });
        self.status = status;
        self.live.extend(pending);
    }
}
