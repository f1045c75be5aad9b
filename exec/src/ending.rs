//! How a run ends, local or remote alike: the last message written where `-o` says, the exit
//! status of a signal that stopped it, the answer checked against `--output-schema`, and the
//! last message on stdout for a human.

use crate::output_schema;
use crate::signals::StopSignal;
use crate::ExecArgs;
use anyhow::{bail, Context, Result};
use std::process::ExitCode;
use troupe_cli::output::StdoutError;
use troupe_messages::terminal_text::visible;

/// What the turn left for the ending.
#[derive(Default)]
pub(crate) struct RunEnd {
    pub last_message: Option<String>,
    pub succeeded: bool,
    /// The first stop signal, when one interrupted the turn.
    pub stopped: Option<StopSignal>,
    /// Stdout failed while events were shown (the turn was interrupted for it).
    pub output_failed: Option<StdoutError>,
    /// The `--output-schema` the answer must match.
    pub output_schema: Option<serde_json::Value>,
}

/// Ends the run: writes, checks and prints what `args` asks for, and says the exit status.
pub(crate) fn finish(args: &ExecArgs, end: RunEnd) -> Result<ExitCode> {
    if let Some(path) = &args.output_last_message {
        let text = end.last_message.as_deref().unwrap_or("");
        troupe_cli::output::write_user_file(path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(signal) = end.stopped {
        return Ok(signal.exit_code());
    }
    if let Some(err) = end.output_failed {
        return Err(err.into());
    }
    if let (Some(schema), true) = (&end.output_schema, end.succeeded) {
        if let Err(problem) = output_schema::check_answer(schema, end.last_message.as_deref()) {
            bail!("--output-schema: {problem}");
        }
    }
    if !args.json {
        if let Some(message) = &end.last_message {
            troupe_cli::output::line(visible(message))?;
        }
    }
    Ok(if end.succeeded {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
