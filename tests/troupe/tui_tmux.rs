//! Driving the real `troupe` UI in a detached tmux session: send keys, poll the screen.
//! Each session has its own tmux server socket, so tests run in parallel without sharing.

use std::process::Command;
use std::time::{Duration, Instant};
use troupe_test_support::{troupe_exe, Harness, KEY_VAR};

/// How long a screen may take to show a text (generous: the machine may be loaded).
pub const PATIENCE: Duration = Duration::from_secs(60);

pub struct Tmux {
    socket: String,
    /// Written by the shell wrapper when troupe exits: its exit code.
    pub exit_file: std::path::PathBuf,
}

impl Tmux {
    /// Starts `troupe ARGS…` at 80x24 in the harness's home and work dir.
    pub fn start(harness: &Harness, name: &str, args: &[&str]) -> Self {
        Self::start_sized(harness, name, args, 80, 24)
    }

    pub fn start_sized(
        harness: &Harness,
        name: &str,
        args: &[&str],
        width: u16,
        height: u16,
    ) -> Self {
        Self::start_full(harness, name, &[], args, width, height)
    }

    /// `troupe SUBCOMMAND… --skip-git-repo-check ARGS…` (`resume --last`, `fork ID`) at 80x24.
    pub fn start_sub(harness: &Harness, name: &str, sub: &[&str], args: &[&str]) -> Self {
        Self::start_full(harness, name, sub, args, 80, 24)
    }

    /// Without `--skip-git-repo-check` and without answering the trust screen beforehand:
    /// what a user typing `troupe ARGS…` in the work dir sees first.
    pub fn start_first_time(harness: &Harness, name: &str, args: &[&str]) -> Self {
        Self::launch(harness, name, &[], args, 80, 24, false)
    }

    fn start_full(
        harness: &Harness,
        name: &str,
        sub: &[&str],
        args: &[&str],
        width: u16,
        height: u16,
    ) -> Self {
        // These tests are about the session, not the first-start trust screen: the work dir
        // is recorded as "not trusted" (read-only, no screen) unless a test wrote its own
        // trust file.
        let trust = harness.home.path().join("trust.toml");
        if !trust.exists() {
            let dir = std::fs::canonicalize(harness.workdir.path()).expect("work dir");
            std::fs::write(
                &trust,
                format!(
                    "[projects.{:?}]\ntrust_level = \"untrusted\"\n",
                    dir.display().to_string()
                ),
            )
            .expect("write trust.toml");
        }
        Self::launch(harness, name, sub, args, width, height, true)
    }

    fn launch(
        harness: &Harness,
        name: &str,
        sub: &[&str],
        args: &[&str],
        width: u16,
        height: u16,
        skip_git_check: bool,
    ) -> Self {
        let socket = format!("troupe-tui-{name}-{}", std::process::id());
        let exit_file = harness.home.path().join("tui-exit-code");
        let mut line = shell_quote(&troupe_exe().display().to_string());
        for word in sub {
            line.push(' ');
            line.push_str(&shell_quote(word));
        }
        if skip_git_check {
            line.push_str(" --skip-git-repo-check");
        }
        for arg in args {
            line.push(' ');
            line.push_str(&shell_quote(arg));
        }
        let script = format!(
            "cd {} && TROUPE_HOME={} {KEY_VAR}=test-key {line}; echo $? > {}; sleep 600",
            shell_quote(&harness.workdir.path().display().to_string()),
            shell_quote(&harness.home.path().display().to_string()),
            shell_quote(&exit_file.display().to_string()),
        );
        let status = Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null", "new-session", "-d", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .args(["sh", "-c", &script])
            .env_remove("TMUX")
            .env("TERM", "xterm-256color")
            .status()
            .expect("tmux runs (install it: apt-get install tmux)");
        assert!(status.success(), "tmux new-session failed");
        Self { socket, exit_file }
    }

    /// `tmux send-keys` with key names (`Enter`, `Escape`, `C-t`) or `-l` literal text.
    pub fn keys(&self, keys: &[&str]) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "0"])
            .args(keys)
            .status()
            .expect("tmux send-keys");
        assert!(status.success());
    }

    pub fn type_text(&self, text: &str) {
        self.keys(&["-l", text]);
    }

    /// The visible screen as text.
    pub fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", "0"])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen plus the scrollback.
    pub fn history(&self) -> String {
        let out = Command::new("tmux")
            .args([
                "-L",
                &self.socket,
                "capture-pane",
                "-p",
                "-S",
                "-",
                "-t",
                "0",
            ])
            .output()
            .expect("tmux capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen and scrollback show `text`; panics with the screen otherwise.
    pub fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let seen = self.history();
            if seen.contains(text) {
                return seen;
            }
            if Instant::now() > deadline {
                panic!("`{text}` never appeared; screen:\n{seen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the visible screen (not the scrollback) shows `text`.
    pub fn wait_on_screen(&self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("`{text}` never on screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for troupe to exit and returns its exit code.
    pub fn wait_exit(&self) -> i32 {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Ok(text) = std::fs::read_to_string(&self.exit_file) {
                if let Ok(code) = text.trim().parse() {
                    return code;
                }
            }
            if Instant::now() > deadline {
                panic!("troupe did not exit; screen:\n{}", self.history());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Whether a process whose command line contains `marker` is alive.
pub fn process_alive(marker: &str) -> bool {
    Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .is_ok_and(|o| o.status.success())
}

impl Tmux {
    pub fn socket_name(&self) -> String {
        self.socket.clone()
    }
}

impl Tmux {
    /// `tmux resize-window`: the terminal becomes `width`x`height` (troupe gets SIGWINCH).
    pub fn resize(&self, width: u16, height: u16) {
        let status = Command::new("tmux")
            .args(["-L", &self.socket, "resize-window", "-t", "0", "-x"])
            .arg(width.to_string())
            .arg("-y")
            .arg(height.to_string())
            .status()
            .expect("tmux resize-window");
        assert!(status.success(), "tmux resize-window failed");
    }
}
