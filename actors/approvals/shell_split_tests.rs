use super::{command_parts, split_script};
use pretty_assertions::assert_eq;

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
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
        "a && && b",
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
