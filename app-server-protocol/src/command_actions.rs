//! Codex's `commandActions`: what a command does, for display. The script of a
//! `bash -lc SCRIPT` wrapper is split into its simple commands (by the same shell parser the
//! approval rules use), and each is shown as reading a file, listing files, searching, or
//! unknown. Display only: nothing decides anything from it.

use crate::items::shlex_join;
use crate::protocol::CommandAction;
use troupe_messages::shell_split::{analyze, shell_script};

/// Programs that only reshape another command's output in a pipeline (`rg x | head -5`):
/// left out when other actions say what the command does.
const FORMATTERS: &[&str] = &[
    "head", "tail", "wc", "sort", "uniq", "cut", "tr", "column", "nl",
];

/// The actions of `argv` as it runs.
pub fn command_actions(argv: &[String]) -> Vec<CommandAction> {
    let analysis = analyze(argv);
    let script = shell_script(argv);
    if !analysis.plain {
        // Syntax beyond words and list/pipe operators: the script as one unknown action.
        let command = script.map_or_else(|| shlex_join(argv), str::to_string);
        return vec![CommandAction::Unknown { command }];
    }
    let mut actions: Vec<CommandAction> = analysis
        .commands
        .iter()
        .filter(|words| words.first().is_some_and(|program| program != "cd"))
        .map(|words| classify(words))
        .collect();
    let meaningful = actions
        .iter()
        .any(|action| !matches!(action, CommandAction::Unknown { .. }));
    if meaningful {
        actions.retain(|action| !is_formatter(action));
    }
    if actions.is_empty() {
        let command = script.map_or_else(|| shlex_join(argv), str::to_string);
        actions.push(CommandAction::Unknown { command });
    }
    actions
}

fn is_formatter(action: &CommandAction) -> bool {
    match action {
        CommandAction::Unknown { command } => command
            .split_whitespace()
            .next()
            .is_some_and(|program| FORMATTERS.contains(&program)),
        _ => false,
    }
}

/// Options that take the next word as their value (`head -n 20 FILE`, `rg -m 3 X`), by
/// program (`-n` is a value for `head`, a flag for `rg` and `sed`).
fn takes_value(program: &str, option: &str) -> bool {
    match program {
        "head" | "tail" => matches!(option, "-n" | "-c"),
        "rg" | "grep" | "egrep" | "fgrep" | "ag" => matches!(
            option,
            "-m" | "-A" | "-B" | "-C" | "-g" | "-t" | "-T" | "--type" | "--glob" | "--max-count"
        ),
        "tree" => matches!(option, "-L" | "-I" | "-P"),
        _ => false,
    }
}

/// The operands of a command: its words after the program that are neither options nor
/// an option's value.
fn operands<'a>(program: &str, words: &'a [String]) -> Vec<&'a str> {
    let mut operands = Vec::new();
    let mut skip_value = false;
    for word in words.iter().skip(1) {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        if word.starts_with('-') {
            skip_value = takes_value(program, word);
        } else {
            operands.push(word.as_str());
        }
    }
    operands
}

/// One simple command as an action.
fn classify(words: &[String]) -> CommandAction {
    let command = shlex_join(words);
    let program = words[0].rsplit('/').next().unwrap_or_default();
    let args = operands(program, words);
    match program {
        "cat" | "bat" | "less" | "more" | "head" | "tail" | "nl" if args.len() == 1 => {
            read(command, args[0])
        }
        // `sed -n 'A,Bp' FILE`: printing a range of one file.
        "sed" if words.iter().any(|w| w == "-n") && args.len() == 2 && args[0].ends_with('p') => {
            read(command, args[1])
        }
        "ls" | "tree" if args.len() <= 1 => CommandAction::ListFiles {
            command,
            path: args.first().map(std::string::ToString::to_string),
        },
        "rg" if words.iter().any(|w| w == "--files") && args.len() <= 1 => {
            CommandAction::ListFiles {
                command,
                path: args.first().map(std::string::ToString::to_string),
            }
        }
        "find"
            if !words
                .iter()
                .any(|w| w.starts_with("-exec") || w == "-delete") =>
        {
            CommandAction::ListFiles {
                command,
                path: args.first().map(std::string::ToString::to_string),
            }
        }
        "rg" | "grep" | "egrep" | "fgrep" | "ag" if !args.is_empty() && args.len() <= 2 => {
            CommandAction::Search {
                command,
                query: Some(args[0].to_string()),
                path: args.get(1).map(std::string::ToString::to_string),
            }
        }
        _ => CommandAction::Unknown { command },
    }
}

fn read(command: String, path: &str) -> CommandAction {
    let name = path.rsplit('/').next().unwrap_or(path).to_string();
    CommandAction::Read {
        command,
        name,
        path: path.to_string(),
    }
}

#[cfg(test)]
#[path = "command_actions_tests.rs"]
mod tests;
