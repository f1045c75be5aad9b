//! The wire types of the methods Troupe implements, in Codex's shapes (camelCase). Params are
//! parsed with these types, so a wrong type gets serde's message; results and notifications are
//! built from them, so the generated schema (`schema.rs`) is the wire.
//!
//! One file per area; each is re-exported here, so a type is named `protocol::Thread` whatever
//! its file.

mod approvals;
mod config;
mod initialize;
mod items;
mod local;
mod notifications;
mod rewind;
mod threads;
mod troupe;
mod turns;

pub use approvals::*;
pub use config::*;
pub use initialize::*;
pub use items::*;
pub use local::*;
pub use notifications::*;
pub use rewind::*;
pub use threads::*;
pub use troupe::*;
pub use turns::*;
