use super::score;

#[test]
fn a_match_needs_every_query_character_in_order() {
    assert_eq!(
        score("src/main.rs", "smr").map(|s| s.1),
        Some(vec![0, 4, 9])
    );
    assert!(score("src/main.rs", "rsm").is_none());
    assert!(score("src/main.rs", "MAIN").is_some());
}

#[test]
fn consecutive_and_file_name_matches_rank_higher() {
    let name = score("src/lib/mod.rs", "mod").unwrap().0;
    let spread = score("m/o/d/other.rs", "mod").unwrap().0;
    assert!(name > spread, "{name} {spread}");
    let short = score("a/main.rs", "main").unwrap().0;
    let long = score("a/very/deep/path/main.rs", "main").unwrap().0;
    assert!(short > long, "{short} {long}");
}
