use super::*;

#[test]
fn the_payload_has_codex_field_names_and_order() {
    let thread_id = ThreadId::new();
    let text = payload(
        thread_id,
        3,
        Path::new("/work/p"),
        &["fix it".to_string()],
        Some("done"),
    );
    assert_eq!(
        text,
        format!(
            r#"{{"type":"agent-turn-complete","thread-id":"{thread_id}","turn-id":"3","cwd":"/work/p","client":"troupe","input-messages":["fix it"],"last-assistant-message":"done"}}"#
        )
    );
}
