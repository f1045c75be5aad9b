use super::*;

#[test]
fn output_tail_is_bounded_however_much_arrives() {
    let mut tail = OutputTail::default();
    let big = "x".repeat(1000) + "\n";
    for _ in 0..10_000 {
        tail.push(&big);
    }
    assert!(tail.len() <= OUTPUT_KEEP_LINES);
    assert_eq!(tail.dropped + tail.len(), 10_000);
    // One 10 MB line without a newline is cut too.
    let mut tail = OutputTail::default();
    tail.push(&"y".repeat(10 * 1024 * 1024));
    assert!(tail.lines().map(str::len).sum::<usize>() <= 64 * 1024);
}

#[test]
fn streamed_chunks_join_lines() {
    let mut tail = OutputTail::default();
    tail.push("hel");
    tail.push("lo\nwor");
    tail.push("ld");
    assert_eq!(tail.lines().collect::<Vec<_>>(), vec!["hello", "world"]);
}

#[test]
fn command_cell_shows_the_tail_and_hides_the_rest() {
    let mut cell = CommandCell::new("c".into(), "seq 100".into());
    cell.output
        .push(&(1..=100).map(|n| format!("{n}\n")).collect::<String>());
    cell.exit_code = Some(Some(0));
    let text: Vec<String> = Cell::Command(cell)
        .lines()
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    assert_eq!(text[1], "  + 95 lines (Ctrl+O to expand)");
    assert_eq!(text[6], "  │ 100");
}

#[test]
fn durations_read_naturally() {
    assert_eq!(format_duration(1234), "1.2s");
    assert_eq!(format_duration(65_400), "1m 05s");
}
