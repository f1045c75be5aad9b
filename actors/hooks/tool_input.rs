//! Which calls tool hooks see, and as what (pure): `shell` and `exec_command` are `Bash`
//! with `tool_input.command` the script; `apply_patch` is `apply_patch` with the patch as
//! `tool_input.command`; MCP tools (`mcp__…`) by their model-visible name with their raw
//! arguments. Other tools (the plan, `write_stdin`, collaboration) run no tool hooks.

use serde_json::{json, Map, Value};
use troupe_messages::tools::{ToolCall, ToolPayload};

/// The hook-facing name and input of a call, or `None` for tools hooks do not cover.
pub fn hook_tool(call: &ToolCall) -> Option<(String, Value)> {
    let args = || match &call.payload {
        ToolPayload::Function { arguments } => {
            serde_json::from_str::<Value>(arguments).unwrap_or(Value::String(arguments.clone()))
        }
        ToolPayload::Custom { input } => Value::String(input.clone()),
    };
    match call.tool_name.as_str() {
        "shell" => {
            let args = args();
            let argv: Vec<String> = args
                .get("command")
                .and_then(Value::as_array)
                .map(|items| {
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            Some(("Bash".into(), bash_input(&script_of(&argv), &args)))
        }
        "exec_command" => {
            let args = args();
            let cmd = args
                .get("cmd")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            Some(("Bash".into(), bash_input(&cmd, &args)))
        }
        "apply_patch" => {
            let patch = match &call.payload {
                ToolPayload::Custom { input } => input.clone(),
                ToolPayload::Function { .. } => args()
                    .get("input")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            };
            Some(("apply_patch".into(), json!({ "command": patch })))
        }
        name if name.starts_with("mcp__") => Some((name.to_string(), args())),
        _ => None,
    }
}

/// `call` with its input replaced by a PreToolUse hook's `updatedInput` (`command` for
/// `Bash` and `apply_patch`, the raw arguments for MCP tools); other fields kept.
pub fn rewrite_call(call: &ToolCall, updated: &Value) -> Result<ToolCall, String> {
    let command = || {
        updated
            .get("command")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| "updatedInput has no string `command`".to_string())
    };
    let function_args = || match &call.payload {
        ToolPayload::Function { arguments } => {
            serde_json::from_str::<Map<String, Value>>(arguments)
                .map_err(|err| format!("the call's arguments are not an object: {err}"))
        }
        ToolPayload::Custom { .. } => Err("a freeform call has no arguments object".to_string()),
    };
    let payload = match call.tool_name.as_str() {
        "shell" => {
            let mut args = function_args()?;
            args.insert("command".into(), json!(["bash", "-lc", command()?]));
            ToolPayload::Function {
                arguments: Value::Object(args).to_string(),
            }
        }
        "exec_command" => {
            let mut args = function_args()?;
            args.insert("cmd".into(), json!(command()?));
            ToolPayload::Function {
                arguments: Value::Object(args).to_string(),
            }
        }
        "apply_patch" => match &call.payload {
            ToolPayload::Custom { .. } => ToolPayload::Custom { input: command()? },
            ToolPayload::Function { .. } => ToolPayload::Function {
                arguments: json!({ "input": command()? }).to_string(),
            },
        },
        name if name.starts_with("mcp__") => ToolPayload::Function {
            arguments: updated.to_string(),
        },
        other => return Err(format!("`{other}` cannot be rewritten by a hook")),
    };
    Ok(ToolCall {
        payload,
        ..call.clone()
    })
}

fn bash_input(command: &str, args: &Value) -> Value {
    let mut input = Map::new();
    input.insert("command".into(), Value::String(command.to_string()));
    if let Some(why) = args.get("justification").and_then(Value::as_str) {
        input.insert("description".into(), Value::String(why.to_string()));
    }
    Value::Object(input)
}

/// The script a hook sees: the `-c` argument of `bash -lc SCRIPT`, else the argv quoted.
pub fn script_of(argv: &[String]) -> String {
    if let [shell, flag, script] = argv {
        let is_shell = ["sh", "bash", "zsh", "dash"]
            .iter()
            .any(|s| shell == s || shell.ends_with(&format!("/{s}")));
        if is_shell && (flag == "-c" || flag == "-lc") {
            return script.clone();
        }
    }
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}
