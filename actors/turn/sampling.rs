//! The turn's side of sampling: what it does with each sampler update — deltas and retries
//! passed on, a completed response recorded and its tool calls handed to the orchestrator, a
//! compaction's summary turned into the new history.

use super::{compact, prompt, Phase, TurnState};
use crate::turn::tokens::TokenTracker;
use ractor::ActorRef;
use troupe_messages::errors::ModelError;
use troupe_messages::events::EventMsg;
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::{SessionMsg, ToolOrchestratorMsg, TurnMsg};
use troupe_messages::sampling::SamplerUpdate;
use troupe_messages::usage::TokenUsage;

impl TurnState {
    pub(super) fn on_sampler(&mut self, update: SamplerUpdate, myself: &ActorRef<TurnMsg>) {
        match update {
            SamplerUpdate::TextDelta { .. } | SamplerUpdate::ReasoningDelta { .. }
                if self.phase != Phase::Sampling => {}
            SamplerUpdate::TextDelta { delta } => {
                self.partial_text.push_str(&delta);
                self.event(EventMsg::AgentMessageDelta { delta })
            }
            SamplerUpdate::ReasoningDelta { delta } => {
                self.event(EventMsg::AgentReasoningDelta { delta })
            }
            SamplerUpdate::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => {
                // The next attempt streams its answer from the start.
                self.partial_text.clear();
                self.event(EventMsg::StreamRetry {
                    attempt,
                    max_attempts,
                    delay_ms,
                    reason,
                })
            }
            SamplerUpdate::Failed { error } => match self.phase {
                Phase::Sampling => {
                    self.keep_partial_answer();
                    self.fail(error)
                }
                Phase::Compacting { .. } => self.fail(ModelError::ResponseFailed {
                    message: format!("compaction failed, history kept as it was: {error}"),
                }),
            },
            SamplerUpdate::Completed { items, usage } => match self.phase {
                Phase::Sampling => {
                    self.partial_text.clear();
                    self.on_response(items, &usage, myself)
                }
                Phase::Compacting { then_sample } => {
                    self.event(EventMsg::TokenCount {
                        last: usage,
                        total: usage,
                    });
                    self.finish_compaction(&items, then_sample)
                }
            },
        }
    }

    /// A response cut off (a budget, a stream that broke on its last attempt) keeps what the
    /// model said before: the user saw it stream, and it stays in the history and rollout as
    /// the model's message.
    fn keep_partial_answer(&mut self) {
        let text = std::mem::take(&mut self.partial_text);
        if text.trim().is_empty() {
            return;
        }
        self.event(EventMsg::AgentMessage {
            message: text.clone(),
        });
        self.record(ResponseItem::Message {
            id: None,
            role: troupe_messages::items::Role::Assistant,
            content: vec![troupe_messages::items::ContentItem::OutputText { text }],
        });
    }

    /// Asks the model for a summary of the history (no tools offered).
    /// Callers of an automatic compaction (`then_sample`) check the per-turn cap first.
    pub(super) fn start_compaction(&mut self, then_sample: bool) {
        self.phase = Phase::Compacting { then_sample };
        self.compacted_since_sample = true;
        let mut request = prompt::build_request(
            self.setup.thread_id,
            &self.setup.settings,
            &compact::summary_request_input(&self.history),
            Vec::new(),
        );
        request.parallel_tool_calls = false;
        self.send_request(request);
    }

    fn finish_compaction(&mut self, items: &[ResponseItem], then_sample: bool) {
        let summary: String = items
            .iter()
            .filter_map(ResponseItem::assistant_text)
            .collect();
        if summary.trim().is_empty() {
            self.fail(ModelError::ResponseFailed {
                message: "compaction failed, history kept as it was: the model returned no summary"
                    .into(),
            });
            return;
        }
        let tokens_before = self.tokens.current();
        let latest = if then_sample {
            compact::LatestRequest::AfterSummary
        } else {
            compact::LatestRequest::BeforeSummary
        };
        let parts =
            compact::compaction_parts(&self.setup.initial_context, &self.history, &summary, latest);
        let history = match compact::apply_parts(&self.history, &parts) {
            Ok(history) => history,
            Err(err) => {
                self.fail(ModelError::Internal {
                    message: format!("compaction failed, history kept as it was: {err}"),
                });
                return;
            }
        };
        self.tokens = TokenTracker::for_history(&history);
        self.history = history.clone();
        self.tell_session(SessionMsg::HistoryReplaced {
            turn_id: self.setup.turn_id,
            history,
            parts,
        });
        self.event(EventMsg::ContextCompacted {
            turn_id: self.setup.turn_id,
            tokens_before,
            tokens_after: self.tokens.current(),
        });
        self.phase = Phase::Sampling;
        if then_sample {
            self.sample_next();
        } else {
            self.end(None);
        }
    }

    fn on_response(
        &mut self,
        items: Vec<ResponseItem>,
        usage: &TokenUsage,
        myself: &ActorRef<TurnMsg>,
    ) {
        let calls = prompt::tool_calls(&items);
        for item in items {
            match &item {
                ResponseItem::Message { .. } => {
                    if let Some(text) = item.assistant_text() {
                        self.last_agent_message = Some(text.clone());
                        self.event(EventMsg::AgentMessage { message: text });
                    }
                }
                ResponseItem::Reasoning { summary, .. } => {
                    let text: Vec<String> = summary
                        .iter()
                        .map(|s| match s {
                            troupe_messages::items::ReasoningSummary::SummaryText { text } => {
                                text.clone()
                            }
                        })
                        .collect();
                    if !text.is_empty() {
                        self.event(EventMsg::AgentReasoning {
                            text: text.join("\n\n"),
                        });
                    }
                }
                _ => {}
            }
            self.record(item);
        }
        // The provider's count covers everything up to and including these items.
        self.tokens.on_usage(usage);
        self.event(EventMsg::TokenCount {
            last: *usage,
            total: *usage,
        });
        let advertised = self
            .in_flight
            .take()
            .map(|request| request.tools)
            .unwrap_or_default();
        if !calls.is_empty() {
            self.running_calls = calls
                .iter()
                .map(|c| (c.call_id.clone(), c.is_custom()))
                .collect();
            let _ = self
                .orchestrator
                .send_message(ToolOrchestratorMsg::RunBatch {
                    calls,
                    advertised,
                    settings: Box::new((*self.step_settings).clone()),
                });
        } else if !self.injected.is_empty() {
            // The user wrote while the model answered: the turn goes on with that input.
            self.sample_next();
        } else if !self.run_stop_hooks(myself) {
            self.end(None);
        }
    }
}
