//! The sandbox's edges, through the real binary: no command can push keystrokes into the
//! user's terminal (TIOCSTI), deny-read follows the object across renames, pathname Unix
//! sockets outside the writable roots are unreachable with the network off.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

const TROUPE: &str = env!("CARGO_BIN_EXE_troupe");

/// Python that exits 0 only if it pushed a byte into a terminal: its stdin, or `/dev/tty`.
const INJECT: &str = r#"
import fcntl, os, sys, termios
ok = []
for name in ('stdin', '/dev/tty'):
    try:
        fd = 0 if name == 'stdin' else os.open(name, os.O_RDWR)
        fcntl.ioctl(fd, termios.TIOCSTI, b'#')
        ok.append(name)
    except OSError as e:
        print(name, e, file=sys.stderr)
print('injected via', ok)
sys.exit(0 if ok else 1)
"#;

/// Runs `argv` the way a user's shell runs it: the shell leads a session whose controlling
/// terminal is a fresh pty, and `argv` is its child in that session. Prints the child's exit
/// code last.
fn under_terminal(argv: &[&str], cwd: &std::path::Path) -> Output {
    let script = r#"
import os, pty, sys, json
argv = json.loads(sys.argv[1])
pid, master = pty.fork()
if pid == 0:
    child = os.fork()
    if child == 0:
        os.execvp(argv[0], argv)
    _, status = os.waitpid(child, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xff)
out = b''
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors='replace'))
print('\nEXIT', os.waitstatus_to_exitcode(status))
"#;
    let argv = serde_json::to_string(argv).unwrap();
    Command::new("python3")
        .args(["-c", script, &argv])
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn exit_code(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .rev()
        .find_map(|l| l.strip_prefix("EXIT "))
        .unwrap_or("?")
        .to_string()
}

#[test]
fn the_injection_works_without_troupe() {
    // The control: the same command run directly by the "shell" can inject.
    let dir = tempfile::tempdir().unwrap();
    let out = under_terminal(&["python3", "-c", INJECT], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    let legacy = std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti").unwrap_or_default();
    if legacy.trim() == "1" {
        assert_eq!(exit_code(&out), "0", "{text}");
        assert!(
            text.contains("injected via ['stdin', '/dev/tty']"),
            "{text}"
        );
    }
}

#[test]
fn sandboxed_one_shot_commands_cannot_inject_into_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    for backend in ["linux", "landlock"] {
        for mode in ["--read-only", "--full-auto"] {
            let out = under_terminal(
                &[
                    TROUPE,
                    "sandbox",
                    "linux",
                    mode,
                    "--backend",
                    backend,
                    "--",
                    "python3",
                    "-c",
                    INJECT,
                ],
                dir.path(),
            );
            let text = String::from_utf8_lossy(&out.stdout);
            assert_eq!(exit_code(&out), "1", "{backend} {mode}: {text}");
            assert!(text.contains("injected via []"), "{backend} {mode}: {text}");
        }
    }
}

/// Runs `troupe exec -s SANDBOX` under a terminal (see [`under_terminal`]) with a model that
/// runs `python3 -c SCRIPT` once; returns the tool output the model got back.
fn python_under_terminal_exec(sandbox: &str, script: &str) -> String {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["python3", "-c", script]),
        MockResponse::text("done"),
    ]);
    let home = h.home.path().display().to_string();
    let key = format!("{}=test-key", troupe_test_support::KEY_VAR);
    let out = under_terminal(
        &[
            "env",
            &format!("TROUPE_HOME={home}"),
            &key,
            TROUPE,
            "exec",
            "--skip-git-repo-check",
            "-s",
            sandbox,
            "-a",
            "never",
            "go",
        ],
        h.workdir.path(),
    );
    assert_eq!(exit_code(&out), "0", "{sandbox}: {}", stderr(&out));
    let outputs = troupe_test_support::tool_outputs(&h.mock.requests()[1].body);
    outputs.into_iter().next().unwrap_or_default()
}

#[test]
fn agent_commands_cannot_inject_on_any_backend() {
    for sandbox in ["danger-full-access", "workspace-write"] {
        let output = python_under_terminal_exec(sandbox, INJECT);
        assert!(output.contains("injected via []"), "{sandbox}: {output}");
    }
}

/// Python printing, for a command run under the supervising trampoline: whether its parent is
/// the supervisor, whether the supervisor leads the command's group (one apart from the
/// runtime's), whether the command shares the runtime's session, and the controlling
/// terminals (`tty_nr`) of the command and of the runtime.
const IDS: &str = r#"
def stat(pid):
    return open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()
me = stat('self')
supervisor = stat(me[1])
runtime = stat(supervisor[1])
supervised = b'--troupe-sandbox-supervise' in open(f'/proc/{me[1]}/cmdline', 'rb').read()
print('supervised', supervised,
      'own-group', me[2] == me[1] and me[2] != runtime[2],
      'runtime-session', me[3] == runtime[3],
      'tty', me[4], 'runtime-tty', runtime[4])
