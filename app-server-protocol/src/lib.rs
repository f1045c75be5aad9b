//! Codex's app-server wire as Troupe speaks it, without the runtime: the protocol types by
//! area ([`protocol`]), JSON-RPC framing ([`jsonrpc`]), the generated schema ([`schema`]),
//! the methods by name ([`method_names`], [`unsupported`]), and the translation of runtime
//! events and recorded rollouts into notifications, server requests and turns
//! ([`translate`], [`rollout_turns`], with [`items`], [`hooks`] and [`command_actions`]).
//!
//! It depends on `troupe-messages` and serde only (schemars for the schema, uuid for turn
//! ids): the server (`troupe-app-server`) acts on requests with the runtime; a Rust client
//! can depend on this crate alone.

pub mod command_actions;
pub mod hooks;
pub mod items;
pub mod jsonrpc;
pub mod method_names;
pub mod protocol;
pub mod rollout_turns;
pub mod schema;
pub mod translate;
pub mod turn_ids;
pub mod unsupported;

#[cfg(test)]
mod jsonrpc_tests;
#[cfg(test)]
mod schema_tests;
#[cfg(test)]
mod unsupported_tests;
