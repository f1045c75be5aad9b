//! apply_patch under workspace-write, through the real binary, against a hostile model: a
//! symlink planted by a command (in an earlier session, or flipping in the background while
//! patches are written) never lets a patch write outside the workspace; `.git` and deny-read
//! files are refused, and nothing changes when a patch is refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::path::Path;
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, Harness};

/// `/tmp` and `$TMPDIR` are not writable roots here, so a temp dir beside the workspace is
/// really outside.
const CONFINED: &[&str] = &[
    "-s",
    "workspace-write",
    "-a",
    "never",
    "-c",
    "sandbox_workspace_write.exclude_slash_tmp=true",
    "-c",
    "sandbox_workspace_write.exclude_tmpdir_env_var=true",
    "-c",
    "apply_patch_tool_type=\"function\"",
];

fn patch_call(call_id: &str, patch: &str) -> (String, String, String) {
    (
        call_id.to_string(),
        "apply_patch".to_string(),
        json!({ "input": patch }).to_string(),
    )
}

fn run(h: &Harness, extra: &[&str]) {
    let out = h
        .command()
        .args(["exec", "--skip-git-repo-check"])
        .args(CONFINED)
        .args(extra)
        .arg("go")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Outputs of every function call in the last request, in order.
fn last_outputs(h: &Harness) -> Vec<String> {
    let requests = h.mock.requests();
    let body: &Value = &requests.last().expect("a request").body;
    troupe_test_support::tool_outputs(body)
}

#[test]
fn a_symlink_planted_in_an_earlier_session_cannot_carry_a_patch_outside() {
    let outside = tempfile::tempdir().unwrap();
    // Session 1: a sandboxed command plants a dangling link to the workspace's parent.
    let h = Harness::new(vec![
        MockResponse::shell("c1", &["ln", "-s", "D/../..", "L"]),
        MockResponse::text("planted"),
    ]);
    run(&h, &[]);
    assert!(std::fs::symlink_metadata(h.workdir.path().join("L")).is_ok());
    // Session 2 (same workspace): one patch makes the link live and writes through it.
    let target = Path::new(outside.path().file_name().unwrap()).join("pwned");
    let patch = format!(
        "*** Begin Patch\n*** Add File: D/f\n+f\n*** Add File: L/{}\n+x\n*** End Patch",
        target.display()
    );
    let h2 = Harness::new(vec![
        MockResponse::tool_calls(vec![patch_call("p1", &patch)]),
        MockResponse::text("done"),
    ]);
    let h2 = Harness {
        workdir: h.workdir,
        ..h2
    };
    run(&h2, &[]);
    assert!(!outside.path().join("pwned").exists(), "wrote outside");
    assert!(
        !h2.workdir.path().join("D").exists(),
        "the patch half-applied"
    );
    let outputs = last_outputs(&h2);
    assert!(outputs[0].contains("no file was changed"), "{outputs:?}");
}

#[test]
fn a_symlink_flipped_in_the_background_never_wins_the_race() {
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().display().to_string();
    // Flips `sub` between a directory and a link out, as fast as it can, for 20 s.
    let flipper = format!(
        "python3 -c 'import os, shutil, time\nend = time.time() + 20\nprint(\"flipping\", flush=True)\n\
         while time.time() < end:\n    try:\n        shutil.rmtree(\"sub\", ignore_errors=True)\n        \
         os.symlink(\"{out}\", \"sub\")\n        os.unlink(\"sub\")\n        os.mkdir(\"sub\")\n    \
         except OSError:\n        pass\n'"
    );
    let mut calls = vec![(
        "bg".to_string(),
        "exec_command".to_string(),
        json!({ "cmd": flipper, "yield_time_ms": 3000 }).to_string(),
    )];
    for i in 0..60 {
        let patch = format!("*** Begin Patch\n*** Add File: sub/f{i}\n+x\n*** End Patch");
        calls.push(patch_call(&format!("p{i}"), &patch));
    }
    let h = Harness::new(vec![
        MockResponse::tool_calls(calls),
        MockResponse::text("done"),
    ]);
    run(&h, &["-c", "shell_tool_type=\"exec_command\""]);
    let leaked: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    let outputs = last_outputs(&h);
    let ok = outputs.iter().filter(|o| o.starts_with("Success")).count();
    eprintln!(
        "{ok} of {} patches applied; {:?}",
        outputs.len(),
        outputs
            .iter()
            .filter(|o| !o.starts_with("Success"))
            .collect::<Vec<_>>()
    );
    assert!(leaked.is_empty(), "patches wrote outside: {leaked:?}");
}

#[test]
fn git_and_deny_read_files_are_refused_and_nothing_changes() {
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![
            patch_call(
                "p1",
                "*** Begin Patch\n*** Update File: conf/secret.txt\n*** Move to: leak.txt\n@@\n\
                 -s3cret\n+s3cret\n*** End Patch",
            ),
            patch_call(
                "p2",
                "*** Begin Patch\n*** Add File: ok.txt\n+fine\n*** Update File: .git/config\n\
                 @@\n-[core]\n+[core]\n+\thooksPath = /tmp/evil\n*** End Patch",
            ),
            patch_call(
                "p3",
                "*** Begin Patch\n*** Add File: vendor/lib/.git/hooks/post-checkout\n+#!/bin/sh\n\
                 *** End Patch",
            ),
        ]),
        MockResponse::text("done"),
    ]);
    let ws = h.workdir.path();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir(ws.join("conf")).unwrap();
    std::fs::write(ws.join("conf/secret.txt"), "s3cret\n").unwrap();
    let deny = format!(
        "sandbox_deny_read=[\"{}\"]",
        std::fs::canonicalize(ws).unwrap().join("conf").display()
    );
    run(&h, &["-c", &deny]);
    let outputs = last_outputs(&h);
    assert!(outputs[0].contains("deny-read"), "{outputs:?}");
    assert!(outputs[1].contains("protected"), "{outputs:?}");
    assert!(outputs[2].contains("protected"), "{outputs:?}");
    assert!(!ws.join("leak.txt").exists());
    assert!(ws.join("conf/secret.txt").exists());
    assert!(
        !ws.join("ok.txt").exists(),
        "atomicity: no file of a refused patch"
    );
    assert!(!ws.join("vendor").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

#[test]
fn troupe_apply_refuses_a_diff_into_troupe_or_git() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    for path in [
        ".troupe/config.toml",
        "sub/.git/hooks/post-checkout",
        "../escape.txt",
    ] {
        let diff = format!(
            "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n\
             @@ -0,0 +1 @@\n+pwned\n"
        );
        let line = json!({
            "timestamp": "2026-01-01T00:00:00Z",
            "type": "event",
            "payload": { "type": "turn_diff", "unified_diff": diff },
        });
        let rollout = dir.path().join("rollout.jsonl");
        std::fs::write(&rollout, format!("{line}\n")).unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_troupe"))
            .env("TROUPE_HOME", home.path())
            .args(["apply", "--rollout"])
            .arg(&rollout)
            .arg("-C")
            .arg(&ws)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{path}: applied");
        assert!(
            stderr(&out).contains("refusing to apply"),
            "{path}: {}",
            stderr(&out)
        );
        assert!(!ws.join(path).exists() && !dir.path().join("escape.txt").exists());
    }
}

