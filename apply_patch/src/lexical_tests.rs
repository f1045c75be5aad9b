use super::*;
use pretty_assertions::assert_eq;

fn ok(path: &str) -> PathBuf {
    resolve(Path::new("/w/s"), Path::new(path)).expect("resolves")
}

#[test]
fn dot_and_dotdot_apply_to_the_text() {
    assert_eq!(ok("d/./x/../y.txt"), PathBuf::from("/w/s/d/y.txt"));
    assert_eq!(ok("./a"), PathBuf::from("/w/s/a"));
    assert_eq!(ok("a/b/../../c"), PathBuf::from("/w/s/c"));
}

#[test]
fn a_trailing_slash_names_the_file() {
    assert_eq!(ok("newdir/"), PathBuf::from("/w/s/newdir"));
}

#[test]
fn climbing_above_the_working_directory_is_refused() {
    for path in ["..", "../x", "sub/../../x", "a/../b/../../x", "./../x"] {
        assert_eq!(
            resolve(Path::new("/w/s"), Path::new(path)),
            Err(PathProblem::EscapesCwd),
            "{path}"
        );
    }
}

#[test]
fn absolute_paths_are_only_normalised() {
    assert_eq!(ok("/tmp/./x/../y"), PathBuf::from("/tmp/y"));
    assert_eq!(ok("/../etc/x"), PathBuf::from("/etc/x"));
}

#[test]
fn nothing_left_is_no_file_name() {
    for path in [".", "d/..", ""] {
        assert_eq!(
            resolve(Path::new("/w/s"), Path::new(path)),
            Err(PathProblem::NoFileName),
            "{path}"
        );
    }
}
