use super::*;

#[test]
fn numstat_paths_reads_plain_entries_and_both_sides_of_renames() {
    let raw = [
        "1\t0\ta.txt",
        "-\t-\tbin\tname",
        "0\t0\t",
        "old/x",
        ".troupe/config.toml",
        "2\t1\tz",
        "",
    ]
    .join("\0");
    assert_eq!(
        numstat_paths(&raw),
        ["a.txt", "bin\tname", "old/x", ".troupe/config.toml", "z"]
    );
}

#[test]
fn protected_spellings_are_refused() {
    for path in [
        ".troupe/config.toml",
        "a/.GIT/config",
        "x/.git./hooks/pre-commit",
        "x/.troupe /rules",
        "../up",
        "/abs",
        "a/../../b",
    ] {
        assert!(
            refuse_protected_paths(&[path.to_string()]).is_err(),
            "{path}"
        );
    }
    assert!(refuse_protected_paths(&["src/.gitignore".into(), "git/x".into()]).is_ok());
}
