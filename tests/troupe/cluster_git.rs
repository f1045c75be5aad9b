//! Workspaces carried as a git remote and commit (`[cluster] workspace = "git"`): a bare
//! repository in a temp dir as the remote, the requester's repository cloned from it, a
//! real nats-server and `troupe worker` processes whose homes and working directories are
//! elsewhere, the mock model over loopback HTTP.

use crate::cluster_support::{wait_limited, Pool};
use crate::subagents_support::{call, root_tool_outputs, wait_call};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use troupe_mock_model::MockResponse;
use troupe_test_support::{stderr, stdout, tool_outputs};

/// What the base commit's file holds: the worker printing it proves it saw the commit.
const BASE_CONTENT: &str = "base-content-7731";
/// What the remote thread writes.
const WRITE: &str = "cat base.txt; test -e dirty.txt || echo no-dirty-here; echo x > new.txt";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A bare remote and the requester's clone of it with one commit (`base.txt`), plus an
/// uncommitted file (`dirty.txt`) that must not reach the worker.
struct Repos {
    _dir: tempfile::TempDir,
    remote: PathBuf,
    parent: PathBuf,
    base: String,
}

fn repos() -> Repos {
    let dir = tempfile::tempdir().unwrap();
    let remote = dir.path().join("remote.git");
    std::fs::create_dir_all(&remote).unwrap();
    git(&remote, &["init", "-q", "--bare"]);
    git(
        dir.path(),
        &["clone", "-q", remote.to_str().unwrap(), "parent"],
    );
    let parent = dir.path().join("parent");
    std::fs::write(parent.join("base.txt"), format!("{BASE_CONTENT}\n")).unwrap();
    git(&parent, &["add", "."]);
    git(&parent, &["commit", "-qm", "base"]);
    git(&parent, &["push", "-q", "origin", "HEAD"]);
    std::fs::write(parent.join("dirty.txt"), "not committed\n").unwrap();
    let base = git(&parent, &["rev-parse", "HEAD"]);
    Repos {
        _dir: dir,
        remote,
        parent,
        base,
    }
}

/// The `troupe/…` branch named in `text` (stderr or a tool output).
fn branch_named(text: &str, prefix: &str) -> String {
    let start = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no branch `{prefix}…` in {text}"));
    text[start..].split('`').next().unwrap().trim().to_string()
}

/// The branch came back on top of the base commit with the worker's file, merges, and the
/// requester's working tree was never touched by the worker.
fn assert_branch_came_back(repos: &Repos, branch: &str) {
    assert_eq!(
        git(&repos.parent, &["rev-parse", &format!("{branch}~1")]),
        repos.base
    );
    assert_eq!(
        git(&repos.parent, &["show", &format!("{branch}:new.txt")]),
        "x"
    );
    // The work is on the remote too, and the base ref is gone from it.
    git(
        &repos.remote,
        &["rev-parse", "--verify", &format!("refs/heads/{branch}")],
    );
    assert_eq!(
        git(&repos.remote, &["for-each-ref", "refs/troupe/"]),
        "",
        "base refs left on the remote"
    );
}

