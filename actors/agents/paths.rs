//! Task names and task paths: validation and resolution of a tool's `target` (pure).

use troupe_messages::agents::ROOT_TASK_PATH;

/// Longest task name accepted.
const MAX_TASK_NAME: usize = 64;

/// Checks a `task_name`: lowercase letters, digits and underscores, 1–64 characters.
pub fn check_task_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("`task_name` is empty; use lowercase letters, digits and underscores".into());
    }
    if name.len() > MAX_TASK_NAME {
        return Err(format!(
            "`task_name` is {} characters long; at most {MAX_TASK_NAME} are allowed",
            name.len()
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_'))
    {
        return Err(format!(
            "`task_name` `{name}` contains `{bad}`; use lowercase letters, digits and underscores"
        ));
    }
    Ok(())
}

/// The task path of a child named `name` spawned by the agent at `parent`.
pub fn child_path(parent: &str, name: &str) -> String {
    format!("{}/{name}", parent.trim_end_matches('/'))
}

/// A `target` as a canonical task path: absolute paths are taken as they are (without a
/// trailing slash), relative names resolve under the caller's path.
pub fn resolve_target(caller: &str, target: &str) -> Result<String, String> {
    let target = target.trim();
    if target.is_empty() {
        return Err("`target` is empty; give a task name or a thread id".into());
    }
    let path = if target.starts_with('/') {
        target.trim_end_matches('/').to_string()
    } else {
        child_path(caller, target.trim_end_matches('/'))
    };
    if path != ROOT_TASK_PATH && !path.starts_with("/root/") {
        return Err(format!(
            "`{target}` is not a task path of this agent tree (paths start with `/root`)"
        ));
    }
    if path
        .split('/')
        .skip(2)
        .any(|part| check_task_name(part).is_err())
    {
        return Err(format!("`{target}` is not a valid task path"));
    }
    Ok(path)
}

/// Whether `path` is `prefix` or lies under it.
pub fn under(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    path == prefix || path.starts_with(&format!("{prefix}/"))
}

/// Readable names given to agents in spawn order (then numbered).
const NICKNAMES: &[&str] = &[
    "Ada", "Brook", "Cyrus", "Dara", "Emil", "Fern", "Gus", "Hana", "Ivo", "Jade", "Kai", "Lena",
    "Milo", "Nia", "Otto", "Pia", "Quinn", "Rafa", "Sol", "Tess", "Uma", "Vik", "Wren", "Yara",
];

/// The nickname of the `n`-th agent (from 0) spawned in a process.
pub fn nickname(n: usize) -> String {
    let base = NICKNAMES[n % NICKNAMES.len()];
    match n / NICKNAMES.len() {
        0 => base.to_string(),
        round => format!("{base} {}", round + 1),
    }
}
