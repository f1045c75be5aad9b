//! MCP client of Troupe: the configured servers a runtime connects to, their tools under
//! model-visible names, and calls with deadlines and bounded results. No actors: the
//! [`manager::McpManager`] is a service shared by every thread of one runtime.

pub mod names;
