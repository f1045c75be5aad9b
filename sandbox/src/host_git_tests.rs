use super::*;
use std::path::{Path, PathBuf};

fn entry(scope: &str, key: &str, value: &str) -> ConfigEntry {
    ConfigEntry {
        scope: scope.into(),
        key: key.into(),
        value: Some(value.into()),
    }
}

/// Plain git (not the runner), for setting a repository up.
fn plain_git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

/// A repository with one commit; every program its config names touches a file in
/// `proofs` (outside the repository) named after the key.
fn planted_repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let proofs = tmp.path().join("proofs");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&proofs).unwrap();
    plain_git(&repo, &["init", "-q"]);
    plain_git(&repo, &["config", "user.name", "t"]);
    plain_git(&repo, &["config", "user.email", "t@t"]);
    std::fs::write(repo.join("f.txt"), "one\n").unwrap();
    plain_git(&repo, &["add", "-A"]);
    plain_git(&repo, &["commit", "-qm", "base"]);
    let touch = |name: &str| format!("touch {}/{name}; cat", proofs.display());
    let hooks = tmp.path().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in [
        "pre-commit",
        "post-commit",
        "reference-transaction",
        "post-index-change",
    ] {
        let path = hooks.join(hook);
        std::fs::write(&path, format!("#!/bin/sh\n{}\n", touch(hook))).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let planted: Vec<(String, String)> = vec![
        ("core.fsmonitor".into(), touch("fsmonitor")),
        ("core.hooksPath".into(), hooks.display().to_string()),
        ("core.pager".into(), touch("pager")),
        ("filter.evil.clean".into(), touch("clean")),
        ("filter.evil.smudge".into(), touch("smudge")),
        ("filter.evil.required".into(), "true".into()),
        ("filter.proc.process".into(), touch("process")),
        ("diff.evil.textconv".into(), touch("textconv")),
        ("diff.evil.command".into(), touch("diffcommand")),
        ("diff.external".into(), touch("external")),
        ("commit.gpgSign".into(), "true".into()),
        ("gpg.program".into(), touch("gpg")),
        // A subsection holding `=` and `.`: still overridden as a whole.
        ("filter.a=b.c.clean".into(), touch("oddclean")),
    ];
    for (key, value) in &planted {
        plain_git(&repo, &["config", key, value]);
    }
    std::fs::write(
        repo.join(".gitattributes"),
        "*.txt filter=evil diff=evil\n*.p filter=proc\n*.odd filter=a=b.c\n",
    )
    .unwrap();
    (tmp, repo, proofs)
}

fn proofs_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn planted_config_runs_with_plain_git() {
    // The attack is real: plain git runs what the config names.
    let (_tmp, repo, proofs) = planted_repo();
    std::fs::write(repo.join("g.txt"), "two\n").unwrap();
    plain_git(&repo, &["add", "-A"]);
    plain_git(&repo, &["commit", "--no-gpg-sign", "-qm", "x"]);
    let ran = proofs_in(&proofs);
    for expected in ["clean", "fsmonitor", "pre-commit"] {
        assert!(ran.contains(&expected.to_string()), "{ran:?}");
    }
}

#[test]
fn the_runner_runs_nothing_the_repository_config_names() {
    let (_tmp, repo, proofs) = planted_repo();
    std::fs::write(repo.join("g.txt"), "two\n").unwrap();
    std::fs::write(repo.join("h.p"), "three\n").unwrap();
    std::fs::write(repo.join("i.odd"), "four\n").unwrap();
    run(&repo, &["status", "--porcelain"]).unwrap();
    run(&repo, &["add", "-A"]).unwrap();
    run(&repo, &["diff", "--cached", "--stat"]).unwrap();
    run(&repo, &["diff", "--cached"]).unwrap();
    run(&repo, &["commit", "--quiet", "-m", "work"]).unwrap();
    run(&repo, &["log", "-p", "-1"]).unwrap();
    run(&repo, &["show", "HEAD"]).unwrap();
    // Checkout runs smudge filters.
    std::fs::remove_file(repo.join("g.txt")).unwrap();
    run(&repo, &["checkout", "--", "."]).unwrap();
    let worktree = repo.parent().unwrap().join("wt");
    run(
        &repo,
        &[
            "worktree",
            "add",
            "--quiet",
            "-b",
            "side",
            worktree.to_str().unwrap(),
        ],
    )
    .unwrap();
    assert_eq!(proofs_in(&proofs), Vec::<String>::new());
    // The files went in unfiltered.
    let blob = run(&repo, &["show", "HEAD:g.txt"]).unwrap();
    assert_eq!(blob, "two\n");
}

