//! How `exec` shows the runtime's events: progress for a person on stderr
//! ([`super::human::HumanOutput`]), or Codex's JSON lines on stdout
//! ([`super::json_events::JsonOutput`]). The exec loop holds one and hands it every event.

use troupe_cli::output::StdoutError;
use troupe_messages::events::EventMsg;

/// Shows events as they arrive.
pub trait EventRenderer {
    /// Shows one event (many show nothing). An error means stdout can no longer be written:
    /// nobody reads the events any more, and the loop stops the work.
    fn render(&mut self, msg: &EventMsg) -> Result<(), StdoutError>;
}
