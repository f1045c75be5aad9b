//! How the collaboration tools are advertised: Codex's names and argument names, our words.

use serde_json::json;
use std::collections::BTreeMap;
use troupe_messages::agents::AgentRole;
use troupe_messages::cluster::Placement;
use troupe_messages::tools::ToolSpec;

/// Which collaboration tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollabTool {
    Spawn,
    SendMessage,
    Followup,
    Wait,
    Interrupt,
    List,
    Close,
}

impl CollabTool {
    pub const ALL: [CollabTool; 7] = [
        CollabTool::Spawn,
        CollabTool::SendMessage,
        CollabTool::Followup,
        CollabTool::Wait,
        CollabTool::Interrupt,
        CollabTool::List,
        CollabTool::Close,
    ];
}

fn function(name: &str, description: String, parameters: serde_json::Value) -> ToolSpec {
    ToolSpec::Function {
        name: name.into(),
        description,
        strict: false,
        parameters,
    }
}

fn target(what: &str) -> serde_json::Value {
    json!({"type": "string", "description": format!(
        "Task path (`/root/explore`), a name relative to yours (`explore`), or the agent id {what}."
    )})
}

/// The spec of one tool; `roles` are listed in `spawn_agent`'s description, which takes
/// a `placement` (with this default) only when one is given (a worker pool is configured).
pub fn spec(
    tool: CollabTool,
    roles: &BTreeMap<String, AgentRole>,
    placement: Option<Placement>,
) -> ToolSpec {
    match tool {
        CollabTool::Spawn => {
            let mut spec = spawn_spec(roles);
            if let (Some(default), ToolSpec::Function { parameters, .. }) = (placement, &mut spec) {
                parameters["properties"]["placement"] = placement_param(default);
            }
            spec
        }
        CollabTool::SendMessage => function(
            "send_message",
            "Sends a message to another agent of your tree (your parent is `/root` or its \
             path). It is queued into the agent's history; it does not start a turn."
                .into(),
            json!({
                "type": "object",
                "properties": {
                    "target": target("to message"),
                    "message": {"type": "string", "description": "Text to send."}
                },
                "required": ["target", "message"],
                "additionalProperties": false
            }),
        ),
        CollabTool::Followup => function(
            "followup_task",
            "Gives a sub-agent more work: starts a turn if it is idle, otherwise the task \
             joins its running turn at its next step."
                .into(),
            json!({
                "type": "object",
                "properties": {
                    "target": target("to give the task to"),
                    "message": {"type": "string", "description": "The follow-up task."}
                },
                "required": ["target", "message"],
                "additionalProperties": false
            }),
        ),
        CollabTool::Wait => function(
            "wait_agent",
            "Waits until an agent has news for you (a final answer, a failure, a message) or \
             the timeout passes, and returns what arrived. Returns at once when no agent is \
             running. Call again to collect more."
                .into(),
            json!({
                "type": "object",
                "properties": {
                    "timeout_ms": {"type": "number", "description":
                        "Milliseconds to wait; default 30000, at most 3600000."}
                },
                "additionalProperties": false
            }),
        ),
        CollabTool::Interrupt => function(
            "interrupt_agent",
            "Stops an agent's running turn (and its sub-agents' turns) and returns its \
             previous status. The agent stays open for messages and follow-up tasks."
                .into(),
            json!({
                "type": "object",
                "properties": {"target": target("to interrupt")},
                "required": ["target"],
                "additionalProperties": false
            }),
        ),
        CollabTool::List => function(
            "list_agents",
            "Lists the open agents of your tree with their status, optionally under a task \
             path prefix."
                .into(),
            json!({
                "type": "object",
                "properties": {
                    "path_prefix": {"type": "string", "description":
                        "Task path prefix without a trailing slash; omit for all."}
                },
                "additionalProperties": false
            }),
        ),
        CollabTool::Close => function(
            "close_agent",
            "Closes a sub-agent and its own sub-agents: their running turns stop and their \
             threads shut down (they stay resumable from their rollouts)."
                .into(),
            json!({
                "type": "object",
                "properties": {"target": target("to close")},
                "required": ["target"],
                "additionalProperties": false
            }),
        ),
    }
}

fn spawn_spec(roles: &BTreeMap<String, AgentRole>) -> ToolSpec {
    let role_lines: Vec<String> = roles
        .iter()
        .map(|(name, role)| format!("- `{name}`: {}", role.description))
        .collect();
    function(
        "spawn_agent",
        format!(
            "Starts a sub-agent on a task; it runs in parallel with you, in its own \
             thread with its own history and tools. If your task path is `/root/a` and \
             you spawn `task_name` \"b\", the agent is `/root/a/b`; refer to it as `b` \
             or `/root/a/b`. Its final answer is delivered to you (see wait_agent). \
             `fork_turns=\"all\"` (default) gives it your whole history; \"none\" \
             starts it with only its task, so say everything it needs.\n\
             Roles (`agent_type`):\n{}",
            role_lines.join("\n")
        ),
        json!({
            "type": "object",
            "properties": {
                "task_name": {"type": "string", "description":
                    "Name of the new agent: lowercase letters, digits and underscores."},
                "message": {"type": "string", "description": "The agent's task, in plain text."},
                "fork_turns": {"type": "string", "enum": ["all", "none"], "description":
                    "Your history to give it: `all` (default) or `none`."},
                "model": {"type": "string", "description":
                    "Model override; omit to use yours."},
                "reasoning_effort": {"type": "string", "description":
                    "Reasoning effort override; omit to use yours."},
                "agent_type": {"type": "string", "description":
                    "Role of the agent (see the list above); default `default`."},
                "worktree": {"type": "boolean", "description":
                    "Run it in a new git worktree of your repository, on its own \
                     branch (for agents that write): its changes are committed to \
                     that branch and its final answer names the branch and a diffstat, \
                     for you to `git merge` or discard. Default false."}
            },
            "required": ["task_name", "message"],
            "additionalProperties": false
        }),
    )
}

fn placement_param(default: Placement) -> serde_json::Value {
    json!({"type": "string", "enum": ["local", "remote", "auto"], "description": format!(
        "Where the agent runs: `local` (this machine), `remote` (a worker of the pool; it \
         runs under the worker's configuration and starts with only its task, so \
         `fork_turns`, `model`, `reasoning_effort`, `agent_type` and `worktree` are refused) \
         or `auto` (here while fewer than agents.max_threads local agents are open, else \
         remote). Default `{}`.",
        default.as_str()
    )})
}
