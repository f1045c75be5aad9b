use super::{is_known_safe, is_safe_simple};
use std::path::Path;
use std::process::{Command, Output};

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(std::string::ToString::to_string).collect()
}

/// Spellings that only read.
const SAFE: &[&[&str]] = &[
    &["ls", "-la"],
    &["cat", "README.md"],
    &["/usr/bin/grep", "-r", "x", "."],
    &["head", "-n", "3", "f"],
    &["wc", "-l", "f"],
    &["env"],
    &["sort", "f"],
    &["sort", "-rn", "f"],
    &["sort", "-k2", "-t,", "f"],
    &["sort", "-k", "2,2", "-t", ",", "f"],
    &["sort", "--key=2", "--field-separator=,", "f"],
    &["sort", "--rev", "f"],
    &["sort", "--numeric", "f"],
    &["sort", "-u", "--", "-o"],
    &["sort", "-S", "1M", "--parallel=2", "f"],
    &["sort", "-c", "f"],
    &["sort", "--check=quiet", "f"],
    &["uniq", "f"],
    &["uniq", "-c", "f"],
    &["uniq", "-cd", "f"],
    &["uniq", "--count", "--skip-fields=1", "f"],
    &["uniq", "-f", "1", "f"],
    &["uniq", "--all-repeated=separate", "f"],
    &["uniq"],
    &["sed", "-n", "1,20p", "file"],
    &["sed", "-n", "5p", "file"],
    &["sed", "-n", "$p", "file"],
    &["sed", "-n", "-e", "1p", "-e", "3,4p", "file"],
    &["sed", "-ne", "1p", "file"],
    &["sed", "--quiet", "--expression=2,$p", "file"],
    &["sed", "-n", "1p;5p", "file"],
    &["sed", "--sandbox", "-n", "1p", "f"],
    &["tree"],
    &["tree", "-L", "2"],
    &["tree", "-aL", "2", "src"],
    &["tree", "-d", "--noreport", "-I", "target"],
    &["tree", "--charset=ascii", "-J"],
    &["tree", "--", "-o"],
    &["file", "f"],
    &["file", "-b", "--mime-type", "f"],
    &["file", "-L", "f"],
    &["date"],
    &["date", "+%s"],
    &["date", "-u", "+%Y-%m-%d"],
    &["date", "-d", "yesterday", "+%F"],
    &["date", "--iso-8601=seconds"],
    &["rg", "-n", "TODO"],
    &["rg", "-i", "--glob", "*.rs", "fn main", "src"],
    &["rg", "--files"],
    &["rg", "-l", "-e", "x", "-e", "y"],
    &["rg", "--type", "rust", "-C", "2", "x"],
    &["find", ".", "-name", "x"],
    &["find", ".", "-type", "f", "-name", "*.rs", "-print"],
    &["find", ".", "-mtime", "-7", "-size", "+1k"],
    &[
        "find", "src", "(", "-name", "a", "-o", "-name", "b", ")", "-print0",
    ],
    &["find", ".", "-maxdepth", "1", "-printf", "%p\\n"],
    &["find", ".", "-name", "-delete"],
    &["git", "status"],
    &["git", "status", "--short", "-b"],
    &["git", "status", "--porcelain=v1"],
    &["git", "log", "--oneline", "-n", "5"],
    &["git", "log", "-5", "--stat"],
    &["git", "log", "--format=%h %s", "--author=me"],
    &["git", "log", "-p", "--", "src/main.rs"],
    &["git", "diff", "HEAD~1"],
    &["git", "diff", "--cached", "--stat"],
    &["git", "diff", "-U3", "--no-ext-diff", "a", "b"],
    &["git", "show", "HEAD:README.md"],
    &["git", "show", "--name-only", "HEAD"],
    &["git", "--no-pager", "log", "-1"],
    &["git", "grep", "-n", "hello"],
    &["git", "grep", "-e", "a", "--and", "-e", "b"],
    &["git", "grep", "-3", "hello"],
    &["git", "grep", "-in", "hello", "--", "*.rs"],
    &["git", "blame", "-L10,20", "f"],
    &["git", "rev-parse", "--show-toplevel"],
    &["git", "rev-parse", "--abbrev-ref", "HEAD"],
    &["git", "ls-files", "-m"],
    &["git", "branch", "--show-current"],
    &["git", "branch", "-a"],
    &["bash", "-lc", "ls && git status | head -n 3"],
    &["bash", "-lc", "sort f | uniq -c | sort -rn"],
];