"#;

#[test]
fn an_unconfined_command_has_its_own_group_in_the_runtimes_session_and_no_terminal() {
    // A session per command would make the scheduler weigh each one like the whole runtime
    // where it groups by session (autogroup); a group keeps the kill, and the terminal is
    // dropped all the same. The group is led by the supervisor the command runs under.
    let output = python_under_terminal_exec("danger-full-access", IDS);
    // The function-call output is Codex's JSON envelope; the command's stdout is in `output`.
    let envelope: serde_json::Value = serde_json::from_str(&output).unwrap();
    let printed = envelope["output"].as_str().unwrap_or_default();
    let words: Vec<&str> = printed.split_whitespace().collect();
    let field = |name: &str| {
        let at = words.iter().position(|w| *w == name);
        at.and_then(|at| words.get(at + 1)).copied().unwrap_or("?")
    };
    assert_eq!(field("supervised"), "True", "{printed}");
    assert_eq!(field("own-group"), "True", "{printed}");
    assert_eq!(field("runtime-session"), "True", "{printed}");
    assert_ne!(
        field("runtime-tty"),
        "0",
        "the runtime had no terminal: {printed}"
    );
    assert_eq!(
        field("tty"),
        "0",
        "the command kept the terminal: {printed}"
    );
}

fn sandbox(ws: &std::path::Path, via: &[&str], deny: &std::path::Path, script: &str) -> Output {
    Command::new(TROUPE)
        .args(["sandbox", "linux", "--full-auto", "--deny-read"])
        .arg(deny)
        .args(via)
        .args(["--", "sh", "-c", script])
        .current_dir(ws)
        .output()
        .unwrap()
}

