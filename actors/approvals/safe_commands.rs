//! Known-safe read-only commands: what `untrusted` runs without asking (still sandboxed).
//! An allow-list: a command is safe only when its program is listed and every option is on
//! that program's allow-list, read the way the real tool reads its arguments (see
//! `option_parse`), and its operands cannot name an output. Anything else asks.

use super::option_parse::{parse_safe, Parsed, Syntax};
use super::safe_git::is_safe_git;
use super::safe_tables::{DATE, FILE, FIND_SAFE, RG, SED, SORT, TREE, UNIQ};
use troupe_messages::shell_split::command_parts;

/// True when `argv` (or every part of its `bash -lc` script) only reads.
pub fn is_known_safe(argv: &[String]) -> bool {
    match command_parts(argv) {
        Some(parts) => !parts.is_empty() && parts.iter().all(|part| is_safe_simple(part)),
        None => false,
    }
}

/// Programs with no option that writes, executes or reaches the network (GNU coreutils,
/// grep, diffutils): any arguments are fine.
const READ_ONLY_PROGRAMS: &[&str] = &[
    "cat", "cd", "echo", "false", "grep", "head", "ls", "nl", "pwd", "tail", "true", "wc", "which",
    "whoami", "id", "uname", "stat", "tr", "cut", "basename", "dirname", "realpath", "printenv",
    "du", "df", "cmp", "diff",
];

/// True when one simple command only reads.
pub fn is_safe_simple(argv: &[String]) -> bool {
    let Some((program, args)) = argv.split_first() else {
        return false;
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    if READ_ONLY_PROGRAMS.contains(&name) {
        return true;
    }
    let parsed = |syntax: &Syntax| parse_safe(syntax, args);
    match name {
        // `env CMD` runs CMD; bare `env` prints the environment.
        "env" => args.is_empty(),
        "sort" | "rg" | "file" | "tree" => {
            let syntax = match name {
                "sort" => &SORT,
                "rg" => &RG,
                "file" => &FILE,
                _ => &TREE,
            };
            parsed(syntax).is_some()
        }
        // The second operand of uniq is its output file. With `POSIXLY_CORRECT` an option
        // after an operand is an operand too, so that order is refused.
        "uniq" => parsed(&UNIQ).is_some_and(|p| p.operands.len() <= 1 && !p.option_after_operand),
        // An operand not starting with `+` sets the clock.
        "date" => parsed(&DATE).is_some_and(|p| {
            p.operands.len() <= 1 && p.operands.iter().all(|o| o.starts_with('+'))
        }),
        "sed" => parsed(&SED).is_some_and(|p| sed_scripts_only_print(&p)),
        "find" => is_safe_find(args),
        "git" => is_safe_git(args),
        _ => false,
    }
}

/// Every sed script (each `-e`, or the first operand) only prints line ranges (`5p`,
/// `1,20p`, `$p`): no `w`, `e`, `s///w`, `r`… .
fn sed_scripts_only_print(parsed: &Parsed) -> bool {
    let mut scripts: Vec<&str> = parsed.values(&["e", "expression"]).collect();
    if scripts.is_empty() {
        match parsed.operands.first() {
            Some(script) => scripts.push(script),
            None => return false,
        }
    }
    scripts
        .iter()
        .all(|script| script.split([';', '\n']).all(is_print_range))
}

fn is_print_range(command: &str) -> bool {
    let Some(range) = command.trim().strip_suffix('p') else {
        return false;
    };
    let address = |a: &str| a == "$" || (!a.is_empty() && a.chars().all(|c| c.is_ascii_digit()));
    match range.split_once(',') {
        Some((from, to)) => address(from) && address(to),
        None => address(range),
    }
}

/// find: every expression word must be a test or a print action from `FIND_SAFE`; the words
/// it consumes (`-name PATTERN`) are skipped. Paths come first and may not start with `-`.
fn is_safe_find(args: &[String]) -> bool {
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if matches!(word.as_str(), "(" | ")" | "!" | ",") {
            continue;
        }
        if !word.starts_with('-') {
            continue;
        }
        let Some((_, takes)) = FIND_SAFE.iter().find(|(name, _)| name == word) else {
            return false;
        };
        for _ in 0..*takes {
            if words.next().is_none() {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
#[path = "safe_commands_tests.rs"]
mod tests;
