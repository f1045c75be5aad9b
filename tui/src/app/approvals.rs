//! More of [`App`]: the approval overlay's keys. `y` approve once, `a` for the session, `n`
//! deny (for a sandbox retry that asks for one directory or the network: `y` grants it for
//! the session, `u` runs the command again without the sandbox instead), `d` deny with a message (a one-line input in the overlay: Enter sends the denial
//! with the words, which the model reads as the call's output; Esc goes back to the
//! choices), `o` show the asking thread while the approval waits (Esc comes back to it),
//! Esc or Ctrl+C abort the turn.

use super::{Action, App, ApprovalSubject, PendingApproval};
use crate::cells::NoticeKind;
use crate::thread_view::ThreadStatus;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use troupe_messages::ops::{Op, ReviewDecision};
use troupe_messages::permissions::SandboxRetry;

/// The deny message is one line of at most this many characters.
pub const DENY_MESSAGE_MAX_CHARS: usize = 2_000;

/// `o` in the approval overlay: the asking thread is on screen, the approval waits.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalPeek {
    /// The approval set aside; the overlay shows again once the user comes back (or when
    /// another approval is first in line).
    pub call_id: String,
    /// The thread that was on screen before.
    pub back_to: usize,
}

impl App {
    /// The approval the overlay shows now: the first in line, unless the user set it aside
    /// with `o` to look at its thread.
    pub fn approval_shown(&self) -> Option<&PendingApproval> {
        let first = self.approvals.front()?;
        match &self.approval_peek {
            Some(peek) if peek.call_id == first.call_id => None,
            _ => Some(first),
        }
    }

    /// Call `call_id` of thread `index` began or ended: what was still asked about it was
    /// answered elsewhere (another process, through the thread's inbox), so it leaves the queue.
    pub(super) fn call_settled(&mut self, index: usize, call_id: &str) {
        self.approvals
            .retain(|a| a.thread != index || a.call_id != call_id);
        self.questions
            .retain(|q| q.thread != index || q.call_id != call_id);
    }

