use super::*;

const DIFF: &str = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,2 @@\n-old\n+new\n+more\n ctx\ndiff --git a/b.txt b/b.txt\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+hi\n";

#[test]
fn splits_files_and_counts_lines() {
    let files = split_files(DIFF);
    assert_eq!(files.len(), 2);
    assert_eq!(
        (files[0].path.as_str(), files[0].added, files[0].removed),
        ("src/a.rs", 2, 1)
    );
    assert_eq!(
        (files[1].path.as_str(), files[1].added, files[1].removed),
        ("b.txt", 1, 0)
    );
    assert!(names(&files[0], "/work/repo/src/a.rs"));
    assert!(!names(&files[0], "/work/repo/xsrc/a.rs"));
}

#[test]
fn file_lines_drop_headers() {
    let files = split_files(DIFF);
    let lines = file_lines(&files[0]);
    let text: Vec<String> = lines
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    assert_eq!(
        text,
        vec![
            "src/a.rs (+2 -1)",
            "  @@ -1,2 +1,2 @@",
            "  -old",
            "  +new",
            "  +more",
            "   ctx"
        ]
    );
}
