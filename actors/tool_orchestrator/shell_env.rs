//! The environment of spawned commands, per `shell_environment_policy` (as Codex: inherit
//! all/core/none, drop `*KEY*`/`*SECRET*`/`*TOKEN*` unless told not to, exclude globs,
//! include-only globs, then set).

use std::collections::BTreeMap;
use troupe_messages::settings::{SessionSettings, ShellEnvInherit, ShellEnvPolicy};

/// Variables kept by `inherit = "core"`.
const CORE_VARS: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "USER", "USERNAME", "TMPDIR", "TEMP", "TMP", "LANG",
    "LC_ALL", "LC_CTYPE", "TERM",
];

/// The environment of everything Troupe starts from a session: the model's commands, hooks,
/// the `notify` program. The policy's environment ([`child_env`]), without the provider's
/// key variable even when its name says nothing of a key (the policy's default excludes only
/// `*KEY*`, `*SECRET*`, `*TOKEN*`) or the policy keeps such names — unless the policy's `set`
/// names it, which is the user's own choice.
pub fn spawn_env(settings: &SessionSettings) -> BTreeMap<String, String> {
    let policy = &settings.context.shell_env;
    let mut env = child_env(policy, std::env::vars());
    if let Some(key) = &settings.provider.env_key {
        if !policy.set.contains_key(key) {
            env.remove(key);
        }
    }
    env
}

/// Builds the child environment from `parent` (usually `std::env::vars()`).
pub fn child_env(
    policy: &ShellEnvPolicy,
    parent: impl Iterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = match policy.inherit {
        ShellEnvInherit::None => BTreeMap::new(),
        ShellEnvInherit::Core => parent
            .filter(|(k, _)| CORE_VARS.contains(&k.as_str()))
            .collect(),
        ShellEnvInherit::All => parent.collect(),
    };
    if !policy.ignore_default_excludes {
        env.retain(|name, _| {
            let upper = name.to_ascii_uppercase();
            !["KEY", "SECRET", "TOKEN"].iter().any(|w| upper.contains(w))
        });
    }
    env.retain(|name, _| !policy.exclude.iter().any(|g| glob_match(g, name)));
    if !policy.include_only.is_empty() {
        env.retain(|name, _| policy.include_only.iter().any(|g| glob_match(g, name)));
    }
    for (name, value) in &policy.set {
        env.insert(name.clone(), value.clone());
    }
    env
}

/// Case-insensitive glob with `*` (any run) and `?` (one char).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a.eq_ignore_ascii_case(b) => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}
