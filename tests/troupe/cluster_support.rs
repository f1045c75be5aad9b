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

/// The pool's server configuration, as docs/scale-out.md gives it: workers may do
/// everything; requesters may ask for threads, follow them and send them ops, but never
/// read the spawn queue or the workers' bucket of thread secrets, nor publish on a
/// thread's subject or create streams. `intruder` is a requester whose operator also let
/// it publish on threads' subjects (a permission set too wide): only the thread's
/// signatures stand between it and a requester.
pub fn pool_server_config() -> String {
    let requester = requester_permissions(&[]);
    let intruder = requester_permissions(&["troupe.default.thread.*.events"]);
    format!(
        "authorization {{\n  users = [\n    {{ user: worker, password: \"{WORKER_PASSWORD}\" }}\n    \
         {{ user: requester, password: \"{REQUESTER_PASSWORD}\", permissions: {requester} }}\n    \
         {{ user: intruder, password: \"{INTRUDER_PASSWORD}\", permissions: {intruder} }}\n  ]\n}}\n"
    )
}

/// A requester's permissions on the pool's server (plus `extra` subjects it may publish on):
/// it may ask for threads, follow them and send them ops, but never read the spawn queue or
/// the workers' bucket of thread secrets, nor publish on a thread's subject or create streams.
pub fn requester_permissions(extra: &[&str]) -> String {
    let subjects = [
        "troupe.default.spawn",
        "troupe.default.thread.*.ops",
        "$JS.API.INFO",
        "$JS.API.STREAM.INFO.TROUPE_default_SPAWN",
        "$JS.API.STREAM.INFO.TROUPE_default_THREADS",
        "$JS.API.STREAM.INFO.KV_TROUPE_default",
        "$JS.API.STREAM.MSG.DELETE.TROUPE_default_SPAWN",
        "$JS.API.CONSUMER.CREATE.TROUPE_default_THREADS",
        "$JS.API.CONSUMER.CREATE.TROUPE_default_THREADS.>",
        "$JS.API.CONSUMER.MSG.NEXT.TROUPE_default_THREADS.>",
        "$JS.API.CONSUMER.INFO.TROUPE_default_THREADS.>",
        "$JS.API.CONSUMER.DELETE.TROUPE_default_THREADS.>",
        "$JS.API.CONSUMER.CREATE.KV_TROUPE_default",
        "$JS.API.CONSUMER.CREATE.KV_TROUPE_default.*.$KV.TROUPE_default.spawn.*",
        "$JS.API.CONSUMER.DELETE.KV_TROUPE_default.>",
        "$KV.TROUPE_default.spawn.*",
        "$JS.FC.>",
    ];
    let list = subjects
        .iter()
        .chain(extra)
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ");
    format!("{{ publish: {{ allow: [{list}] }}, subscribe: {{ allow: [\"_INBOX.>\"] }} }}")
}

pub const WORKER_PASSWORD: &str = "worker-pw-7d1c";
pub const REQUESTER_PASSWORD: &str = "requester-pw-52ab";
pub const INTRUDER_PASSWORD: &str = "intruder-pw-90fe";

/// The `[cluster]` lines of a requester.
pub fn requester_credentials() -> String {
    format!("user = \"requester\"\npassword = \"{REQUESTER_PASSWORD}\"")
}

/// The `[cluster]` lines of a worker (in place of the requester's).
pub fn worker_credentials() -> String {
    format!("user = \"worker\"\npassword = \"{WORKER_PASSWORD}\"")
}

/// A nats-server with the pool's users (and `extra` lines of configuration), its streams
/// and buckets made as a worker makes them (requesters may not create them).
pub fn pool_nats(extra: &str) -> NatsServer {
    let nats = NatsServer::start_with_config(&format!("{}{extra}", pool_server_config()));
    let worker = troupe_messages::cluster::ClusterConfig {
        user: Some("worker".into()),
        password: Some(WORKER_PASSWORD.into()),
        ..Default::default()
    };
    make_pool_state(&nats, &worker);
    nats
}

/// Makes the pool's streams and buckets on `nats` as a worker with `worker`'s credentials
/// makes them (requesters may not create them).
pub fn make_pool_state(nats: &NatsServer, worker: &troupe_messages::cluster::ClusterConfig) {
    let options = troupe_cluster::ClusterOptions::from_config(worker, Some(&nats.url())).unwrap();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let cluster = troupe_cluster::Cluster::connect(options, "test-setup")
            .await
            .unwrap();
        troupe_cluster::secrets::bucket(&cluster).await.unwrap();
    });
}

impl Pool {
    /// A pool whose `[cluster]` has `cluster_extra` lines (e.g. `spawn_deadline_ms = 1000`).
    pub fn new(script: Vec<MockResponse>, cluster_extra: &str) -> Self {
        Self::with_nats(pool_nats(""), script, cluster_extra)
    }

    /// The same, on a server started by the caller (with the pool's users).
    pub fn with_nats(nats: NatsServer, script: Vec<MockResponse>, cluster_extra: &str) -> Self {
        let h = Harness::new(script);
        let pool = Self {
            nats,
            h,
            workers: Vec::new(),
        };
        append_secure_cluster(pool.h.home.path(), &pool.nats.url(), cluster_extra);
        pool
    }

    /// Starts a worker with `slots` and a home of its own (the requester's config, which
    /// runs commands with full access, and the same `[cluster]`).
    pub fn start_worker(&mut self, slots: u32) -> usize {
        self.start_worker_with(slots, "sandbox_mode = \"danger-full-access\"\n")
    }

    /// A worker whose config starts with `top` (top-level keys) before the requester's.
    pub fn start_worker_with(&mut self, slots: u32, top: &str) -> usize {
        self.start_worker_as(
            slots,
            top,
            (&requester_credentials(), &worker_credentials()),
        )
    }

    /// A worker whose config is the requester's with `credentials.0` (the requester's
    /// `[cluster]` credential lines) replaced by `credentials.1` (the worker's).
    pub fn start_worker_as(&mut self, slots: u32, top: &str, credentials: (&str, &str)) -> usize {
        let home = tempfile::tempdir().unwrap();
        let config = std::fs::read_to_string(self.h.home.path().join("config.toml")).unwrap();
        // The worker's own credentials, and the harness's directory as where it works.
        let mut config = format!("{top}{config}").replace(credentials.0, credentials.1);
        if !config.contains("worker_roots") {
            let roots = format!(
                "[cluster]\nworker_roots = [\"{}\"]\n",
                self.h.workdir.path().display()
            );
            config = config.replace("[cluster]\n", &roots);
        }
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

/// Adds `[cluster]` with the requester's credentials to the config in `home`.
pub fn append_secure_cluster(home: &Path, url: &str, extra: &str) {
    append_cluster(home, url, &format!("{}\n{extra}", requester_credentials()));
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

/// A NATS client of the pool's server with the workers' credentials (tests look at and
/// break the pool's streams with it).
pub async fn connect_as_worker(url: &str) -> async_nats::Client {
    connect_as(url, "worker", WORKER_PASSWORD).await
}

/// A NATS client of the pool's server as `user`.
pub async fn connect_as(url: &str, user: &str, password: &str) -> async_nats::Client {
    async_nats::ConnectOptions::with_user_and_password(user.into(), password.into())
        .connect(url)
        .await
        .unwrap()
}
