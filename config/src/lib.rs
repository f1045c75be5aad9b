//! Configuration: `$TROUPE_HOME/config.toml` plus `-c key=value` overrides, resolved into the
//! [`troupe_messages::settings::SessionSettings`] a thread runs under.
//!
//! Layering today: defaults < user `config.toml` < `-c` overrides < command-line flags.
//! Profiles, project config and requirements come with the context/config issue.

pub mod error;
pub mod file;
pub mod home;
pub mod layers;
pub mod overrides;
pub mod regular_file;
pub mod requirements;
pub mod resolve;

#[cfg(test)]
#[path = "layering_tests.rs"]
mod layering_tests;
#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
