use super::fit;
use ratatui::text::Line;

fn text(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

fn segments(texts: &[&'static str]) -> Vec<Line<'static>> {
    texts.iter().map(|t| Line::raw(*t)).collect()
}

#[test]
fn a_line_that_fits_is_joined_whole() {
    let line = fit(segments(&["gpt-5.5", "never"]), 20);
    assert_eq!(text(&line), "gpt-5.5 · never");
}

#[test]
fn a_line_exactly_as_wide_as_the_terminal_is_not_cut() {
    let line = fit(segments(&["gpt-5.5", "never"]), 15);
    assert_eq!(text(&line), "gpt-5.5 · never");
}

#[test]
fn segments_are_dropped_whole_from_the_end_and_the_line_ends_in_an_ellipsis() {
    let all = segments(&[
        "gpt-5.5 high",
        "never",
        "read-only",
        "0k used",
        "~/src/x (main)",
    ]);
    let line = fit(all.clone(), 30);
    assert_eq!(text(&line), "gpt-5.5 high · never · …");
    assert!(line.width() <= 30, "{}", line.width());
    // A little wider: one more whole segment, never a part of one.
    let line = fit(all, 36);
    assert_eq!(text(&line), "gpt-5.5 high · never · read-only · …");
}

#[test]
fn no_segment_is_cut_mid_word() {
    let all = segments(&["gpt-5.5", "never", "workspace-write", "0k used", "/tmp/dir"]);
    for width in 1..60u16 {
        let line = fit(all.clone(), width);
        let shown = text(&line);
        assert!(line.width() <= usize::from(width), "{width}: {shown}");
        for piece in shown.split(" · ") {
            let piece = piece.trim_end_matches('…');
            assert!(
                piece.is_empty() || all.iter().any(|s| s.to_string().starts_with(piece)),
                "{width}: {shown}"
            );
            // Only the first segment may be cut (when it alone is too wide).
            if !shown.starts_with(piece) {
                assert!(
                    all.iter().any(|s| s.to_string() == piece),
                    "{width}: {shown}"
                );
            }
        }
    }
}

#[test]
fn a_first_segment_wider_than_the_terminal_is_cut_at_a_word() {
    let line = fit(segments(&["viewing /root/explorer task", "gpt-5.5"]), 20);
    assert_eq!(text(&line), "viewing…");
    assert!(line.width() <= 20);
}

#[test]
fn wide_characters_are_not_split() {
    let line = fit(segments(&["日本語のパス"]), 6);
    assert!(line.width() <= 6);
    assert!(text(&line).ends_with('…'));
}
