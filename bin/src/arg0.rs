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
use troupe_apply_patch as apply_patch;

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

/// The per-run directory holding `apply_patch` → this executable, first on our PATH (which
/// every spawned command inherits). It lives under `$TROUPE_HOME/tmp/arg0/`, never in a temp
/// dir: `/tmp` is a writable root, and a command could drop a `git` there for the next
/// unconfined command to run. Removed when the guard drops; a run killed before that leaves
/// it behind for the next start to sweep (its lock is free then).
pub struct LinkDir {
    _dir: tempfile::TempDir,
    /// Held (locked) while this run lives; tells the sweep the directory is in use.
    _lock: std::fs::File,
}

/// Name of the lock file inside each link directory.
const LOCK_FILE: &str = ".lock";
/// A directory without its lock yet may be one being created right now.
const YOUNG: std::time::Duration = std::time::Duration::from_secs(60);

/// Creates the link directory under `home`, sweeps stale ones, and prepends it to PATH.
pub fn install_path_link(home: &Path) -> Result<LinkDir, String> {
    let exe = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .map_err(|err| format!("cannot locate the troupe executable: {err}"))?;
    let base = private_dir_chain(home, &["tmp", "arg0"])?;
    sweep_stale(&base);
    let dir = tempfile::Builder::new()
        .prefix("troupe-arg0-")
        .tempdir_in(&base)
        .map_err(|err| format!("cannot create a directory for the apply_patch link: {err}"))?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(|err| format!("cannot restrict {}: {err}", dir.path().display()))?;
    }
    let lock = lock_file(&dir.path().join(LOCK_FILE), true)
        .map_err(|err| format!("cannot lock {}: {err}", dir.path().display()))?
        .ok_or_else(|| format!("{} is locked by another run", dir.path().display()))?;
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
    Ok(LinkDir {
        _dir: dir,
        _lock: lock,
    })
}

/// `home/a/b…`, each level created mode 0700 when missing and checked when present: a real
/// directory (not a symlink), owned by us, not writable by group or others. Anything else
/// could let another user (or a link into a writable root) put programs on our PATH.
pub fn private_dir_chain(home: &Path, levels: &[&str]) -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(home)
        .map_err(|err| format!("cannot create {}: {err}", home.display()))?;
    let mut dir = home.to_path_buf();
    for level in levels {
        dir.push(level);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(format!("cannot create {}: {err}", dir.display())),
        }
        check_private(&dir)?;
    }
    Ok(dir)
}

fn check_private(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = dir
        .symlink_metadata()
        .map_err(|err| format!("cannot inspect {}: {err}", dir.display()))?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let problem = if meta.file_type().is_symlink() {
        Some("is a symlink")
    } else if !meta.is_dir() {
        Some("is not a directory")
    } else if meta.uid() != me {
        Some("is owned by another user")
    } else if meta.mode() & 0o022 != 0 {
        Some("is writable by group or others")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(format!(
            "{} {problem}; refusing to put programs from it on PATH (remove it)",
            dir.display()
        )),
        None => Ok(()),
    }
}

/// Removes link directories whose run has ended (their lock is free), keeping young ones
/// that may still be getting their lock.
pub fn sweep_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_link_dir = entry
            .file_name()
            .to_string_lossy()
            .starts_with("troupe-arg0-")
            && entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_link_dir {
            continue;
        }
        match lock_file(&path.join(LOCK_FILE), false) {
            // Locked here: no live run holds it. Removed while we hold the lock.
            Ok(Some(_held)) => {
                let _ = std::fs::remove_dir_all(&path);
            }
            Ok(None) => {} // a live run
            Err(_) => {
                let young = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_none_or(|age| age < YOUNG);
                if !young {
                    let _ = std::fs::remove_dir_all(&path);
                }
            }
        }
    }
}

/// Opens (creating it when `create`) and locks `path` exclusively without waiting:
/// `Ok(None)` when another process holds it.
fn lock_file(path: &Path, create: bool) -> std::io::Result<Option<std::fs::File>> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        Ok(Some(file))
    } else {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
            Ok(None)
        } else {
            Err(err)
        }
    }
}

#[cfg(test)]
#[path = "arg0_tests.rs"]
mod tests;
