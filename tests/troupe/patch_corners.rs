//! apply_patch's corner cases through the real binary, in every sandbox mode and through the
//! `apply_patch` command: files that are not UTF-8 can be deleted, classic Mac (`\r`) files
//! are matched and keep their endings, `.`/`..` are applied to the text inside the working
//! directory, `newdir/` names a file, and a path that climbs out of the working directory is
//! refused up front with nothing changed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::path::{Path, PathBuf};
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, tool_outputs, troupe_exe, Harness};

const ESCAPES: &str = "path escapes the working directory";
const MODES: &[&str] = &["read-only", "workspace-write", "danger-full-access"];

/// A mock that sends `patches` as one batch of `apply_patch` calls, and a workspace `ws`
/// inside the harness's workdir (so what climbs out of it lands where the test looks).
fn harness(patches: &[&str]) -> (Harness, PathBuf) {
    let calls = patches
        .iter()
        .enumerate()
        .map(|(i, patch)| {
            (
                format!("p{i}"),
                "apply_patch".to_string(),
                json!({ "input": patch }).to_string(),
            )
        })
        .collect();
    let h = Harness::new(vec![
        MockResponse::tool_calls(calls),
        MockResponse::text("done"),
    ]);
    let ws = h.workdir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    (h, ws)
}

/// Runs the exec in `ws` under `mode` and returns the patches' tool outputs, in order.
fn exec_in(h: &Harness, ws: &Path, mode: &str) -> Vec<String> {
    let out = h
        .command()
        .current_dir(ws)
        .args(["exec", "--skip-git-repo-check", "-s", mode, "-a", "never"])
        .args(["-c", "apply_patch_tool_type=\"function\"", "go"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = h.mock.requests();
    tool_outputs(&requests.last().expect("a request").body)
}

/// Every entry under `dir`, sorted, with file bytes (directories as `None`).
fn tree(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            if path.is_dir() {
                stack.push(path);
                out.push((rel, None));
            } else {
                out.push((rel, Some(std::fs::read(&path).unwrap())));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn corner_cases_apply_as_codex_does_in_the_writable_modes() {
    for mode in ["workspace-write", "danger-full-access"] {
        let (h, ws) = harness(&[
            "*** Begin Patch\n*** Delete File: latin1.txt\n*** Delete File: blob.bin\n*** End Patch",
            "*** Begin Patch\n*** Update File: mac.txt\n@@\n a\n-b\n+B\n*** End Patch",
            "*** Begin Patch\n*** Add File: d/./x/../y.txt\n+y\n*** End Patch",
            "*** Begin Patch\n*** Add File: newdir/\n+n\n*** End Patch",
        ]);
        std::fs::write(ws.join("latin1.txt"), b"caf\xe9\n").unwrap();
        std::fs::write(ws.join("blob.bin"), [0u8, 0xff, 0xfe, 0x80]).unwrap();
        std::fs::write(ws.join("mac.txt"), b"a\rb\rc\r").unwrap();
        let outputs = exec_in(&h, &ws, mode);
        for output in &outputs {
            assert!(output.starts_with("Success"), "{mode}: {outputs:?}");
        }
        assert!(!ws.join("latin1.txt").exists(), "{mode}");
        assert!(!ws.join("blob.bin").exists(), "{mode}");
        assert_eq!(std::fs::read(ws.join("mac.txt")).unwrap(), b"a\rB\rc\r");
        assert_eq!(std::fs::read(ws.join("d/y.txt")).unwrap(), b"y\n");
        assert!(
            !ws.join("d/x").exists(),
            "{mode}: made the `x` that `..` left"
        );
        assert_eq!(std::fs::read(ws.join("newdir")).unwrap(), b"n\n");
        // Nothing but what the patches named is left behind (no backup, no temp file).
        let names: Vec<_> = tree(&ws).into_iter().map(|(path, _)| path).collect();
        let expected: Vec<PathBuf> = ["d", "d/y.txt", "mac.txt", "newdir"]
            .iter()
            .map(PathBuf::from)
            .collect();
        assert_eq!(names, expected, "{mode}");
    }
}

#[test]
fn a_path_climbing_out_is_refused_up_front_in_every_sandbox_mode() {
    for mode in MODES {
        let (h, ws) = harness(&[
            "*** Begin Patch\n*** Add File: ok.txt\n+fine\n*** Add File: sub/../../x\n+pwned\n\
             *** End Patch",
            "*** Begin Patch\n*** Update File: keep.txt\n*** Move to: ../moved.txt\n@@\n-k\n+K\n\
             *** End Patch",
            "*** Begin Patch\n*** Delete File: ../sibling.txt\n*** End Patch",
        ]);
        std::fs::write(ws.join("keep.txt"), "k\n").unwrap();
        let sibling = h.workdir.path().join("sibling.txt");
        std::fs::write(&sibling, "s\n").unwrap();
        let before = tree(h.workdir.path());
        let outputs = exec_in(&h, &ws, mode);
        assert_eq!(outputs.len(), 3, "{mode}: {outputs:?}");
        for output in &outputs {
            assert!(output.contains(ESCAPES), "{mode}: {outputs:?}");
            assert!(output.contains("no file was changed"), "{mode}: {output}");
        }
        assert!(outputs[0].contains("sub/../../x"), "{mode}: names the path");
        assert_eq!(tree(h.workdir.path()), before, "{mode}: something changed");
    }
}

#[test]
fn the_apply_patch_command_refuses_a_climb_and_applies_the_corners() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("apply_patch");
    std::os::unix::fs::symlink(troupe_exe(), &link).unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("latin1.txt"), b"caf\xe9\n").unwrap();
    let run = |patch: &str| {
        std::process::Command::new(&link)
            .arg(patch)
            .current_dir(&ws)
            .output()
            .unwrap()
    };
    let out = run(
        "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Add File: sub/../../x\n+x\n\
                   *** End Patch",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(ESCAPES), "{}", stderr(&out));
    assert!(!dir.path().join("x").exists());
    assert!(!ws.join("a.txt").exists());
    let out = run("*** Begin Patch\n*** Delete File: latin1.txt\n*** End Patch");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!ws.join("latin1.txt").exists());
}
