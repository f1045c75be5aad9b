//! The session's side of sub-agents: input from another agent of its tree, and answers to
//! a sub-agent's approval request routed through this (root) thread.

use super::{SessionMsg, SessionState};
use ractor::ActorRef;
use troupe_messages::events::EventMsg;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::TurnMsg;
use troupe_messages::ops::{Op, ReviewDecision, UserInput};

impl SessionState {
    /// A message, follow-up task or child's answer: joins the running turn at its next
    /// sampling boundary; when idle, starts a turn only if `start_turn`, otherwise waits,
    /// queued, for the next turn's input.
    pub(super) async fn on_agent_input(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        submission: String,
        items: Vec<UserInput>,
        start_turn: bool,
    ) {
        match &self.turn {
            Some(turn) => {
                let actor = turn.actor.clone();
                let seq = self.queue.push(items.clone());
                let _ = actor.send_message(TurnMsg::InjectInput { seq, items });
            }
            None if start_turn => {
                let mut inputs = self.queue.take_all();
                inputs.extend(items);
                self.start_turn(myself, submission, inputs).await;
            }
            None => {
                self.queue.push(items);
            }
        }
    }

    /// Routes a decision to a sub-agent, only one of this thread's own tree.
    pub(super) async fn on_agent_approval(
        &mut self,
        submission: &str,
        thread_id: ThreadId,
        call_id: String,
        decision: ReviewDecision,
    ) {
        let target = self
            .agents
            .as_ref()
            .filter(|agents| {
                thread_id != self.thread_id && agents.in_tree(self.thread_id, thread_id)
            })
            .and_then(|agents| agents.session(thread_id).map(|s| (agents.clone(), s)));
        match target {
            Some((agents, session)) => {
                agents.submit(&session, Op::ExecApproval { call_id, decision });
            }
            None => {
                let message = format!(
                    "no open sub-agent {thread_id} in this thread's tree; approval for \
                     `{call_id}` ignored"
                );
                self.emit(submission, EventMsg::Warning { message }).await;
            }
        }
    }

    /// The user's own input for a sub-agent of this thread's tree (typed into its transcript
    /// in the TUI): given to that agent as user input, which starts its turn or joins the
    /// running one.
    pub(super) async fn on_agent_user_input(
        &mut self,
        submission: &str,
        thread_id: ThreadId,
        items: Vec<UserInput>,
    ) {
        let target = self
            .agents
            .as_ref()
            .filter(|agents| {
                thread_id != self.thread_id && agents.in_tree(self.thread_id, thread_id)
            })
            .and_then(|agents| agents.session(thread_id).map(|s| (agents.clone(), s)));
        match target {
            Some((agents, session)) => {
                agents.submit(&session, Op::UserInput { items });
            }
            None => {
                let message = format!(
                    "no open sub-agent {thread_id} in this thread's tree; the message was not \
                     delivered"
                );
                self.emit(submission, EventMsg::Warning { message }).await;
            }
        }
    }
}
