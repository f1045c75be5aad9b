use super::*;

fn roots(root: &Path) -> Vec<WritableRoot> {
    vec![WritableRoot {
        root: root.to_path_buf(),
        read_only_subpaths: vec![root.join(".git"), root.join(".troupe")],
    }]
}

#[test]
fn a_script_in_the_workspace_is_writable_one_in_git_or_elsewhere_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(ws.join("ci")).unwrap();
    std::fs::write(ws.join("ci/quick-check.sh"), "true").unwrap();
    let roots = roots(&ws);
    assert_eq!(
        writable_program("./ci/quick-check.sh", &ws, &roots),
        Some((ws.join("ci/quick-check.sh"), ws.clone()))
    );
    assert_eq!(
        writable_program("sh ci/../ci/missing.sh --fast", &ws, &roots),
        Some((ws.join("ci/missing.sh"), ws.clone()))
    );
    assert_eq!(
        writable_program(
            &format!("bash '{}'", ws.join("ci/quick-check.sh").display()),
            &ws,
            &roots
        )
        .map(|(p, _)| p),
        Some(ws.join("ci/quick-check.sh"))
    );
    assert_eq!(writable_program(".git/hooks/x", &ws, &roots), None);
    assert_eq!(writable_program("/usr/bin/true", &ws, &roots), None);
    assert_eq!(writable_program("make check", &ws, &roots), None);
}
