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

/// Running, as opposed to gone or a zombie waiting for its (re)parent to reap it.
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

#[tokio::test]
async fn kill_all_ends_running_sessions_and_their_children() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sessions = ExecSessions::default();
    let script = "sleep 300 & echo $! > child.pid; sleep 300";
    let session =
        PtySession::spawn(&argv(script), dir.path(), &env(), "c3".into()).expect("spawns");
    let leader = session.pgid.expect("pid");
    sessions.insert(session.clone()).expect("room");
    let pid_file = dir.path().join("child.pid");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !pid_file.exists() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let child: i32 = std::fs::read_to_string(&pid_file)
        .expect("child pid")
        .trim()
        .parse()
        .expect("a pid");
    assert!(running(child));
    sessions.kill_all().await;
    assert!(sessions.is_empty());
    assert!(session
        .collect(Duration::from_secs(5))
        .await
        .exit_code
        .is_some());
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while (running(child) || running(leader)) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!running(leader), "session leader {leader} survived");
    assert!(!running(child), "background child {child} survived");
}

#[tokio::test]
async fn session_count_is_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sessions = ExecSessions::default();
    for _ in 0..MAX_SESSIONS {
        let session =
            PtySession::spawn(&argv("sleep 300"), dir.path(), &env(), "c".into()).expect("spawns");
        sessions.insert(session).expect("room");
    }
    assert!(!sessions.has_room());
    let extra =
        PtySession::spawn(&argv("sleep 300"), dir.path(), &env(), "c".into()).expect("spawns");
    let error = sessions.insert(extra).expect_err("full");
    assert!(error.contains("too many running sessions"), "{error}");
    sessions.kill_all().await;
}
