//! The turn's guards against running away: a ceiling on model requests, at most one automatic
//! compaction per sampling step and a cap per turn, and no request sent that cannot fit the
//! model's context window. Each ends the turn with an error that names the limit.

use super::{tokens, TurnState};
use troupe_messages::errors::ModelError;
use troupe_messages::mailboxes::SamplerMsg;
use troupe_messages::sampling::ModelRequest;

impl TurnState {
    /// Hands `request` to the sampler, unless the turn already sent `max_requests_per_turn`.
    pub(super) fn send_request(&mut self, request: ModelRequest) {
        let max = self.setup.settings.context.max_requests_per_turn;
        if self.requests_sent >= max {
            self.fail(ModelError::LimitReached {
                message: format!(
                    "it sent {} model requests, the most one turn may send \
                     (max_requests_per_turn = {max})",
                    self.requests_sent
                ),
            });
            return;
        }
        self.requests_sent += 1;
        let _ = self
            .sampler
            .send_message(SamplerMsg::Sample(Box::new(request)));
    }

    /// Whether an automatic compaction may start now. One per sampling step: right after a
    /// compaction the turn samples, even when the history is still over the limit. Past
    /// `max_compactions_per_turn` the turn fails instead.
    pub(super) fn may_compact_automatically(&mut self) -> bool {
        let max = self.setup.settings.context.max_compactions_per_turn;
        if self.compactions >= max {
            let limit = tokens::auto_compact_limit(&self.setup.settings).unwrap_or_default();
            self.fail(ModelError::ContextWindowExceeded {
                message: format!(
                    "the history (about {} tokens) is still over the auto-compaction limit of \
                     {limit} tokens after {} compactions in this turn \
                     (max_compactions_per_turn = {max}); start a new thread or raise \
                     model_auto_compact_token_limit",
                    self.tokens.current(),
                    self.compactions
                ),
            });
            return false;
        }
        self.compactions += 1;
        true
    }

    /// Whether the next request, about `overhead` tokens of instructions and tools plus the
    /// history, fits the context window; fails the turn (nothing sent) when it cannot.
    pub(super) fn fits_window(&mut self, overhead: u64) -> bool {
        let Some(window) = tokens::context_window(&self.setup.settings) else {
            return true;
        };
        let history = self.tokens.current();
        // A provider's count already includes instructions and tools.
        let total = if self.tokens.is_reported() {
            history
        } else {
            history + overhead
        };
        if total < window {
            return true;
        }
        self.fail(ModelError::ContextWindowExceeded {
            message: format!(
                "the next request would carry about {total} tokens, and the model's context \
                 window is {window} tokens (after {} compactions in this turn); nothing was sent",
                self.compactions
            ),
        });
        false
    }
}
