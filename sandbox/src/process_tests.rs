use super::process::{run_process, Containment, LiveGroups};
use std::collections::BTreeMap;
use std::time::Duration;
use troupe_messages::tools::ExecRequest;

fn request(argv: &[&str], timeout_ms: u64, max: usize) -> ExecRequest {
    ExecRequest {
        argv: argv.iter().map(std::string::ToString::to_string).collect(),
        cwd: std::env::temp_dir(),
        env: BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]),
        timeout: Duration::from_millis(timeout_ms),
        max_output_bytes: max,
        profile: troupe_messages::policy::PermissionProfile::Disabled,
        network_proxy: None,
    }
}

#[tokio::test]
async fn captures_exit_code_and_both_streams() {
    let live = LiveGroups::default();
    let out = run_process(
        &request(&["sh", "-c", "echo out; echo err >&2; exit 3"], 5000, 1024),
        &live,
        None,
    )
    .await
    .unwrap();
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.stdout, "out\n");
    assert_eq!(out.stderr, "err\n");
    assert!(out.aggregated_output.contains("out") && out.aggregated_output.contains("err"));
    assert!(!out.timed_out);
    assert!(live.is_empty());
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let live = LiveGroups::default();
    let marker = tempfile::NamedTempFile::new().unwrap();
    let path = marker.path().display().to_string();
    let script = format!("(sleep 1; echo alive > {path}) & sleep 30");
    let out = run_process(&request(&["sh", "-c", &script], 200, 1024), &live, None)
        .await
        .unwrap();
    assert!(out.timed_out);
    assert_eq!(out.exit_code, None);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        std::fs::read_to_string(marker.path()).unwrap(),
        "",
        "grandchild survived"
    );
}

#[tokio::test]
async fn flood_is_bounded() {
    let live = LiveGroups::default();
    let out = run_process(
        &request(&["sh", "-c", "yes | head -c 2000000"], 10_000, 1000),
        &live,
        None,
    )
    .await
    .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert!(out.aggregated_output.len() < 1100);
    assert_eq!(out.truncated_bytes, 2_000_000 - 1000);
}

#[tokio::test]
async fn missing_program_is_an_error_not_a_panic() {
    let live = LiveGroups::default();
    let err = run_process(&request(&["/no/such/program"], 1000, 100), &live, None)
        .await
        .unwrap_err();
    assert!(err.contains("/no/such/program"), "{err}");
}

fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| super::descendants::parse_stat(&stat))
        .is_some_and(|stat| stat.state != 'Z')
}

#[tokio::test]
async fn the_sweep_kills_a_setsid_daemon_of_this_backend_only() {
    super::descendants::become_subreaper().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let daemon = |name: &str| {
        let pid_file = dir.path().join(name);
        // The command waits until the daemon has written its pid, which it does after
        // `setsid`: otherwise the group kill at the command's end can catch the forked
        // daemon before it left the group, and there is nothing left to sweep.
        let script = format!(
            "setsid -f sh -c 'echo $$ > {0}; exec sleep 60' </dev/null >/dev/null 2>&1; \
             while [ ! -s {0} ]; do sleep 0.01; done",
            pid_file.display()
        );
        (pid_file, script)
    };
    for containment in [Containment::Session, Containment::Group] {
        let (ours_file, ours) = daemon(&format!("ours-{containment:?}"));
        let (theirs_file, theirs) = daemon(&format!("theirs-{containment:?}"));
        let live = LiveGroups::new(containment);
        let other = LiveGroups::new(containment);
        run_process(&request(&["sh", "-c", &ours], 5000, 100), &live, None)
            .await
            .unwrap();
        run_process(&request(&["sh", "-c", &theirs], 5000, 100), &other, None)
            .await
            .unwrap();
        let (ours, theirs) = (wait_for_pid(&ours_file), wait_for_pid(&theirs_file));
        assert!(running(ours) && running(theirs), "{containment:?}");
        // A new session and group: killing the command's group did not reach it.
        assert!(super::process::sweep_orphans(&live).await >= 1);
        assert!(
            !running(ours),
            "{containment:?}: the daemon {ours} survived"
        );
        assert!(
            running(theirs),
            "{containment:?}: another backend's daemon was killed"
        );
        super::process::sweep_orphans(&other).await;
        assert!(!running(theirs), "{containment:?}");
    }
}

/// The pid a command wrote to `path`, waiting for it.
fn wait_for_pid(path: &std::path::Path) -> i32 {
    for _ in 0..500 {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no pid in {}", path.display());
}

#[tokio::test]
async fn a_group_command_leads_its_own_group_in_the_runtimes_session() {
    // Fields after the command name: state ppid pgrp session.
    let script = "set -- $(sed 's/.*) //' /proc/$$/stat); echo \"$$ $3 $4\"";
    for (containment, own_session) in [(Containment::Group, false), (Containment::Session, true)] {
        let live = LiveGroups::new(containment);
        let out = run_process(&request(&["sh", "-c", script], 5000, 1024), &live, None)
            .await
            .unwrap();
        let ids: Vec<i32> = out
            .stdout
            .split_whitespace()
            .map(|id| id.parse().unwrap())
            .collect();
        let [pid, group, session] = ids[..] else {
            panic!("{containment:?}: {}", out.aggregated_output);
        };
        assert_eq!(group, pid, "{containment:?}: its own process group");
        let runtime_session = nix::unistd::getsid(None).unwrap().as_raw();
        if own_session {
            assert_eq!(session, pid, "{containment:?}");
        } else {
            assert_eq!(session, runtime_session, "{containment:?}");
        }
    }
}

#[tokio::test]
async fn a_group_commands_timeout_kills_a_descendant_that_left_its_group_and_session() {
    let live = LiveGroups::new(Containment::Group);
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("escaped");
    // `setsid` without `-f` in a non-leader execs in place: a child of `sh`, in a new
    // session and group, so neither the group kill nor a session kill would reach it.
    let script = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 60' & wait",
        pid_file.display()
    );
    let out = run_process(&request(&["sh", "-c", &script], 1000, 1024), &live, None)
        .await
        .unwrap();
    assert!(out.timed_out, "{}", out.aggregated_output);
    let escaped = wait_for_pid(&pid_file);
    for _ in 0..200 {
        if !running(escaped) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("the descendant {escaped} outlived its command's timeout");
}
