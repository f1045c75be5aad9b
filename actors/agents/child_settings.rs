//! The settings of a child: its parent's, narrowed — never wider (pure).

use troupe_messages::agents::AgentRole;
use troupe_messages::policy::SandboxMode;
use troupe_messages::settings::SessionSettings;

/// What `spawn_agent` asked for beyond the task.
#[derive(Debug, Clone, Default)]
pub struct ChildRequest<'a> {
    pub task_path: &'a str,
    pub role_name: &'a str,
    pub role: Option<&'a AgentRole>,
    pub model: Option<&'a str>,
    pub reasoning_effort: Option<&'a str>,
}

fn width(mode: SandboxMode) -> u8 {
    match mode {
        SandboxMode::ReadOnly => 0,
        SandboxMode::WorkspaceWrite => 1,
        SandboxMode::DangerFullAccess => 2,
    }
}

/// The child's settings: a copy of the parent's (approval policy, deny-read paths, writable
/// roots, network, rules and limits are inherited as they are), one level deeper, with the
/// role's and the call's overrides. A role whose sandbox is wider than the parent's is
/// refused: nothing a model asks for may widen what runs.
pub fn child_settings(
    parent: &SessionSettings,
    request: &ChildRequest<'_>,
) -> Result<SessionSettings, String> {
    let mut child = parent.clone();
    child.agents.depth = parent.agents.depth + 1;
    child.agents.task_path = request.task_path.to_string();
    if let Some(role) = request.role {
        if let Some(mode) = role.sandbox_mode {
            if width(mode) > width(parent.sandbox_mode) {
                return Err(format!(
                    "role `{}` runs under sandbox `{}`, wider than this agent's `{}`; a sub-agent \
                     may narrow its permissions, never widen them",
                    request.role_name,
                    mode.as_str(),
                    parent.sandbox_mode.as_str()
                ));
            }
            child.sandbox_mode = mode;
        }
        if let Some(model) = &role.model {
            child.model = model.clone();
        }
        if let Some(effort) = &role.reasoning_effort {
            child.context.reasoning_effort = Some(effort.clone());
        }
        if let Some(text) = role
            .developer_instructions
            .as_deref()
            .filter(|t| !t.is_empty())
        {
            child.base_instructions = format!("{}\n\n{text}", parent.base_instructions);
        }
    }
    if let Some(model) = request.model.filter(|m| !m.trim().is_empty()) {
        child.model = model.trim().to_string();
    }
    if let Some(effort) = request.reasoning_effort {
        let effort = effort.trim().to_ascii_lowercase();
        const EFFORTS: &[&str] = &["minimal", "low", "medium", "high", "xhigh"];
        if !EFFORTS.contains(&effort.as_str()) {
            return Err(format!(
                "`reasoning_effort` `{effort}` is not one of {}",
                EFFORTS.join(", ")
            ));
        }
        child.context.reasoning_effort = Some(effort);
    }
    Ok(child)
}
