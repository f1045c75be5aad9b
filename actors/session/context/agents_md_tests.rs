use super::agents_md::{discover, project_doc_paths, DiscoveryOptions, PROJECT_DOC_MARKER};
use pretty_assertions::assert_eq;
use std::path::Path;

struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join("apps/api/src")).unwrap();
        Self { dir }
    }
    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }
    fn write(&self, rel: &str, text: &[u8]) {
        std::fs::write(self.path(rel), text).unwrap();
    }
}

fn options<'a>(cwd: &'a Path, max: usize, user: Option<&'a Path>) -> DiscoveryOptions<'a> {
    static MARKERS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    DiscoveryOptions {
        cwd,
        root_markers: MARKERS.get_or_init(|| vec![".git".to_string()]),
        fallback_filenames: &[],
        max_bytes: max,
        user_dir: user,
    }
}

#[test]
fn chain_from_root_to_cwd_joined_with_blank_lines() {
    let repo = Repo::new();
    repo.write("AGENTS.md", b"root rules");
    repo.write("apps/AGENTS.md", b"apps rules");
    repo.write("apps/api/AGENTS.md", b"api rules");
    let cwd = repo.path("apps/api");
    let found = discover(&options(&cwd, 32 * 1024, None));
    assert_eq!(
        found.text.as_deref(),
        Some("root rules\n\napps rules\n\napi rules")
    );
    assert_eq!(found.sources.len(), 3);
    assert!(found.warnings.is_empty());
}

#[test]
fn nothing_above_the_project_root_is_read() {
    let outer = tempfile::tempdir().unwrap();
    std::fs::write(outer.path().join("AGENTS.md"), "outside").unwrap();
    let repo = outer.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::write(repo.join("AGENTS.md"), "inside").unwrap();
    assert_eq!(
        discover(&options(&repo, 1000, None)).text.as_deref(),
        Some("inside")
    );
}

#[test]
fn without_a_marker_only_cwd_is_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a")).unwrap();
    std::fs::write(dir.path().join("AGENTS.md"), "parent").unwrap();
    std::fs::write(dir.path().join("a/AGENTS.md"), "child").unwrap();
    let cwd = dir.path().join("a");
    assert_eq!(
        discover(&options(&cwd, 1000, None)).text.as_deref(),
        Some("child")
    );
}

#[test]
fn override_replaces_agents_md_in_its_directory_only() {
    let repo = Repo::new();
    repo.write("AGENTS.md", b"root rules");
    repo.write("apps/api/AGENTS.md", b"api rules");
    repo.write("apps/api/AGENTS.override.md", b"api override");
    let cwd = repo.path("apps/api");
    let found = discover(&options(&cwd, 1000, None));
    assert_eq!(found.text.as_deref(), Some("root rules\n\napi override"));
}

#[test]
fn fallback_names_are_tried_after_the_standard_ones() {
    let repo = Repo::new();
    repo.write("CLAUDE.md", b"fallback");
    repo.write("apps/AGENTS.md", b"standard");
    repo.write("apps/CLAUDE.md", b"ignored: AGENTS.md wins");
    let cwd = repo.path("apps");
    let fallbacks = vec!["CLAUDE.md".to_string(), "".to_string()];
    let mut opts = options(&cwd, 1000, None);
    opts.fallback_filenames = &fallbacks;
    assert_eq!(
        discover(&opts).text.as_deref(),
        Some("fallback\n\nstandard")
    );
    assert_eq!(project_doc_paths(&opts).len(), 2);
}

