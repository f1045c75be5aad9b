use super::fit;
use ratatui::text::{Line, Span};

fn text(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

#[test]
fn a_line_that_fits_is_left_whole() {
    let line = Line::from(vec![Span::raw("gpt-5.5"), Span::raw(" · never")]);
    assert_eq!(text(&fit(line, 20)), "gpt-5.5 · never");
}

#[test]
fn a_cut_line_ends_in_an_ellipsis_within_the_width() {
    let line = Line::from(vec![
        Span::raw("gpt-5.5"),
        Span::raw(" · never · read-only"),
    ]);
    let cut = fit(line, 14);
    assert_eq!(text(&cut), "gpt-5.5 · nev…");
    assert!(cut.width() <= 14, "{}", cut.width());
}

#[test]
fn wide_characters_are_not_split() {
    let line = Line::from(vec![Span::raw("日本語のパス")]);
    let cut = fit(line, 6);
    assert!(cut.width() <= 6);
    assert!(text(&cut).ends_with('…'));
}
