//! The `linux` backend's zygotes, driven as the runtime drives them (`run_confined` with a
//! pool): a reused zygote notices when the policy's paths changed under it, commands do not
//! leave processes behind, run concurrently, time out, and huge commands still run.
//! (The escape battery runs through zygote children too: `sandbox_escape.rs`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use troupe_actors::sandbox_linux::zygote::ZygotePool;
use troupe_actors::sandbox_linux::{run_confined, LinuxSandboxArgs};
use troupe_messages::policy::{PermissionProfile, SandboxMode, SandboxSettings};
use troupe_messages::tools::{ExecRequest, ExecResult};
use troupe_mock_model::{MockModel, MockResponse};
use troupe_sandbox::helper::HelperBackend;
use troupe_sandbox::probe;
use troupe_sandbox::process::LiveGroups;
use troupe_sandbox::profile::resolve_profile;
use troupe_test_support::runtime::{interrupt, is_turn_end, say, settings, until};

struct Fixture {
    _base: tempfile::TempDir,
    ws: PathBuf,
    args: LinuxSandboxArgs,
    pool: ZygotePool,
    live: LiveGroups,
}

impl Fixture {
    /// `None` where user namespaces are unavailable (the linux backend cannot run at all).
    fn new() -> Option<Self> {
        if !probe::user_namespaces_work() {
            eprintln!("skipped: no user namespaces");
            return None;
        }
        // Not under /tmp, which workspace-write makes writable.
        let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let ws = base.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let exe = PathBuf::from(env!("CARGO_BIN_EXE_troupe-sandbox"));
        Some(Self {
            _base: base,
            ws,
            args: LinuxSandboxArgs {
                helper_exe: exe.clone(),
                backend: HelperBackend::Linux,
            },
            pool: ZygotePool::new(exe),
            live: LiveGroups::default(),
        })
    }

    fn profile(&self, deny_read: &[PathBuf]) -> PermissionProfile {
        let settings = SandboxSettings {
            deny_read: deny_read.to_vec(),
            ..SandboxSettings::default()
        };
        resolve_profile(SandboxMode::WorkspaceWrite, &settings, &self.ws).unwrap()
    }

    fn request(&self, script: &str, profile: &PermissionProfile) -> ExecRequest {
        ExecRequest {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            cwd: self.ws.clone(),
            env: BTreeMap::from([("PATH".to_string(), "/usr/bin:/bin".to_string())]),
            timeout: Duration::from_secs(30),
            max_output_bytes: 1 << 20,
            profile: profile.clone(),
            network_proxy: None,
        }
    }

    async fn run(&self, request: &ExecRequest) -> ExecResult {
        run_confined(&self.args, request, &self.live, Some(&self.pool), None)
            .await
            .unwrap()
    }
}

fn sh(script: &str, cwd: &Path) {
    let ok = Command::new("sh")
        .args(["-c", script])
        .current_dir(cwd)
        .status()
        .unwrap()
        .success();
    assert!(ok, "`{script}` failed outside the sandbox");
}

#[tokio::test]
async fn a_deny_read_path_created_after_the_zygote_started_is_still_hidden() {
    let Some(fx) = Fixture::new() else { return };
    let secret = fx.ws.join("secret.txt");
    let profile = fx.profile(std::slice::from_ref(&secret));
    // The zygote is built while the path does not exist (nothing to mask yet).
    let first = fx.run(&fx.request("true", &profile)).await;
    assert_eq!(first.exit_code, Some(0), "{first:?}");
    std::fs::write(&secret, "TOPSECRET").unwrap();
    let read = fx.run(&fx.request("cat secret.txt", &profile)).await;
    assert!(
        !read.aggregated_output.contains("TOPSECRET"),
        "a stale zygote exposed a deny-read file: {read:?}"
    );
    // A masked file reads as empty (it is /dev/null now).
    assert_eq!(read.exit_code, Some(0), "{read:?}");
    assert_eq!(read.stdout, "");
}

#[tokio::test]
async fn a_deny_read_file_renamed_over_on_the_host_stays_hidden() {
    let Some(fx) = Fixture::new() else { return };
    let secret = fx.ws.join("secret.txt");
    std::fs::write(&secret, "old secret").unwrap();
    let profile = fx.profile(std::slice::from_ref(&secret));
    let first = fx.run(&fx.request("cat secret.txt", &profile)).await;
    assert_eq!(first.stdout, "", "{first:?}");
    // An editor's atomic save: the mask in the zygote's view was on the old file.
    std::fs::write(fx.ws.join(".secret.swp"), "NEWSECRET").unwrap();
    std::fs::rename(fx.ws.join(".secret.swp"), &secret).unwrap();
    let read = fx.run(&fx.request("cat secret.txt", &profile)).await;
    assert!(
        !read.aggregated_output.contains("NEWSECRET"),
        "the renamed-over file was readable: {read:?}"
    );
}

