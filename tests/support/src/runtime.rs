//! Helpers for tests that drive the actor runtime directly (no binary).

use std::path::Path;
use std::time::Duration;
use troupe_actors::runtime::ThreadClient;
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::ops::{Op, UserInput};
use troupe_messages::settings::SessionSettings;
use troupe_mock_model::MockModel;

/// Settings pointing at `mock`, no retries, no sandbox, no approvals.
pub fn settings(mock: &MockModel, home: &Path, cwd: &Path) -> SessionSettings {
    let mut settings = crate::settings::session_settings(mock.base_url(), home, cwd);
    // Runtime tests see exactly the tools they register (sub-agent tests use `exec`).
    settings.agents.enabled = false;
    settings
}

pub fn say(text: &str) -> Op {
    Op::UserInput {
        items: vec![UserInput::Text { text: text.into() }],
    }
}

/// Events until one matches, with a generous deadline so a hang fails instead of blocking.
pub async fn until(
    thread: &mut ThreadClient,
    mut pred: impl FnMut(&EventMsg) -> bool,
) -> Vec<EventMsg> {
    let mut seen = Vec::new();
    loop {
        let event = tokio::time::timeout(Duration::from_secs(30), thread.next_event())
            .await
            .expect("event within 30 s")
            .expect("thread still open");
        let done = pred(&event.msg);
        seen.push(event.msg);
        if done {
            return seen;
        }
    }
}

pub fn is_turn_end(msg: &EventMsg) -> bool {
    matches!(
        msg,
        EventMsg::TurnComplete { .. } | EventMsg::TurnAborted { .. }
    )
}

/// Interrupts the running turn and returns its events up to the end, asserting that the end
/// is `TurnAborted { Interrupted }`.
pub async fn interrupt(thread: &mut ThreadClient) -> Vec<EventMsg> {
    thread.submit(Op::Interrupt).unwrap();
    let events = until(thread, is_turn_end).await;
    assert!(
        matches!(
            events.last(),
            Some(EventMsg::TurnAborted {
                reason: AbortReason::Interrupted,
                ..
            })
        ),
        "{events:?}"
    );
    events
}
