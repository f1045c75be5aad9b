//! Hook programs a sandboxed command could rewrite: a hook runs as the user, outside the
//! sandbox, so a script inside a writable root (`./ci/check.sh` in the workspace) is code
//! the model can change before the hook runs it. Such hooks are named in a warning.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use troupe_messages::policy::{PermissionProfile, SandboxMode, WritableRoot};
use troupe_messages::settings::SessionSettings;

/// Hooks already warned about in this process (command and cwd): once is enough.
static WARNED: Mutex<Option<HashSet<(String, PathBuf)>>> = Mutex::new(None);

/// A warning per hook whose command names a file (a word with a `/`, resolved against the
/// cwd) that sandboxed commands of `settings` can write; each hook once per process.
pub fn writable_hook_warnings(settings: &SessionSettings) -> Vec<String> {
    if settings.hooks.handlers.is_empty() || settings.sandbox_mode == SandboxMode::DangerFullAccess
    {
        return Vec::new();
    }
    let Ok(profile) = troupe_sandbox::profile::resolve_profile(
        settings.sandbox_mode,
        &settings.sandbox,
        &settings.cwd,
    ) else {
        return Vec::new();
    };
    let PermissionProfile::Managed { file_system, .. } = profile else {
        return Vec::new();
    };
    let Ok(mut warned) = WARNED.lock() else {
        return Vec::new();
    };
    let warned = warned.get_or_insert_with(HashSet::new);
    let mut warnings = Vec::new();
    for handler in &settings.hooks.handlers {
        let Some((program, root)) =
            writable_program(&handler.command, &settings.cwd, &file_system.writable_roots)
        else {
            continue;
        };
        if warned.insert((handler.command.clone(), settings.cwd.clone())) {
            warnings.push(format!(
                "hook `{}` runs {}, inside the writable root {}: a sandboxed command can \
                 rewrite it before the hook runs it as you (outside the sandbox); keep hook \
                 programs outside the writable roots, e.g. under $TROUPE_HOME/hooks",
                handler.command,
                program.display(),
                root.display()
            ));
        }
    }
    warnings
}

/// The first file `command` names that lies in one of `roots` (outside its read-only
/// subpaths), with that root.
pub fn writable_program(
    command: &str,
    cwd: &Path,
    roots: &[WritableRoot],
) -> Option<(PathBuf, PathBuf)> {
    let words = shlex::split(command)
        .unwrap_or_else(|| command.split_whitespace().map(str::to_string).collect());
    words
        .iter()
        .filter(|word| word.contains('/'))
        .map(|word| resolve(word, cwd))
        .find_map(|path| {
            roots
                .iter()
                .find(|root| {
                    path.starts_with(&root.root)
                        && !root
                            .read_only_subpaths
                            .iter()
                            .any(|ro| path.starts_with(ro))
                })
                .map(|root| (path.clone(), root.root.clone()))
        })
}

/// `word` as a path: `~/` is the home, a relative one is under `cwd`; resolved through the
/// file system when it exists (symlinks), else lexically (`.` and `..` folded).
fn resolve(word: &str, cwd: &Path) -> PathBuf {
    let joined = match word.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_default()
            .join(rest),
        None => cwd.join(word),
    };
    if let Ok(real) = std::fs::canonicalize(&joined) {
        return real;
    }
    let mut folded = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                folded.pop();
            }
            Component::CurDir => {}
            other => folded.push(other),
        }
    }
    // The cwd itself is canonical in the roots; a missing file under it still matches.
    match (std::fs::canonicalize(cwd), folded.strip_prefix(cwd)) {
        (Ok(real_cwd), Ok(rest)) => real_cwd.join(rest),
        _ => folded,
    }
}

#[cfg(test)]
#[path = "writable_tests.rs"]
mod tests;
