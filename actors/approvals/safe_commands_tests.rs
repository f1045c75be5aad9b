use super::is_known_safe;

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}

#[test]
fn read_only_commands_are_safe() {
    for cmd in [
        &["ls", "-la"][..],
        &["cat", "README.md"],
        &["git", "status"],
        &["git", "log", "--oneline"],
        &["git", "diff", "HEAD~1"],
        &["rg", "-n", "TODO"],
        &["sed", "-n", "1,20p", "file"],
        &["find", ".", "-name", "x"],
        &["bash", "-lc", "ls && git status | head -n 3"],
        &["/usr/bin/grep", "-r", "x", "."],
    ] {
        assert!(is_known_safe(&argv(cmd)), "{cmd:?}");
    }
}

#[test]
fn writing_or_executing_commands_are_not_safe() {
    for cmd in [
        &["rm", "-rf", "build"][..],
        &["find", ".", "-delete"],
        &["find", ".", "-exec", "rm", "{}", ";"],
        &["rg", "--pre", "sh", "x"],
        &["sort", "-o", "out", "in"],
        &["sed", "-i", "s/a/b/", "f"],
        &["sed", "-n", "1d", "f"],
        &["git", "push"],
        &["git", "branch", "new-branch"],
        &["git", "-c", "core.pager=sh", "log"],
        &["git", "diff", "--output=/etc/x"],
        &["bash", "-lc", "ls && rm -rf /"],
        &["bash", "-lc", "ls > out"],
        &["env", "rm", "x"],
        &["python3", "-c", "print(1)"],
        &[],
    ] {
        assert!(!is_known_safe(&argv(cmd)), "{cmd:?}");
    }
}