#[tokio::test]
async fn a_unix_socket_bound_on_the_host_after_the_zygote_started_is_masked() {
    let Some(fx) = Fixture::new() else { return };
    let profile = fx.profile(&[]);
    let first = fx.run(&fx.request("true", &profile)).await;
    assert_eq!(first.exit_code, Some(0), "{first:?}");
    let path = fx.ws.parent().unwrap().join("late.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let script = format!(
        "python3 -c 'import socket; socket.socket(socket.AF_UNIX).connect(\"{}\")'",
        path.display()
    );
    let connect = fx.run(&fx.request(&script, &profile)).await;
    assert_ne!(
        connect.exit_code,
        Some(0),
        "a stale zygote let the command connect: {connect:?}"
    );
}

#[tokio::test]
async fn a_git_dir_replaced_on_the_host_stays_read_only() {
    let Some(fx) = Fixture::new() else { return };
    sh("git init -q .", &fx.ws);
    let profile = fx.profile(&[]);
    let first = fx.run(&fx.request("echo x > .git/probe", &profile)).await;
    assert_ne!(first.exit_code, Some(0), ".git was writable: {first:?}");
    // Outside the sandbox, .git is replaced by a fresh directory (same profile: it exists).
    // Repeated: the new directory often reuses the old inode number, which alone must not
    // make the zygote's view look current.
    for round in 0..5 {
        sh("rm -rf .git && mkdir .git", &fx.ws);
        let second = fx.run(&fx.request("echo x > .git/config", &profile)).await;
        assert_ne!(
            second.exit_code,
            Some(0),
            "round {round}: the new .git was writable: {second:?}"
        );
        assert!(!fx.ws.join(".git/config").exists());
    }
    // The workspace itself stays writable through the fresh zygote.
    let write = fx.run(&fx.request("echo ok > f && cat f", &profile)).await;
    assert_eq!(write.stdout.trim(), "ok", "{write:?}");
}