#[test]
fn deny_read_follows_the_file_when_its_directory_is_renamed() {
    for via in [&[][..], &["--zygote"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(ws.join("a/conf")).unwrap();
        std::fs::write(ws.join("a/conf/secret.txt"), "TOPSECRET").unwrap();
        let deny = ws.join("a/conf/secret.txt");
        // Command 1 moves the directory (or its parent) holding the masked file away...
        let moved = sandbox(&ws, via, &deny, "mv a/conf a/conf2 || mv a b || true");
        // ...command 2 reads it under the new name, where nothing was masked.
        let read = sandbox(
            &ws,
            via,
            &deny,
            "cat a/conf2/secret.txt b/conf/secret.txt b/conf2/secret.txt 2>/dev/null; true",
        );
        let seen = String::from_utf8_lossy(&read.stdout);
        assert!(
            !seen.contains("TOPSECRET"),
            "{via:?}: the secret was read after a rename: {seen} ({})",
            String::from_utf8_lossy(&moved.stderr)
        );
        assert_eq!(
            std::fs::read_to_string(&deny).unwrap(),
            "TOPSECRET",
            "{via:?}: the file moved"
        );
    }
}

#[test]
fn a_running_command_cannot_read_a_deny_read_file_the_host_replaces() {
    for via in [&[][..], &["--zygote"][..]] {
        // Not under /tmp, which --full-auto makes writable: the key lies outside every root.
        let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let base = std::fs::canonicalize(base.path()).unwrap();
        let (ws, keys) = (base.join("ws"), base.join("keys"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&keys).unwrap();
        std::fs::write(keys.join("token"), "OLD-SECRET\n").unwrap();
        std::fs::write(keys.join("notes.txt"), "NOTES\n").unwrap();
        let script = r#"cat "$KEYS/token"
echo "notes=$(cat "$KEYS/notes.txt")"
echo made > new.txt && echo "new=$(cat new.txt)"
touch ready
while [ ! -e go ]; do sleep 0.05; done
cat "$KEYS/token"
echo end"#;
        let child = Command::new(TROUPE)
            .args(["sandbox", "linux", "--full-auto", "--deny-read"])
            .arg(keys.join("token"))
            .args(via)
            .args(["--", "sh", "-c", script])
            .env("KEYS", &keys)
            .current_dir(&ws)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !ws.join("ready").exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // A token refresh while the command runs: the kernel detaches the mask on the old
        // file, and only the command's own Landlock layer keeps the new one out of reach.
        std::fs::write(keys.join("token.new"), "NEW-SECRET\n").unwrap();
        std::fs::rename(keys.join("token.new"), keys.join("token")).unwrap();
        std::fs::write(ws.join("go"), "").unwrap();
        let output = child.wait_with_output().unwrap();
        let printed = String::from_utf8_lossy(&output.stdout);
        for expected in ["notes=NOTES", "new=made", "end"] {
            assert!(
                printed.contains(expected),
                "{via:?} {expected}: {printed}{}",
                stderr(&output)
            );
        }
        for secret in ["OLD-SECRET", "NEW-SECRET"] {
            assert!(!printed.contains(secret), "{via:?} {secret}: {printed}");
        }
    }
}

/// Python that exits 0 only if it connected to the Unix socket at argv[1].
const CONNECT: &str = r#"
import socket, sys
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
except OSError as e:
    print('refused:', e)
    sys.exit(1)
print('connected')
"#;

#[test]
fn host_unix_sockets_are_unreachable_with_the_network_off() {
    // Outside /tmp (a writable root) and outside the workspace.
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = base.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    let path = base.path().join("docker.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    let sock = path.display().to_string();
    let run = |flags: &[&str]| {
        let out = Command::new(TROUPE)
            .args(["sandbox", "linux"])
            .args(flags)
            .args(["--", "python3", "-c", CONNECT, &sock])
            .current_dir(&ws)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // The control: unconfined, the socket answers.
    let plain = Command::new("python3")
        .args(["-c", CONNECT, &sock])
        .output()
        .unwrap();
    assert!(plain.status.success(), "{plain:?}");
    // The landlock backend has no mount view to mask the socket: it refuses AF_UNIX sockets
    // altogether while the network is off (`socketpair` still works).
    for mode in [
        &["--read-only"][..],
        &["--full-auto"],
        &["--full-auto", "--zygote"],
        &["--backend", "landlock", "--read-only"],
        &["--backend", "landlock", "--full-auto"],
    ] {
        let (code, text) = run(mode);
        assert_eq!(code, Some(1), "{mode:?}: {text}");
    }
    for backend in ["linux", "landlock"] {
        let flags = ["--backend", backend, "--full-auto"];
        let (code, text) = run(&[&flags[..], &["--allow-unix-socket", &sock]].concat());
        assert_eq!(code, Some(0), "{backend}, allow-listed: {text}");
        let (code, text) = run(&[&flags[..], &["--network"]].concat());
        assert_eq!(code, Some(0), "{backend}, network on: {text}");
    }
    let pair = Command::new(TROUPE)
        .args([
            "sandbox",
            "linux",
            "--backend",
            "landlock",
            "--full-auto",
            "--",
        ])
        .args(["python3", "-c", SOCKETPAIR])
        .current_dir(&ws)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&pair.stdout), "pair\n", "{pair:?}");
}

/// Python that talks to itself over a socketpair (reaches nothing outside).
const SOCKETPAIR: &str = r#"
import socket
a, b = socket.socketpair()
a.sendall(b'pair')
print(b.recv(4).decode())
"#;

/// Python that exits 0 if it could lower a resource limit of any of its ancestors (troupe).
const PRLIMIT_ANCESTORS: &str = r#"
import os, resource, sys
pid, done = os.getppid(), []
while pid > 1:
    try:
        resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))
        done.append(pid)
    except OSError:
        pass
    with open(f'/proc/{pid}/stat') as f:
        pid = int(f.read().rsplit(')', 1)[1].split()[1])
print('lowered', done)
sys.exit(0 if done else 1)
"#;

/// Python that leaves a daemon behind: a child that leaves the session (or at least the
/// process group), records its pid, and sleeps.
const DAEMON: &str = r#"
import os, sys, time
if os.fork() == 0:
    for leave in (os.setsid, lambda: os.setpgid(0, 0)):
        try:
            leave()
            break
        except OSError:
            pass
    with open(sys.argv[1], 'w') as f:
        f.write(str(os.getpid()))
    os.close(1); os.close(2)
    time.sleep(60)
    os._exit(0)
time.sleep(0.5)
print('daemon started')
"#;

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn landlock_commands_cannot_touch_troupe_or_outlive_their_call() {
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["python3", "-c", PRLIMIT_ANCESTORS]),
        MockResponse::shell("c2", &["python3", "-c", DAEMON, "out/daemon.pid"]),
        MockResponse::text("done"),
    ]);
    // An existing subdirectory: under landlock a command cannot write a file it creates at
    // the root of a workspace holding `.git`/`.troupe` (see `probe::LANDLOCK_LIMITS`).
    std::fs::create_dir(h.workdir.path().join("out")).unwrap();
    let out = h
        .command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "-a",
            "never",
        ])
        .args(["-c", "sandbox_backend=\"landlock\"", "go"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let outputs = troupe_test_support::tool_outputs(&h.mock.requests()[2].body);
    assert!(outputs[0].contains("lowered []"), "{outputs:?}");
    assert!(outputs[1].contains("daemon started"), "{outputs:?}");
    let pid: i32 = std::fs::read_to_string(h.workdir.path().join("out/daemon.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while alive(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let survived = alive(pid);
    if survived {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(!survived, "a daemon outlived its command: {outputs:?}");
}
