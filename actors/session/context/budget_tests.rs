use super::budget::{check_fixed, check_input, fixed_parts, Room};
use troupe_messages::items::ResponseItem;

fn initial(agents_bytes: usize) -> Vec<ResponseItem> {
    vec![
        ResponseItem::developer_text("<permissions instructions>\nx\n</permissions instructions>"),
        ResponseItem::user_text(format!(
            "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\n{}\n</INSTRUCTIONS>",
            "a".repeat(agents_bytes)
        )),
        ResponseItem::user_text("<environment_context>\n</environment_context>"),
    ]
}

#[test]
fn fixed_context_that_fits_passes() {
    let parts = fixed_parts("be good", &initial(100));
    let room = Room {
        limit: 1000,
        window: Some(2000),
    };
    assert_eq!(check_fixed(&parts, room), Ok(()));
}

#[test]
fn oversized_fixed_context_names_the_biggest_part_first() {
    let parts = fixed_parts(&"i".repeat(2000), &initial(40_000));
    let room = Room {
        limit: 9000,
        window: Some(10_000),
    };
    let err = check_fixed(&parts, room).unwrap_err();
    assert!(
        err.contains("does not fit under the auto-compaction limit of 9000 tokens (context window 10000 tokens); the biggest parts: AGENTS.md instructions (about 10"),
        "{err}"
    );
    assert!(
        err.contains("base instructions (about 500 tokens, 2000 bytes)"),
        "{err}"
    );
}

#[test]
fn a_message_too_large_is_refused_with_its_size_and_the_window() {
    let room = Room {
        limit: 1000,
        window: Some(1000),
    };
    let small = [ResponseItem::user_text("hi")];
    assert_eq!(check_input(500, &small, room), Ok(()));
    let big = [ResponseItem::user_text("m".repeat(4000))];
    let err = check_input(500, &big, room).unwrap_err();
    assert!(
        err.contains("about 1") && err.contains("(4000 bytes)"),
        "{err}"
    );
    assert!(err.contains("the context window of 1000 tokens"), "{err}");
}
