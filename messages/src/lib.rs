//! The contract of Troupe: read this crate and you know the system.
//!
//! Everything here is plain data (serde, JSON on the wire and in rollouts) except the
//! mailbox enums in [`mailboxes`], which carry reply ports and actor references and so
//! only travel inside one process. Their payloads are the serialisable types below.

pub mod agent_notice;
pub mod agents;
pub mod cluster;
pub mod errors;
pub mod events;
pub mod file_mask;
pub mod goals;
pub mod hooks;
pub mod ids;
pub mod items;
pub mod mailboxes;
pub mod mcp;
pub mod ops;
pub mod permissions;
pub mod policy;
pub mod questions;
pub mod rollout;
pub mod sampling;
pub mod settings;
pub mod shell_split;
pub mod terminal_text;
pub mod threads;
pub mod tools;
pub mod usage;

#[cfg(test)]
#[path = "roundtrip_tests.rs"]
mod roundtrip_tests;

#[cfg(test)]
#[path = "methods_tests.rs"]
mod methods_tests;