/// Spellings that write, execute, or that we cannot vouch for.
const UNSAFE: &[&[&str]] = &[
    &[],
    &["rm", "-rf", "build"],
    &["python3", "-c", "print(1)"],
    &["env", "rm", "x"],
    &["env", "-i", "sh"],
    &["sort", "-o", "out", "f"],
    &["sort", "-oout", "f"],
    &["sort", "-o/x", "f"],
    &["sort", "-rno", "out", "f"],
    &["sort", "-rnoout", "f"],
    &["sort", "--output=out", "f"],
    &["sort", "--output", "out", "f"],
    &["sort", "--outp=/x", "f"],
    &["sort", "--o=out", "f"],
    &["sort", "--ou", "out", "f"],
    &["sort", "f", "-o", "out"],
    &["sort", "--compress-program=sh", "f"],
    &["sort", "--compress-prog=sh", "f"],
    &["sort", "--comp=sh", "f"],
    &["sort", "-T", "/tmp", "f"],
    &["sort", "--temporary-directory=/tmp", "f"],
    &["sort", "--te=/tmp", "f"],
    &["sort", "--no-such", "f"],
    &["uniq", "in", "out"],
    &["uniq", "-c", "in", "out"],
    &["uniq", "--", "in", "out"],
    &["uniq", "in", "-c"],
    &["uniq", "-f", "1", "in", "out"],
    &["sed", "-n", "1p", "-e", "e touch /x", "f"],
    &["sed", "-n", "-e", "1p", "-e", "w out", "f"],
    &["sed", "--expression=1w out", "f"],
    &["sed", "-n", "1p;w out", "f"],
    &["sed", "-n", "1e touch x", "f"],
    &["sed", "s/a/b/w out", "f"],
    &["sed", "-n", "1d", "f"],
    &["sed", "-i", "s/a/b/", "f"],
    &["sed", "-i.bak", "1p", "f"],
    &["sed", "-ni", "1p", "f"],
    &["sed", "--in-place", "1p", "f"],
    &["sed", "--in", "1p", "f"],
    &["sed", "-f", "script.sed", "f"],
    &["sed", "--file=script.sed", "f"],
    &["sed", "-n", "1r /etc/passwd", "f"],
    &["sed"],
    &["tree", "-o", "out"],
    &["tree", "-oout"],
    &["tree", "-Lo", "1", "out"],
    &["tree", "-aLo", "1", "out"],
    &["tree", "-R", "-L", "1", "-H", "."],
    &["tree", "--norep"],
    &["file", "-C", "-m", "magic"],
    &["file", "--compile", "-m", "magic"],
    &["file", "--comp", "-m", "magic"],
    &["file", "-z", "f.gz"],
    &["file", "--uncompress", "f.gz"],
    &["file", "-p", "f"],
    &["date", "-s", "2020-01-01"],
    &["date", "--set=2020-01-01"],
    &["date", "--se", "2020-01-01"],
    &["date", "010100002020"],
    &["rg", "--pre", "sh", "x"],
    &["rg", "--pre=./x.sh", "x"],
    &["rg", "--pre-glob", "*", "--pre", "sh", "x"],
    &["rg", "--hostname-bin", "./x.sh", "x"],
    &["rg", "-z", "x"],
    &["rg", "-nz", "x"],
    &["rg", "--search-zip", "x"],
    &["rg", "--pr=sh", "x"],
    &["find", ".", "-delete"],
    &["find", ".", "-exec", "rm", "{}", ";"],
    &["find", ".", "-execdir", "touch", "x", ";"],
    &["find", ".", "-ok", "rm", "{}", ";"],
    &["find", ".", "-fprint", "out"],
    &["find", ".", "-fprintf", "out", "%p"],
    &["find", ".", "-fls", "out"],
    &["find", ".", "-newermt", "2020-01-01"],
    &["git", "push"],
    &["git", "branch", "new-branch"],
    &["git", "-c", "core.pager=sh", "log"],
    &["git", "-C", "/", "status"],
    &["git", "diff", "--output=/etc/x"],
    &["git", "log", "--output=out"],
    &["git", "log", "--outp=out"],
    &["git", "log", "--ext-diff"],
    &["git", "log", "--textconv", "-p"],
    &["git", "log", "--show-signature"],
    &["git", "show", "--output", "out"],
    &["git", "grep", "-O", "hello"],
    &["git", "grep", "-Otouch /x", "-e", "hello"],
    &["git", "grep", "-nOtouch x", "hello"],
    &["git", "grep", "--open-files-in-pager=touch x", "hello"],
    &["git", "grep", "--open-f=touch x", "hello"],
    &["git", "grep", "--textconv", "hello"],
    &["git", "status", "--porc"],
    &["git", "config", "core.pager", "sh"],
    &["git", "checkout", "."],
    &["git", "rev-parse", "--parseopt"],
    &["bash", "-lc", "ls && rm -rf /"],
    &["bash", "-lc", "ls > out"],
    &["bash", "-lc", "sort f > out"],
    &["bash", "-lc", "ls $(touch x)"],
    &["bash", "-lc", "uniq f*"],
    &["bash", "-lc", "POSIXLY_CORRECT=1 uniq f -c"],
];

#[test]
fn the_spelling_table_holds() {
    assert!(SAFE.len() + UNSAFE.len() >= 100);
    for cmd in SAFE {
        assert!(is_known_safe(&argv(cmd)), "should be safe: {cmd:?}");
    }
    for cmd in UNSAFE {
        assert!(!is_known_safe(&argv(cmd)), "should not be safe: {cmd:?}");
    }
}