#[tokio::test]
async fn a_missing_or_symlinked_git_changed_on_the_host_stays_read_only() {
    let Some(fx) = Fixture::new() else { return };
    // Missing: the zygote mounts a placeholder; the host removing it makes the view stale.
    let profile = fx.profile(&[]);
    let first = fx
        .run(&fx.request("mkdir .git/x || echo refused", &profile))
        .await;
    assert!(first.stdout.contains("refused"), "{first:?}");
    let _ = std::fs::remove_dir(fx.ws.join(".git"));
    let again = fx.run(&fx.request("mkdir -p .git/hooks", &profile)).await;
    assert_ne!(
        again.exit_code,
        Some(0),
        "the .git name was writable: {again:?}"
    );
    // Symlinked: the link is covered; the host replacing it makes the view stale.
    let real = fx.ws.parent().unwrap().join("real.git");
    std::fs::create_dir_all(&real).unwrap();
    for _ in 0..20 {
        if std::fs::remove_dir(fx.ws.join(".git")).is_ok() || !fx.ws.join(".git").exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::os::unix::fs::symlink(&real, fx.ws.join(".git")).unwrap();
    let profile = fx.profile(&[]);
    let link = fx.run(&fx.request("rm .git || echo busy", &profile)).await;
    assert!(link.stdout.contains("busy"), "{link:?}");
    std::fs::remove_file(fx.ws.join(".git")).unwrap();
    std::fs::create_dir(fx.ws.join(".git")).unwrap();
    let replaced = fx.run(&fx.request("echo x > .git/config", &profile)).await;
    assert_ne!(replaced.exit_code, Some(0), "{replaced:?}");
    assert!(!fx.ws.join(".git/config").exists());
}

#[tokio::test]
async fn background_processes_end_with_their_command() {
    let Some(fx) = Fixture::new() else { return };
    let profile = fx.profile(&[]);
    let marker = "31.4159";
    let out = fx
        .run(&fx.request(&format!("sleep {marker} & echo started"), &profile))
        .await;
    assert_eq!(out.stdout.trim(), "started", "{out:?}");
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "a background process outlived its command: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[tokio::test]
async fn concurrent_commands_share_a_zygote_without_mixing_output() {
    let Some(fx) = Fixture::new() else { return };
    let profile = fx.profile(&[]);
    let requests: Vec<ExecRequest> = (0..12)
        .map(|i| {
            fx.request(
                &format!("sleep 0.2; echo out-{i}; echo err-{i} >&2"),
                &profile,
            )
        })
        .collect();
    let results = futures::future::join_all(requests.iter().map(|r| fx.run(r))).await;
    for (i, result) in results.iter().enumerate() {
        assert_eq!(result.exit_code, Some(0), "{result:?}");
        assert_eq!(result.stdout.trim(), format!("out-{i}"));
        assert_eq!(result.stderr.trim(), format!("err-{i}"));
    }
}

#[tokio::test]
async fn a_timeout_kills_the_command_and_the_zygote_keeps_serving() {
    let Some(fx) = Fixture::new() else { return };
    let profile = fx.profile(&[]);
    let mut slow = fx.request("echo begun; sleep 30", &profile);
    slow.timeout = Duration::from_millis(300);
    let out = fx.run(&slow).await;
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.exit_code, None);
    assert_eq!(out.stdout.trim(), "begun");
    let next = fx.run(&fx.request("echo again", &profile)).await;
    assert_eq!(next.stdout.trim(), "again", "{next:?}");
}

#[tokio::test]
async fn exit_codes_signals_and_missing_programs_are_reported() {
    let Some(fx) = Fixture::new() else { return };
    let profile = fx.profile(&[]);
    let code = fx.run(&fx.request("exit 7", &profile)).await;
    assert_eq!(code.exit_code, Some(7));
    let signaled = fx.run(&fx.request("kill -9 $$", &profile)).await;
    // PID 1 of its namespace ignores its own SIGKILL from inside: it exits normally or 137.
    assert!(
        matches!(signaled.exit_code, Some(0) | Some(137)),
        "{signaled:?}"
    );
    let mut missing = fx.request("", &profile);
    missing.argv = vec!["definitely-not-a-program".into()];
    let out = fx.run(&missing).await;
    assert_eq!(out.exit_code, Some(127), "{out:?}");
    assert!(out.stderr.contains("cannot run `definitely-not-a-program`"));
}

#[tokio::test]
async fn a_command_too_large_for_one_message_still_runs_confined() {
    let Some(fx) = Fixture::new() else { return };
    let profile = fx.profile(&[]);
    let payload = "y".repeat(100_000);
    let out = fx
        .run(&fx.request(
            &format!("printf %s {payload} | wc -c; echo x > /etc/troupe-zygote-test"),
            &profile,
        ))
        .await;
    assert!(out.stdout.starts_with("100000"), "{out:?}");
    assert_ne!(out.exit_code, Some(0), "the large command ran unconfined");
    assert!(!Path::new("/etc/troupe-zygote-test").exists());
}

fn alive_with(marker: &str) -> String {
    let out = Command::new("pgrep").args(["-f", marker]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_kills_a_confined_command_before_the_abort_is_reported() {
    use troupe_actors::runtime::Runtime;
    use troupe_actors::tool_orchestrator::registry::ToolRegistry;
    use troupe_messages::events::EventMsg;
    let Some(fx) = Fixture::new() else { return };
    crate::use_sandbox_helper();
    let marker = "sleep 27.1828";
    let script = format!("echo running > started; {marker} & {marker}");
    let mock = MockModel::start(vec![
        MockResponse::shell("long", &["sh", "-c", &script]),
        MockResponse::text("after"),
    ])
    .await
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let mut session = settings(&mock, home.path(), &fx.ws);
    session.sandbox_mode = SandboxMode::WorkspaceWrite;
    let runtime = Runtime::start(ToolRegistry::with_builtin_tools())
        .await
        .unwrap();
    let mut thread = runtime.start_thread(session).await.unwrap();
    thread.submit(say("run it")).unwrap();
    let started = fx.ws.join("started");
    for _ in 0..500 {
        if started.exists() && alive_with(marker).lines().count() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(started.exists(), "the confined command never started");
    assert!(
        !alive_with(marker).is_empty(),
        "cannot see the command from outside"
    );
    interrupt(&mut thread).await;
    assert_eq!(alive_with(marker), "", "the command outlived the interrupt");
    thread.submit(say("again")).unwrap();
    let events = until(&mut thread, is_turn_end).await;
    assert!(
        matches!(events.last(), Some(EventMsg::TurnComplete { .. })),
        "{events:?}"
    );
    runtime.stop();
}

#[tokio::test]
async fn a_zygote_killed_from_outside_is_replaced() {
    let Some(fx) = Fixture::new() else { return };
    // A deny-read entry unique to this test names its zygote on the command line.
    let tag = fx.ws.join("only-this-test-zygote");
    let profile = fx.profile(std::slice::from_ref(&tag));
    let first = fx.run(&fx.request("echo one", &profile)).await;
    assert_eq!(first.stdout.trim(), "one", "{first:?}");
    let pattern = format!("troupe-sandbox-zygote.*{}", tag.display());
    let killed = Command::new("pkill")
        .args(["-KILL", "-f", &pattern])
        .status()
        .unwrap();
    assert!(killed.success(), "no zygote process matched");
    for _ in 0..200 {
        if alive_with(&pattern).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The control socket's end is noticed asynchronously; the next command gets a new zygote
    // (or, if it raced the death, a clear error) — never a hang or an unconfined run.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let second = fx
        .run(&fx.request("echo two; echo x > /etc/troupe-zygote-kill-test", &profile))
        .await;
    assert_eq!(second.stdout.trim(), "two", "{second:?}");
    assert_ne!(second.exit_code, Some(0));
    assert!(!Path::new("/etc/troupe-zygote-kill-test").exists());
}
