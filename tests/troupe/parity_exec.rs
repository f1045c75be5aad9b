//! `exec` flags that scripts written for `codex exec` use (issue 19), through the real binary
//! against the mock model: each flag's effect on the request or on disk, and each bad
//! argument's error before any request.

use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Output};
use troupe_mock_model::MockResponse;
use troupe_test_support::{json_lines, stderr, stdout, tool_outputs, Harness};

fn assert_fails_with(out: &Output, expected: &str) {
    assert!(!out.status.success(), "succeeded: {}", stderr(out));
    let err = stderr(out);
    assert!(err.contains(expected), "expected `{expected}` in: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Regular files under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap().flatten() {
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// Runs `exec --json first` and returns the new thread's id.
fn first_thread_id(h: &Harness) -> String {
    let first = h.exec(&["--json", "first"]);
    assert!(first.status.success(), "{}", stderr(&first));
    json_lines(&first)[0]["thread_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn last_user_text(body: &Value) -> String {
    let input = body["input"].as_array().unwrap();
    let last = input.iter().rev().find(|i| i["role"] == "user").unwrap();
    last["content"][0]["text"].as_str().unwrap().to_string()
}

#[test]
fn ephemeral_leaves_no_file_under_troupe_home() {
    let h = Harness::new(vec![MockResponse::text("done")]);
    let out = h.exec(&["--ephemeral", "hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "done");
    assert_eq!(files_under(h.home.path()), vec!["config.toml".to_string()]);
    // Without the flag the same run leaves its rollout, index and history.
    let h = Harness::new(vec![MockResponse::text("done")]);
    assert!(h.exec(&["hi"]).status.success());
    assert_eq!(h.rollouts().len(), 1);
    assert!(h.home.path().join("history.jsonl").exists());
}

#[test]
fn ephemeral_cannot_resume() {
    let h = Harness::new(vec![]);
    assert_fails_with(
        &h.exec(&["--ephemeral", "resume", "--last", "again"]),
        "--ephemeral cannot resume a thread",
    );
}

fn write_schema(h: &Harness, schema: &Value) -> String {
    let path = h.workdir.path().join("schema.json");
    std::fs::write(&path, schema.to_string()).unwrap();
    path.display().to_string()
}

fn answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": {"type": "integer"}},
        "required": ["answer"],
        "additionalProperties": false
    })
}

#[test]
fn output_schema_goes_as_codex_text_format_and_a_conforming_answer_passes() {
    let h = Harness::new(vec![MockResponse::text(r#"{"answer": 4}"#)]);
    let schema = write_schema(&h, &answer_schema());
    let out = h.exec(&["--output-schema", &schema, "2+2?"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), r#"{"answer": 4}"#);
    let body = &h.mock.requests()[0].body;
    assert_eq!(
        body["text"]["format"],
        json!({"type": "json_schema", "strict": true, "schema": answer_schema(), "name": "codex_output_schema"})
    );
}

#[test]
fn output_schema_rejects_a_non_conforming_answer() {
    for answer in [r#"{"answer": "four"}"#, "four"] {
        let h = Harness::new(vec![MockResponse::text(answer)]);
        let schema = write_schema(&h, &answer_schema());
        let out = h.exec(&["--output-schema", &schema, "2+2?"]);
        assert_fails_with(&out, "--output-schema: the final message");
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    }
}

#[test]
fn an_invalid_or_missing_output_schema_is_refused_before_any_request() {
    let h = Harness::new(vec![MockResponse::text("x")]);
    let bad = write_schema(&h, &json!({"type": 5}));
    assert_fails_with(
        &h.exec(&["--output-schema", &bad, "hi"]),
        "not a valid JSON Schema",
    );
    let not_json = h.workdir.path().join("prose.json");
    std::fs::write(&not_json, "not json").unwrap();
    assert_fails_with(
        &h.exec(&["--output-schema", not_json.to_str().unwrap(), "hi"]),
        "not valid JSON",
    );
    assert_fails_with(
        &h.exec(&["--output-schema", "/no/such/schema.json", "hi"]),
        "--output-schema /no/such/schema.json: cannot read it",
    );
    assert_eq!(h.mock.request_count(), 0);
}

#[test]
fn add_dir_of_a_file_or_a_missing_dir_is_an_error() {
    let h = Harness::new(vec![MockResponse::text("x")]);
    let file = h.workdir.path().join("f.txt");
    std::fs::write(&file, "x").unwrap();
    assert_fails_with(
        &h.exec(&["--add-dir", file.to_str().unwrap(), "hi"]),
        "not a directory",
    );
    assert_fails_with(
        &h.exec(&["--add-dir", "/no/such/dir", "hi"]),
        "--add-dir /no/such/dir: not a usable directory",
    );
    assert_eq!(h.mock.request_count(), 0);
}

/// `exec -s workspace-write` with the temp dirs read-only, so only the workdir and
/// `--add-dir` roots are writable.
fn workspace_write(h: &Harness, extra: &[&str]) -> Output {
    h.command()
        .args([
            "exec",
            "--skip-git-repo-check",
            "-s",
            "workspace-write",
            "-a",
            "never",
            "-c",
            "sandbox_workspace_write.exclude_slash_tmp=true",
            "-c",
            "sandbox_workspace_write.exclude_tmpdir_env_var=true",
        ])
        .args(extra)
        .arg("write there")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn add_dir_makes_another_directory_writable_in_workspace_write() {
    let extra = tempfile::tempdir().unwrap();
    let target = extra.path().join("written");
    let script = format!("echo hi > {}", target.display());
    let call = || MockResponse::shell("c1", &["bash", "-c", &script]);
    let h = Harness::new(vec![call(), MockResponse::text("done")]);
    let out = workspace_write(&h, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !target.exists(),
        "wrote outside the workspace without --add-dir"
    );
    let h = Harness::new(vec![call(), MockResponse::text("done")]);
    let out = workspace_write(&h, &["--add-dir", extra.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi\n");
}

#[test]
fn piped_stdin_beside_a_prompt_is_appended_as_a_stdin_block() {
    let h = Harness::new(vec![MockResponse::text("ok")]);
    let out = h.exec_with_stdin(&["review this"], Some("line 1\nline 2"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        last_user_text(&h.mock.requests()[0].body),
        "review this\n\n<stdin>\nline 1\nline 2\n</stdin>"
    );
}

#[test]
fn options_after_resume_apply_to_the_resumed_run() {
    let h = Harness::new(vec![MockResponse::text("one"), MockResponse::text("two")]);
    let id = first_thread_id(&h);
    let out = h
        .command()
        .args(["exec", "resume", &id, "--json", "-m", "other-model"])
        .args([
            "--skip-git-repo-check",
            "-c",
            "model_verbosity=low",
            "again",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines[0]["type"], "thread.started");
    assert_eq!(lines[0]["thread_id"], id.as_str());
    let body = &h.mock.requests()[1].body;
    assert_eq!(body["model"], "other-model");
    assert_eq!(body["text"]["verbosity"], "low");
}

#[test]
fn color_always_styles_stderr_and_never_does_not() {
    let h = Harness::new(vec![MockResponse::text("a"), MockResponse::text("b")]);
    let out = h.exec(&["--color", "always", "hi"]);
    assert!(
        stderr(&out).contains("\u{1b}[1muser\u{1b}[0m"),
        "{}",
        stderr(&out)
    );
    let out = h.exec(&["--color", "never", "hi"]);
    assert!(!stderr(&out).contains('\u{1b}'), "{}", stderr(&out));
    assert_fails_with(&h.exec(&["--color", "sometimes", "hi"]), "--color");
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(status.status.success(), "git {args:?}: {status:?}");
}

/// A repository in `dir` with one committed file, `a.txt`.
fn commit_one_file(dir: &Path) {
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.txt"), "a").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "one"]);
}

/// The `worktree: ROOT (branch B)` line exec printed on stderr, and ROOT.
fn worktree_line(out: &Output) -> (String, String) {
    let err = stderr(out);
    let line = err
        .lines()
        .find(|l| l.starts_with("worktree: "))
        .unwrap()
        .to_string();
    let root = line["worktree: ".len()..]
        .split(" (branch ")
        .next()
        .unwrap()
        .to_string();
    (line, root)
}

#[test]
fn worktree_runs_in_a_new_worktree_on_its_own_branch() {
    let h = Harness::new(vec![MockResponse::text("done")]);
    let repo = h.workdir.path();
    commit_one_file(repo);
    let out = h.exec(&["--worktree", "hi"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (line, root) = worktree_line(&out);
    let root = root.as_str();
    assert!(Path::new(root).join("a.txt").exists(), "{line}");
    assert!(root.starts_with(h.home.path().to_str().unwrap()), "{line}");
    let env = h.mock.requests()[0].body["input"].to_string();
    assert!(
        env.contains(root),
        "the model was not told the worktree: {env}"
    );
    let branches = Command::new("git")
        .args(["branch", "--list", "troupe/*"])
        .current_dir(repo)
        .output()
        .unwrap();
    assert!(!stdout(&branches).trim().is_empty());
}

#[test]
fn worktree_outside_git_or_without_a_commit_is_an_error() {
    let h = Harness::new(vec![MockResponse::text("done")]);
    assert_fails_with(
        &h.exec(&["--worktree", "hi"]),
        "is not inside a Git repository",
    );
    git(h.workdir.path(), &["init", "-q"]);
    assert_fails_with(&h.exec(&["--worktree", "hi"]), "has no commit to check out");
    assert_eq!(h.mock.request_count(), 0);
}

#[test]
fn json_announces_a_file_change_with_item_started() {
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch";
    let args = json!({ "input": patch }).to_string();
    let h = Harness::new(vec![
        MockResponse::tool_calls(vec![("p1", "apply_patch", args)]),
        MockResponse::text("patched"),
    ]);
    let out = h.exec(&["--json", "-c", "apply_patch_tool_type=\"function\"", "add"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let kinds: Vec<(String, String)> = json_lines(&out)
        .iter()
        .filter(|l| l["item"]["type"] == "file_change")
        .map(|l| {
            (
                l["type"].as_str().unwrap().to_string(),
                l["item"]["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("item.started".into(), "in_progress".into()),
            ("item.completed".into(), "completed".into())
        ]
    );
    assert_eq!(tool_outputs(&h.mock.requests()[1].body).len(), 1);
}

#[test]
fn image_is_attached_as_an_input_image_part() {
    let h = Harness::new(vec![MockResponse::text("a cat")]);
    let png = h.workdir.path().join("shot.bin");
    std::fs::write(&png, b"\x89PNG\r\n\x1a\nabc").unwrap();
    let out = h.exec(&["what is this?", "-i", png.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let input = h.mock.requests()[0].body["input"].clone();
    let last = input.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    // Codex 0.169's framing, observed against a mock.
    assert_eq!(
        last["content"],
        json!([
            {"type": "input_text", "text": format!("<image name=[Image #1] path=\"{}\">", png.display())},
            {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgphYmM=", "detail": "original"},
            {"type": "input_text", "text": "</image>"},
            {"type": "input_text", "text": "what is this?"}
        ])
    );
}

#[test]
fn a_missing_or_non_image_file_is_refused_before_any_request() {
    let h = Harness::new(vec![MockResponse::text("x")]);
    let text = h.workdir.path().join("notes.png");
    std::fs::write(&text, "just text").unwrap();
    assert_fails_with(
        &h.exec(&["hi", "-i", text.to_str().unwrap()]),
        "notes.png: not a PNG, JPEG, GIF or WebP image",
    );
    assert_fails_with(
        &h.exec(&["hi", "--image", "/no/such.png"]),
        "--image /no/such.png: cannot read it",
    );
    let big = h.workdir.path().join("big.png");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(11 * 1024 * 1024)
        .unwrap();
    assert_fails_with(
        &h.exec(&["hi", "-i", big.to_str().unwrap()]),
        "the limit is",
    );
    assert_eq!(h.mock.request_count(), 0);
}

#[test]
fn exec_fork_runs_a_turn_on_a_copy_and_leaves_the_source_alone() {
    let h = Harness::new(vec![
        MockResponse::text("one"),
        MockResponse::text("two"),
        MockResponse::text("three"),
    ]);
    let id = first_thread_id(&h);
    let source = h.rollouts();
    assert_eq!(source.len(), 1);
    let source_bytes = std::fs::read(&source[0]).unwrap();
    let out = h
        .command()
        .args(["exec", "fork", &id, "--json", "-m", "other-model"])
        .args(["--skip-git-repo-check", "again"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines[0]["type"], "thread.started");
    let fork_id = lines[0]["thread_id"].as_str().unwrap();
    assert_ne!(fork_id, id.as_str(), "the fork is a new thread");
    assert_eq!(stdout(&out).lines().count(), lines.len());
    // The fork's request carries the source's turn, then the new prompt.
    let body = &h.mock.requests()[1].body;
    assert_eq!(body["model"], "other-model");
    let texts: Vec<String> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|item| item["content"][0]["text"].as_str().map(str::to_string))
        .collect();
    assert!(texts.iter().any(|t| t == "first"), "{texts:?}");
    assert!(texts.iter().any(|t| t == "one"), "{texts:?}");
    assert_eq!(last_user_text(body), "again");
    assert_eq!(h.rollouts().len(), 2);
    assert_eq!(std::fs::read(&source[0]).unwrap(), source_bytes);

    assert_fails_with(&h.exec(&["fork", "no-such-thread", "x"]), "no-such-thread");
    // An ephemeral fork runs and leaves nothing behind; the source is still untouched.
    let mut before = files_under(h.home.path());
    before.retain(|f| !f.contains(".lock"));
    let out = h.exec(&["--ephemeral", "fork", &id, "once more"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut after = files_under(h.home.path());
    after.retain(|f| !f.contains(".lock"));
    assert_eq!(after, before);
    assert_eq!(std::fs::read(&source[0]).unwrap(), source_bytes);
}

#[test]
fn exec_fork_with_worktree_runs_the_fork_in_a_new_worktree() {
    let h = Harness::new(vec![MockResponse::text("one"), MockResponse::text("two")]);
    let repo = h.workdir.path();
    commit_one_file(repo);
    let id = first_thread_id(&h);
    let out = h.exec(&["fork", &id, "--worktree", "again"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (line, root) = worktree_line(&out);
    let root = root.as_str();
    assert!(Path::new(root).join("a.txt").exists(), "{line}");
    let env = h.mock.requests()[1].body["input"].to_string();
    assert!(
        env.contains(root),
        "the fork was not told its worktree: {env}"
    );
    // `resume` keeps refusing it: the thread is not new.
    assert_fails_with(
        &h.exec(&["resume", &id, "--worktree", "x"]),
        "cannot be combined with `resume`",
    );
}
