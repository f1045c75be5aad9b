//! The escape attempts and the fresh workspace/outside directories they run against.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

mod attempts;

pub use attempts::{battery, controls};
use std::net::{TcpListener, UdpSocket};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    ReadOnly,
    WorkspaceWrite,
}

/// One escape attempt.
pub struct Attempt {
    pub name: &'static str,
    /// `sh -c` script run in the workspace; exit 0 = the escape worked.
    pub script: String,
    /// Extra check from outside that the effect happened (e.g. the file exists).
    pub verify: Box<dyn Fn(&Env) -> bool>,
    pub needs_root: bool,
    /// Judged by the exit status only; `verify` is not consulted for the sandboxed run.
    pub exit_only: bool,
    pub extra_flags: Vec<String>,
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A workspace (a git repo) and an "outside" directory next to it, neither under /tmp (which
/// workspace-write makes writable), plus loopback listeners and a victim process.
pub struct Env {
    pub base: tempfile::TempDir,
    pub tcp: TcpListener,
    pub udp: UdpSocket,
    pub victim: Child,
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = self.victim.kill();
        let _ = self.victim.wait();
        // Undo a successful unsandboxed mount attempt before the directory goes.
        let _ = Command::new("umount").arg(self.ws().join("m")).output();
    }
}

impl Env {
    pub fn new() -> Self {
        let base = tempfile::Builder::new()
            .prefix("troupe-escape-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let ws = base.path().join("ws");
        let out = base.path().join("out");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(out.join("secretdir")).unwrap();
        let git = Command::new("git")
            .arg("init")
            .arg("-q")
            .arg(&ws)
            .output()
            .unwrap();
        assert!(git.status.success());
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(out.join("victim"), "victim\n").unwrap();
        std::fs::write(out.join("victim2"), "victim\n").unwrap();
        std::fs::write(out.join("secret.txt"), "TOPSECRET\n").unwrap();
        std::fs::write(out.join("secretdir/f"), "TOPSECRET\n").unwrap();
        std::fs::write(ws.join("inside.txt"), "inside\n").unwrap();
        std::os::unix::fs::symlink(&out, ws.join("link")).unwrap();
        let victim = Command::new("sleep").arg("60").spawn().unwrap();
        Self {
            base,
            tcp: TcpListener::bind("127.0.0.1:0").unwrap(),
            udp: UdpSocket::bind("127.0.0.1:0").unwrap(),
            victim,
        }
    }

    pub fn ws(&self) -> PathBuf {
        self.base.path().join("ws")
    }

    pub fn out(&self) -> PathBuf {
        self.base.path().join("out")
    }

    pub fn ws_str(&self) -> String {
        self.ws().display().to_string()
    }

    pub fn out_str(&self) -> String {
        self.out().display().to_string()
    }

    pub fn victim_pid(&self) -> u32 {
        self.victim.id()
    }

    pub fn tcp_port(&self) -> u16 {
        self.tcp.local_addr().unwrap().port()
    }

    pub fn udp_port(&self) -> u16 {
        self.udp.local_addr().unwrap().port()
    }

    pub fn tcp_script(&self) -> String {
        format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {}), timeout=3)\"",
            self.tcp_port()
        )
    }

    fn run(&self, argv: Vec<String>) -> Output {
        let dir = std::fs::File::open(self.out()).unwrap();
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .current_dir(self.ws())
            .env_remove("TMPDIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        use std::os::fd::AsRawFd;
        let fd = dir.as_raw_fd();
        // SAFETY: dup2 is async-signal-safe; `dir` outlives the spawn.
        unsafe {
            cmd.pre_exec(move || {
                // dup2 onto itself would keep CLOEXEC: clear the flag instead.
                let rc = if fd == 5 {
                    libc::fcntl(5, libc::F_SETFD, 0)
                } else {
                    libc::dup2(fd, 5)
                };
                if rc < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let output = cmd.output().unwrap();
        drop(dir);
        output
    }

    /// Replaces the placeholders of a script: `@OUT@`, `@TCP@`, `@UDP@`, `@PID@`.
    pub fn fill(&self, text: &str) -> String {
        text.replace("@OUT@", &self.out_str())
            .replace("@TCP@", &self.tcp_port().to_string())
            .replace("@UDP@", &self.udp_port().to_string())
            .replace("@PID@", &self.victim_pid().to_string())
    }

    /// Runs the script without any sandbox.
    pub fn run_plain(&self, script: &str) -> Output {
        self.run(vec!["sh".into(), "-c".into(), self.fill(script)])
    }

    /// Runs the script under `troupe sandbox linux`.
    pub fn run_sandboxed(
        &self,
        mode: Mode,
        backend: &str,
        script: &str,
        extra: &[String],
    ) -> Output {
        let mut argv: Vec<String> = vec![
            env!("CARGO_BIN_EXE_troupe").into(),
            "sandbox".into(),
            "linux".into(),
            "--backend".into(),
            backend.into(),
        ];
        if mode == Mode::WorkspaceWrite {
            argv.push("--full-auto".into());
        }
        argv.extend(extra.iter().map(|e| self.fill(e)));
        argv.extend(["--".into(), "sh".into(), "-c".into(), self.fill(script)]);
        self.run(argv)
    }
}

pub fn exists(path: impl AsRef<Path>) -> bool {
    path.as_ref().symlink_metadata().is_ok()
}
