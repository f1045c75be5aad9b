//! What one hook run decided, from its exit status, stdout and stderr (pure): exit 2 blocks
//! with stderr as the reason; exit 0 may print JSON (`decision`, `reason`, `continue`,
//! `stopReason`, `systemMessage`, `hookSpecificOutput`) or, for SessionStart and
//! UserPromptSubmit, plain text that becomes context. Anything unusable is `Failed`: a
//! warning, and no decision.

use serde_json::{Map, Value};
use troupe_messages::hooks::{HookDecision, HookEventName};

/// How the hook process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookExit {
    Exited(i32),
    /// Killed by a signal, or could not be started / read (the text says which).
    Crashed(String),
    TimedOut(u64),
}

/// One run's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookVerdict {
    pub decision: HookDecision,
    /// The block or deny reason; for `Failed`, why the run counts as no decision.
    pub reason: Option<String>,
    /// Text for the model (`additionalContext`, or plain stdout where allowed).
    pub additional_context: Option<String>,
    /// Text for the user (`systemMessage`).
    pub system_message: Option<String>,
    /// PreToolUse only: the tool input to run instead (`updatedInput` with `allow`).
    pub updated_input: Option<Value>,
}

impl HookVerdict {
    fn of(decision: HookDecision) -> Self {
        Self {
            decision,
            reason: None,
            additional_context: None,
            system_message: None,
            updated_input: None,
        }
    }

    fn failed(why: impl Into<String>) -> Self {
        Self {
            reason: Some(why.into()),
            ..Self::of(HookDecision::Failed)
        }
    }

    fn with_reason(decision: HookDecision, reason: String) -> Self {
        Self {
            reason: Some(reason),
            ..Self::of(decision)
        }
    }
}

/// Reads one run.
pub fn interpret(event: HookEventName, exit: &HookExit, stdout: &str, stderr: &str) -> HookVerdict {
    match exit {
        HookExit::TimedOut(secs) => HookVerdict::failed(format!("timed out after {secs} s")),
        HookExit::Crashed(why) => HookVerdict::failed(why.clone()),
        HookExit::Exited(2) => blocked_by_exit(event, stderr),
        HookExit::Exited(0) => interpret_stdout(event, stdout),
        HookExit::Exited(code) => {
            let detail = first_line(stderr)
                .map(|l| format!(": {l}"))
                .unwrap_or_default();
            HookVerdict::failed(format!("exited with status {code}{detail}"))
        }
    }
}

fn blocked_by_exit(event: HookEventName, stderr: &str) -> HookVerdict {
    let reason = stderr.trim();
    let reason = if reason.is_empty() {
        format!("blocked by a {} hook", event.as_str())
    } else {
        reason.to_string()
    };
    match event {
        HookEventName::PermissionRequest => HookVerdict::with_reason(HookDecision::Deny, reason),
        // A session that already started cannot be blocked: the text is for the user.
        HookEventName::SessionStart => HookVerdict {
            system_message: Some(reason),
            ..HookVerdict::of(HookDecision::None)
        },
        _ => HookVerdict::with_reason(HookDecision::Block, reason),
    }
}

fn interpret_stdout(event: HookEventName, stdout: &str) -> HookVerdict {
    let text = stdout.trim();
    if text.is_empty() {
        return HookVerdict::of(HookDecision::None);
    }
    if !text.starts_with('{') && !text.starts_with('[') {
        // Plain text is context where the spec says so; elsewhere it is only a log.
        let mut verdict = HookVerdict::of(HookDecision::None);
        if matches!(
            event,
            HookEventName::SessionStart | HookEventName::UserPromptSubmit
        ) {
            verdict.additional_context = Some(text.to_string());
        }
        return verdict;
    }
    let object = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => object,
        Ok(_) => return HookVerdict::failed("its JSON output is not an object"),
        Err(err) => return HookVerdict::failed(format!("invalid JSON output: {err}")),
    };
    match interpret_json(event, &object) {
        Ok(verdict) => verdict,
        Err(why) => HookVerdict::failed(why),
    }
}

