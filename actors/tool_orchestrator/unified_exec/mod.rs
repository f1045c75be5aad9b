//! Unified exec: the PTY sessions behind `exec_command` and `write_stdin` (the handlers, and
//! what the model reads back, are in `tools/`; nothing here knows the handler contract). A
//! command still running gets a session id, and `write_stdin` types into it and collects more. The sessions live in the turn's `TurnServices` (so they outlive a call and
//! die with the turn); each session's end is reported exactly once — by whichever call sees
//! it exit, or by the turn's end, which kills it (`sessions.rs`).

pub mod session;
pub mod sessions;

pub use session::PtySession;
pub use sessions::{ExecSessions, SessionKey};

use std::time::Duration;
use troupe_messages::settings::{SessionSettings, ShellToolType};

const MIN_YIELD_MS: u64 = 50;
const MAX_YIELD_MS: u64 = 30_000;
/// Output beyond this many tokens is cut from the middle unless the call asks otherwise.
pub(crate) const DEFAULT_MAX_OUTPUT_TOKENS: usize = 10_000;

pub(crate) fn yield_time(requested: Option<u64>, default: u64) -> Duration {
    Duration::from_millis(
        requested
            .unwrap_or(default)
            .clamp(MIN_YIELD_MS, MAX_YIELD_MS),
    )
}

pub(crate) fn offered(settings: &SessionSettings) -> bool {
    settings.tools.shell == ShellToolType::ExecCommand
}
