use super::*;
use std::collections::BTreeMap;

fn env() -> BTreeMap<String, String> {
    std::env::vars().collect()
}

fn argv(script: &str) -> Vec<String> {
    vec!["bash".into(), "-c".into(), script.into()]
}

#[tokio::test]
async fn short_command_reports_exit_and_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = PtySession::spawn(&argv("echo hi; exit 3"), dir.path(), &env(), "c1".into())
        .expect("spawns");
    let collected = session.collect(Duration::from_secs(10)).await;
    assert_eq!(collected.exit_code, Some(3));
    assert!(String::from_utf8_lossy(&collected.output).contains("hi"));
}

#[tokio::test]
async fn interactive_session_reads_what_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = "read -r line; echo \"got:$line\"; read -r again; echo \"bye:$again\"";
    let session =
        PtySession::spawn(&argv(script), dir.path(), &env(), "c2".into()).expect("spawns");
    let first = session.collect(Duration::from_millis(200)).await;
    assert_eq!(first.exit_code, None);
    session.write("hello\n").expect("write");
    let second = session.collect(Duration::from_millis(500)).await;
    assert!(String::from_utf8_lossy(&second.output).contains("got:hello"));
    assert_eq!(second.exit_code, None);
    session.write("end\n").expect("write");
    let third = session.collect(Duration::from_secs(10)).await;
    assert!(String::from_utf8_lossy(&third.output).contains("bye:end"));
    assert_eq!(third.exit_code, Some(0));
}
