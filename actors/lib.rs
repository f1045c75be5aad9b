//! The behaviour of Troupe: one ractor actor per responsibility, each in its own folder with
//! the pure logic it owns. See ARCHITECTURE.md for the tree and a walk through one turn.

pub mod agents;
pub mod approvals;
mod locking;
pub mod rollout_recorder;
pub mod runtime;
pub mod sampler;
pub mod sandbox_linux;
pub mod sandbox_none;
pub mod session;
pub mod thread_manager;
pub mod thread_store;
pub mod tool_orchestrator;
pub mod turn;
