//! The mailbox of every actor: what each one can be told or asked.
//!
//! Direction rule: `call` (request/reply) goes down the tree, notifications go up, so two
//! actors never wait on each other. Each enum is in-process only (it holds reply ports and
//! actor references); every payload is a serialisable type from this crate.

use crate::events::{AbortReason, Event, EventMsg};
use crate::ids::{ThreadId, TurnId};
use crate::items::ResponseItem;
use crate::ops::{Submission, UserInput};
use crate::rollout::{HistoryPart, RolloutLine};
use crate::sampling::{ModelRequest, SamplerUpdate};
use crate::settings::SessionSettings;
use crate::tools::{ExecOutputSink, ExecRequest, ExecResult, ToolCall, ToolOutput, ToolSpec};
use ractor::{ActorRef, RpcReplyPort};
use std::path::PathBuf;
use tokio::sync::mpsc;

/// A live thread as the thread manager hands it out.
#[derive(Debug, Clone)]
pub struct ThreadHandle {
    pub thread_id: ThreadId,
    pub session: ActorRef<SessionMsg>,
    pub rollout_path: PathBuf,
}

/// How a sub-agent's thread begins.
#[derive(Debug, Clone)]
pub struct AgentStart {
    pub parent_thread_id: ThreadId,
    pub meta: crate::agents::AgentMeta,
    /// `fork_turns = "all"`: the parent's history (the child's history starts with it).
    pub forked_history: Option<Vec<ResponseItem>>,
}

/// ThreadManager: registry of live threads.
#[derive(Debug)]
pub enum ThreadManagerMsg {
    /// Start a new thread with these settings.
    StartThread {
        settings: Box<SessionSettings>,
        reply: RpcReplyPort<Result<ThreadHandle, String>>,
    },
    /// Reopen the thread recorded in this rollout: rebuild its history and append to it.
    ResumeThread {
        settings: Box<SessionSettings>,
        rollout_path: PathBuf,
        reply: RpcReplyPort<Result<ThreadHandle, String>>,
    },
    /// From an opener task of a resume, once the rollout is loaded: reserve this thread id.
    /// False when the thread is already open (or being opened): the resume is refused.
    /// A tuple variant, so that the task asks with `call_t!`.
    ClaimThread(ThreadId, RpcReplyPort<bool>),
    /// From an opener task: the claimed thread's session started (`Some`: it joins the
    /// registry) or did not (`None`: the claim is dropped).
    ThreadOpened {
        thread_id: ThreadId,
        session: Option<ActorRef<SessionMsg>>,
    },
    /// Start a sub-agent: a new thread whose rollout links to its parent.
    StartAgent {
        settings: Box<SessionSettings>,
        start: Box<AgentStart>,
        reply: RpcReplyPort<Result<ThreadHandle, String>>,
    },
    /// A session stopped by itself (after `Op::Shutdown`).
    ThreadStopped { thread_id: ThreadId },
    /// The session of an open thread (a sub-agent its parent's session holds, say), for a
    /// frontend that wants to watch it live; `None` when the thread is not open here.
    /// A tuple variant, so that the runtime asks with `call_t!`.
    LoadedSession(ThreadId, RpcReplyPort<Option<ActorRef<SessionMsg>>>),
    /// The session of every open thread, for a frontend that is stopping (to end each one's
    /// turn and close it). A tuple variant, so that the runtime asks with `call_t!`.
    LoadedSessions(RpcReplyPort<Vec<ActorRef<SessionMsg>>>),
}

