//! The landlock backend's claims, each tried through `troupe sandbox linux --backend landlock`
//! in workspace-write: `.git` (and `.troupe`) inside the workspace stay read-only, and each
//! limit the start-up warning, `troupe doctor` and the README state is exactly what happens.
//! Every blocked attempt is first shown to work without the sandbox.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::escape_support::{Env, Mode};
use std::path::Path;
use troupe_sandbox::probe::{LANDLOCK_CHOSEN_WARNING, LANDLOCK_LIMITS, LANDLOCK_WARNING};
use troupe_test_support::{stderr, stdout, Harness};

/// Whether an attempt did what it tried, judged from the files it left.
type Worked = Box<dyn Fn(&Env) -> bool>;

fn boxed(env: &Env, script: &str) -> std::process::Output {
    env.run_sandboxed(Mode::WorkspaceWrite, "landlock", script, &[])
}

fn read(path: impl AsRef<Path>) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn git_and_troupe_inside_the_workspace_cannot_be_changed_removed_or_replaced() {
    // (script, what is true when it worked)
    let attempts: Vec<(&str, Worked)> = vec![
        (
            "echo '[pwned]' >> .git/config",
            Box::new(|e| read(e.ws().join(".git/config")).contains("pwned")),
        ),
        (
            "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit",
            Box::new(|e| read(e.ws().join(".git/hooks/pre-commit")).contains("pwned")),
        ),
        (
            "ln -s @OUT@/victim .git/hooks/post-checkout",
            Box::new(|e| {
                e.ws()
                    .join(".git/hooks/post-checkout")
                    .symlink_metadata()
                    .is_ok()
            }),
        ),
        (
            "ln inside.txt .git/hooks/pre-push",
            Box::new(|e| e.ws().join(".git/hooks/pre-push").exists()),
        ),
        (
            "rm .git/HEAD",
            Box::new(|e| !e.ws().join(".git/HEAD").exists()),
        ),
        (
            "mv .git .git_old",
            Box::new(|e| e.ws().join(".git_old").exists()),
        ),
        (
            "rm -rf .git",
            Box::new(|e| !e.ws().join(".git/config").exists()),
        ),
        (
            "mkdir sub && mv .git/config sub/",
            Box::new(|e| !e.ws().join(".git/config").exists()),
        ),
        (
            "echo x > .troupe/config.toml",
            Box::new(|e| read(e.ws().join(".troupe/config.toml")).contains('x')),
        ),
        (
            "truncate -s 0 .git/config",
            Box::new(|e| read(e.ws().join(".git/config")).is_empty()),
        ),
    ];
    let mut escaped = Vec::new();
    for (script, worked) in &attempts {
        let plain = Env::new();
        std::fs::create_dir_all(plain.ws().join(".troupe")).unwrap();
        let out = plain.run_plain(script);
        assert!(
            out.status.success() && worked(&plain),
            "`{script}` must work unsandboxed: {}",
            stderr(&out)
        );
        let env = Env::new();
        std::fs::create_dir_all(env.ws().join(".troupe")).unwrap();
        let out = boxed(&env, script);
        if out.status.success() || worked(&env) {
            escaped.push(format!("{script}: {}", stderr(&out)));
        }
    }
    assert!(
        escaped.is_empty(),
        "landlock let through:\n{}",
        escaped.join("\n")
    );
}

#[test]
fn the_stated_limits_are_exactly_what_happens() {
    let env = Env::new();
    // Existing files and directories of the workspace are fully writable.
    let out = boxed(&env, "mkdir -p d && echo y > d/y");
    assert!(
        !out.status.success(),
        "`mkdir d` at the root then writing in it is a stated limit"
    );
    std::fs::create_dir(env.ws().join("src")).unwrap();
    let out = boxed(
        &env,
        "echo more >> inside.txt && echo y > src/y && mv src/y src/z && rm src/z",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read(env.ws().join("inside.txt")), "inside\nmore\n");
    // A new file at the root: created, not written, in the same command; written in the next.
    let out = boxed(&env, "echo new > new.txt");
    assert!(!out.status.success());
    assert_eq!(read(env.ws().join("new.txt")), "", "created empty");
    let out = boxed(&env, "echo new > new.txt");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read(env.ws().join("new.txt")), "new\n");
    // Entries at the root cannot be removed or renamed.
    assert!(!boxed(&env, "rm new.txt").status.success());
    assert!(!boxed(&env, "mv new.txt renamed.txt").status.success());
    assert!(env.ws().join("new.txt").exists());
    // In `.git`: new empty files and directories only.
    // (The shell's `>` opens for writing after creating, which is refused: the file stays.)
    let out = boxed(&env, "mkdir .git/newdir && : > .git/newdir/empty");
    assert!(!out.status.success());
    assert!(
        env.ws().join(".git/newdir/empty").is_file(),
        "{}",
        stderr(&out)
    );
    assert!(!boxed(&env, "echo x > .git/newdir/empty").status.success());
    assert_eq!(read(env.ws().join(".git/newdir/empty")), "");
    // chmod/utime outside the writable roots: not protected (stated).
    let victim = env.out().join("victim");
    let out = boxed(
        &env,
        "chmod 600 @OUT@/victim && touch -d 2001-01-01 @OUT@/victim",
    );
    assert!(
        out.status.success(),
        "the limit is stated; if this now fails, update the text: {}",
        stderr(&out)
    );
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o777, 0o600);
    // Writing outside stays blocked.
    assert!(!boxed(&env, "echo x >> @OUT@/victim").status.success());
}

