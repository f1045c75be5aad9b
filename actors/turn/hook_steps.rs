//! The turn's hook steps: SessionStart and UserPromptSubmit before the first request, Stop
//! when the model is done. Each runs in a task of the turn (the handler never waits on a
//! hook) that answers `HooksRan` with the items to record and whether to sample again.

use super::{HookStep, TurnState};
use ractor::ActorRef;
use tokio_util::task::AbortOnDropHandle;
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::{SessionMsg, TurnMsg};

impl TurnState {
    /// Starts the start hooks if there are any to run; false when there are none.
    pub(super) fn run_start_hooks(&mut self, myself: &ActorRef<TurnMsg>) -> bool {
        let Some(start) = self.start_hooks.take() else {
            return false;
        };
        if start.session_start.is_none() && start.prompt.is_none() {
            return false;
        }
        let hooks = self.hooks.clone();
        let turn = myself.clone();
        let task = tokio::spawn(async move {
            let mut items = Vec::new();
            if let Some(source) = start.session_start {
                for context in hooks.session_start(source).await {
                    items.push(ResponseItem::developer_text(context));
                }
            }
            let mut after_input = Vec::new();
            if let Some(prompt) = &start.prompt {
                let effect = hooks.user_prompt_submit(prompt).await;
                if let Some(reason) = effect.blocked {
                    hooks.warn(format!(
                        "a UserPromptSubmit hook blocked the prompt (not sent, not kept): {reason}"
                    ));
                    let _ = turn.send_message(TurnMsg::HooksRan {
                        items,
                        go_on: false,
                    });
                    return;
                }
                after_input.extend(effect.context.into_iter().map(ResponseItem::developer_text));
            }
            items.extend(start.held_input);
            items.extend(after_input);
            let _ = turn.send_message(TurnMsg::HooksRan { items, go_on: true });
        });
        self.hook_task = Some((HookStep::Start, AbortOnDropHandle::new(task)));
        true
    }

    /// The model is done: runs the Stop hooks if any; false when there are none.
    pub(super) fn run_stop_hooks(&mut self, myself: &ActorRef<TurnMsg>) -> bool {
        if !self.hooks.has(troupe_messages::hooks::HookEventName::Stop) {
            return false;
        }
        let hooks = self.hooks.clone();
        let turn = myself.clone();
        let last = self.last_agent_message.clone();
        let active = self.stop_continuations > 0;
        let may_continue = self.stop_continuations < hooks.max_stop_continuations();
        let done = self.stop_continuations;
        let task = tokio::spawn(async move {
            let reason = hooks.stop(last.as_deref(), active).await;
            let message = match reason {
                Some(reason) if may_continue => TurnMsg::HooksRan {
                    items: vec![ResponseItem::user_text(reason)],
                    go_on: true,
                },
                Some(_) => {
                    hooks.warn(format!(
                        "a Stop hook asked the turn to go on again; it already did {done} times \
                         (max_stop_continuations), so the turn ends"
                    ));
                    TurnMsg::HooksRan {
                        items: Vec::new(),
                        go_on: false,
                    }
                }
                None => TurnMsg::HooksRan {
                    items: Vec::new(),
                    go_on: false,
                },
            };
            let _ = turn.send_message(message);
        });
        self.hook_task = Some((HookStep::Stop, AbortOnDropHandle::new(task)));
        true
    }

    /// A hook step finished: record its items, then sample again (through a checkpoint,
    /// so the request carries only what is durable) or end the turn.
    pub(super) fn on_hooks_ran(&mut self, items: Vec<ResponseItem>, go_on: bool) {
        let Some((step, _task)) = self.hook_task.take() else {
            return;
        };
        if step == HookStep::Stop && go_on {
            self.stop_continuations += 1;
        }
        let recorded = !items.is_empty();
        for item in items {
            self.record(item);
        }
        if go_on || !self.injected.is_empty() {
            if recorded {
                self.tell_session(SessionMsg::TurnCheckpoint {
                    turn_id: self.setup.turn_id,
                });
            } else {
                self.sample_next();
            }
        } else {
            self.end(None);
        }
    }
}
