use super::*;

fn text(lines: &[Line<'_>]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect()
}

#[test]
fn headings_lists_and_code() {
    let lines = render("# Title\n\nSome *text* and `code`.\n\n- one\n- two\n\n1. a\n2. b\n\n```rust\nfn main() {}\n```\n");
    assert_eq!(
        text(&lines),
        vec![
            "# Title",
            "",
            "Some text and code.",
            "",
            "• one",
            "• two",
            "",
            "1. a",
            "2. b",
            "",
            "  fn main() {}",
        ]
    );
}

#[test]
fn tables_align_columns() {
    let lines = render("| a | long |\n|---|---|\n| xyz | 1 |\n");
    assert_eq!(text(&lines), vec!["a   │ long", "────┼─────", "xyz │ 1   "]);
}

#[test]
fn links_show_their_target_and_escapes_are_text() {
    let lines = render("[docs](https://x.y) \x1b[2J");
    assert_eq!(text(&lines), vec!["docs (https://x.y) ^[[2J"]);
}
