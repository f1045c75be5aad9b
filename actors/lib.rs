//! The behaviour of Troupe: one ractor actor per responsibility, each in its own folder with
//! the pure logic it owns. See ARCHITECTURE.md for the tree and a walk through one turn.
//!
//! Actors (each folder's `mod.rs` holds the actor; the other files are its pure logic):
//! - [`thread_manager`]: the registry of live threads (`ThreadManagerActor`).
//! - [`session`]: one thread (`SessionActor`): history, input queue, subscribers; `context/`
//!   assembles AGENTS.md, skills and the budget; `persist.rs` the index entry.
//! - [`rollout_recorder`]: appends a thread's rollout (`RolloutRecorderActor`); the writer pool,
//!   the loader and the replay are its logic.
//! - [`turn`]: one turn's loop (`TurnActor`): prompt, sampling, compaction, limits.
//! - [`sampler`]: one model request at a time with retries (`SamplerActor`): the wires
//!   (Responses over SSE or WebSocket, Chat Completions, Anthropic Messages), keys, the replay
//!   provider.
//! - [`tool_orchestrator`]: one response's tool calls (`ToolOrchestratorActor`), in layers
//!   (ARCHITECTURE.md): the turn's state (PTY sessions in `unified_exec/`, the turn diff), the
//!   handler contract, the registry, the policy (approval gate, `exec_flow`), `tools/` (one
//!   file per tool).
//! - [`agents`]: sub-agents: the `AgentTree`, the collaboration tools, spawning and watching a
//!   child, worktrees, and `RemoteSessionActor` for a child on a worker of the pool.
//! - [`sandbox_none`], [`sandbox_linux`]: the sandbox backends (`NoneSandboxActor`,
//!   `LinuxSandboxActor` with its zygote pool); the processes they run, the helper and the
//!   profiles are the `troupe-sandbox` crate.
//!
//! Pure logic shared by several actors (no actor inside):
//! - [`approvals`]: whether a call may run (policy × sandbox table, command rules, the
//!   known-safe list, the session's approval cache).
//! - [`thread_store`]: the sled index of threads and its rebuild from the rollouts.
//! - [`hooks`]: the lifecycle hook runner (`TurnHooks`): which handlers run, their processes,
//!   their verdicts.
//! - [`review`]: code review runs: the target checked with `git`, the review instructions
//!   and request, the model's JSON answer checked and rendered.
//! - [`runtime`]: the API frontends use (start the tree, start/resume threads, a thread's
//!   client).
//! - [`ask`]: request/reply to an actor with a timeout.
//! - `locking`: a poison-tolerant mutex lock.
//! - [`spawn_failure`]: why an actor did not start, without ractor's "panicked" wrapping.
//!
//! Elsewhere: the patch format is `troupe-apply-patch`; the contract (ops, events, mailboxes)
//! is `troupe-messages`.

pub mod agents;
pub mod approvals;
pub mod ask;
pub mod file_mask;
pub mod hooks;
mod locking;
pub mod review;
pub mod rollout_recorder;
pub mod runtime;
pub mod sampler;
pub mod sandbox_linux;
pub mod sandbox_none;
pub mod session;
pub mod spawn_failure;
pub mod thread_manager;
pub mod thread_store;
pub mod tool_orchestrator;
pub mod turn;
