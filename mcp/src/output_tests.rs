use super::*;
use rmcp::model::Content;

#[test]
fn text_images_and_structured_content_are_rendered_bounded() {
    let result = CallToolResult {
        content: vec![
            Content::text("hello"),
            Content::image("A".repeat(5000), "image/png"),
        ],
        structured_content: Some(serde_json::json!({"sum": 3})),
        is_error: None,
        meta: None,
    };
    let (text, success) = render(&result, 10_000);
    assert!(success);
    assert!(
        text.starts_with("hello\n[image: image/png, 5000 bytes"),
        "{text}"
    );
    assert!(!text.contains("AAAA"), "image bytes are a reference only");
    assert!(text.ends_with("structured_content: {\"sum\":3}"), "{text}");
}

#[test]
fn a_huge_result_is_cut_head_and_tail() {
    let result = CallToolResult {
        content: vec![Content::text(format!("start{}end", "é".repeat(5_000_000)))],
        structured_content: None,
        is_error: Some(true),
        meta: None,
    };
    let (text, success) = render(&result, 1000);
    assert!(!success);
    assert!(text.len() < 1100, "{}", text.len());
    assert!(text.starts_with("start") && text.ends_with("end"));
    assert!(text.contains("bytes omitted"));
}

#[test]
fn the_result_for_frontends_keeps_its_shape_within_the_budget() {
    let result = CallToolResult {
        content: vec![
            Content::text(format!("start{}end", "x".repeat(50_000))),
            Content::image("A".repeat(5000), "image/png"),
        ],
        structured_content: Some(serde_json::json!({"big": "y".repeat(50_000)})),
        is_error: Some(false),
        meta: None,
    };
    let value = bounded_result(&result, 1000);
    let text = value["content"][0]["text"].as_str().unwrap();
    assert!(text.len() < 1100 && text.starts_with("start") && text.ends_with("end"));
    assert_eq!(value["content"][0]["type"], "text");
    assert_eq!(
        value["content"][1]["data"],
        "[5000 bytes of base64 not shown]"
    );
    assert_eq!(value["content"][1]["mimeType"], "image/png");
    assert!(value["structuredContent"]
        .as_str()
        .unwrap()
        .contains("not shown"));
    assert_eq!(value["isError"], false);

    let small = CallToolResult {
        content: vec![Content::text("hi")],
        structured_content: Some(serde_json::json!({"sum": 3})),
        is_error: None,
        meta: None,
    };
    let value = bounded_result(&small, 1000);
    assert_eq!(value["content"][0]["text"], "hi");
    assert_eq!(value["structuredContent"], serde_json::json!({"sum": 3}));
}