#[test]
fn troupe_apply_refuses_troupe_and_git_however_the_diff_spells_them() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let quoted_new = "diff --git \"a/\\056troupe/config.toml\" \"b/\\056troupe/config.toml\"\n\
                      new file mode 100644\n--- /dev/null\n+++ \"b/\\056troupe/config.toml\"\n\
                      @@ -0,0 +1 @@\n+pwned = true\n";
    let renamed = "diff --git a/notes.toml b/.troupe/config.toml\nsimilarity index 100%\n\
                   rename from notes.toml\nrename to .troupe/config.toml\n";
    let copied = "diff --git a/notes.toml b/.troupe/config.toml\nsimilarity index 100%\n\
                  copy from notes.toml\ncopy to .troupe/config.toml\n";
    let quoted_rename = "diff --git a/notes.toml \"b/sub/\\056git\"\nsimilarity index 100%\n\
                         rename from notes.toml\nrename to \"sub/\\056git\"\n";
    let upper = "diff --git a/.TROUPE/config.toml b/.TROUPE/config.toml\nnew file mode 100644\n\
                 --- /dev/null\n+++ b/.TROUPE/config.toml\n@@ -0,0 +1 @@\n+pwned = true\n";
    let from_git = "diff --git a/.git/config b/stolen\nsimilarity index 100%\n\
                    rename from .git/config\nrename to stolen\n";
    for (name, diff) in [
        ("quoted new file", quoted_new),
        ("pure rename", renamed),
        ("pure copy", copied),
        ("quoted rename to a .git file", quoted_rename),
        ("upper case", upper),
        ("rename out of .git", from_git),
    ] {
        let line = json!({
            "timestamp": "2026-01-01T00:00:00Z",
            "type": "event",
            "payload": { "type": "turn_diff", "unified_diff": diff },
        });
        let rollout = dir.path().join("rollout.jsonl");
        std::fs::write(&rollout, format!("{line}\n")).unwrap();
        let ws = dir.path().join(format!("ws-{}", name.replace(' ', "-")));
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(ws.join("notes.toml"), "pwned = true\n").unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_troupe"))
            .env("TROUPE_HOME", home.path())
            .args(["apply", "--rollout"])
            .arg(&rollout)
            .arg("-C")
            .arg(&ws)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{name}: applied");
        assert!(
            stderr(&out).contains("refusing to apply"),
            "{name}: {}",
            stderr(&out)
        );
        for written in [".troupe", ".TROUPE", "sub", "stolen"] {
            assert!(!ws.join(written).exists(), "{name}: {written} written");
        }
        assert!(ws.join("notes.toml").exists() && ws.join(".git/config").exists());
    }
}