#[test]
fn a_repository_that_moves_its_work_tree_is_refused() {
    let (_tmp, repo, _proofs) = planted_repo();
    plain_git(&repo, &["config", "core.worktree", "/"]);
    let err = run(&repo, &["add", "-A"]).unwrap_err();
    assert!(matches!(err, HostGitError::Refused { ref key, .. } if key == "core.worktree"));
}

#[test]
fn ext_transport_and_remote_helpers_are_refused() {
    let (tmp, repo, proofs) = planted_repo();
    let cmd = format!("ext::sh -c touch% {}/ext", proofs.display());
    plain_git(&repo, &["config", "protocol.ext.allow", "always"]);
    plain_git(&repo, &["config", "protocol.evil.allow", "always"]);
    assert!(run(&repo, &["fetch", "--quiet", &cmd, "HEAD"]).is_err());
    let helper = format!("!touch {}/cred; false", proofs.display());
    plain_git(&repo, &["config", "credential.helper", &helper]);
    let fill = command(&repo, &["credential", "fill"])
        .unwrap()
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    fill.stdin
        .as_ref()
        .unwrap()
        .write_all(b"protocol=https\nhost=example.invalid\n\n")
        .unwrap();
    fill.wait_with_output().unwrap();
    let upload = format!("touch {}/uploadpack; false", proofs.display());
    plain_git(
        &repo,
        &["remote", "add", "here", tmp.path().to_str().unwrap()],
    );
    plain_git(&repo, &["config", "remote.here.uploadpack", &upload]);
    let err = run(&repo, &["fetch", "--quiet", "here"]).unwrap_err();
    assert!(
        matches!(err, HostGitError::Refused { ref key, .. } if key == "remote.here.uploadpack")
    );
    assert_eq!(proofs_in(&proofs), Vec::<String>::new());
}

#[test]
fn repository_keys_fall_back_to_the_users_value_or_a_neutral_one() {
    let entries = vec![
        entry("global", "credential.helper", "store"),
        entry("local", "credential.helper", "!evil"),
        entry("global", "core.sshcommand", "ssh -i key"),
        entry("local", "core.sshcommand", "evil"),
        entry("local", "filter.lfs.clean", "evil"),
        entry("system", "filter.lfs.clean", "git-lfs clean -- %f"),
        entry("local", "filter.x.smudge", "evil"),
        entry("local", "protocol.ext.allow", "always"),
        entry("local", "protocol.https.allow", "never"),
        entry("worktree", "diff.x.textconv", "evil"),
        entry("local", "user.name", "anyone"),
        entry("global", "filter.mine.clean", "mine"),
    ];
    let got = overrides(&entries).unwrap();
    let want: Vec<(String, String)> = [
        ("credential.helper", ""),
        ("credential.helper", "store"),
        ("core.sshcommand", "ssh -i key"),
        ("filter.lfs.clean", "git-lfs clean -- %f"),
        ("filter.x.smudge", ""),
        ("protocol.ext.allow", "never"),
        ("diff.x.textconv", ""),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn config_list_parses_values_with_newlines_and_bare_keys() {
    let raw =
        b"global\0user.name\nMe\0local\0core.bare\nfalse\0local\0x.y\0local\0a.b\nline1\nline2\0";
    let got = parse_config_list(raw);
    assert_eq!(got.len(), 4);
    assert_eq!(got[2].value, None);
    assert_eq!(got[3].value.as_deref(), Some("line1\nline2"));
}

#[test]
fn diffing_subcommands_get_no_external_diff_or_textconv() {
    assert_eq!(
        with_diff_flags(&["-c", "x=y", "diff", "--stat"]),
        [
            "-c",
            "x=y",
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--stat"
        ]
    );
    assert_eq!(with_diff_flags(&["add", "diff"]), ["add", "diff"]);
}
