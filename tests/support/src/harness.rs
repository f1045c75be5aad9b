//! A temp `TROUPE_HOME` wired to a mock model, and running the real `troupe` binary against it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use troupe_mock_model::{Behaviour, MockModel, MockOptions, MockResponse};

/// Environment variable that holds the mock's (fake) API key.
pub const KEY_VAR: &str = "TROUPE_TEST_MOCK_KEY";

/// A mock model plus a home and a work dir that point at it.
pub struct Harness {
    pub mock: MockModel,
    pub home: tempfile::TempDir,
    pub workdir: tempfile::TempDir,
}

impl Harness {
    /// Starts a mock with `script` and writes a config with quick retries.
    pub fn new(script: Vec<MockResponse>) -> Self {
        Self::with_config(script, "")
    }

    /// Like `new`, with extra lines for the `[model_providers.mock]` table.
    pub fn with_config(script: Vec<MockResponse>, provider_extra: &str) -> Self {
        Self::with_behaviour(Behaviour::Script(script), provider_extra)
    }

    /// A mock with any behaviour (e.g. auto mode), plus extra provider lines.
    pub fn with_behaviour(behaviour: Behaviour, provider_extra: &str) -> Self {
        let mock =
            MockModel::start_blocking(MockOptions::new(behaviour)).expect("mock model starts");
        let home = tempfile::tempdir().expect("temp home");
        let workdir = tempfile::tempdir().expect("temp workdir");
        let config = format!(
            "model = \"mock-model\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\n\
             name = \"Mock\"\nbase_url = \"{}\"\nenv_key = \"{KEY_VAR}\"\n\
             request_max_retries = 2\nstream_max_retries = 2\nstream_idle_timeout_ms = 2000\n{provider_extra}\n",
            mock.base_url()
        );
        std::fs::write(home.path().join("config.toml"), config).expect("write config");
        Self {
            mock,
            home,
            workdir,
        }
    }

    /// `troupe` with the home, key and work dir set.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(troupe_exe());
        cmd.env("TROUPE_HOME", self.home.path())
            .env(KEY_VAR, "test-key")
            .current_dir(self.workdir.path());
        cmd
    }

    /// Runs `troupe exec --skip-git-repo-check -s danger-full-access ARGS…` with stdin closed.
    pub fn exec(&self, args: &[&str]) -> Output {
        self.exec_with_stdin(args, None)
    }

    /// Runs `troupe exec --skip-git-repo-check -s SANDBOX -a APPROVAL ARGS…` with stdin closed.
    pub fn exec_under(&self, sandbox: &str, approval: &str, args: &[&str]) -> Output {
        self.command()
            .args([
                "exec",
                "--skip-git-repo-check",
                "-s",
                sandbox,
                "-a",
                approval,
            ])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("troupe runs")
    }

    pub fn exec_with_stdin(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = self.command();
        cmd.args(["exec", "--skip-git-repo-check", "-s", "danger-full-access"])
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("troupe starts");
        if let Some(text) = stdin {
            let mut pipe = child.stdin.take().expect("stdin pipe");
            pipe.write_all(text.as_bytes()).expect("write stdin");
        }
        child.wait_with_output().expect("troupe finishes")
    }

    /// The rollout files written under the home.
    pub fn rollouts(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        collect_jsonl(&self.home.path().join("sessions"), &mut found);
        found
    }
}

/// The `troupe` binary cargo built beside the running test binary (`target/<profile>/troupe`).
/// `CARGO_BIN_EXE_troupe` exists only while compiling a test of the `troupe` package, not in
/// this library, so the path is found from the test binary's own (`target/<profile>/deps/…`).
pub fn troupe_exe() -> PathBuf {
    let test_exe = std::env::current_exe().expect("the test binary knows its path");
    let mut dir = test_exe
        .parent()
        .expect("the test binary is in a directory")
        .to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let exe = dir.join("troupe");
    assert!(
        exe.is_file(),
        "{} is missing: run the test through `cargo test -p troupe`, which builds it",
        exe.display()
    );
    exe
}

/// Every `.jsonl` file under `dir`, recursively.
pub fn collect_jsonl(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_jsonl(&path, found);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            found.push(path);
        }
    }
}

/// Every line of stdout parsed as JSON (panics on a line that is not).
pub fn json_lines(output: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {line}: {e}")))
        .collect()
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The `function_call_output` texts in a recorded request body, in order.
pub fn tool_outputs(body: &serde_json::Value) -> Vec<String> {
    body["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|item| item["type"] == "function_call_output")
        .map(|item| item["output"].as_str().unwrap_or_default().to_string())
        .collect()
}
