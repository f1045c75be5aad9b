//! The one way Troupe runs `git` itself, on the host and unconfined (worktrees, commits,
//! diffstats, reviews, pushes and fetches, `troupe apply`).
//!
//! A repository's own config (`.git/config`, `config.worktree` and whatever they include) is
//! attacker input: a sandboxed command may have written it, or the repository came that way.
//! Many of its keys name a program git runs. So every run:
//! - overrides, at command scope (which beats every file), the single-valued keys that run
//!   something: `core.fsmonitor`, `core.hooksPath`, `core.pager`, and disables commit/tag/push
//!   signing (the signing program is config too);
//! - reads the config first (`git config --list`, which runs nothing) and, for each key set by
//!   the repository (`local`/`worktree` scope) whose name is chosen per driver or remote
//!   (`filter.<x>.clean`, `diff.<x>.textconv`, `remote.<x>.uploadpack`,
//!   `credential.<url>.helper`, `protocol.<x>.allow`, …), sets it back to the value the user's
//!   own config (system, global, environment) gives, or to a value that runs nothing;
//! - allows only the transports `file`, `git`, `http(s)` and `ssh` (no `ext::`, no remote helper
//!   the config names) and no proxy command;
//! - passes `--no-pager`, and `--no-ext-diff --no-textconv` to the commands that diff;
//! - refuses a repository whose config moves the work tree (`core.worktree`: `git add -A`
//!   would then read any directory of the host into a commit) or names the program run on
//!   the other side of a local fetch or push (`remote.<x>.uploadpack`/`receivepack`, where
//!   the first value read wins, so an override cannot replace it).
//!
//! Overrides go through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`, where
//! key and value are separate strings: a subsection holding `=` or `.` cannot change what
//! is set (as it could in a `-c key=value` argument).

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Why a git command could not run or failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HostGitError {
    #[error("cannot run git: {0}")]
    Spawn(String),
    #[error("cannot read the git config in {dir}: {reason}")]
    Config { dir: String, reason: String },
    #[error(
        "refusing to run git in {dir}: its repository config sets `{key}`, which Troupe does \
         not follow outside the sandbox"
    )]
    Refused { dir: String, key: String },
    /// The command ran and failed: its trimmed stderr (or what failed when it printed none).
    #[error("{0}")]
    Failed(String),
}

/// Config set on every run, whatever the repository says.
const ALWAYS: &[(&str, &str)] = &[
    // Runs a hook program on every index refresh (`status`, `add`, `diff`, `commit`).
    ("core.fsmonitor", "false"),
    // Hooks (`pre-commit`, `post-checkout`, `reference-transaction`, …) are programs.
    ("core.hooksPath", "/dev/null"),
    // A pager is a program (`--no-pager` too; `pager.<cmd>` loses to it).
    ("core.pager", "cat"),
    // Signing runs `gpg.program`/`gpg.<format>.program`; Troupe's commits are not signed.
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("log.showSignature", "false"),
    // Submodule recursion would run git (and its config) in other repositories.
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    // No background `gc`/`maintenance` left running on the host.
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    // Transports: only these; `ext::` runs a command, a remote helper (`<vcs>::`,
    // `remote.<x>.vcs`) runs `git-remote-<name>`. Other `protocol.<x>.allow` keys the
    // repository sets are put back to `never` (see `overrides`).
    ("protocol.allow", "never"),
    ("protocol.file.allow", "always"),
    ("protocol.git.allow", "always"),
    ("protocol.http.allow", "always"),
    ("protocol.https.allow", "always"),
    ("protocol.ssh.allow", "always"),
];

/// Protocols [`ALWAYS`] allows.
const ALLOWED_PROTOCOLS: &[&str] = &["file", "git", "http", "https", "ssh"];

/// Subcommands that diff file contents: an external diff or a textconv driver would run.
const DIFFING: &[&str] = &[
    "diff",
    "log",
    "show",
    "diff-tree",
    "diff-index",
    "diff-files",
];

