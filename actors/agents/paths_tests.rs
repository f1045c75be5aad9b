use super::paths::*;

#[test]
fn task_names_are_lowercase_words() {
    assert!(check_task_name("explore_auth2").is_ok());
    for bad in ["", "Explore", "a b", "../x", "a/b", &"x".repeat(65)] {
        assert!(check_task_name(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn targets_resolve_under_the_caller() {
    assert_eq!(resolve_target("/root", "w1").unwrap(), "/root/w1");
    assert_eq!(resolve_target("/root/a", "b/").unwrap(), "/root/a/b");
    assert_eq!(resolve_target("/root/a", "/root/x").unwrap(), "/root/x");
    assert_eq!(resolve_target("/root/a", "/root").unwrap(), "/root");
    assert!(resolve_target("/root", "/etc/passwd").is_err());
    assert!(resolve_target("/root", "/rooted").is_err());
    assert!(resolve_target("/root", "../x").is_err());
    assert!(resolve_target("/root", " ").is_err());
}

#[test]
fn under_matches_whole_segments() {
    assert!(under("/root/a/b", "/root/a"));
    assert!(under("/root/a", "/root/a/"));
    assert!(!under("/root/ab", "/root/a"));
}

#[test]
fn nicknames_are_distinct_across_rounds() {
    assert_eq!(nickname(0), "Ada");
    assert_ne!(nickname(0), nickname(24));
}