fn worker_left_no_worktree(pool: &Pool) {
    let home = pool.workers[0].home.path();
    let left: Vec<_> = std::fs::read_dir(home.join("worktrees"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "worktrees left on the worker: {left:?}");
    // The cache stays for the next thread of the same remote.
    assert_eq!(
        std::fs::read_dir(home.join("git-cache")).unwrap().count(),
        1
    );
}

fn run_in(mut cmd: Command, dir: &Path) -> Output {
    let child = cmd
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_limited(child, Duration::from_secs(120))
}

#[test]
fn exec_remote_runs_on_the_commit_and_brings_the_branch_back() {
    let repos = repos();
    let mut pool = Pool::new(
        vec![
            MockResponse::shell("c1", &["sh", "-c", WRITE]),
            MockResponse::text("wrote new.txt"),
        ],
        "workspace = \"git\"",
    );
    pool.start_worker(1);
    let out = run_in(pool.remote_command(&["write it"]), &repos.parent);
    let err = stderr(&out);
    assert!(
        out.status.success(),
        "remote: {err}\nworker: {}",
        pool.workers[0].log()
    );
    assert!(stdout(&out).contains("wrote new.txt"), "{}", stdout(&out));
    // The uncommitted file was named as left behind, and the worker indeed lacked it.
    assert!(err.contains("1 uncommitted change(s)"), "{err}");
    let requests = pool.h.mock.requests();
    let outputs = tool_outputs(&requests.last().unwrap().body).join("\n");
    assert!(outputs.contains(BASE_CONTENT), "{outputs}");
    assert!(outputs.contains("no-dirty-here"), "{outputs}");

    // stderr names the branch and its diffstat, as `exec --worktree` names its worktree.
    let branch = branch_named(&err, "troupe/");
    assert!(err.contains("new.txt | 1 +"), "{err}");
    assert!(err.contains(&format!("git merge {branch}")), "{err}");
    assert_branch_came_back(&repos, &branch);
    // Untouched: no new file, the dirty one as it was, HEAD where it was.
    assert!(!repos.parent.join("new.txt").exists());
    assert_eq!(
        std::fs::read_to_string(repos.parent.join("dirty.txt")).unwrap(),
        "not committed\n"
    );
    assert_eq!(git(&repos.parent, &["rev-parse", "HEAD"]), repos.base);
    git(&repos.parent, &["merge", "--no-edit", &branch]);
    assert_eq!(
        std::fs::read_to_string(repos.parent.join("new.txt")).unwrap(),
        "x\n"
    );
    worker_left_no_worktree(&pool);
}

#[test]
fn remote_sub_agent_answers_with_a_branch_the_parent_merges() {
    let repos = repos();
    let spawn = call(
        "s1",
        "spawn_agent",
        json!({
            "task_name": "writer",
            "message": "gitws-writer-marker: write new.txt",
            "fork_turns": "none",
            "placement": "remote",
        }),
    );
    let merge =
        "git merge --no-edit $(git branch --list 'troupe/writer-*' --format='%(refname:short)')";
    let mut pool = Pool::new(
        vec![
            MockResponse::tool_calls(vec![spawn]),
            wait_call("w1"),
            MockResponse::shell("m1", &["sh", "-c", merge]),
            MockResponse::text("merged the writer"),
        ],
        "workspace = \"git\"",
    );
    pool.h.mock.route(
        "gitws-writer-marker",
        vec![
            MockResponse::shell("c1", &["sh", "-c", WRITE]),
            MockResponse::text("wrote new.txt"),
        ],
    );
    pool.start_worker(1);
    let mut root = pool.h.command();
    root.args([
        "exec",
        "--skip-git-repo-check",
        "-s",
        "danger-full-access",
        "go",
    ]);
    let out = run_in(root, &repos.parent);
    assert!(
        out.status.success(),
        "root: {}\nworker: {}",
        stderr(&out),
        pool.workers[0].log()
    );
    assert_eq!(stdout(&out).trim(), "merged the writer");

    let outputs = root_tool_outputs(&pool.h);
    // The spawn said what was left behind; the answer named the fetched branch.
    assert!(
        outputs.contains("\"warning\"") && outputs.contains("1 uncommitted change(s)"),
        "{outputs}"
    );
    assert!(outputs.contains("wrote new.txt"), "{outputs}");
    assert!(outputs.contains("new.txt | 1 +"), "{outputs}");
    let branch = branch_named(&outputs, "troupe/writer-");
    // The child ran on the commit, without the uncommitted file.
    let all: String = pool
        .h
        .mock
        .requests()
        .iter()
        .flat_map(|r| tool_outputs(&r.body))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(all.contains(BASE_CONTENT), "{all}");
    assert!(all.contains("no-dirty-here"), "{all}");
    assert_branch_came_back(&repos, &branch);
    // The parent's model merged it with its shell tool, as with a local worktree child.
    assert_eq!(
        std::fs::read_to_string(repos.parent.join("new.txt")).unwrap(),
        "x\n"
    );
    assert_eq!(
        git(&repos.parent, &["rev-parse", "HEAD"]),
        git(&repos.parent, &["rev-parse", &branch])
    );
    worker_left_no_worktree(&pool);
}

#[test]
fn outside_a_repository_is_a_clear_error() {
    let pool = Pool::new(vec![], "workspace = \"git\"");
    // The harness's work dir is no repository.
    let out = pool.exec_remote(&["write it"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("workspace = \"git\" needs a Git repository")
            && err.contains(pool.h.workdir.path().to_str().unwrap()),
        "{err}"
    );
    assert!(pool.h.mock.requests().is_empty());
}

#[test]
fn remote_sub_agent_outside_a_repository_is_a_tool_error() {
    let spawn = call(
        "s1",
        "spawn_agent",
        json!({
            "task_name": "lost",
            "message": "gitws-lost-marker",
            "fork_turns": "none",
            "placement": "remote",
        }),
    );
    let pool = Pool::new(
        vec![
            MockResponse::tool_calls(vec![spawn]),
            MockResponse::text("went on"),
        ],
        "workspace = \"git\"",
    );
    let out = pool.h.exec(&["go"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let outputs = root_tool_outputs(&pool.h);
    assert!(
        outputs.contains("cannot send `/root/lost` its workspace")
            && outputs.contains("needs a Git repository"),
        "{outputs}"
    );
}

#[test]
fn unreachable_remote_is_a_clear_error_naming_it() {
    let repos = repos();
    std::fs::remove_dir_all(&repos.remote).unwrap();
    let pool = Pool::new(vec![], "workspace = \"git\"");
    let out = run_in(pool.remote_command(&["write it"]), &repos.parent);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("cannot push the base commit to git_remote `origin`")
            && err.contains(repos.remote.to_str().unwrap()),
        "{err}"
    );
    assert!(pool.h.mock.requests().is_empty());
}

#[test]
fn a_killed_worker_s_git_thread_is_checked_out_again_and_its_branch_comes_back() {
    let repos = repos();
    let mut pool = Pool::new(
        vec![
            // In flight when its worker is killed.
            MockResponse::shell("c1", &["sh", "-c", "sleep 3; echo too-late"]),
            MockResponse::shell("c2", &["sh", "-c", WRITE]),
            MockResponse::text("finished elsewhere"),
        ],
        "workspace = \"git\"\nlease_timeout_ms = 1000",
    );
    pool.start_worker(1);
    pool.start_worker(1);
    let child = pool
        .remote_command(&["start the long job"])
        .current_dir(&repos.parent)
        .spawn()
        .unwrap();
    // The first call is running on whichever worker took the thread.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while pool.h.mock.requests().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the model was never asked"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(700));
    let victim = pool
        .workers
        .iter()
        .position(|w| !w.rollouts().is_empty())
        .expect("a worker runs the thread");
    pool.workers[victim].child.kill().unwrap();
    let out = wait_limited(child, Duration::from_secs(90));
    let err = stderr(&out);
    let survivor = 1 - victim;
    assert!(
        out.status.success(),
        "{err}\nsurvivor: {}",
        pool.workers[survivor].log()
    );
    assert!(
        pool.workers[survivor].log().contains("took over thread"),
        "{}",
        pool.workers[survivor].log()
    );
    // The survivor worked on the base commit in a worktree of its own.
    let requests = pool.h.mock.requests();
    let outputs = tool_outputs(&requests.last().unwrap().body).join("\n");
    assert!(outputs.contains(BASE_CONTENT), "{outputs}");
    let branch = branch_named(&err, "troupe/");
    assert_branch_came_back(&repos, &branch);
    let survivor_worktrees = pool.workers[survivor].home.path().join("worktrees");
    assert_eq!(std::fs::read_dir(survivor_worktrees).unwrap().count(), 0);
}
