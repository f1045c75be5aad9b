//! Feature flags (`[features]`, `--enable/--disable FEATURE`, `troupe features list`): named
//! switches over real settings, as Codex's. Each flag here changes what the model is offered;
//! a name not in [`FEATURES`] is reported (a warning in a file, an error on the command line).

use troupe_messages::settings::{ApplyPatchToolType, SessionSettings, ShellToolType};

/// How far along a feature is (shown by `troupe features list`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Stable,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Stable => "stable",
        }
    }
}

/// One feature flag: its name, stage, what it switches and how to read its state back.
pub struct Feature {
    pub name: &'static str,
    pub stage: Stage,
    pub description: &'static str,
    apply: fn(&mut SessionSettings, bool),
    state: fn(&SessionSettings) -> bool,
}

impl Feature {
    /// Sets the feature on or off in `settings`.
    pub fn apply(&self, settings: &mut SessionSettings, enabled: bool) {
        (self.apply)(settings, enabled);
    }

    /// Whether `settings` have the feature on.
    pub fn enabled(&self, settings: &SessionSettings) -> bool {
        (self.state)(settings)
    }
}

/// Every feature flag Troupe knows, by name (Codex's names where the concept is the same).
pub const FEATURES: &[Feature] = &[
    Feature {
        name: "apply_patch_freeform",
        stage: Stage::Stable,
        description:
            "offer apply_patch as a grammar-constrained custom tool (off: a JSON function)",
        apply: |s, on| {
            s.tools.apply_patch = if on {
                ApplyPatchToolType::Freeform
            } else {
                ApplyPatchToolType::Function
            }
        },
        state: |s| s.tools.apply_patch == ApplyPatchToolType::Freeform,
    },
    Feature {
        name: "multi_agent",
        stage: Stage::Stable,
        description: "offer the sub-agent tools (spawn_agent, send_input, wait, close_agent)",
        apply: |s, on| s.agents.enabled = on,
        state: |s| s.agents.enabled,
    },
    Feature {
        name: "unified_exec",
        stage: Stage::Stable,
        description: "offer exec_command + write_stdin (PTY sessions) instead of shell",
        apply: |s, on| {
            s.tools.shell = if on {
                ShellToolType::ExecCommand
            } else {
                ShellToolType::Shell
            }
        },
        state: |s| s.tools.shell == ShellToolType::ExecCommand,
    },
    Feature {
        name: "request_permissions_tool",
        stage: Stage::Stable,
        description: "offer request_permissions: the model asks for extra writable paths or \
                      network for the rest of the turn or session",
        apply: |s, on| s.tools.request_permissions = on,
        state: |s| s.tools.request_permissions,
    },
];

/// The feature named `name`.
pub fn find(name: &str) -> Option<&'static Feature> {
    FEATURES.iter().find(|f| f.name == name)
}

/// The known names, comma-separated (for error messages).
pub fn known_names() -> String {
    FEATURES
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}
