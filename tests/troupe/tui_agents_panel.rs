//! The threads panel while a sub-agent works: its running command's output shows live under
//! it, its token count is its own (not `0 tok`), its time ticks, and once it answered it
//! reads `done`.

use crate::subagents_support::{spawn_call, wait_call};
use crate::tui_tmux::{Tmux, PATIENCE};
use std::time::Instant;
use troupe_mock_model::MockResponse;
use troupe_test_support::Harness;

/// The panel row of `/root/watcher` on `screen`.
fn child_row(screen: &str) -> String {
    screen
        .lines()
        .find(|l| l.contains("/root/watcher") && l.contains(" tok "))
        .unwrap_or_default()
        .to_string()
}

/// Waits until the child's row shows `text`; the screen then.
fn wait_row(tmux: &Tmux, text: &str) -> String {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let screen = tmux.screen();
        if child_row(&screen).contains(text) {
            return screen;
        }
        assert!(Instant::now() < deadline, "never `{text}`:\n{screen}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn the_panel_shows_a_running_childs_live_output_tokens_and_done() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![spawn_call(
            "s1",
            "watcher",
            "panel-child-marker: watch the file",
            "none",
        )]),
        wait_call("w1"),
        MockResponse::text("root done"),
    ]);
    // The child's command prints a line, then waits for the test to let it finish.
    h.mock.route(
        "panel-child-marker",
        vec![
            MockResponse::shell(
                "k1",
                &[
                    "sh",
                    "-c",
                    "echo panel-tick-1; while [ ! -e release ]; do sleep 0.1; done; echo panel-tick-2",
                ],
            ),
            MockResponse::text("child watched the file"),
        ],
    );
    let tmux = Tmux::start_sized(
        &h,
        "agents-panel",
        &["-s", "danger-full-access", "-a", "never", "delegate"],
        120,
        30,
    );
    tmux.wait_for("spawn_agent");
    tmux.keys(&["C-t"]);
    tmux.wait_on_screen("threads · ");
    let screen = tmux.wait_on_screen("└ panel-tick-1");
    save_capture("agents-panel-running.txt", &screen);
    let row = child_row(&screen);
    assert!(row.contains("running"), "{screen}");
    assert!(row.contains("120 tok"), "{screen}");
    // Its time ticks while the panel stays open.
    let deadline = Instant::now() + PATIENCE;
    loop {
        let now = child_row(&tmux.screen());
        if now != row && now.contains("running") {
            break;
        }
        assert!(Instant::now() < deadline, "the time never moved: {row}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    std::fs::write(h.workdir.path().join("release"), "").expect("release");
    tmux.wait_for("root done");
    let screen = wait_row(&tmux, "done");
    save_capture("agents-panel-done.txt", &screen);
    let row = child_row(&screen);
    assert!(!row.contains("idle"), "{screen}");
    assert!(!screen.contains("└ panel-tick"), "{screen}");
    tmux.keys(&["Escape"]);
    tmux.wait_on_screen("Ask troupe to do something");
    tmux.keys(&["C-c"]);
    assert_eq!(tmux.wait_exit(), 0);
}

/// Saves a tmux capture among the TUI's figures: docs/tui/ (shown by docs/tui.md, refreshed
/// by every run), or `TROUPE_TUI_CAPTURES`.
fn save_capture(name: &str, screen: &str) {
    let dir = std::env::var("TROUPE_TUI_CAPTURES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/tui"));
    std::fs::create_dir_all(&dir).expect("captures dir");
    let text: String = screen
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect();
    std::fs::write(dir.join(name), text).expect("write capture");
}
