use super::*;
use pretty_assertions::assert_eq;

const PATCH: &str = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch";

fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(std::string::ToString::to_string).collect()
}

fn found(cd: Option<&str>) -> Option<PatchInvocation> {
    Some(PatchInvocation {
        patch: PATCH.into(),
        cd: cd.map(str::to_string),
    })
}

#[test]
fn recognised_forms() {
    let heredoc = format!("apply_patch <<'EOF'\n{PATCH}\nEOF\n");
    let cases: Vec<(Vec<String>, Option<PatchInvocation>)> = vec![
        (argv(&["apply_patch", PATCH]), found(None)),
        (argv(&["applypatch", PATCH]), found(None)),
        (argv(&["bash", "-lc", &heredoc]), found(None)),
        (argv(&["/bin/bash", "-c", &heredoc]), found(None)),
        (argv(&["zsh", "-lc", &heredoc]), found(None)),
        (argv(&["sh", "-c", &heredoc]), found(None)),
        (
            argv(&["bash", "-lc", &format!("apply_patch <<EOF\n{PATCH}\nEOF")]),
            found(None),
        ),
        (
            argv(&[
                "bash",
                "-lc",
                &format!("apply_patch <<\"PATCH\"\n{PATCH}\nPATCH"),
            ]),
            found(None),
        ),
        (
            argv(&[
                "bash",
                "-lc",
                &format!("apply_patch <<-EOF\n\t{PATCH}\n\tEOF"),
            ]),
            // `<<-` strips leading tabs from every line, as bash does.
            found(None),
        ),
        (
            argv(&["bash", "-lc", &format!("cd sub/dir && {heredoc}")]),
            found(Some("sub/dir")),
        ),
        (
            argv(&["bash", "-lc", &format!("cd 'my dir' && {heredoc}")]),
            found(Some("my dir")),
        ),
        (
            argv(&["bash", "-lc", &format!("apply_patch '{PATCH}'")]),
            found(None),
        ),
        (
            argv(&["bash", "-lc", &format!("  {heredoc}  \n")]),
            found(None),
        ),
    ];
    for (index, (argv, expected)) in cases.into_iter().enumerate() {
        assert_eq!(from_argv(&argv), expected, "case {index}: {argv:?}");
    }
}

#[test]
fn other_commands_are_left_alone() {
    let heredoc = format!("apply_patch <<'EOF'\n{PATCH}\nEOF\n");
    let cases: Vec<Vec<String>> = vec![
        argv(&["ls", "-la"]),
        argv(&["apply_patch"]),
        argv(&["apply_patch", PATCH, "extra"]),
        argv(&["bash", "-lc", "echo apply_patch"]),
        argv(&["bash", "-lc", &format!("{heredoc}echo done")]),
        argv(&["bash", "-lc", &format!("apply_patch <<'EOF'\n{PATCH}\n")]),
        argv(&["bash", "-lc", "apply_patch_helper <<EOF\nx\nEOF"]),
        argv(&["python", "-c", &heredoc]),
        argv(&["bash", "-x", &heredoc]),
        argv(&["bash", "-lc", "apply_patch a b"]),
        argv(&["bash", "-lc", "cat x | apply_patch"]),
    ];
    for argv in cases {
        assert_eq!(from_argv(&argv), None, "{argv:?}");
    }
}

#[test]
fn script_form_is_used_for_exec_command_strings() {
    let script = format!("apply_patch <<'EOF'\n{PATCH}\nEOF");
    assert_eq!(from_script(&script), found(None));
    assert_eq!(from_script("git status"), None);
}
