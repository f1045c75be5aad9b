//! `troupe completion SHELL`: a completion script for bash, zsh, fish, PowerShell or elvish
//! on stdout (clap_complete, from the same command definition the parser uses).

use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell to write the script for.
    #[arg(value_enum, default_value_t = Shell::Bash)]
    shell: Shell,
}

pub fn run(args: CompletionArgs) -> anyhow::Result<()> {
    let mut command = crate::Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "troupe", &mut script);
    troupe_cli::output::line(String::from_utf8_lossy(&script).trim_end())?;
    Ok(())
}
