use super::cause;
use ractor::SpawnErr;

#[test]
fn nested_startup_failures_give_the_innermost_cause_once() {
    let inner = SpawnErr::StartupFailed("cannot create /h/sessions: Read-only file system".into());
    let outer = SpawnErr::StartupFailed(Box::new(inner));
    assert_eq!(
        cause(&outer),
        "cannot create /h/sessions: Read-only file system"
    );
    assert!(!cause(&outer).contains("panicked"));
}

#[test]
fn a_single_failure_is_its_own_text() {
    let err = SpawnErr::StartupFailed("the rollout is in use by process 7".into());
    assert_eq!(cause(&err), "the rollout is in use by process 7");
}
