#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn the_trigger_word_is_the_one_under_the_cursor() {
    let text = "see @src/ma and $dep";
    let token = token_at(text, 11).unwrap();
    assert_eq!(token.trigger, Trigger::File);
    assert_eq!((token.start, token.end), (4, 11));
    assert_eq!(token.query, "src/ma");
    let token = token_at(text, text.len()).unwrap();
    assert_eq!(token.trigger, Trigger::Skill);
    assert_eq!(token.query, "dep");
    // Not at a word start (an e-mail address), or after a space: nothing.
    assert!(token_at("mail me@host", 12).is_none());
    assert!(token_at("@a b", 4).is_none());
}

#[test]
fn fuzzy_matching_prefers_the_file_name_and_tight_matches() {
    assert!(fuzzy_score("src/main.rs", "xyz").is_none());
    let files = vec![
        "docs/maintenance/index.md".to_string(),
        "src/main.rs".to_string(),
        "src/domain.rs".to_string(),
    ];
    let token = token_at("@main", 5).unwrap();
    let found = choices(&token, &files, &[]);
    assert_eq!(found[0].insert, "src/main.rs");
    assert_eq!(found.len(), 3);
    let token = token_at("@smr", 4).unwrap();
    assert_eq!(choices(&token, &files, &[])[0].insert, "src/main.rs");
}

#[test]
fn the_file_list_respects_gitignore_and_hides_dot_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join("target/debug")).unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    std::fs::write(root.join("notes.log"), "").unwrap();
    std::fs::write(root.join("target/debug/app"), "").unwrap();
    std::fs::write(root.join(".env"), "").unwrap();
    assert_eq!(list_files(root), vec!["src/lib.rs".to_string()]);
}
