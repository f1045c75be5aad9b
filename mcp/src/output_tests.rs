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