#[test]
fn the_warning_doctor_and_readme_state_the_same_limits() {
    for text in [LANDLOCK_WARNING, LANDLOCK_CHOSEN_WARNING] {
        assert!(text.ends_with(LANDLOCK_LIMITS), "{text}");
    }
    for claim in [
        "create new empty files",
        "cannot remove, rename or link",
        "chmod/utime/xattr",
        "deny-read paths (Troupe's stored keys among them) cannot be read",
    ] {
        assert!(LANDLOCK_LIMITS.contains(claim), "{claim}");
    }
    let readme = read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"));
    let flat = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat(&readme).contains(&flat(LANDLOCK_LIMITS)),
        "README's sandbox section must carry the limits"
    );
    // `troupe doctor` with the landlock backend configured says them.
    let h = Harness::new(vec![]);
    let config = h.home.path().join("config.toml");
    let text = read(&config);
    std::fs::write(&config, format!("sandbox_backend = \"landlock\"\n{text}")).unwrap();
    let out = h.command().arg("doctor").output().unwrap();
    assert!(
        stdout(&out).contains(&format!(
            "sandbox: landlock; not protected: {LANDLOCK_LIMITS}"
        )),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn deny_read_paths_stay_unreadable_by_any_name_and_when_the_host_replaces_them() {
    let base = tempfile::Builder::new()
        .prefix("troupe-landlock-deny-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let (ws, out) = (base.path().join("ws"), base.path().join("out"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(out.join("keys")).unwrap();
    std::fs::write(out.join("keys/token"), "OLD-SECRET\n").unwrap();
    std::fs::write(out.join("plain.txt"), "PLAIN\n").unwrap();
    std::fs::write(ws.join("private.txt"), "WS-SECRET\n").unwrap();
    std::fs::write(ws.join("open.txt"), "open\n").unwrap();
    let script = r#"cat "$OUT/keys/token" "$OUT/keys/../keys/./token" private.txt
echo "plain=$(cat "$OUT/plain.txt")"
echo "listed=$(ls "$OUT/keys")"
echo x >> private.txt && echo wrote-private
ln "$OUT/keys/token" hard 2>/dev/null && cat hard
cp private.txt copy 2>/dev/null && cat copy
echo more >> open.txt && echo wrote-open
touch ready
while [ ! -e go ]; do sleep 0.05; done
cat "$OUT/keys/token"
echo end"#;
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_troupe"))
        .args(["sandbox", "linux", "--backend", "landlock", "--full-auto"])
        .arg("--deny-read")
        .arg(out.join("keys/token"))
        .arg("--deny-read")
        .arg(ws.join("private.txt"))
        .args(["--", "sh", "-c", script])
        .env("OUT", &out)
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
    // An editor's save or a token refresh: a new file renamed over the old one.
    std::fs::write(out.join("keys/token.new"), "NEW-SECRET\n").unwrap();
    std::fs::rename(out.join("keys/token.new"), out.join("keys/token")).unwrap();
    std::fs::write(ws.join("go"), "").unwrap();
    let output = child.wait_with_output().unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    for expected in ["plain=PLAIN", "listed=token", "wrote-open", "end"] {
        assert!(
            printed.contains(expected),
            "{expected}: {printed}{}",
            stderr(&output)
        );
    }
    for secret in ["OLD-SECRET", "NEW-SECRET", "WS-SECRET", "wrote-private"] {
        assert!(!printed.contains(secret), "{secret}: {printed}");
    }
    assert_eq!(read(ws.join("private.txt")), "WS-SECRET\n");
    assert_eq!(read(ws.join("open.txt")), "open\nmore\n");
}
