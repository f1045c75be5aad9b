//! The binary's other personality: invoked as `apply_patch` (a symlink or hard link named
//! so), it applies the patch in its one argument, or on stdin, relative to the cwd, with
//! Codex's messages and exit codes (0 applied, 1 patch error, 2 usage).
//!
//! `troupe` itself puts such a link first on the PATH its commands inherit, so a model that
//! runs `apply_patch` in a script it wrote still gets Troupe's atomic apply.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;
use troupe_actors::tool_orchestrator::apply_patch;

/// Names under which the binary acts as `apply_patch`.
const NAMES: [&str; 2] = ["apply_patch", "applypatch"];

/// `Some(exit code)` when the binary was invoked as `apply_patch`.
pub fn dispatch() -> Option<ExitCode> {
    let mut args = std::env::args_os();
    let argv0 = args.next()?;
    let name = Path::new(&argv0).file_name()?.to_str()?;
    if !NAMES.contains(&name) {
        return None;
    }
    let code = run(
        args.collect(),
        &mut std::io::stdin(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    Some(ExitCode::from(code))
}

/// `apply_patch [PATCH]` with its I/O passed in, so tests can drive it.
pub fn run(
    args: Vec<OsString>,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let patch = match args.as_slice() {
        [] => {
            let mut buf = String::new();
            if let Err(err) = stdin.read_to_string(&mut buf) {
                let _ = writeln!(stderr, "Error: Failed to read PATCH from stdin.\n{err}");
                return 1;
            }
            if buf.is_empty() {
                let _ = writeln!(
                    stderr,
                    "Usage: apply_patch 'PATCH'\n       echo 'PATCH' | apply_patch"
                );
                return 2;
            }
            buf
        }
        [patch] => match patch.to_str() {
            Some(patch) => patch.to_string(),
            None => {
                let _ = writeln!(
                    stderr,
                    "Error: apply_patch requires a UTF-8 PATCH argument."
                );
                return 1;
            }
        },
        _ => {
            let _ = writeln!(stderr, "Error: apply_patch accepts exactly one argument.");
            return 2;
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(err) => {
            let _ = writeln!(stderr, "Error: cannot read the current directory: {err}");
            return 1;
        }
    };
    match apply_patch::apply_patch(&patch, &cwd) {
        Ok(plan) => {
            let _ = write!(stdout, "{}", apply_patch::summary(&plan.affected));
            let _ = stdout.flush();
            0
        }
        Err(error) => {
            let _ = writeln!(stderr, "{error}");
            1
        }
    }
}

/// A temp directory holding `apply_patch` → this executable, put first on our PATH (which
/// every spawned command inherits). Removed when the returned guard drops.
pub fn install_path_link() -> Result<tempfile::TempDir, String> {
    let exe = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .map_err(|err| format!("cannot locate the troupe executable: {err}"))?;
    let dir = tempfile::Builder::new()
        .prefix("troupe-arg0-")
        .tempdir()
        .map_err(|err| format!("cannot create a directory for the apply_patch link: {err}"))?;
    for name in NAMES {
        std::os::unix::fs::symlink(&exe, dir.path().join(name))
            .map_err(|err| format!("cannot link {name} to {}: {err}", exe.display()))?;
    }
    let mut paths = vec![dir.path().to_path_buf()];
    if let Some(path) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&path));
    }
    let joined = std::env::join_paths(paths)
        .map_err(|err| format!("cannot add the apply_patch link to PATH: {err}"))?;
    // Called before any other thread exists (see main), so changing the environment is safe.
    std::env::set_var("PATH", joined);
    Ok(dir)
}

#[cfg(test)]
#[path = "arg0_tests.rs"]
mod tests;
