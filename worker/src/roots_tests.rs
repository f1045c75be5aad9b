use super::*;

#[test]
fn only_directories_inside_a_root_pass_symlinks_resolved() {
    let base = tempfile::tempdir().unwrap();
    let root = base.path().join("work");
    let inside = root.join("proj");
    let outside = base.path().join("private");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
    let roots = resolve(std::slice::from_ref(&root)).unwrap();
    assert!(check(&roots, &inside).is_ok());
    assert!(check(&roots, &root).is_ok());
    assert!(check(&roots, &outside).is_err());
    assert!(check(&roots, &root.join("escape")).is_err());
    assert!(check(&roots, &root.join("proj/../../private")).is_err());
    assert!(check(&[], &inside).is_err());
    assert!(resolve(&[PathBuf::from("relative")]).is_err());
}
