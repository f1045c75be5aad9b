//! The methods of Codex's app-server that Troupe does not implement, each with why: a client
//! gets a specific answer (and can tell "not here" from a typo, which still gets Codex's
//! unknown-variant error). The table in docs/app-server.md lists the same methods (checked
//! by `unsupported_tests.rs` against the committed list of Codex's methods).

/// Why: the method needs OpenAI's hosted service or a ChatGPT account.
const HOSTED: &str = "it needs OpenAI's hosted service (a ChatGPT account, its apps, plugins \
                      or feedback), which Troupe does not use";
/// Why: the method exists for Windows.
const WINDOWS: &str = "it sets up Codex's Windows sandbox; Troupe runs on Linux";
/// Why: Troupe has no such local feature.
const NO_FEATURE: &str = "Troupe has no such feature";
/// Why: Troupe's configuration is its files, never written by a client.
const CONFIG_FILES: &str = "Troupe's configuration is its files (`config.toml`, \
                            `requirements.toml`) and the server's `-c` overrides; clients read it \
                            with `config/read` and do not write it";

/// Each method Codex's schema names that Troupe does not answer, by exact name or by a
/// prefix ending in `/`, with the reason.
pub const UNSUPPORTED: &[(&str, &str)] = &[
    ("account/", HOSTED),
    ("feedback/", HOSTED),
    ("marketplace/", HOSTED),
    ("plugin/", HOSTED),
    ("app/", HOSTED),
    ("thread/approveGuardianDeniedAction", HOSTED),
    ("windowsSandbox/", WINDOWS),
    ("thread/attachment/", NO_FEATURE),
    ("thread/attachmentOwner/", NO_FEATURE),
    ("thread/section/", NO_FEATURE),
    ("threadSection/", NO_FEATURE),
    ("thread/metadata/update", "Troupe records no editable thread metadata besides the name (`thread/name/set`)"),
    ("experimentalFeature/", "Troupe has no experimental-feature switches"),
    ("externalAgentConfig/", "Troupe imports no other agent's configuration"),
    ("thread/delete", "Troupe keeps every thread's rollout; archive it with `thread/archive`"),
    ("thread/goal/", "a Troupe thread's goal is set and updated by the model's goal tools and `troupe exec --goal`, not by clients"),
    ("thread/inject_items", "a Troupe thread's history grows only through its turns (`turn/start`, `turn/steer`)"),
    ("skills/extraRoots/set", "Troupe's skills are found in `$TROUPE_HOME/skills/` and the project's `.agents/skills/` only (see `skills/list`)"),
    ("skills/config/write", "Troupe has no per-skill settings: every skill found is listed to the model"),
    ("hooks/list", "hooks are the `[[hooks.EVENT]]` tables of the configuration (see `config/read`); their runs come as `hook/started`/`hook/completed`"),
    ("fs/watch", "Troupe's app-server does not watch files for clients (no `fs/changed`); poll with `fs/getMetadata`"),
    ("fs/unwatch", "Troupe's app-server does not watch files for clients (no `fs/changed`); poll with `fs/getMetadata`"),
    ("command/exec/write", "Troupe's `command/exec` runs the command to its end with no stdin"),
    ("command/exec/resize", "Troupe's `command/exec` runs no terminal (PTY)"),
    ("command/exec/terminate", "Troupe's `command/exec` takes no `processId`; the command ends by itself or at its timeout"),
    ("mcpServer/", "Troupe's MCP servers are configured in `config.toml` and used by the model's turns; the app-server offers no MCP calls or logins to clients"),
    ("mcpServerStatus/list", "Troupe's MCP servers are configured in `config.toml` and used by the model's turns; the app-server reports no server status"),
    ("config/mcpServer/reload", "each new thread reads `config.toml` afresh (MCP servers included); there is nothing to reload"),
    ("config/value/write", CONFIG_FILES),
    ("config/batchWrite", CONFIG_FILES),
    ("configRequirements/read", "`requirements.toml` applies when settings resolve (a refused setting is an error naming the rule); it is not offered as a read-out"),
    ("modelProvider/", "model providers are the `[model_providers]` tables of `config.toml` (see `config/read`); the app-server does not list or write them"),
    ("permissionProfile/list", "Troupe's sandbox is one of its three modes (`read-only`, `workspace-write`, `danger-full-access`) with the `[sandbox_workspace_write]` settings; it has no named profiles"),
];

/// The error for a Codex method Troupe does not implement; none for a name Codex does not
/// have either.
pub fn unsupported(method: &str) -> Option<String> {
    UNSUPPORTED
        .iter()
        .find(|(name, _)| {
            method == *name
                || (name.ends_with('/') && method.starts_with(name))
                || method
                    .strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('/'))
        })
        .map(|(_, why)| format!("`{method}` is not supported by Troupe: {why}"))
}
