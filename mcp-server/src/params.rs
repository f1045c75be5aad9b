//! The two tools `troupe mcp-server` offers and their arguments. Names aside (`troupe`,
//! `troupe-reply`), the input and output schemas are those of Codex's `codex mcp-server`
//! (`codex` / `codex-reply`), so a client written for Codex calls Troupe unchanged.

use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::borrow::Cow;
use std::sync::Arc;
use troupe_mcp::rmcp::model::Tool;

/// Name of the tool that starts a thread.
pub const START_TOOL: &str = "troupe";
/// Name of the tool that continues a thread.
pub const REPLY_TOOL: &str = "troupe-reply";

/// Arguments of `troupe`: a prompt and the settings of the new thread.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct StartParams {
    pub prompt: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub profile: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub approval_policy: Option<ApprovalParam>,
    #[serde(default)]
    pub sandbox: Option<SandboxParam>,
    #[serde(default)]
    pub config: Option<Map<String, Value>>,
    #[serde(default)]
    pub base_instructions: Option<String>,
    #[serde(default)]
    pub developer_instructions: Option<String>,
    #[serde(default)]
    pub compact_prompt: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalParam {
    Untrusted,
    OnFailure,
    OnRequest,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxParam {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

/// Arguments of `troupe-reply`: the thread and the next prompt.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReplyParams {
    /// Deprecated in Codex in favour of `threadId`; still accepted.
    #[serde(default)]
    pub conversation_id: Option<String>,
    #[serde(default)]
    pub thread_id: Option<String>,
    pub prompt: String,
}

impl ReplyParams {
    /// `threadId`, else the deprecated `conversationId`.
    pub fn thread(&self) -> Result<&str, String> {
        self.thread_id
            .as_deref()
            .or(self.conversation_id.as_deref())
            .ok_or_else(|| "either threadId or conversationId must be provided".to_string())
    }
}

/// Parses a tool's arguments, naming the tool and the problem.
pub fn parse<T: for<'de> Deserialize<'de>>(
    tool: &str,
    arguments: Option<Map<String, Value>>,
) -> Result<T, String> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_json::from_value(value).map_err(|err| format!("invalid arguments for `{tool}`: {err}"))
}

impl StartParams {
    /// The `-c key=value` overrides this call means: its `config` object (each value as
    /// TOML), then `base-instructions` and `developer-instructions` as their config keys.
    pub fn config_overrides(&self) -> Result<Vec<String>, String> {
        if self.compact_prompt.is_some() {
            return Err(
                "`compact-prompt` is not supported by Troupe: compaction uses its \
                        built-in prompt; leave it out"
                    .into(),
            );
        }
        let mut raw = Vec::new();
        for (key, value) in self.config.iter().flatten() {
            let toml = json_to_toml(value).map_err(|reason| format!("config.{key}: {reason}"))?;
            raw.push(format!("{key}={toml}"));
        }
        if let Some(text) = &self.base_instructions {
            raw.push(format!("instructions={}", Value::String(text.clone())));
        }
        if let Some(text) = &self.developer_instructions {
            raw.push(format!(
                "developer_instructions={}",
                Value::String(text.clone())
            ));
        }
        Ok(raw)
    }
}

/// A JSON value as a TOML inline value (for a `-c` override). A JSON string literal is a
/// valid TOML basic string (same escapes), and keys are quoted the same way.
fn json_to_toml(value: &Value) -> Result<String, String> {
    Ok(match value {
        Value::Null => return Err("null has no TOML form".into()),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(items) => {
            let items: Result<Vec<String>, String> = items.iter().map(json_to_toml).collect();
            format!("[{}]", items?.join(", "))
        }
        Value::Object(map) => {
            let mut fields = Vec::new();
            for (key, item) in map {
                fields.push(format!(
                    "{} = {}",
                    Value::String(key.clone()),
                    json_to_toml(item)?
                ));
            }
            format!("{{ {} }}", fields.join(", "))
        }
    })
}

fn object(value: Value) -> Arc<Map<String, Value>> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(Map::new()),
    }
}

/// What both tools return as structured content.
fn output_schema() -> Arc<Map<String, Value>> {
    object(json!({
        "type": "object",
        "properties": {
            "threadId": { "type": "string" },
            "content": { "type": "string" }
        },
        "required": ["threadId", "content"],
    }))
}

/// The `troupe` tool as `tools/list` shows it.
pub fn start_tool() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "prompt": {
                "description": "The *initial user prompt* to start the Troupe conversation.",
                "type": "string"
            },
            "model": {
                "description": "Optional override for the model name (e.g. 'gpt-5.2', 'gpt-5.2-codex').",
                "type": "string"
            },
            "profile": {
                "description": "Configuration profile from config.toml to specify default options.",
                "type": "string"
            },
            "cwd": {
                "description": "Working directory for the session. If relative, it is resolved against the server process's current working directory.",
                "type": "string"
            },
            "approval-policy": {
                "description": "Approval policy for shell commands generated by the model: `untrusted`, `on-failure`, `on-request`, `never`.",
                "enum": ["untrusted", "on-failure", "on-request", "never"],
                "type": "string"
            },
            "sandbox": {
                "description": "Sandbox mode: `read-only`, `workspace-write`, or `danger-full-access`.",
                "enum": ["read-only", "workspace-write", "danger-full-access"],
                "type": "string"
            },
            "config": {
                "additionalProperties": true,
                "description": "Individual config settings that will override what is in TROUPE_HOME/config.toml.",
                "type": "object"
            },
            "base-instructions": {
                "description": "The set of instructions to use instead of the default ones.",
                "type": "string"
            },
            "developer-instructions": {
                "description": "Developer instructions that should be injected as a developer role message.",
                "type": "string"
            },
            "compact-prompt": {
                "description": "Prompt used when compacting the conversation.",
                "type": "string"
            }
        },
        "required": ["prompt"],
    });
    let mut tool = Tool::new(
        Cow::Borrowed(START_TOOL),
        "Run a Troupe session. Accepts configuration parameters matching the Troupe Config struct.",
        object(input),
    );
    tool.title = Some("Troupe".into());
    tool.output_schema = Some(output_schema());
    tool
}

/// The `troupe-reply` tool as `tools/list` shows it.
pub fn reply_tool() -> Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "conversationId": {
                "description": "DEPRECATED: use threadId instead.",
                "type": "string"
            },
            "threadId": {
                "description": "The thread id for this Troupe session. This field is required, but we keep it optional here for backward compatibility for clients that still use conversationId.",
                "type": "string"
            },
            "prompt": {
                "description": "The *next user prompt* to continue the Troupe conversation.",
                "type": "string"
            }
        },
        "required": ["prompt"],
    });
    let mut tool = Tool::new(
        Cow::Borrowed(REPLY_TOOL),
        "Continue a Troupe conversation by providing the thread id and prompt.",
        object(input),
    );
    tool.title = Some("Troupe Reply".into());
    tool.output_schema = Some(output_schema());
    tool
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