#[test]
fn shared_budget_truncates_the_crossing_file_and_warns() {
    let repo = Repo::new();
    repo.write("AGENTS.md", &vec![b'r'; 30 * 1024]);
    repo.write("apps/api/AGENTS.md", &vec![b'a'; 5 * 1024]);
    repo.write("apps/api/src/AGENTS.md", b"never read");
    let cwd = repo.path("apps/api/src");
    let found = discover(&options(&cwd, 32 * 1024, None));
    let text = found.text.unwrap();
    assert_eq!(
        text.len(),
        32 * 1024 + 2,
        "30 KiB + 2 KiB of the nested file + the separator"
    );
    assert!(text.ends_with(&"a".repeat(2048)));
    assert_eq!(found.warnings.len(), 1);
    assert!(found.warnings[0].contains("apps/api/AGENTS.md: project doc exceeds the remaining budget (2048 of 5120 bytes kept)"), "{:?}", found.warnings);
    assert_eq!(found.sources.len(), 2);
}

#[test]
fn blank_files_cost_nothing() {
    let repo = Repo::new();
    repo.write("AGENTS.md", b" \n\t\n");
    repo.write("apps/AGENTS.md", b"12345");
    let cwd = repo.path("apps");
    let found = discover(&options(&cwd, 5, None));
    assert_eq!(found.text.as_deref(), Some("12345"));
    assert!(found.warnings.is_empty());
}

#[test]
fn zero_budget_disables_project_docs_but_not_user_instructions() {
    let repo = Repo::new();
    repo.write("AGENTS.md", b"project");
    let user = repo.path("home");
    std::fs::create_dir(&user).unwrap();
    std::fs::write(user.join("AGENTS.md"), "user rules").unwrap();
    let cwd = repo.path("");
    assert_eq!(
        discover(&options(&cwd, 0, Some(&user))).text.as_deref(),
        Some("user rules")
    );
}

#[test]
fn marker_appears_once_at_the_user_to_project_transition() {
    let repo = Repo::new();
    repo.write("AGENTS.md", b"root");
    repo.write("apps/AGENTS.md", b"apps");
    let user = repo.path("home");
    std::fs::create_dir(&user).unwrap();
    std::fs::write(user.join("AGENTS.md"), "user rules").unwrap();
    let cwd = repo.path("apps");
    let text = discover(&options(&cwd, 1000, Some(&user))).text.unwrap();
    assert_eq!(text, format!("user rules{PROJECT_DOC_MARKER}root\n\napps"));
    assert_eq!(text.matches("--- project-doc ---").count(), 1);
    // Project docs alone carry no marker.
    let text = discover(&options(&cwd, 1000, None)).text.unwrap();
    assert!(!text.contains("project-doc"));
}

#[test]
fn non_utf8_is_replaced_with_a_warning() {
    let repo = Repo::new();
    repo.write("AGENTS.md", b"ok \xff\xfe bytes");
    let cwd = repo.path("");
    let found = discover(&options(&cwd, 1000, None));
    assert!(found.text.unwrap().starts_with("ok "));
    assert!(found.warnings[0].contains("not valid UTF-8"));
}

#[test]
fn truncation_never_splits_a_character() {
    let repo = Repo::new();
    repo.write("AGENTS.md", "ééé".as_bytes());
    let cwd = repo.path("");
    let found = discover(&options(&cwd, 3, None));
    assert_eq!(found.text.as_deref(), Some("é"));
}

#[test]
fn user_override_wins_over_user_agents_md() {
    let repo = Repo::new();
    let home = repo.path("home");
    std::fs::create_dir(&home).unwrap();
    std::fs::write(home.join("AGENTS.md"), "user rules").unwrap();
    std::fs::write(home.join("AGENTS.override.md"), "override rules").unwrap();
    let cwd = repo.path("");
    let found = discover(&options(&cwd, 1000, Some(&home)));
    assert_eq!(found.text.as_deref(), Some("override rules"));
    assert_eq!(found.sources, vec![home.join("AGENTS.override.md")]);
    // A blank override is no override.
    std::fs::write(home.join("AGENTS.override.md"), " \n").unwrap();
    let found = discover(&options(&cwd, 1000, Some(&home)));
    assert_eq!(found.text.as_deref(), Some("user rules"));
}
