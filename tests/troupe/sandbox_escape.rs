//! The escape battery: each attempt is a script that exits 0 only if the escape worked. Every
//! attempt runs once WITHOUT the sandbox first and must succeed there (so it cannot pass
//! vacuously), then under `troupe sandbox linux` where it must fail and leave no trace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::escape_support::{battery, controls, is_root, Env, Mode};
use std::process::Command;

/// `via` are extra flags: `--zygote` runs each attempt the way the runtime does (a child
/// cloned by a zygote) instead of through the one-shot helper.
fn run_battery(mode: Mode, backend: &str, via: &[String]) {
    let mut checked = 0;
    let mut failures = Vec::new();
    for attempt in battery(mode) {
        if attempt.needs_root && !is_root() {
            eprintln!("skipped (needs root): {}", attempt.name);
            continue;
        }
        // 1. Unsandboxed: the attempt itself must work.
        // A baseline that fails once under load proves nothing either way, so it gets three
        // tries; the sandboxed run below gets exactly one.
        let mut baseline = None;
        for _ in 0..3 {
            let env = Env::new();
            let plain = env.run_plain(&attempt.script);
            let worked = plain.status.success() && (attempt.verify)(&env);
            baseline = Some((worked, plain));
            if worked {
                break;
            }
        }
        let (worked, plain) = baseline.expect("three tries ran");
        if !worked {
            failures.push(format!(
                "{}: does not work even WITHOUT the sandbox (so it proves nothing): {}",
                attempt.name,
                String::from_utf8_lossy(&plain.stderr)
            ));
            continue;
        }
        // 2. Sandboxed, on fresh state: must fail and leave no trace.
        let env = Env::new();
        let flags: Vec<String> = via.iter().chain(&attempt.extra_flags).cloned().collect();
        let boxed = env.run_sandboxed(mode, backend, &attempt.script, &flags);
        if boxed.status.success() || (!attempt.exit_only && (attempt.verify)(&env)) {
            failures.push(format!(
                "{}: ESCAPED the sandbox (exit {:?}): {}{}",
                attempt.name,
                boxed.status.code(),
                String::from_utf8_lossy(&boxed.stdout),
                String::from_utf8_lossy(&boxed.stderr)
            ));
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{mode:?}/{backend}{via:?}: {checked} escape attempts, each proven unsandboxed, all blocked"
    );
    let minimum = if is_root() { 40 } else { 20 };
    assert!(checked >= minimum, "only {checked} attempts ran");
}

fn zygote() -> Vec<String> {
    vec!["--zygote".into()]
}

#[test]
fn workspace_write_blocks_every_escape() {
    run_battery(Mode::WorkspaceWrite, "linux", &[]);
}

#[test]
fn read_only_blocks_every_escape() {
    run_battery(Mode::ReadOnly, "linux", &[]);
}

#[test]
fn workspace_write_blocks_every_escape_from_a_zygote_child() {
    run_battery(Mode::WorkspaceWrite, "linux", &zygote());
}

#[test]
fn read_only_blocks_every_escape_from_a_zygote_child() {
    run_battery(Mode::ReadOnly, "linux", &zygote());
}

#[test]
fn controls_still_work_in_the_sandbox() {
    for via in [Vec::new(), zygote()] {
        for (mode, script) in controls() {
            let env = Env::new();
            let out = env.run_sandboxed(mode, "linux", script, &via);
            assert!(
                out.status.success(),
                "control `{script}` failed under {mode:?} {via:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

#[test]
fn network_flag_opens_loopback() {
    let env = Env::new();
    let script = env.tcp_script();
    let out = env.run_sandboxed(
        Mode::WorkspaceWrite,
        "linux",
        &script,
        &["--network".into()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn landlock_backend_blocks_writes_outside_and_network() {
    let env = Env::new();
    for script in [
        format!("echo x > {}/abs", env.out_str()),
        env.tcp_script(),
        format!("echo x > {}/f", env.ws_str()),
        // Landlock's signal scope (ABI 6): no signals to processes outside the sandbox.
        "kill -0 @PID@".to_string(),
    ] {
        assert!(
            env.run_plain(&script).status.success(),
            "`{script}` must work unsandboxed"
        );
        let out = env.run_sandboxed(Mode::ReadOnly, "landlock", &script, &[]);
        assert!(!out.status.success(), "landlock let `{script}` through");
    }
    let ok = env.run_sandboxed(Mode::WorkspaceWrite, "landlock", "echo x > f && cat f", &[]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // Deny-read on Landlock: the path is left out of the read rules, so the command runs
    // but cannot read it; its neighbours stay readable.
    let secret = format!("{}/secret.txt", env.out_str());
    let neighbour = format!("{}/neighbour.txt", env.out_str());
    std::fs::write(&secret, "TOPSECRET").unwrap();
    std::fs::write(&neighbour, "NEIGHBOUR").unwrap();
    let out = env.run_sandboxed(
        Mode::ReadOnly,
        "landlock",
        &format!("cat {secret}; cat {neighbour}; echo ran"),
        &["--deny-read".into(), secret],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("ran"), "{stdout}");
    assert!(stdout.contains("NEIGHBOUR"), "{stdout}");
    assert!(!stdout.contains("TOPSECRET"), "{stdout}");
}

#[test]
fn bad_input_is_refused_clearly() {
    let env = Env::new();
    let out = env.run_sandboxed(
        Mode::WorkspaceWrite,
        "linux",
        "true",
        &["--writable-root".into(), "/definitely/not/here".into()],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    let out = Command::new(env!("CARGO_BIN_EXE_troupe"))
        .args(["sandbox", "linux", "--deny-read", "relative", "--", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("absolute"));
    // A spec from the wire with a relative writable root: the helper refuses, nothing runs.
    let spec = r#"{"backend":"linux","cwd":"/","profile":{"type":"managed","file_system":
        {"kind":"restricted","writable_roots":[{"root":"rel","read_only_subpaths":[]}],
        "deny_read":[]},"network":"restricted"}}"#;
    let out = Command::new(env!("CARGO_BIN_EXE_troupe-sandbox"))
        .args(["--troupe-sandbox-helper", spec, "--", "touch", "/tmp/never"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(121));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`rel` is relative"));
}