/// Environment that would point git elsewhere than the directory it is run in.
const CLEARED_ENV: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_EXTERNAL_DIFF",
];

/// One config entry as `git config --list --show-scope` prints it (key as git spells it:
/// section and name lower case, subsection as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    pub scope: String,
    pub key: String,
    pub value: Option<String>,
}

impl ConfigEntry {
    /// Set by the repository (its config files, or files they include), not by the user.
    fn is_repository_set(&self) -> bool {
        matches!(self.scope.as_str(), "local" | "worktree")
    }
}

/// What to do with a key the repository sets.
#[derive(Debug, PartialEq, Eq)]
enum Handling {
    /// Harmless (or covered by [`ALWAYS`]).
    Keep,
    /// Back to the user's last value, else this one (which runs nothing).
    Single(&'static str),
    /// A list (`credential.helper`): emptied, then the user's values again in order.
    List,
    /// Git cannot be told to ignore it: refuse to run.
    Refuse,
}

fn handling(key: &str) -> Handling {
    let (section, rest) = key.split_once('.').unwrap_or((key, ""));
    let (subsection, name) = match rest.rsplit_once('.') {
        Some((sub, name)) => (Some(sub), name),
        None => (None, rest),
    };
    let section = section.to_ascii_lowercase();
    let name = name.to_ascii_lowercase();
    match (section.as_str(), subsection, name.as_str()) {
        // An empty driver command means "no filter" (clean, smudge, process).
        ("filter", Some(_), "clean" | "smudge" | "process") => Handling::Single(""),
        ("filter", Some(_), "required") => Handling::Single("false"),
        // Also disabled by `--no-textconv`/`--no-ext-diff`; emptied for commands without them.
        ("diff", Some(_), "textconv" | "command") => Handling::Single(""),
        ("merge", Some(_), "driver") => Handling::Single(""),
        // The first value read wins for these, so no override can replace the repository's.
        ("remote", Some(_), "uploadpack" | "receivepack") => Handling::Refuse,
        ("credential", _, "helper") => Handling::List,
        ("protocol", Some(proto), "allow") if !ALLOWED_PROTOCOLS.contains(&proto) => {
            Handling::Single("never")
        }
        ("core", None, "sshcommand") => Handling::Single("ssh"),
        // An empty askpass is skipped (git then asks on the terminal or fails).
        ("core", None, "askpass") => Handling::Single(""),
        ("core", None, "alternaterefscommand") => Handling::Single(""),
        ("core", None, "worktree") => Handling::Refuse,
        _ => Handling::Keep,
    }
}

/// The `(key, value)` overrides for this config, in order, after [`ALWAYS`]; or the key
/// that makes the repository refused.
pub fn overrides(entries: &[ConfigEntry]) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for entry in entries.iter().filter(|e| e.is_repository_set()) {
        if done.contains(&entry.key.as_str()) {
            continue;
        }
        let mut trusted = entries
            .iter()
            .filter(|e| !e.is_repository_set() && e.key == entry.key)
            .map(|e| e.value.clone().unwrap_or_default());
        match handling(&entry.key) {
            Handling::Keep => continue,
            Handling::Refuse => return Err(entry.key.clone()),
            Handling::Single(neutral) => {
                let value = trusted.next_back().unwrap_or_else(|| neutral.to_string());
                out.push((entry.key.clone(), value));
            }
            Handling::List => {
                // An empty value resets the list; the user's helpers follow.
                out.push((entry.key.clone(), String::new()));
                out.extend(trusted.map(|v| (entry.key.clone(), v)));
            }
        }
        done.push(&entry.key);
    }
    Ok(out)
}

