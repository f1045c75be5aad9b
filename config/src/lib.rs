//! Configuration: `$TROUPE_HOME/config.toml` plus `-c key=value` overrides, resolved into the
//! [`troupe_messages::settings::SessionSettings`] a thread runs under.
//!
//! Layering: defaults < system < user `config.toml` < profile < trusted, pinned project
//! files < `-c` overrides < command-line flags; see `resolve.rs` and `trust.rs`.

pub mod cluster;
pub mod error;
pub mod features;
pub mod file;
pub mod home;
pub mod hooks;
pub mod layers;
pub mod limits;
pub mod mcp;
pub mod overrides;
pub mod project;
pub mod regular_file;
pub mod requirements;
pub mod resolve;
pub mod trust;

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod hooks_tests;
#[cfg(test)]
#[path = "layering_tests.rs"]
mod layering_tests;
#[cfg(test)]
#[path = "limits_tests.rs"]
mod limits_tests;
#[cfg(test)]
#[path = "mcp_tests.rs"]
mod mcp_tests;
#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
#[cfg(test)]
#[path = "trust_tests.rs"]
mod trust_tests;
