use super::*;
use crate::approvals::safe_tables::{SORT, TREE};

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(std::string::ToString::to_string).collect()
}

#[test]
fn gnu_spellings_resolve_like_getopt_long() {
    let p = parse_safe(&SORT, &args(&["-rnk2", "-t", ",", "--key=3", "--rev", "f"])).unwrap();
    let names: Vec<&str> = p.options.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["r", "n", "k", "t", "key", "reverse"]);
    assert_eq!(p.values(&["k", "key"]).collect::<Vec<_>>(), ["2", "3"]);
    assert_eq!(p.operands, args(&["f"]));
    // `--` ends options: what follows is an operand even if it looks like `-o`.
    let p = parse_safe(&SORT, &args(&["--", "-o", "x"])).unwrap();
    assert_eq!(p.operands, args(&["-o", "x"]));
    // `-` alone is stdin, an operand.
    assert_eq!(
        parse_safe(&SORT, &args(&["-"])).unwrap().operands,
        args(&["-"])
    );
}

#[test]
fn unsafe_unknown_ambiguous_or_malformed_options_are_refused() {
    for spelling in [
        &["-o", "x"][..],
        &["-ox"],
        &["-rno", "x"],
        &["--output=x"],
        &["--outp=x"],
        &["--o", "x"],
        &["--compress-prog=sh"],
        &["--temporary-directory", "d"],
        &["-Q"],
        &["--no-such-option"],
        // Ambiguous prefix: --random-sort / --random-source / --reverse.
        &["--r"],
        // A flag given a value, a value missing.
        &["--reverse=1"],
        &["-k"],
        &["--key"],
    ] {
        assert!(parse_safe(&SORT, &args(spelling)).is_none(), "{spelling:?}");
    }
}

#[test]
fn tree_clusters_take_values_from_the_next_words() {
    // `tree -Lo 1 out` is `-L 1 -o out`: it writes `out`.
    assert!(parse_safe(&TREE, &args(&["-Lo", "1", "out"])).is_none());
    let p = parse_safe(&TREE, &args(&["-aL", "2", "src"])).unwrap();
    assert_eq!(p.values(&["L"]).collect::<Vec<_>>(), ["2"]);
    assert_eq!(p.operands, args(&["src"]));
    // No abbreviations in tree.
    assert!(parse_safe(&TREE, &args(&["--norep"])).is_none());
    assert!(parse_safe(&TREE, &args(&["--noreport"])).is_some());
}
