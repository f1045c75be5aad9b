use super::*;
use std::collections::BTreeMap;
use std::time::Duration;

fn env() -> BTreeMap<String, String> {
    std::env::vars().collect()
}

fn argv(script: &str) -> Vec<String> {
    vec!["bash".into(), "-c".into(), script.into()]
}

/// A set whose events are kept for the test to read.
fn recording() -> (ExecSessions, Arc<Mutex<Vec<EventMsg>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let sessions = ExecSessions::new(Arc::new(move |msg| lock(&sink).push(msg)), 4096);
    (sessions, seen)
}

/// (call id, exit code, output) of every end event.
fn ends(seen: &Mutex<Vec<EventMsg>>) -> Vec<(String, Option<i32>, String)> {
    lock(seen)
        .iter()
        .filter_map(|msg| match msg {
            EventMsg::ExecCommandEnd {
                call_id,
                exit_code,
                aggregated_output,
                ..
            } => Some((call_id.clone(), *exit_code, aggregated_output.clone())),
            _ => None,
        })
        .collect()
}

fn spawn(script: &str, dir: &std::path::Path, call_id: &str) -> Arc<PtySession> {
    PtySession::spawn(
        &argv(script),
        &argv(script),
        dir,
        &env(),
        call_id.into(),
        None,
    )
    .expect("spawns")
}

/// Running, as opposed to gone or a zombie waiting for its (re)parent to reap it.
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat.contains(") Z "))
        .unwrap_or(false)
}

#[tokio::test]
async fn end_all_kills_running_sessions_and_their_children_and_reports_each_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sessions, seen) = recording();
    // Written whole, then renamed: the test never reads a half-written pid; "started" is
    // written before the pid file exists, so it is in the output whenever the test goes on.
    let script = "echo started; sleep 300 & echo $! > child.tmp; mv child.tmp child.pid; sleep 300";
    let session = spawn(script, dir.path(), "c3");
    let leader = session.pgid.expect("pid");
    let ticket = sessions.track(session.clone());
    assert_eq!(sessions.publish(ticket), Some(Ok(1)));
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
    sessions.end_all("the turn ended").await;
    assert!(sessions.is_empty());
    assert!(session.exit_code().is_some());
    let ended = ends(&seen);
    assert_eq!(ended.len(), 1, "{ended:?}");
    let (call_id, code, output) = &ended[0];
    assert_eq!((call_id.as_str(), *code), ("c3", Some(KILLED_EXIT_CODE)));
    assert!(output.contains("started"), "{output}");
    assert!(
        output.ends_with("[process killed: the turn ended while it was running]"),
        "{output}"
    );
    // Whoever sees the exit later finds nothing left to report.
    sessions.report_exit(SessionKey::Live(1), -1);
    sessions.end_all("again").await;
    assert_eq!(ends(&seen).len(), 1);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while (running(child) || running(leader)) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!running(leader), "session leader {leader} survived");
    assert!(!running(child), "background child {child} survived");
}

#[tokio::test]
async fn a_session_ended_while_its_call_waits_is_not_reported_again_by_the_call() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sessions, seen) = recording();
    let ticket = sessions.track(spawn("sleep 300", dir.path(), "c1"));
    sessions.end_all("the turn was interrupted").await;
    // The call wakes up after the turn's end took its session.
    assert_eq!(sessions.publish(ticket), None);
    sessions.report_exit(SessionKey::Starting(ticket), -1);
    let ended = ends(&seen);
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert_eq!(ended[0].1, Some(KILLED_EXIT_CODE));
}

#[tokio::test]
async fn an_exit_nobody_saw_is_reported_with_its_own_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sessions, seen) = recording();
    let session = spawn("echo bye; exit 4", dir.path(), "c1");
    let ticket = sessions.track(session.clone());
    assert_eq!(
        session.collect(Duration::from_secs(10)).await.exit_code,
        Some(4)
    );
    sessions.end_all("the turn ended").await;
    assert_eq!(ends(&seen), vec![("c1".into(), Some(4), "bye\r\n".into())]);
    // The call that saw the exit comes too late: nothing more.
    sessions.report_exit(SessionKey::Starting(ticket), 4);
    assert_eq!(ends(&seen).len(), 1);
}

#[tokio::test]
async fn a_call_that_sees_the_exit_reports_it_and_the_turn_end_does_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sessions, seen) = recording();
    let session = spawn("exit 0", dir.path(), "c1");
    let ticket = sessions.track(session.clone());
    let code = session.collect(Duration::from_secs(10)).await.exit_code;
    assert_eq!(code, Some(0));
    sessions.report_exit(SessionKey::Starting(ticket), 0);
    sessions.end_all("the turn ended").await;
    assert_eq!(ends(&seen), vec![("c1".into(), Some(0), String::new())]);
}

#[tokio::test]
async fn session_count_is_bounded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sessions, seen) = recording();
    for _ in 0..MAX_SESSIONS {
        let ticket = sessions.track(spawn("sleep 300", dir.path(), "c"));
        assert!(matches!(sessions.publish(ticket), Some(Ok(_))));
    }
    assert!(!sessions.has_room());
    let extra = sessions.track(spawn("sleep 300", dir.path(), "extra"));
    let error = sessions
        .publish(extra)
        .expect("still tracked")
        .expect_err("full");
    assert!(error.contains("too many running sessions"), "{error}");
    sessions
        .kill(
            SessionKey::Starting(extra),
            "too many sessions were running",
        )
        .await;
    assert_eq!(ends(&seen).len(), 1);
    sessions.end_all("the turn ended").await;
    assert_eq!(ends(&seen).len(), MAX_SESSIONS + 1);
    assert!(sessions.is_empty());
}
