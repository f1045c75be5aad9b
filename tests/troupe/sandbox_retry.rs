//! A command the sandbox refused asks for exactly what it was missing, through the TUI: a
//! write outside the writable roots asks "allow writing to DIR for this session?" and `y`
//! runs it again *in the sandbox* with that one directory added (so its other write outside
//! still fails); `u` is the separate choice of running it with no sandbox; with the network
//! off, a refused connection asks "allow network for this session?".

use crate::tui_tmux::Tmux;
use troupe_mock_model::{Behaviour, MockModel, MockOptions, MockResponse};
use troupe_test_support::Harness;

/// Workspace-write where `/tmp` and `$TMPDIR` are not writable roots: a temp dir beside the
/// workspace is really outside it.
const CONFINED: &[&str] = &[
    "-s",
    "workspace-write",
    "-a",
    "on-request",
    "-c",
    "sandbox_workspace_write.exclude_slash_tmp=true",
    "-c",
    "sandbox_workspace_write.exclude_tmpdir_env_var=true",
];

fn canonical(dir: &tempfile::TempDir) -> String {
    std::fs::canonicalize(dir.path())
        .expect("canonical")
        .display()
        .to_string()
}

#[test]
fn a_refused_write_asks_for_its_directory_and_y_adds_only_that_to_the_sandbox() {
    let granted = tempfile::tempdir().expect("tempdir");
    let other = tempfile::tempdir().expect("tempdir");
    let (granted_dir, other_dir) = (canonical(&granted), canonical(&other));
    let first = format!("touch {granted_dir}/made.txt && touch {other_dir}/stray.txt");
    let second = format!("touch {other_dir}/unconfined.txt");
    let h = Harness::new(vec![
        MockResponse::shell("w1", &["sh", "-c", &first]),
        MockResponse::shell("w2", &["sh", "-c", &second]),
        MockResponse::text("both tried"),
    ]);
    let mut args = CONFINED.to_vec();
    args.push("write outside");
    // Wide: the notices checked below fit on one row.
    let tmux = Tmux::start_sized(&h, "retry-write", &args, 200, 50);
    let asked = tmux.wait_on_screen(&format!("allow writing to {granted_dir} for this session?"));
    assert!(asked.contains("u run without the sandbox"), "{asked}");
    assert!(!asked.contains("retry without it"), "{asked}");
    tmux.keys(&["y"]);
    // The second command asks about its own directory: the grant covered only the first.
    tmux.wait_on_screen(&format!("allow writing to {other_dir} for this session?"));
    assert!(granted.path().join("made.txt").exists());
    assert!(
        !other.path().join("stray.txt").exists(),
        "the retry ran outside the sandbox"
    );
    // `u`: no sandbox at all, once.
    tmux.keys(&["u"]);
    tmux.wait_for("both tried");
    let seen = tmux.wait_for("turn complete");
    assert!(other.path().join("unconfined.txt").exists(), "{seen}");
    assert!(
        seen.contains("run again without the sandbox, once"),
        "{seen}"
    );
    assert!(
        seen.contains(&format!(
            "writing to {granted_dir} allowed for the session; run again in the sandbox"
        )),
        "{seen}"
    );
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

#[test]
fn a_refused_connection_with_the_network_off_asks_for_the_network() {
    // A server on the host's loopback: reachable only once the network is on.
    let target = MockModel::start_blocking(MockOptions::new(Behaviour::Script(Vec::new())))
        .expect("a second mock server");
    let url = format!("{}/models", target.base_url());
    let h = Harness::new(vec![
        MockResponse::shell("n1", &["curl", "-sS", "--max-time", "20", &url]),
        MockResponse::text("fetched"),
    ]);
    let mut args = CONFINED.to_vec();
    args.push("fetch it");
    let tmux = Tmux::start_sized(&h, "retry-network", &args, 200, 50);
    let asked = tmux.wait_on_screen("allow network for this session?");
    assert!(asked.contains("u run without the sandbox"), "{asked}");
    tmux.keys(&["y"]);
    tmux.wait_for("fetched");
    let seen = tmux.wait_for("turn complete");
    assert!(
        seen.contains("network allowed for the session; run again in the sandbox"),
        "{seen}"
    );
    assert!(seen.contains("✔ exit 0"), "{seen}");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}
