use super::*;

fn lines(text: &[&str]) -> Vec<String> {
    text.iter().map(std::string::ToString::to_string).collect()
}

/// (file, pattern, start, end_of_file, expected)
type Case = (
    &'static [&'static str],
    &'static [&'static str],
    usize,
    bool,
    Option<usize>,
);

#[test]
fn table() {
    let cases: &[Case] = &[
        (&["a", "b", "c"], &["b", "c"], 0, false, Some(1)),
        (&["a", "b", "c"], &[], 2, false, Some(2)),
        (&["a"], &["a", "b"], 0, false, None),
        (&["a", "b", "a"], &["a"], 1, false, Some(2)),
        (&["a", "b", "a"], &["a"], 0, true, Some(2)),
        (&["a", "b"], &["a"], 0, true, None),
        (&["a  ", "b"], &["a"], 0, false, Some(0)),
        (&["  a", "b"], &["a "], 0, false, Some(0)),
        (&["x \u{2013} y"], &["x - y"], 0, false, Some(0)),
        (&["\u{201C}q\u{201D}"], &["\"q\""], 0, false, Some(0)),
        (&["a\u{3000}b"], &["a b"], 0, false, Some(0)),
        (&["a ", "a"], &["a"], 0, false, Some(1)),
        (&["a", "b"], &["c"], 0, false, None),
        (&["a", "b"], &["a"], 5, false, None),
        (&["a"], &["a"], 1, true, None),
    ];
    for (index, (file, pattern, start, eof, expected)) in cases.iter().enumerate() {
        assert_eq!(
            seek_sequence(&lines(file), &lines(pattern), *start, *eof),
            *expected,
            "case {index}: {file:?} {pattern:?}"
        );
    }
}
