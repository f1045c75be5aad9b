//! The methods of Codex's app-server that Troupe does not implement, each with why: a client
//! gets a specific answer (and can tell "not here" from a typo, which still gets Codex's
//! unknown-variant error). The table in docs/app-server.md lists the same methods.

/// Why: the method needs OpenAI's hosted service or a ChatGPT account.
const HOSTED: &str = "it needs OpenAI's hosted service (a ChatGPT account, its apps, plugins \
                      or feedback), which Troupe does not use";
/// Why: the method exists for Windows.
const WINDOWS: &str = "it sets up Codex's Windows sandbox; Troupe runs on Linux";
/// Why: Troupe has no such local feature.
const NO_FEATURE: &str = "Troupe has no such feature";
/// Why: a local feature Troupe has, not offered over the app-server.
const NOT_OVER_APP_SERVER: &str = "Troupe's app-server does not implement it";

/// Each method Codex's schema names that Troupe does not answer, by exact name or by a
/// prefix ending in `/`, with the reason.
const UNSUPPORTED: &[(&str, &str)] = &[
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
    ("thread/metadata/update", NO_FEATURE),
    ("experimentalFeature/", NO_FEATURE),
    ("externalAgentConfig/", NO_FEATURE),
    ("thread/revert", NOT_OVER_APP_SERVER),
    ("thread/delete", NOT_OVER_APP_SERVER),
    ("thread/goal/", NOT_OVER_APP_SERVER),
    ("thread/shellCommand", NOT_OVER_APP_SERVER),
    ("thread/turns/list", NOT_OVER_APP_SERVER),
    ("thread/items/list", NOT_OVER_APP_SERVER),
    ("thread/inject_items", NOT_OVER_APP_SERVER),
    ("skills/", NOT_OVER_APP_SERVER),
    ("hooks/list", NOT_OVER_APP_SERVER),
    ("fs/", NOT_OVER_APP_SERVER),
    ("command/exec", NOT_OVER_APP_SERVER),
    ("mcpServer/", NOT_OVER_APP_SERVER),
    ("mcpServerStatus/list", NOT_OVER_APP_SERVER),
    ("config/mcpServer/reload", NOT_OVER_APP_SERVER),
    ("config/value/write", NOT_OVER_APP_SERVER),
    ("config/batchWrite", NOT_OVER_APP_SERVER),
    ("configRequirements/read", NOT_OVER_APP_SERVER),
    ("modelProvider/", NOT_OVER_APP_SERVER),
    ("permissionProfile/list", NOT_OVER_APP_SERVER),
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
