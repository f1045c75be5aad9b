//! Checked output: a write to stdout that fails (a closed pipe, a full disk) is an error the
//! command returns, never a panic (`println!` panics). `main` exits quietly with status 141
//! (what a shell shows for a process killed by SIGPIPE) when the reader went away, and with an
//! error naming the cause otherwise.

use std::fmt::Display;
use std::io::Write;
use thiserror::Error;
use troupe_messages::terminal_text::visible;

/// Stdout could not be written.
#[derive(Debug, Error)]
#[error("cannot write to stdout: {0}")]
pub struct StdoutError(pub std::io::Error);

impl StdoutError {
    /// The reader of a pipe went away (`troupe list | head -1`).
    pub fn is_closed_pipe(&self) -> bool {
        self.0.kind() == std::io::ErrorKind::BrokenPipe
    }
}

/// Writes `text` and a newline to stdout, flushed.
pub fn line(text: impl Display) -> Result<(), StdoutError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(StdoutError)
}

/// A warning on stderr, control characters made visible (a warning may quote a command, a
/// file or a worker); a stderr that cannot be written is ignored (there is nowhere else).
pub fn warn(text: impl Display) {
    let _ = writeln!(
        std::io::stderr().lock(),
        "warning: {}",
        visible(&text.to_string())
    );
}

/// The exit status for a failed command: quiet 141 for a closed stdout pipe, else the error.
pub fn failure_code(err: &anyhow::Error) -> std::process::ExitCode {
    let closed = err
        .chain()
        .filter_map(|cause| cause.downcast_ref::<StdoutError>())
        .any(StdoutError::is_closed_pipe);
    if closed {
        return std::process::ExitCode::from(141);
    }
    let _ = writeln!(
        std::io::stderr().lock(),
        "error: {}",
        visible(&format!("{err:#}"))
    );
    std::process::ExitCode::FAILURE
}

/// Writes a file the user named on the command line (`-o`): a new one gets the user's file
/// mask, not the private one the binary runs with for its home (an existing one keeps its
/// mode).
pub fn write_user_file(path: &std::path::Path, contents: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let existed = path.exists();
    std::fs::write(path, contents)?;
    if let (false, Some(mask)) = (existed, troupe_messages::file_mask::user_mask()) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666 & !mask))?;
    }
    Ok(())
}
