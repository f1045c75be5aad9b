//! Approval logic, pure (no actors): the requirement rule, the session cache, known-safe
//! commands and the splitting of compound shell commands. The orchestrator drives it.

pub mod cache;
pub mod option_parse;
pub mod requirement;
pub mod safe_commands;
mod safe_git;
mod safe_tables;

use crate::locking::lock;
use cache::ApprovalCache;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use troupe_messages::ops::ReviewDecision;
use troupe_messages::permissions::PermissionGrants;
use troupe_messages::questions::UserInputAnswers;
use troupe_rules::Rules;

/// What a session shares with its turns: the "approved for session" cache, the rules, and
/// the permissions granted for the session (`request_permissions`; rebuilt from the rollout
/// on resume).
#[derive(Debug, Clone, Default)]
pub struct SessionApprovals {
    pub cache: Arc<Mutex<ApprovalCache>>,
    pub rules: Arc<Rules>,
    pub grants: Arc<Mutex<PermissionGrants>>,
}

/// Approval requests of one orchestrator waiting for the user's decision, by call id; and
/// its `request_user_input` calls waiting for the person's answers (the same route: session
/// → this map → the call's task).
#[derive(Debug, Clone, Default)]
pub struct PendingApprovals(
    Arc<Mutex<HashMap<String, oneshot::Sender<ReviewDecision>>>>,
    Arc<Mutex<HashMap<String, oneshot::Sender<UserInputAnswers>>>>,
);

impl PendingApprovals {
    /// Registers a request; the receiver resolves with the decision (or errors when the
    /// orchestrator stops first, e.g. on interrupt).
    pub fn register(&self, call_id: &str) -> oneshot::Receiver<ReviewDecision> {
        let (tx, rx) = oneshot::channel();
        lock(&self.0).insert(call_id.to_string(), tx);
        rx
    }

    /// Registers a `request_user_input` call; the receiver resolves with the answers.
    pub fn register_question(&self, call_id: &str) -> oneshot::Receiver<UserInputAnswers> {
        let (tx, rx) = oneshot::channel();
        lock(&self.1).insert(call_id.to_string(), tx);
        rx
    }

    /// Delivers answers; false when no question of that call was waiting.
    pub fn answer_question(&self, call_id: &str, answers: UserInputAnswers) -> bool {
        match lock(&self.1).remove(call_id) {
            Some(tx) => tx.send(answers).is_ok(),
            None => false,
        }
    }

    /// Delivers a decision; false when nothing was waiting for that call.
    pub fn resolve(&self, call_id: &str, decision: ReviewDecision) -> bool {
        match lock(&self.0).remove(call_id) {
            Some(tx) => tx.send(decision).is_ok(),
            None => false,
        }
    }
}
