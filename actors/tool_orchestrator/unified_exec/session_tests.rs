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
    let session = PtySession::spawn(
        &argv("echo hi; exit 3"),
        &argv("echo hi; exit 3"),
        dir.path(),
        &env(),
        "c1".into(),
        None,
    )
    .expect("spawns");
    let collected = session.collect(Duration::from_secs(10)).await;
    assert_eq!(collected.exit_code, Some(3));
    assert!(String::from_utf8_lossy(&collected.output).contains("hi"));
}

#[tokio::test]
async fn interactive_session_reads_what_is_written() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = "read -r line; echo \"got:$line\"; read -r again; echo \"bye:$again\"";
    let session = PtySession::spawn(
        &argv(script),
        &argv(script),
        dir.path(),
        &env(),
        "c2".into(),
        None,
    )
    .expect("spawns");
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

/// What a live sink received, in order.
fn recording_sink() -> (ExecOutputSink, Arc<Mutex<Vec<String>>>) {
    let chunks = Arc::new(Mutex::new(Vec::new()));
    let seen = chunks.clone();
    let sink = ExecOutputSink(Arc::new(move |_stream, chunk| {
        seen.lock().expect("lock").push(chunk);
    }));
    (sink, chunks)
}

#[tokio::test]
async fn output_streams_while_the_command_runs_and_all_of_it_before_eof() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sink, chunks) = recording_sink();
    let script = "echo first-piece; sleep 1; echo last-piece";
    let session = PtySession::spawn(
        &argv(script),
        &argv(script),
        dir.path(),
        &env(),
        "c4".into(),
        Some(sink),
    )
    .expect("spawns");
    // Well before the command ends, its first line has been streamed (a trickle is sent
    // within FLUSH_AFTER, not held until the end).
    let early = session.collect(Duration::from_millis(500)).await;
    assert_eq!(early.exit_code, None);
    let streamed_early = chunks.lock().expect("lock").concat();
    assert!(streamed_early.contains("first-piece"), "{streamed_early:?}");
    assert!(!streamed_early.contains("last-piece"), "{streamed_early:?}");
    let rest = session.collect(Duration::from_secs(10)).await;
    assert_eq!(rest.exit_code, Some(0));
    // Once the exit is seen, everything printed has been streamed, nothing twice.
    let streamed = chunks.lock().expect("lock").concat();
    let transcript = String::from_utf8_lossy(&session.transcript()).into_owned();
    assert_eq!(streamed, transcript);
}