/// Session: one thread's history, input queue and subscribers.
#[derive(Debug)]
pub enum SessionMsg {
    /// A client operation.
    Submit(Submission),
    /// Deliver every following event to this bounded channel.
    Subscribe { events: mpsc::Sender<Event> },
    /// The history as it stands (a copy).
    GetHistory {
        reply: RpcReplyPort<Vec<ResponseItem>>,
    },
    /// From the turn: an item joined the history.
    TurnItem { turn_id: TurnId, item: ResponseItem },
    /// From the turn: something to tell subscribers.
    TurnEvent { turn_id: TurnId, msg: EventMsg },
    /// From the turn: its tool results are recorded; make them durable (per the fsync
    /// policy) and answer with `TurnMsg::Checkpointed` before it samples again.
    TurnCheckpoint { turn_id: TurnId },
    /// From the rollout recorder: its file cannot be written (a failed write, a full disk).
    /// Nothing more can be made durable: the running turn is stopped at once.
    RolloutFailed { error: String },
    /// From the turn: compaction replaced the whole history with `history`, which is
    /// `parts` applied to the history before (how the rollout records it).
    HistoryReplaced {
        turn_id: TurnId,
        history: Vec<ResponseItem>,
        parts: Vec<HistoryPart>,
    },
    /// From the turn: injected inputs up to and including `seq` are now in the history.
    InputConsumed { turn_id: TurnId, up_to_seq: u64 },
    /// From the agent tree: an `EventMsg::AgentEvent` (a sub-agent's activity) for this
    /// root's subscribers; not recorded.
    AgentEvent(EventMsg),
    /// From the turn: it ended; `aborted` is set when it did not finish normally.
    /// `messages_before` counts every message its subtree (the turn, its tool calls, its PTY
    /// sessions) sent to the session before this one: the session records the end only once
    /// it has handled that many, whatever order the mailbox delivered them in.
    TurnEnded {
        turn_id: TurnId,
        last_agent_message: Option<String>,
        aborted: Option<AbortReason>,
        messages_before: u64,
    },
    // `troupe queue` (issue 19).
    /// From the session's inbox poller: what another process queued for this thread
    /// (`$TROUPE_HOME/queue/<thread_id>/`), already claimed on disk (`claimed[i]` holds
    /// `ops[i]`, renamed so no other reader takes it). Steering is injected into the running
    /// turn, then deleted, or put back when no turn runs any more; the other ops are handled
    /// as submitted and deleted.
    QueuedInput {
        ops: Vec<crate::ops::QueuedOp>,
        claimed: Vec<PathBuf>,
    },
    /// From a goal tool's task: read or change the thread's goal; the reply is the goal
    /// afterwards (`None`: there is none) or why the request was refused.
    Goal {
        request: crate::goals::GoalRequest,
        reply: RpcReplyPort<Result<Option<crate::goals::ThreadGoal>, String>>,
    },
    /// From the task running the user's shell command number `run` (`Op::RunUserShellCommand`):
    /// a piece of its output (`ExecCommandOutputDelta`) for subscribers.
    UserShellOutput { run: u64, msg: EventMsg },
    /// From that task: the command ended (`end`, an `ExecCommandEnd`); `record` (the command
    /// and its output, as a user message) joins the history.
    UserShellEnded {
        run: u64,
        end: EventMsg,
        record: ResponseItem,
    },
}

/// Turn: the inner loop of one turn.
#[derive(Debug)]
pub enum TurnMsg {
    /// Self-sent: build the next request and sample.
    SampleNext,
    /// From the session: input typed while this turn runs, numbered by the session.
    InjectInput { seq: u64, items: Vec<UserInput> },
    /// From the sampler.
    Sampler(SamplerUpdate),
    /// From the session: everything recorded so far is committed; sample again.
    Checkpointed,
    /// From the orchestrator: every call of the batch, outputs in call order.
    ToolsFinished { outputs: Vec<ToolOutput> },
    // Hooks (lifecycle hooks area).
    /// From the turn's hook task (SessionStart, UserPromptSubmit, Stop): items to record
    /// (context, the held-back user input, a continuation prompt), then sample again
    /// (`go_on`) or end the turn.
    HooksRan {
        items: Vec<ResponseItem>,
        go_on: bool,
    },
    // MCP.
    /// From the turn's MCP start task: the servers are up (or warned about) and their
    /// tools listed; the start hooks and the first request may go.
    McpReady,
}

/// Sampler: one model stream at a time.
#[derive(Debug)]
pub enum SamplerMsg {
    /// Serve this request; updates go to the turn that owns the sampler.
    Sample(Box<ModelRequest>),
}

/// ToolOrchestrator: runs a batch of calls under the step's frozen tool set.
#[derive(Debug)]
pub enum ToolOrchestratorMsg {
    RunBatch {
        calls: Vec<ToolCall>,
        /// The tools advertised in the request these calls answer: a call to any other is refused.
        advertised: Vec<ToolSpec>,
        settings: Box<SessionSettings>,
    },
}

/// A sandbox backend: starts and kills processes.
#[derive(Debug)]
pub enum SandboxMsg {
    /// Run a process to completion (or timeout) and reply with its result.
    Spawn {
        request: Box<ExecRequest>,
        /// Where the running command's output goes as it comes (none: only the result).
        output: Option<ExecOutputSink>,
        reply: RpcReplyPort<Result<ExecResult, String>>,
    },
    /// Kill every process group this backend started.
    KillAll,
}

/// RolloutRecorder: appends a thread's JSONL.
#[derive(Debug)]
pub enum RolloutMsg {
    /// Append these lines in order.
    Append(Vec<RolloutLine>),
    /// Write out and fsync everything appended so far, then reply.
    Flush {
        reply: RpcReplyPort<Result<(), String>>,
    },
}