    /// A key while an approval is waiting: `None` when it is not the overlay's (no approval,
    /// or one set aside with `o` and the key is not Esc).
    pub(super) fn approval_key(&mut self, key: KeyEvent) -> Option<Vec<Action>> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if self.approvals.is_empty() {
            self.approval_peek = None;
            self.deny_message = None;
            return None;
        }
        if self.approval_shown().is_none() {
            // Looking at the asking thread: Esc goes back to the overlay.
            if key.code != KeyCode::Esc || !self.overlay_is_closed() {
                return None;
            }
            if let Some(peek) = self.approval_peek.take() {
                self.switch_to(peek.back_to);
            }
            return Some(Vec::new());
        }
        if let Some(message) = self.deny_message.as_mut() {
            match key.code {
                KeyCode::Esc => self.deny_message = None,
                KeyCode::Char('c') if ctrl => self.deny_message = None,
                KeyCode::Backspace => {
                    message.pop();
                }
                KeyCode::Enter if !message.trim().is_empty() => {
                    let message = message.trim().to_string();
                    return Some(self.decide(ReviewDecision::DeniedWithMessage { message }));
                }
                KeyCode::Char(c) if !ctrl && message.chars().count() < DENY_MESSAGE_MAX_CHARS => {
                    message.push(c)
                }
                _ => {}
            }
            return Some(Vec::new());
        }
        let grants_one_thing = self
            .approval_shown()
            .is_some_and(|a| grants_one_thing(a.sandbox_retry.as_ref()));
        let decision = match key.code {
            KeyCode::Char('y') => ReviewDecision::Approved,
            // A grant is for the session already; `a` says the same as `y`.
            KeyCode::Char('a') if !grants_one_thing => ReviewDecision::ApprovedForSession,
            KeyCode::Char('u') if grants_one_thing => ReviewDecision::ApprovedWithoutSandbox,
            KeyCode::Char('n') => ReviewDecision::Denied,
            KeyCode::Char('d') if !ctrl => {
                self.deny_message = Some(String::new());
                return Some(Vec::new());
            }
            KeyCode::Char('o') if !ctrl => {
                self.peek_at_asking_thread();
                return Some(Vec::new());
            }
            KeyCode::Esc => ReviewDecision::Abort,
            KeyCode::Char('c') if ctrl => ReviewDecision::Abort,
            _ => return Some(Vec::new()),
        };
        Some(self.decide(decision))
    }

    /// A paste while the deny message is being typed goes into it (newlines become spaces:
    /// it is one line).
    pub(super) fn paste_into_deny_message(&mut self, text: &str) -> bool {
        let Some(message) = self.deny_message.as_mut() else {
            return false;
        };
        let room = DENY_MESSAGE_MAX_CHARS.saturating_sub(message.chars().count());
        message.extend(
            text.chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .take(room),
        );
        true
    }

    fn overlay_is_closed(&self) -> bool {
        matches!(self.overlay, super::Overlay::None)
    }

    /// `o`: the asking thread's transcript is written, as Enter in the threads panel does.
    fn peek_at_asking_thread(&mut self) {
        let Some(first) = self.approvals.front() else {
            return;
        };
        let (call_id, thread) = (first.call_id.clone(), first.thread);
        self.approval_peek = Some(ApprovalPeek {
            call_id,
            back_to: self.current,
        });
        self.switch_to(thread);
        self.info("an approval is waiting: Esc shows it again");
    }

    /// Answers the first approval in line with `decision`.
    fn decide(&mut self, decision: ReviewDecision) -> Vec<Action> {
        self.deny_message = None;
        self.approval_peek = None;
        match self.approvals.pop_front() {
            Some(approval) => vec![self.answer(&approval, decision)],
            None => Vec::new(),
        }
    }

    pub(super) fn answer(
        &mut self,
        approval: &PendingApproval,
        decision: ReviewDecision,
    ) -> Action {
        let entry = &mut self.threads[approval.thread];
        if entry.view.status == ThreadStatus::WaitingApproval {
            entry.view.status = ThreadStatus::Running;
        }
        let verdict = verdict(&decision, approval.sandbox_retry.as_ref());
        let what = match &approval.subject {
            ApprovalSubject::Command { command, .. } => format!("$ {command}"),
            ApprovalSubject::Patch { files } => format!("patch to {} file(s)", files.len()),
        };
        entry
            .view
            .notice(NoticeKind::Info, format!("{what}: {verdict}"));
        let op = match (entry.is_agent, entry.id) {
            (true, Some(thread_id)) => Op::AgentApproval {
                thread_id,
                call_id: approval.call_id.clone(),
                decision,
            },
            _ => Op::ExecApproval {
                call_id: approval.call_id.clone(),
                decision,
            },
        };
        Action::Submit {
            client: entry.client,
            op,
        }
    }
}

/// Whether approving `retry` grants one thing (a directory, the network) rather than
/// lifting the sandbox: then `u` is the separate choice of running without it.
pub fn grants_one_thing(retry: Option<&SandboxRetry>) -> bool {
    matches!(
        retry,
        Some(SandboxRetry::Write { .. } | SandboxRetry::Network)
    )
}

/// The notice written under the request once it is answered.
pub fn verdict(decision: &ReviewDecision, retry: Option<&SandboxRetry>) -> String {
    match (decision, retry) {
        (
            ReviewDecision::Approved | ReviewDecision::ApprovedForSession,
            Some(SandboxRetry::Write { dir }),
        ) => format!(
            "writing to {} allowed for the session; run again in the sandbox",
            crate::sanitize::sanitize_line(&dir.display().to_string())
        ),
        (
            ReviewDecision::Approved | ReviewDecision::ApprovedForSession,
            Some(SandboxRetry::Network),
        ) => "network allowed for the session; run again in the sandbox".into(),
        (ReviewDecision::Approved, Some(SandboxRetry::Unconfined))
        | (ReviewDecision::ApprovedWithoutSandbox, Some(_)) => {
            "run again without the sandbox, once".into()
        }
        (ReviewDecision::Approved | ReviewDecision::ApprovedWithoutSandbox, _) => {
            "approved once".into()
        }
        (ReviewDecision::ApprovedForSession, _) => "approved for the session".into(),
        (ReviewDecision::Denied, _) => "denied".into(),
        (ReviewDecision::DeniedWithMessage { message }, _) => format!("denied: “{message}”"),
        (ReviewDecision::Abort, _) => "denied; turn aborted".into(),
    }
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
