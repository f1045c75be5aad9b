use super::tokens::{builtin_context_window, estimate_item, TokenTracker};
use troupe_messages::items::ResponseItem;
use troupe_messages::usage::TokenUsage;

#[test]
fn tracker_prefers_reported_usage_plus_what_came_after() {
    let history = vec![ResponseItem::user_text("x".repeat(400))];
    let mut tracker = TokenTracker::for_history(&history);
    assert!(tracker.current() >= 100);
    tracker.on_usage(&TokenUsage {
        input_tokens: 5000,
        output_tokens: 100,
        ..TokenUsage::default()
    });
    assert_eq!(tracker.current(), 5100);
    let output = ResponseItem::FunctionCallOutput {
        call_id: "c".into(),
        output: "y".repeat(4000).into(),
    };
    tracker.on_item(&output);
    assert_eq!(tracker.current(), 5100 + estimate_item(&output));
    assert!(tracker.over(Some(6000)));
    assert!(!tracker.over(Some(7000)));
    assert!(!tracker.over(None));
}

#[test]
fn known_windows() {
    assert_eq!(builtin_context_window("gpt-5.1-codex"), Some(272_000));
    assert_eq!(builtin_context_window("mystery"), None);
}
