//! The turn's side of compaction: sending the summary request and swapping the history
//! once the summary is back (the pure rules are in `compact.rs`).

use super::{compact, prompt, Phase, TurnState};
use crate::turn::tokens::TokenTracker;
use ractor::ActorRef;
use troupe_messages::errors::ModelError;
use troupe_messages::events::EventMsg;
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::{SamplerMsg, SessionMsg, TurnMsg};

impl TurnState {
    /// Asks the model for a summary of the history (no tools offered).
    pub(super) fn start_compaction(&mut self, then_sample: bool) {
        self.phase = Phase::Compacting { then_sample };
        let mut request = prompt::build_request(
            self.args.thread_id,
            &self.args.settings,
            &compact::summary_request_input(&self.args.history),
            Vec::new(),
        );
        request.parallel_tool_calls = false;
        let _ = self
            .sampler
            .send_message(SamplerMsg::Sample(Box::new(request)));
    }

    pub(super) fn finish_compaction(
        &mut self,
        myself: &ActorRef<TurnMsg>,
        items: &[ResponseItem],
        then_sample: bool,
    ) {
        let summary: String = items
            .iter()
            .filter_map(ResponseItem::assistant_text)
            .collect();
        if summary.trim().is_empty() {
            self.fail(
                myself,
                ModelError::ResponseFailed {
                    message:
                        "compaction failed, history kept as it was: the model returned no summary"
                            .into(),
                },
            );
            return;
        }
        let tokens_before = self.tokens.current();
        let latest = if then_sample {
            compact::LatestRequest::AfterSummary
        } else {
            compact::LatestRequest::BeforeSummary
        };
        let history = compact::compacted_history(
            &self.args.initial_context,
            &self.args.history,
            &summary,
            latest,
        );
        self.tokens = TokenTracker::for_history(&history);
        self.args.history = history.clone();
        self.tell_session(SessionMsg::HistoryReplaced {
            turn_id: self.args.turn_id,
            history,
        });
        self.event(EventMsg::ContextCompacted {
            turn_id: self.args.turn_id,
            tokens_before,
            tokens_after: self.tokens.current(),
        });
        self.phase = Phase::Sampling;
        if then_sample {
            self.sample_next();
        } else {
            self.end(myself, None);
        }
    }
}
