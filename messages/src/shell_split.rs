//! What a command runs, as far as we can tell without running it. `bash -lc "a && b | c"` is
//! split into its simple commands so rules and the known-safe list judge each part.
//!
//! Two answers, for two uses:
//! - `commands` + `wrapped`: every simple command we can find anywhere in the script (around
//!   redirections, inside substitutions, subshells, here-docs, nested `bash -c`, behind
//!   `env`/`xargs`/`nice`…). Over-approximate on purpose: only `forbidden`/`prompt` rules look
//!   at these, and finding too much only makes them stricter.
//! - `plain`: the script is nothing but words and the `&&`, `||`, `;`, `|` operators, so
//!   `commands` is exactly what runs. Only then may an `allow` rule or the known-safe list
//!   vouch for it.

mod scanner;

use scanner::Scanner;

/// How deep nested shells (`bash -c "bash -c '…'"`) are followed. Each level at least
/// doubles the quoting, so a script cannot reach this depth.
const MAX_DEPTH: usize = 64;

/// The result of looking at one command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandAnalysis {
    /// The simple commands of the command (one for a plain argv), in order.
    pub commands: Vec<Vec<String>>,
    /// What wrappers and nested shells would run; only for `forbidden`/`prompt` rules.
    pub wrapped: Vec<Vec<String>>,
    /// `commands` is exactly what runs: no syntax beyond words and list/pipe operators.
    pub plain: bool,
}

impl CommandAnalysis {
    /// Every argv a restrictive rule should be matched against.
    pub fn all_candidates(&self) -> impl Iterator<Item = &Vec<String>> {
        self.commands.iter().chain(self.wrapped.iter())
    }
}

/// The script of `bash|sh|zsh|dash -c|-lc SCRIPT`, if `argv` is exactly such a wrapper.
pub fn shell_script(argv: &[String]) -> Option<&str> {
    let [shell, flag, script] = argv else {
        return None;
    };
    let flag_ok = matches!(flag.as_str(), "-c" | "-lc" | "-cl");
    (is_shell(shell) && flag_ok).then_some(script.as_str())
}

/// A shell a model may name for `-c SCRIPT`: by name (found on `PATH`, like `bash`) or in
/// `/bin` or `/usr/bin`. Never a path elsewhere: a file the model wrote and named `bash`
/// would have its script judged as if bash ran it. (busybox needs an applet name first.)
pub fn is_plain_shell(program: &str) -> bool {
    let name = match program.rsplit_once('/') {
        None => program,
        Some(("/bin" | "/usr/bin", name)) => name,
        Some(_) => return false,
    };
    name != "busybox" && is_shell(name)
}

fn is_shell(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(
        name,
        "bash" | "sh" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "busybox"
    )
}

/// Analyses an argv as the runtime will execute it.
pub fn analyze(argv: &[String]) -> CommandAnalysis {
    let mut analysis = CommandAnalysis::default();
    analyze_into(argv, 0, &mut analysis);
    analysis
}

fn analyze_into(argv: &[String], depth: usize, out: &mut CommandAnalysis) {
    match shell_script(argv) {
        Some(script) => {
            let (commands, plain) = parse_script(script, depth);
            out.plain = plain && !commands.is_empty();
            for command in &commands {
                add_wrapped(command, depth, out);
            }
            out.commands = commands;
        }
        None => {
            out.plain = !argv.is_empty();
            add_wrapped(argv, depth, out);
            out.commands = vec![argv.to_vec()];
        }
    }
}

/// Parses a script: its simple commands and whether it was plain.
fn parse_script(script: &str, depth: usize) -> (Vec<Vec<String>>, bool) {
    if depth > MAX_DEPTH {
        return (Vec::new(), false);
    }
    let mut scanner = Scanner::new(script, depth);
    scanner.run();
    scanner.finish()
}

/// Adds to `wrapped` what `argv` runs through a shell or a chain of command wrappers. The
/// chain is followed in a loop, not by recursion, so `nice nice … rm` is linear and has no
/// depth limit to hide behind.
fn add_wrapped(argv: &[String], depth: usize, out: &mut CommandAnalysis) {
    let mut current = argv;
    loop {
        let Some((program, args)) = current.split_first() else {
            return;
        };
        if is_shell(program) {
            add_shell_operands(args, depth, out);
            return;
        }
        let name = program.rsplit('/').next().unwrap_or(program);
        if !WRAPPERS.contains(&name) {
            return;
        }
        // The wrapped command starts at the first word that is not an option or assignment,
        // or one later when an option took that word as its argument (`nice -n 5 rm`).
        let Some(first) = args
            .iter()
            .position(|a| !a.starts_with('-') && !is_assignment(a))
        else {
            return;
        };
        let candidates: Vec<&[String]> = [first, first + 1]
            .into_iter()
            .filter_map(|start| args.get(start..).filter(|rest| !rest.is_empty()))
            .collect();
        for candidate in &candidates {
            // Rules match prefixes: a long tail adds nothing but copying (quadratic in a
            // chain of thousands of wrappers).
            let prefix = &candidate[..candidate.len().min(MAX_WRAPPED_WORDS)];
            out.wrapped.push(prefix.to_vec());
        }
        // Follow whichever candidate runs something further (a wrapper or a shell).
        let next = candidates.iter().find(|c| {
            let program = c[0].rsplit('/').next().unwrap_or(&c[0]);
            WRAPPERS.contains(&program) || is_shell(&c[0])
        });
        match next {
            Some(next) => current = next,
            None => return,
        }
    }
}

/// Any shell form (`bash -ec X`, `sh -c X arg0`, `bash --norc -c X`): each operand might be
/// the script; all are looked at.
fn add_shell_operands(args: &[String], depth: usize, out: &mut CommandAnalysis) {
    if depth >= MAX_DEPTH {
        return;
    }
    for arg in args
        .iter()
        .filter(|a| !a.starts_with('-') && !a.starts_with('+'))
    {
        let (commands, _) = parse_script(arg, depth + 1);
        for command in commands {
            add_wrapped(&command, depth + 1, out);
            out.wrapped.push(command);
        }
    }
}

/// Words kept of a wrapped command: more than any rule pattern is long.
const MAX_WRAPPED_WORDS: usize = 256;

/// Programs that run their arguments as a command.
const WRAPPERS: &[&str] = &[
    "env", "command", "exec", "builtin", "nohup", "time", "nice", "ionice", "sudo", "doas",
    "xargs", "timeout", "stdbuf", "setsid", "chrt", "taskset", "unbuffer", "watch", "eval",
    "flock", "strace", "ltrace", "chroot", "runuser", "su", "unshare", "nsenter",
];

/// `NAME=value` (also `NAME+=value`) as the shell reads it before a command.
pub fn is_assignment(word: &str) -> bool {
    let Some(eq) = word.find('=') else {
        return false;
    };
    let name = word[..eq].strip_suffix('+').unwrap_or(&word[..eq]);
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The simple commands of `argv` when it is plain (see the module docs), else `None`.
pub fn command_parts(argv: &[String]) -> Option<Vec<Vec<String>>> {
    let analysis = analyze(argv);
    analysis.plain.then_some(analysis.commands)
}

/// The simple commands of a plain script, else `None`.
pub fn split_script(script: &str) -> Option<Vec<Vec<String>>> {
    let (commands, plain) = parse_script(script, 0);
    (plain && !commands.is_empty()).then_some(commands)
}

#[cfg(test)]
#[path = "shell_split_tests.rs"]
mod tests;
