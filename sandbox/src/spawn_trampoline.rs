//! Starting a command without forking the runtime.
//!
//! A command must die with troupe (`PR_SET_PDEATHSIG`) and lead its own session or process
//! group without the controlling terminal (`containment.rs`); both need
//! code between fork and exec, which makes the standard library fork instead of using
//! `posix_spawn`. Forking a large multi-threaded process copies its page tables under the
//! memory-map lock, so every other thread that touches fresh memory stalls until the copy is
//! done: with many turns at once that stall dominated command start-up. Instead the runtime
//! `posix_spawn`s this small trampoline (`vfork`-like: nothing is copied), which sets both in
//! its own single-threaded process and then execs the command.
#![allow(
    clippy::print_stderr,
    reason = "a sandbox helper reports its own failures on the stderr it shares with the command"
)]

use crate::containment::Containment;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// First argument that turns the helper binary into the trampoline:
/// `SPAWN_ARG PARENT_PID CONTAINMENT -- PATH ARGV0 ARGS...`: CONTAINMENT is `session` or
/// `group` ([`Containment`]), PATH the program already resolved, ARGV0 the name it was asked
/// for (what the command sees as its own name, as when forked).
pub const SPAWN_ARG: &str = "--troupe-sandbox-spawn";
/// Exit code when the runtime died before the trampoline could tie itself to it.
pub const PARENT_GONE_EXIT: i32 = 125;

/// The trampoline half. Never returns when it execs the command.
pub fn run(args: &[OsString]) -> i32 {
    let (parent, containment, path, argv) = match parse(args) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("troupe: {message}");
            return 2;
        }
    };
    apply_user_mask();
    // SAFETY: plain syscalls on this single-threaded process.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
            eprintln!(
                "troupe: PR_SET_PDEATHSIG: {}",
                std::io::Error::last_os_error()
            );
            return 126;
        }
        // Troupe died before the line above: the signal will never come.
        if libc::getppid() != parent {
            return PARENT_GONE_EXIT;
        }
        if let Err(err) = containment.enter() {
            eprintln!("troupe: entering its own {}: {err}", containment.as_arg());
            return 126;
        }
    }
    exec(&path, &argv)
}

/// Applies the user's file-creation mask, which the runtime replaced with a private one for
/// its own files, and drops the variable that carried it (it is not the command's).
pub(crate) fn apply_user_mask() {
    if let Some(mask) = std::env::var_os(troupe_messages::file_mask::TRAMPOLINE_MASK_VAR) {
        // SAFETY: this process is single-threaded: nothing reads the environment meanwhile.
        unsafe { std::env::remove_var(troupe_messages::file_mask::TRAMPOLINE_MASK_VAR) };
        if let Some(mask) = mask.to_str().and_then(|m| u32::from_str_radix(m, 8).ok()) {
            // SAFETY: a plain syscall.
            unsafe { libc::umask((mask & 0o777) as libc::mode_t) };
        }
    }
}

/// Execs `path` with `argv`; returns the exit code to leave with when that fails.
pub(crate) fn exec(path: &CString, argv: &[CString]) -> i32 {
    let mut pointers: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    pointers.push(std::ptr::null());
    // SAFETY: `pointers` is a NULL-terminated array of C strings that outlive the call. The
    // same `execvp` the standard library uses after fork, so scripts without `#!` still run
    // through /bin/sh as before.
    unsafe { libc::execvp(path.as_ptr(), pointers.as_ptr()) };
    let err = std::io::Error::last_os_error();
    eprintln!(
        "troupe: cannot run `{}`: {err}",
        String::from_utf8_lossy(path.as_bytes())
    );
    if err.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

/// The trampoline's arguments: parent pid, containment, program path, argv.
pub(crate) type Parsed = (libc::pid_t, Containment, CString, Vec<CString>);

pub(crate) fn parse(args: &[OsString]) -> Result<Parsed, String> {
    parse_with(args, Containment::from_arg, || {
        format!(
            "usage: troupe-sandbox {SPAWN_ARG} PARENT_PID session|group -- PATH ARGV0 [ARGS...]"
        )
    })
}

/// `PARENT_PID PLACEMENT -- PATH ARGV0 ARGS...`, the placement read by `placement`.
pub(crate) fn parse_with<P>(
    args: &[OsString],
    placement: impl Fn(&str) -> Option<P>,
    usage: impl Fn() -> String,
) -> Result<(libc::pid_t, P, CString, Vec<CString>), String> {
    let parent = args
        .first()
        .and_then(|pid| pid.to_str())
        .and_then(|pid| pid.parse::<libc::pid_t>().ok())
        .ok_or_else(&usage)?;
    let containment = args
        .get(1)
        .and_then(|arg| arg.to_str())
        .and_then(placement)
        .ok_or_else(&usage)?;
    if args.get(2).map(|a| a.as_bytes()) != Some(b"--") || args.len() < 5 {
        return Err(usage());
    }
    let mut strings = args[3..]
        .iter()
        .map(|arg| {
            CString::new(arg.clone().into_vec())
                .map_err(|_| "an argument contains a NUL byte".to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let path = strings.remove(0);
    Ok((parent, containment, path, strings))
}

/// Where `program` would be found by `execvp` run in `cwd` with `path_var` as `PATH`: the
/// runtime resolves it first so that a missing program is a start error, as it is when the
/// runtime execs it itself, not an exit code from the trampoline.
pub fn resolve_program(program: &OsStr, cwd: &Path, path_var: Option<&OsStr>) -> Option<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        let path = cwd.join(program);
        return is_executable_file(&path).then_some(path);
    }
    if program.is_empty() {
        return None;
    }
    // execvp's default search path when PATH is unset.
    let search = path_var.unwrap_or(OsStr::new("/bin:/usr/bin"));
    search.as_bytes().split(|b| *b == b':').find_map(|dir| {
        // An empty entry means the current directory.
        let dir = if dir.is_empty() {
            cwd.to_path_buf()
        } else {
            cwd.join(OsStr::from_bytes(dir))
        };
        let candidate = dir.join(program);
        is_executable_file(&candidate).then_some(candidate)
    })
}

fn is_executable_file(path: &Path) -> bool {
    let Ok(c_path) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid C string; access(2) only reads it.
    let executable = unsafe { libc::access(c_path.as_ptr(), libc::X_OK) } == 0;
    executable && path.metadata().map(|m| m.is_file()).unwrap_or(false)
}