fn interpret_json(event: HookEventName, out: &Map<String, Value>) -> Result<HookVerdict, String> {
    let specific = match out.get("hookSpecificOutput") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err("`hookSpecificOutput` is not an object".into()),
    };
    let mut verdict = HookVerdict::of(HookDecision::None);
    verdict.system_message = string(out, "systemMessage")?;
    verdict.additional_context = string(&specific, "additionalContext")?;
    let reason = string(out, "reason")?.filter(|r| !r.trim().is_empty());
    // `continue: false` stops what the hook guards; for Stop it means "do not continue".
    if out.get("continue") == Some(&Value::Bool(false)) {
        let why = string(out, "stopReason")?
            .unwrap_or_else(|| format!("stopped by a {} hook", event.as_str()));
        return Ok(match event {
            HookEventName::Stop | HookEventName::SessionStart => {
                verdict.system_message = verdict.system_message.or(Some(why));
                verdict
            }
            HookEventName::PermissionRequest => HookVerdict {
                decision: HookDecision::Deny,
                reason: Some(why),
                ..verdict
            },
            _ => HookVerdict {
                decision: HookDecision::Block,
                reason: Some(why),
                ..verdict
            },
        });
    }
    // PreToolUse may rewrite the call's input, with `permissionDecision: "allow"` (Codex's
    // rule). Anything else asking to rewrite is refused: safer than running the original.
    let pre_tool_rewrite = event == HookEventName::PreToolUse
        && !specific.contains_key("updatedPermissions")
        && specific.contains_key("updatedInput");
    if pre_tool_rewrite {
        if string(&specific, "permissionDecision")?.as_deref() != Some("allow") {
            return Err("updatedInput without permissionDecision `allow`".into());
        }
        return match specific.get("updatedInput") {
            Some(Value::Object(input)) => Ok(HookVerdict {
                updated_input: Some(Value::Object(input.clone())),
                ..verdict
            }),
            _ => Err("updatedInput is not an object".into()),
        };
    }
    if specific.contains_key("updatedInput") || specific.contains_key("updatedPermissions") {
        return Ok(HookVerdict {
            decision: HookDecision::Block,
            reason: Some(
                "a hook asked to rewrite this call (updatedPermissions, or updatedInput outside \
                 PreToolUse), which Troupe does not support; the call was not run"
                    .into(),
            ),
            ..verdict
        });
    }
    match event {
        HookEventName::PermissionRequest => permission_request(&specific, verdict),
        HookEventName::PreToolUse => {
            if let Some(permission) = string(&specific, "permissionDecision")? {
                let why = string(&specific, "permissionDecisionReason")?;
                return match permission.as_str() {
                    "deny" => match why.filter(|w| !w.trim().is_empty()) {
                        Some(why) => Ok(HookVerdict {
                            decision: HookDecision::Block,
                            reason: Some(why),
                            ..verdict
                        }),
                        None => Err(
                            "permissionDecision `deny` without a permissionDecisionReason".into(),
                        ),
                    },
                    "allow" | "ask" => Ok(verdict),
                    other => Err(format!(
                        "unknown permissionDecision `{other}` (expected allow, deny or ask)"
                    )),
                };
            }
            block_decision(out, reason, verdict, &["approve"])
        }
        HookEventName::PostToolUse | HookEventName::UserPromptSubmit | HookEventName::Stop => {
            block_decision(out, reason, verdict, &[])
        }
        HookEventName::SessionStart => Ok(verdict),
    }
}

/// `decision: "block"` with a reason; `allowed` lists other accepted values (no effect).
fn block_decision(
    out: &Map<String, Value>,
    reason: Option<String>,
    verdict: HookVerdict,
    allowed: &[&str],
) -> Result<HookVerdict, String> {
    match string(out, "decision")?.as_deref() {
        None => Ok(verdict),
        Some("block") => match reason {
            Some(reason) => Ok(HookVerdict {
                decision: HookDecision::Block,
                reason: Some(reason),
                ..verdict
            }),
            None => Err("decision `block` without a reason".into()),
        },
        Some(other) if allowed.contains(&other) => Ok(verdict),
        Some(other) => Err(format!("unknown decision `{other}`")),
    }
}

fn permission_request(
    specific: &Map<String, Value>,
    verdict: HookVerdict,
) -> Result<HookVerdict, String> {
    let decision = match specific.get("decision") {
        None | Some(Value::Null) => return Ok(verdict),
        Some(Value::Object(decision)) => decision,
        Some(_) => return Err("hookSpecificOutput.decision is not an object".into()),
    };
    match string(decision, "behavior")?.as_deref() {
        Some("allow") => Ok(HookVerdict {
            decision: HookDecision::Allow,
            ..verdict
        }),
        Some("deny") => {
            let message = string(decision, "message")?
                .filter(|m| !m.trim().is_empty())
                .unwrap_or_else(|| "denied by a PermissionRequest hook".into());
            Ok(HookVerdict {
                decision: HookDecision::Deny,
                reason: Some(message),
                ..verdict
            })
        }
        Some(other) => Err(format!(
            "unknown decision.behavior `{other}` (expected allow or deny)"
        )),
        None => Err("hookSpecificOutput.decision without a behavior".into()),
    }
}

fn string(map: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` is not a string")),
    }
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}
