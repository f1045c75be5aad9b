//! Known-safe read-only commands: what `untrusted` runs without asking. Conservative on
//! purpose: any option that writes, executes or reaches the network disqualifies.

use super::shell_split::command_parts;

/// True when `argv` (or every part of its `bash -lc` script) only reads.
pub fn is_known_safe(argv: &[String]) -> bool {
    match command_parts(argv) {
        Some(parts) => !parts.is_empty() && parts.iter().all(|part| is_safe_simple(part)),
        None => false,
    }
}

fn is_safe_simple(argv: &[String]) -> bool {
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    let has = |flags: &[&str]| {
        args.iter().any(|a| {
            flags
                .iter()
                .any(|f| a == f || a.starts_with(&format!("{f}=")))
        })
    };
    match name {
        "cat" | "cd" | "echo" | "false" | "grep" | "head" | "ls" | "nl" | "pwd" | "tail"
        | "true" | "wc" | "which" | "whoami" | "id" | "uname" | "date" | "stat" | "file" | "tr"
        | "cut" | "uniq" | "basename" | "dirname" | "realpath" | "printenv" | "du" | "df"
        | "tree" | "cmp" | "diff" | "env"
            if name != "env" || args.is_empty() =>
        {
            true
        }
        "sort" => !has(&["-o", "--output", "--compress-program"]),
        "rg" => !has(&["--pre", "--hostname-bin", "--search-zip", "-z"]),
        "find" => !has(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0",
            "-fprintf",
        ]),
        "sed" => {
            // Only `sed -n 'Np'` / `'N,Mp'` style printing.
            matches!(args, [n, script, ..] if n == "-n" && is_print_range(script))
        }
        "git" => is_safe_git(args),
        _ => false,
    }
}

fn is_print_range(script: &str) -> bool {
    let Some(range) = script.strip_suffix('p') else {
        return false;
    };
    !range.is_empty()
        && range
            .split(',')
            .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

fn is_safe_git(args: &[String]) -> bool {
    // Options before the subcommand (`-C dir`, `-c key=val`) can run hooks or aliases.
    let Some(sub) = args.first() else {
        return false;
    };
    let rest = &args[1..];
    let writes = |flags: &[&str]| {
        rest.iter().any(|a| {
            flags
                .iter()
                .any(|f| a == f || a.starts_with(&format!("{f}=")))
        })
    };
    match sub.as_str() {
        "status" | "log" | "diff" | "show" | "blame" | "rev-parse" | "ls-files" | "grep" => {
            !writes(&["--output", "--ext-diff", "--textconv", "-o"])
        }
        // `git branch NAME` creates a branch; listing only.
        "branch" => rest.iter().all(|a| {
            matches!(
                a.as_str(),
                "-a" | "-r" | "-v" | "-vv" | "--list" | "--show-current"
            )
        }),
        _ => false,
    }
}

#[cfg(test)]
#[path = "safe_commands_tests.rs"]
mod tests;