/// Parses `git config --list -z --show-scope` output: `scope NUL key LF value NUL` (no LF
/// and no value for a bare boolean key).
pub fn parse_config_list(raw: &[u8]) -> Vec<ConfigEntry> {
    let text = String::from_utf8_lossy(raw);
    let mut fields = text.split('\0');
    let mut out = Vec::new();
    while let (Some(scope), Some(item)) = (fields.next(), fields.next()) {
        let (key, value) = match item.split_once('\n') {
            Some((key, value)) => (key, Some(value.to_string())),
            None => (item, None),
        };
        out.push(ConfigEntry {
            scope: scope.to_string(),
            key: key.to_string(),
            value,
        });
    }
    out
}

/// A `git <args>` command for `dir`, hardened as the module says. Reads the repository's
/// config first (runs git once). Spawn it with whatever stdio the caller needs.
pub fn command(dir: &Path, args: &[&str]) -> Result<Command, HostGitError> {
    let listed = base_command(dir, &[])
        .args(["config", "--list", "-z", "--show-scope", "--includes"])
        .stdin(Stdio::null())
        .output()
        .map_err(|err| HostGitError::Spawn(err.to_string()))?;
    // Outside a repository there is nothing of the repository's to read; a broken config
    // fails the real command with git's own message.
    let entries = if listed.status.success() {
        parse_config_list(&listed.stdout)
    } else {
        Vec::new()
    };
    let extra = overrides(&entries).map_err(|key| HostGitError::Refused {
        dir: dir.display().to_string(),
        key,
    })?;
    let mut cmd = base_command(dir, &extra);
    cmd.args(with_diff_flags(args));
    Ok(cmd)
}

/// Runs `git <args>` in `dir`: its stdout, or its trimmed stderr on failure.
pub fn run(dir: &Path, args: &[&str]) -> Result<String, HostGitError> {
    let output = command(dir, args)?
        .stdin(Stdio::null())
        .output()
        .map_err(|err| HostGitError::Spawn(err.to_string()))?;
    checked(args, output)
}

fn checked(args: &[&str], output: Output) -> Result<String, HostGitError> {
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        return Err(HostGitError::Failed(if stderr.is_empty() {
            format!("git {} failed", args.join(" "))
        } else {
            stderr
        }));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `--no-ext-diff --no-textconv` right after a diffing subcommand (options before it are
/// git's own, and none of Troupe's calls pass any).
fn with_diff_flags<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(args.len() + 2);
    let mut seen_subcommand = false;
    for arg in args {
        out.push(*arg);
        if !seen_subcommand && !arg.starts_with('-') && !is_option_value(&out) {
            seen_subcommand = true;
            if DIFFING.contains(arg) {
                out.extend(["--no-ext-diff", "--no-textconv"]);
            }
        }
    }
    out
}

/// Whether the last pushed argument is the value of a preceding `-c`/`-C` option.
fn is_option_value(pushed: &[&str]) -> bool {
    pushed.len() >= 2 && matches!(pushed[pushed.len() - 2], "-c" | "-C")
}

fn base_command(dir: &Path, extra: &[(String, String)]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("--no-pager").current_dir(dir);
    for name in CLEARED_ENV {
        cmd.env_remove(name);
    }
    // An editor or askpass is a program; Troupe never edits interactively.
    cmd.env("GIT_EDITOR", "false")
        .env("GIT_SEQUENCE_EDITOR", "false")
        // Beats `core.gitProxy`, whose first match wins (so no later setting overrides it);
        // empty means no proxy command.
        .env("GIT_PROXY_COMMAND", "");
    let first = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let all = ALWAYS
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .chain(
            extra
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
    let mut count = first;
    for (key, value) in all {
        cmd.env(format!("GIT_CONFIG_KEY_{count}"), key)
            .env(format!("GIT_CONFIG_VALUE_{count}"), value);
        count += 1;
    }
    cmd.env("GIT_CONFIG_COUNT", count.to_string());
    cmd
}

#[cfg(test)]
#[path = "host_git_tests.rs"]
mod tests;
