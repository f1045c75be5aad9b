use super::{analyze, command_parts, is_plain_shell, split_script};
use pretty_assertions::assert_eq;

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(std::string::ToString::to_string).collect()
}

#[test]
fn bash_lc_lists_and_pipes_split_into_parts() {
    let parts = command_parts(&argv(&[
        "bash",
        "-lc",
        "ls -la && git status | head -n 5; echo 'a b' || true",
    ]))
    .unwrap();
    assert_eq!(
        parts,
        vec![
            argv(&["ls", "-la"]),
            argv(&["git", "status"]),
            argv(&["head", "-n", "5"]),
            argv(&["echo", "a b"]),
            argv(&["true"]),
        ]
    );
    assert_eq!(
        command_parts(&argv(&["/bin/sh", "-c", "echo \"x\\\"y\"\ncat f"])).unwrap(),
        vec![argv(&["echo", "x\"y"]), argv(&["cat", "f"])]
    );
    // Not a wrapper: one part, as is.
    assert_eq!(
        command_parts(&argv(&["ls", "&&", "rm"])).unwrap(),
        vec![argv(&["ls", "&&", "rm"])]
    );
}

#[test]
fn unanalysable_scripts_are_refused() {
    for script in [
        "echo $(rm -rf /)",
        "echo `id`",
        "ls > out.txt",
        "cat < /etc/passwd",
        "(cd /; rm x)",
        "sleep 1 &",
        "echo \"$HOME\"",
        "ls &&",
        "| ls",
        "echo 'unterminated",
        "ls *.rs",
        "ls f?",
        "uniq f[12]",
        "ls ~",
        "echo a{b,c}",
        "a && && b",
        "; ls",
        "FOO=1 ls",
        "ls # note",
        "cat <<EOF\nx\nEOF",
        "ls 2>/dev/null",
    ] {
        assert_eq!(split_script(script), None, "{script}");
    }
    assert_eq!(split_script("   "), None);
    // `=` and `-` inside words are fine, as are quoted operators.
    assert_eq!(
        split_script("git log --format=%h '&&'").unwrap(),
        vec![argv(&["git", "log", "--format=%h", "&&"])]
    );
}

fn found(script: &str) -> Vec<Vec<String>> {
    let analysis = analyze(&argv(&["bash", "-c", script]));
    analysis.all_candidates().cloned().collect()
}

/// Every simple command is found, whatever syntax hides it, and none of that syntax is plain.
#[test]
fn commands_are_found_around_any_syntax() {
    let rm = argv(&["rm", "x"]);
    for script in [
        "rm x > /dev/null",
        "rm x 2>&1",
        "rm x &> log",
        "rm x < in",
        ">out rm x",
        "echo $(rm x)",
        "echo \"$(rm x)\"",
        "echo `rm x`",
        "echo ${y:-$(rm x)}",
        "(rm x)",
        "{ rm x; }",
        "if true; then rm x; fi",
        "for f in a; do rm x; done",
        "FOO=1 rm x",
        "$'\\x72m' x",
        "rm x &",
        "true |& rm x",
        "cat <<EOF\n$(rm x)\nEOF",
        "cat <<'EOF'\nit's\nEOF\nrm x",
        "ls; # comment\nrm x",
    ] {
        let all = found(script);
        assert!(all.contains(&rm), "{script}: {all:?}");
        assert!(!analyze(&argv(&["bash", "-c", script])).plain, "{script}");
    }
    // Plain spellings of the same command, and wrappers that run it: found too.
    for script in [
        "r\"\"m x",
        "\\rm x",
        "bash -c 'rm x'",
        "sh -ec 'rm x'",
        "env FOO=1 rm x",
        "xargs -n 1 rm x",
        "nice -n 5 rm x",
        "timeout 5 rm x",
        "sudo -u root rm x",
        "eval rm x",
    ] {
        let all = found(script);
        assert!(all.contains(&rm), "{script}: {all:?}");
    }
    // Program given by path: found as is (rules also try the base name).
    assert!(found("/bin/rm x").contains(&argv(&["/bin/rm", "x"])));
    // Not plain at depth either: nested shells are followed.
    assert!(found("bash -c \"bash -c 'rm x'\"").contains(&rm));
}

#[test]
fn long_wrapper_chains_and_deep_shell_nesting_are_followed() {
    let rm = argv(&["rm", "x"]);
    // Linear, not exponential, in the chain's length.
    let chain = format!("{}rm x", "nice -n 5 timeout 1 ".repeat(200));
    assert!(found(&chain).contains(&rm));
    // Ten shells deep (`bash -c 'bash -c '\''…'\'''`), 88 KB: quoting triples per level.
    let mut script = "rm x".to_string();
    for _ in 0..10 {
        script = format!("bash -c '{}'", script.replace('\'', "'\\''"));
    }
    assert!(found(&script).contains(&rm), "{script}");
}

#[test]
fn a_model_may_name_a_shell_only_from_the_system_directories() {
    for shell in ["bash", "zsh", "sh", "/bin/bash", "/usr/bin/zsh", "dash"] {
        assert!(is_plain_shell(shell), "{shell}");
    }
    // A file the model could have written, an unknown program, or busybox (needs an applet).
    for shell in [
        "./bash",
        "/tmp/bash",
        "/bash",
        "work/bash",
        "python3",
        "busybox",
        "/bin/busybox",
        "/usr/local/bin/bash",
    ] {
        assert!(!is_plain_shell(shell), "{shell}");
    }
}