fn tool_present(name: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(dir: &Path, cmd: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(cmd[0])
        .args(&cmd[1..])
        .current_dir(dir)
        .envs(env.iter().copied())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// One unsafe spelling, run for real: what must exist afterwards to prove it wrote or ran.
struct Proof {
    tool: &'static str,
    cmd: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    proof: &'static str,
}

const fn proof(tool: &'static str, cmd: &'static [&'static str], proof: &'static str) -> Proof {
    Proof {
        tool,
        cmd,
        env: &[],
        proof,
    }
}

const PROOFS: &[Proof] = &[
    proof("sort", &["sort", "-oout", "f"], "out"),
    proof("sort", &["sort", "-rno", "out", "f"], "out"),
    proof("sort", &["sort", "--outp=out", "f"], "out"),
    proof("sort", &["sort", "--o=out", "f"], "out"),
    proof("sort", &["sort", "f", "-o", "out"], "out"),
    proof(
        "sort",
        &["sort", "-S", "1k", "--compress-prog=./x.sh", "big"],
        "ran",
    ),
    proof("uniq", &["uniq", "f", "out"], "out"),
    proof("uniq", &["uniq", "-c", "--", "f", "out"], "out"),
    Proof {
        tool: "uniq",
        cmd: &["uniq", "f", "-c"],
        env: &[("POSIXLY_CORRECT", "1")],
        proof: "-c",
    },
    proof("sed", &["sed", "-n", "1p", "-e", "e touch ran", "f"], "ran"),
    proof("sed", &["sed", "-n", "-e", "1p", "-e", "w out", "f"], "out"),
    proof("sed", &["sed", "-n", "1p;w out", "f"], "out"),
    proof("sed", &["sed", "s/a/b/w out", "f"], "out"),
    proof("sed", &["sed", "--in=.bak", "1p", "f"], "f.bak"),
    proof("tree", &["tree", "-o", "out"], "out"),
    proof("tree", &["tree", "-Lo", "1", "out"], "out"),
    proof(
        "tree",
        &["tree", "-R", "-L", "1", "-H", "."],
        "sub/00Tree.html",
    ),
    proof("file", &["file", "--comp", "-m", "magic"], "magic.mgc"),
    proof("rg", &["rg", "--pre=./x.sh", "hello", "f"], "ran"),
    proof("rg", &["rg", "-z", "hello", "f.gz"], "ran"),
    proof("find", &["find", ".", "-fprint", "out"], "out"),
    proof(
        "find",
        &["find", ".", "-name", "f", "-execdir", "touch", "ran", ";"],
        "ran",
    ),
    proof("git", &["git", "grep", "-Otouch ran", "-e", "hello"], "ran"),
    proof(
        "git",
        &["git", "grep", "--open-f=touch ran", "hello"],
        "ran",
    ),
    proof("git", &["git", "log", "--output=out"], "out"),
    proof("git", &["git", "diff", "--output=out"], "out"),
];

/// Each unsafe spelling above is not known-safe, and really writes or executes when run
/// unsandboxed in a scratch directory (skipped only for a tool that is not installed).
#[test]
fn unsafe_spellings_really_write_or_execute() {
    let mut proven = std::collections::BTreeSet::new();
    for case in PROOFS {
        assert!(!is_safe_simple(&argv(case.cmd)), "{:?}", case.cmd);
        if !tool_present(case.tool) {
            continue;
        }
        proven.insert(case.tool);
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("f"), "hello\nhello\nworld\n").unwrap();
        let big: String = (0..20_000).map(|i| format!("{}\n", 20_000 - i)).collect();
        std::fs::write(d.join("big"), big).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/g"), "hello\n").unwrap();
        std::fs::write(d.join("magic"), "0\tstring\thello\thello text\n").unwrap();
        // Runs anything it is given, leaving `ran`; also a fake gzip for `rg -z`.
        write_script(&d.join("x.sh"), &format!("touch {}/ran\ncat", d.display()));
        std::fs::create_dir(d.join("bin")).unwrap();
        write_script(
            &d.join("bin/gzip"),
            &format!("touch {}/ran\ncat", d.display()),
        );
        std::fs::write(d.join("f.gz"), "hello\n").unwrap();
        if case.tool == "git" {
            for git in [
                &["git", "init", "-q"][..],
                &["git", "add", "f"],
                &[
                    "git",
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "commit",
                    "-qm",
                    "x",
                ],
            ] {
                assert!(run(d, git, &[]).status.success(), "{git:?}");
            }
        }
        let path = format!(
            "{}:{}",
            d.join("bin").display(),
            std::env::var("PATH").unwrap()
        );
        let mut env: Vec<(&str, &str)> = case.env.to_vec();
        env.push(("PATH", &path));
        let out = run(d, case.cmd, &env);
        assert!(
            d.join(case.proof).exists(),
            "{:?} did not leave {}: {}",
            case.cmd,
            case.proof,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // A skip is only for an optional tool (CI installs them all): the base tools of every
    // Debian system are always proven, so the test cannot pass by skipping everything.
    for base in ["sort", "uniq", "sed", "git"] {
        assert!(proven.contains(base), "no proof ran for {base}");
    }
}
