//! Set-up of the scale-out scenarios: a real `nats-server`, a mock model, the requester's
//! home (the harness's) and `troupe worker` processes, each with a home of its own whose
//! config points at the same mock.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use troupe_mock_model::MockResponse;
use troupe_test_support::nats::NatsServer;
use troupe_test_support::{collect_jsonl, troupe_exe, Harness, KEY_VAR};

/// A nats-server, a mock model and the requester's home with `[cluster]` pointing at both.
pub struct Pool {
    pub nats: NatsServer,
    pub h: Harness,
    pub workers: Vec<Worker>,
}

/// A `troupe worker` process, killed when dropped.
pub struct Worker {
    pub child: Child,
    pub home: tempfile::TempDir,
    pub log: PathBuf,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Worker {
    /// What the worker wrote on stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Every rollout the worker wrote, under its per-thread directories.
    pub fn rollouts(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        collect_jsonl(&self.home.path().join("cluster"), &mut found);
        found
    }
}

impl Pool {
    /// A pool whose `[cluster]` has `cluster_extra` lines (e.g. `spawn_deadline_ms = 1000`).
    pub fn new(script: Vec<MockResponse>, cluster_extra: &str) -> Self {
        Self::with_nats(NatsServer::start(), script, cluster_extra)
    }

    /// The same, on a server started by the caller.
    pub fn with_nats(nats: NatsServer, script: Vec<MockResponse>, cluster_extra: &str) -> Self {
        let h = Harness::new(script);
        let pool = Self {
            nats,
            h,
            workers: Vec::new(),
        };
        append_cluster(pool.h.home.path(), &pool.nats.url(), cluster_extra);
        pool
    }

    /// Starts a worker with `slots` and a home of its own (the requester's config, which
    /// runs commands with full access, and the same `[cluster]`).
    pub fn start_worker(&mut self, slots: u32) -> usize {
        self.start_worker_with(slots, "sandbox_mode = \"danger-full-access\"\n")
    }

    /// A worker whose config starts with `top` (top-level keys) before the requester's.
    pub fn start_worker_with(&mut self, slots: u32, top: &str) -> usize {
        let home = tempfile::tempdir().unwrap();
        let config = std::fs::read_to_string(self.h.home.path().join("config.toml")).unwrap();
        let config = format!("{top}{config}");
        std::fs::write(home.path().join("config.toml"), config).unwrap();
        let log = home.path().join("worker.log");
        let child = Command::new(troupe_exe())
            .args([
                "worker",
                "--slots",
                &slots.to_string(),
                "--label",
                "test=yes",
            ])
            .env("TROUPE_HOME", home.path())
            .env(KEY_VAR, "test-key")
            .current_dir(self.h.workdir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        self.workers.push(Worker { child, home, log });
        let index = self.workers.len() - 1;
        // Joined once it said so (it has its consumer then).
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.workers[index].log().contains("slot(s)") {
            assert!(
                Instant::now() < deadline,
                "worker did not start: {}",
                self.workers[index].log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        index
    }

    /// `troupe exec --remote --skip-git-repo-check ARGS…` in the requester's home.
    pub fn exec_remote(&self, args: &[&str]) -> Output {
        self.remote_command(args).output().unwrap()
    }

    pub fn remote_command(&self, args: &[&str]) -> Command {
        let mut cmd = self.h.command();
        cmd.args(["exec", "--remote", "--skip-git-repo-check"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }
}

/// Adds `[cluster]` to the config in `home`.
pub fn append_cluster(home: &Path, url: &str, extra: &str) {
    let path = home.join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(&format!("\n[cluster]\nnats_url = \"{url}\"\n{extra}\n"));
    std::fs::write(path, config).unwrap();
}

/// The JSON lines of `--json` output with the thread's id replaced (it differs per run).
pub fn normalized_json(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut value: serde_json::Value = serde_json::from_str(l).unwrap();
            if value.get("thread_id").is_some() {
                value["thread_id"] = "<thread>".into();
            }
            value
        })
        .collect()
}

/// The `response_item` payloads of a rollout, in order, as written.
pub fn rollout_items(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| {
            serde_json::from_str::<serde_json::Value>(line)
                .map(|v| v["type"] == "response_item")
                .unwrap_or(false)
        })
        .map(str::to_string)
        .collect()
}

/// Waits for `child` (stdout and stderr piped, read meanwhile) at most `limit`; kills it
/// and fails the test after that, so a failover that never happens cannot hang the suite.
pub fn wait_limited(child: Child, limit: Duration) -> Output {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("`troupe exec --remote` did not finish within {limit:?}");
        }
    }
}

/// The payload of a rollout's first line (its `session_meta`).
pub fn first_line(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str::<serde_json::Value>(text.lines().next().unwrap()).unwrap()["payload"]
        .clone()
}

/// Waits until `n` different children have asked the model (each is then running its
/// command on its worker, its call committed).
pub fn wait_children_running(pool: &Pool, n: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let mut running: Vec<String> = pool
            .h
            .mock
            .requests()
            .iter()
            .filter_map(|r| troupe_mock_model::multi_agent::child_task_path(&r.body))
            .collect();
        running.sort();
        running.dedup();
        if running.len() >= n {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "only {running:?} started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(700));
}
