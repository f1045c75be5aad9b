//! The prompt of `exec`: the argument, stdin, or both. As Codex does, piped stdin given
//! together with a prompt argument is appended to it as a `<stdin>` block, so
//! `git diff | troupe exec "review this"` sends both.

use anyhow::{bail, Context, Result};
use std::io::{IsTerminal, Read};

/// The prompt from the argument and/or stdin; an empty prompt is an error.
pub fn read_prompt(arg: Option<&str>) -> Result<String> {
    let mut stdin = std::io::stdin();
    let prompt = match arg {
        Some(text) if text != "-" => {
            if stdin.is_terminal() {
                text.to_string()
            } else {
                let mut piped = String::new();
                stdin
                    .read_to_string(&mut piped)
                    .context("cannot read stdin (piped beside the prompt argument)")?;
                with_stdin_block(text, &piped)
            }
        }
        _ => {
            if arg.is_none() && stdin.is_terminal() {
                bail!("no prompt given: pass it as an argument or pipe it on stdin");
            }
            let mut text = String::new();
            stdin
                .read_to_string(&mut text)
                .context("cannot read the prompt from stdin")?;
            text
        }
    };
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }
    Ok(prompt)
}

/// `prompt` followed by `piped` in a `<stdin>` block (Codex's framing: a blank line, the
/// opening tag, the text ending in a newline, the closing tag); just `prompt` when nothing
/// but whitespace was piped.
pub fn with_stdin_block(prompt: &str, piped: &str) -> String {
    if piped.trim().is_empty() {
        return prompt.to_string();
    }
    let newline = if piped.ends_with('\n') { "" } else { "\n" };
    format!("{prompt}\n\n<stdin>\n{piped}{newline}</stdin>")
}

#[cfg(test)]
#[path = "prompt_input_tests.rs"]
mod tests;
