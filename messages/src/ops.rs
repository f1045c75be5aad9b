//! Operations: what a client submits to a thread (the submission queue).

use crate::policy::{AskForApproval, CollaborationMode, SandboxMode};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One submission: an operation with an id that events caused by it refer back to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    pub id: String,
    pub op: Op,
}

/// Something a client asks a thread to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// New user input: starts a turn, or is injected into the running one.
    UserInput { items: Vec<UserInput> },
    /// Stop the running turn and everything under it; the turn is recorded as aborted.
    Interrupt,
    /// Answer a pending approval request.
    ExecApproval {
        call_id: String,
        decision: ReviewDecision,
    },
    /// Summarise the history now to free context (compaction issue).
    Compact,
    /// Change settings for the following turns; appended to history, never rewritten.
    OverrideTurnContext {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approval_policy: Option<AskForApproval>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox_mode: Option<SandboxMode>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        collaboration_mode: Option<CollaborationMode>,
    },
    /// Settings a frontend changes from the next turn on (Codex's `turn/start` overrides),
    /// already resolved and checked by the frontend as it checks a new thread's.
    UpdateTurnSettings {
        update: Box<crate::settings::TurnSettingsUpdate>,
    },
    /// Input from another agent of the same tree: a message, a follow-up task, or a child's
    /// final answer. Joins a running turn at its next sampling boundary; when the thread is
    /// idle it starts a turn only if `start_turn`, otherwise it waits for the next turn.
    AgentInput {
        items: Vec<UserInput>,
        start_turn: bool,
    },
    /// Answer an approval request of a sub-agent of this thread's tree (told to this thread's
    /// subscribers as an `AgentEvent`): routed to that agent's thread.
    AgentApproval {
        thread_id: crate::ids::ThreadId,
        call_id: String,
        decision: ReviewDecision,
    },
    /// Finish the running turn's cleanup, flush the rollout and stop the thread.
    Shutdown,
    /// The user typed into a sub-agent's transcript (the TUI's threads panel): routed by this
    /// thread (the root of the agent's tree) to that agent as its own user input — a new turn
    /// when it is idle, steered into the running one otherwise.
    AgentUserInput {
        thread_id: crate::ids::ThreadId,
        items: Vec<UserInput>,
    },
    /// Set the thread's goal (`exec --goal`, `/goal`): as the `create_goal` tool, the outcome
    /// told as `GoalUpdated`, or an `Error` event naming what was wrong.
    CreateGoal {
        objective: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token_budget: Option<i64>,
    },
    /// Answer a `RequestUserInput` of the running turn: answers by question id.
    UserInputAnswer {
        call_id: String,
        answers: crate::questions::UserInputAnswers,
    },
    /// The user's own shell command (the TUI's `!cmd`): run unconfined in the thread's cwd
    /// with the user's environment, shown as a command (`ExecCommandBegin`/`End` with
    /// `user_shell`), and recorded in the history as a user message holding the command and
    /// its output, so the model sees it on the next turn. Refused (a `Warning`) while a turn
    /// runs; `Op::Interrupt` kills it; killed after `timeout_ms` (an hour when absent).
    RunUserShellCommand {
        command: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        timeout_ms: Option<u64>,
    },
}

/// What another process asks of a thread through its inbox (`$TROUPE_HOME/queue/<id>/`,
/// `troupe queue` and an app-server following a thread another process holds): delivered by
/// the holding process to its session as the op it stands for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueuedOp {
    /// Input for the running turn (or the next one): `Op::UserInput`.
    Steer { text: String },
    /// Stop the running turn (`Op::Interrupt`), only if it is still `turn_id` when named: an
    /// interrupt that arrives after its turn ended must not stop the next one.
    Interrupt {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turn_id: Option<crate::ids::TurnId>,
    },
    /// `Op::ExecApproval`.
    ExecApproval {
        call_id: String,
        decision: ReviewDecision,
    },
    /// `Op::AgentApproval`.
    AgentApproval {
        thread_id: crate::ids::ThreadId,
        call_id: String,
        decision: ReviewDecision,
    },
    /// `Op::UserInputAnswer`.
    UserInputAnswer {
        call_id: String,
        answers: crate::questions::UserInputAnswers,
    },
}

/// One piece of user input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserInput {
    Text {
        text: String,
    },
    // exec parity (issue 19):
    /// An attached image (`exec -i`), as a `data:` URL.
    Image {
        image_url: String,
    },
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    Approved,
    ApprovedForSession,
    /// For a sandbox retry (`ExecApprovalRequest::sandbox_retry`): run it again once with no
    /// sandbox at all, rather than with the one addition asked for. Any other request
    /// takes it as `Approved`.
    ApprovedWithoutSandbox,
    Denied,
    /// Denied, and the user says what to do instead: the model reads `message` with the
    /// denial as the call's output, and the turn goes on.
    DeniedWithMessage {
        message: String,
    },
    Abort,
}

impl ReviewDecision {
    /// Whether the call may run (once or for the session).
    pub fn is_approved(&self) -> bool {
        matches!(
            self,
            Self::Approved | Self::ApprovedForSession | Self::ApprovedWithoutSandbox
        )
    }
}
