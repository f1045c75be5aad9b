//! Lifecycle hooks (no actor): the configured commands of one turn, run at SessionStart,
//! UserPromptSubmit, PreToolUse, PostToolUse, PermissionRequest and Stop.
//!
//! The hooks of one event that match run in parallel; each run is a `HookStarted` /
//! `HookCompleted` pair of events. A hook that times out, crashes or prints something
//! unusable is a `Warning` and counts as no decision. Callers await these functions from
//! their own tasks (a tool call's task, the turn's hook task), never inside a handler.

pub mod command;
pub mod output;
pub mod tool_input;
pub mod writable;

use crate::tool_orchestrator::shell_env::spawn_env;
use crate::turn::outbox::EventSink;
use futures::future::join_all;
use output::{interpret, HookVerdict};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe_config::hooks::Matcher;
use troupe_messages::events::EventMsg;
use troupe_messages::hooks::{HookDecision, HookEventName, HookHandler};
use troupe_messages::ids::{ThreadId, TurnId};
use troupe_messages::policy::{AskForApproval, CollaborationMode, SandboxMode};
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::ToolCall;

/// The hooks of one turn, with what every payload carries.
pub struct TurnHooks {
    handlers: Vec<HookHandler>,
    max_stop_continuations: u32,
    /// `session_id`, `turn_id`, `transcript_path`, `cwd`, `model`, `permission_mode`.
    common: Map<String, Value>,
    cwd: PathBuf,
    /// The environment hook commands get: the commands' (`shell_environment_policy`, so
    /// `*KEY*`/`*SECRET*`/`*TOKEN*` dropped by default) without the provider's key variable.
    env: BTreeMap<String, String>,
    events: EventSink,
}

/// What the PostToolUse hooks made of a result.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PostToolEffect {
    /// The feedback the model reads instead of the output.
    pub blocked: Option<String>,
    /// Context added after the output.
    pub context: Vec<String>,
}

/// What UserPromptSubmit (and SessionStart) hooks made of the turn's start.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PromptEffect {
    /// The prompt is not sent (nor recorded); the turn ends with this reason.
    pub blocked: Option<String>,
    /// Developer context recorded before the prompt.
    pub context: Vec<String>,
}

impl TurnHooks {
    pub fn new(
        settings: &SessionSettings,
        thread_id: ThreadId,
        turn_id: TurnId,
        transcript_path: PathBuf,
        events: EventSink,
    ) -> Self {
        let mut common = Map::new();
        common.insert("session_id".into(), json!(thread_id.to_string()));
        common.insert("turn_id".into(), json!(turn_id.to_string()));
        common.insert("transcript_path".into(), json!(transcript_path));
        common.insert("cwd".into(), json!(settings.cwd));
        common.insert("model".into(), json!(settings.model));
        common.insert("permission_mode".into(), json!(permission_mode(settings)));
        for message in writable::writable_hook_warnings(settings) {
            events(EventMsg::Warning { message });
        }
        let env = spawn_env(settings);
        Self {
            handlers: settings.hooks.handlers.clone(),
            max_stop_continuations: settings.hooks.max_stop_continuations,
            common,
            cwd: settings.cwd.clone(),
            env,
            events,
        }
    }

    /// No hooks at all (tests and tools run outside a turn).
    pub fn none() -> Self {
        Self {
            handlers: Vec::new(),
            max_stop_continuations: 0,
            common: Map::new(),
            cwd: PathBuf::from("/"),
            env: BTreeMap::new(),
            events: Arc::new(|_| {}),
        }
    }

    pub fn has(&self, event: HookEventName) -> bool {
        self.handlers.iter().any(|h| h.event == event)
    }

    pub fn max_stop_continuations(&self) -> u32 {
        self.max_stop_continuations
    }

    /// PreToolUse: `Err(reason)` when a hook blocks the call (it does not run); else the
    /// call to run (rewritten when a hook allowed it with `updatedInput`).
    pub async fn pre_tool_use(&self, call: &ToolCall) -> Result<ToolCall, String> {
        let Some((tool_name, tool_input)) = tool_input::hook_tool(call) else {
            return Ok(call.clone());
        };
        let extra = tool_fields(&tool_name, tool_input, call);
        let verdicts = self
            .run(
                HookEventName::PreToolUse,
                Some(&tool_name),
                Some(&tool_name),
                extra,
            )
            .await;
        if let Some(reason) = blocked(&verdicts) {
            return Err(reason);
        }
        let mut rewrites = verdicts.iter().filter_map(|v| v.updated_input.as_ref());
        match (rewrites.next(), rewrites.next()) {
            (None, _) => Ok(call.clone()),
            (Some(updated), None) => tool_input::rewrite_call(call, updated)
                .map_err(|why| format!("a PreToolUse hook's updatedInput is unusable: {why}")),
            (Some(_), Some(_)) => Err("two PreToolUse hooks rewrote this call".into()),
        }
    }

    /// PostToolUse, with the result the model would read as `tool_response`.
    pub async fn post_tool_use(&self, call: &ToolCall, content: &str) -> PostToolEffect {
        let Some((tool_name, tool_input)) = tool_input::hook_tool(call) else {
            return PostToolEffect::default();
        };
        let mut extra = tool_fields(&tool_name, tool_input, call);
        let response = serde_json::from_str::<Value>(content)
            .unwrap_or_else(|_| Value::String(content.to_string()));
        extra.insert("tool_response".into(), response);
        let verdicts = self
            .run(
                HookEventName::PostToolUse,
                Some(&tool_name),
                Some(&tool_name),
                extra,
            )
            .await;
        PostToolEffect {
            blocked: blocked(&verdicts),
            context: contexts(&verdicts),
        }
    }

    /// PermissionRequest: `Some(Ok)` a hook approved, `Some(Err(message))` one denied
    /// (a denial wins), `None` none decided: ask as usual.
    pub async fn permission_request(
        &self,
        call: &ToolCall,
        description: Option<String>,
    ) -> Option<Result<(), String>> {
        let (tool_name, mut tool_input) = tool_input::hook_tool(call)?;
        if let (Some(why), Value::Object(input)) = (description, &mut tool_input) {
            input.entry("description").or_insert(Value::String(why));
        }
        self.permission_request_as(&tool_name, tool_input, call)
            .await
    }

    /// PermissionRequest for an approval that is not the call's own (a network approval of
    /// a running command: `Bash` with `description: network-access <host>`).
    pub async fn permission_request_as(
        &self,
        tool_name: &str,
        tool_input: Value,
        call: &ToolCall,
    ) -> Option<Result<(), String>> {
        let tool_name = tool_name.to_string();
        let extra = tool_fields(&tool_name, tool_input, call);
        let verdicts = self
            .run(
                HookEventName::PermissionRequest,
                Some(&tool_name),
                Some(&tool_name),
                extra,
            )
            .await;
        if let Some(denied) = verdicts.iter().find(|v| v.decision == HookDecision::Deny) {
            return Some(Err(denied
                .reason
                .clone()
                .unwrap_or_else(|| "denied by a PermissionRequest hook".into())));
        }
        verdicts
            .iter()
            .any(|v| v.decision == HookDecision::Allow)
            .then_some(Ok(()))
    }

    /// SessionStart (`source`: `startup` or `resume`): context for the model.
    pub async fn session_start(&self, source: &str) -> Vec<String> {
        let mut extra = Map::new();
        extra.insert("source".into(), json!(source));
        let verdicts = self
            .run(HookEventName::SessionStart, Some(source), None, extra)
            .await;
        contexts(&verdicts)
    }

    /// UserPromptSubmit: block the prompt, or add context before it.
    pub async fn user_prompt_submit(&self, prompt: &str) -> PromptEffect {
        let mut extra = Map::new();
        extra.insert("prompt".into(), json!(prompt));
        let verdicts = self
            .run(HookEventName::UserPromptSubmit, None, None, extra)
            .await;
        PromptEffect {
            blocked: blocked(&verdicts),
            context: contexts(&verdicts),
        }
    }

    /// Stop: `Some(reason)` when a hook wants the turn to go on with `reason` as the prompt.
    pub async fn stop(&self, last_assistant_message: Option<&str>, active: bool) -> Option<String> {
        let mut extra = Map::new();
        extra.insert("stop_hook_active".into(), json!(active));
        extra.insert(
            "last_assistant_message".into(),
            json!(last_assistant_message),
        );
        let verdicts = self.run(HookEventName::Stop, None, None, extra).await;
        blocked(&verdicts)
    }

    /// Tells the user something about the hooks (a bound reached, …).
    pub fn warn(&self, message: String) {
        (self.events)(EventMsg::Warning { message });
    }

    /// Runs every hook of `event` whose matcher accepts `match_value`, in parallel.
    async fn run(
        &self,
        event: HookEventName,
        match_value: Option<&str>,
        tool_name: Option<&str>,
        extra: Map<String, Value>,
    ) -> Vec<HookVerdict> {
        let selected: Vec<&HookHandler> = self
            .handlers
            .iter()
            .filter(|h| h.event == event)
            .filter(|h| match (event.uses_matcher(), match_value) {
                (true, Some(value)) => Matcher::parse(h.matcher.as_deref())
                    .map(|m| m.matches(value))
                    .unwrap_or(false),
                _ => true,
            })
            .collect();
        if selected.is_empty() {
            return Vec::new();
        }
        let mut payload = self.common.clone();
        payload.insert("hook_event_name".into(), json!(event.as_str()));
        payload.extend(extra);
        let stdin = serde_json::to_vec(&Value::Object(payload)).unwrap_or_default();
        let runs = selected
            .into_iter()
            .map(|handler| self.run_one(handler, tool_name, &stdin));
        join_all(runs).await
    }

    async fn run_one(
        &self,
        handler: &HookHandler,
        tool_name: Option<&str>,
        stdin: &[u8],
    ) -> HookVerdict {
        let run_id = uuid::Uuid::now_v7().simple().to_string();
        (self.events)(EventMsg::HookStarted {
            run_id: run_id.clone(),
            event_name: handler.event,
            command: handler.command.clone(),
            tool_name: tool_name.map(str::to_string),
            source: Some(handler.source.clone()),
        });
        let started = Instant::now();
        let process = command::run_hook_command(
            &handler.command,
            &self.cwd,
            &self.env,
            stdin,
            Duration::from_secs(handler.timeout_sec),
        )
        .await;
        let verdict = interpret(
            handler.event,
            &process.exit,
            &process.stdout,
            &process.stderr,
        );
        let message = verdict
            .reason
            .clone()
            .or_else(|| verdict.additional_context.clone());
        (self.events)(EventMsg::HookCompleted {
            run_id,
            event_name: handler.event,
            command: handler.command.clone(),
            duration_ms: started.elapsed().as_millis() as u64,
            decision: verdict.decision,
            message,
        });
        if verdict.decision == HookDecision::Failed {
            self.warn(format!(
                "{} hook `{}` ({}) {}; it counts as no decision",
                handler.event.as_str(),
                handler.command,
                handler.source.display(),
                verdict.reason.as_deref().unwrap_or("failed"),
            ));
        }
        if let Some(message) = &verdict.system_message {
            self.warn(format!("{} hook: {message}", handler.event.as_str()));
        }
        verdict
    }
}

fn tool_fields(tool_name: &str, tool_input: Value, call: &ToolCall) -> Map<String, Value> {
    let mut extra = Map::new();
    extra.insert("tool_name".into(), json!(tool_name));
    extra.insert("tool_input".into(), tool_input);
    extra.insert("tool_use_id".into(), json!(call.call_id));
    extra
}

/// The block reasons of every blocking run, joined; `None` when none blocked.
fn blocked(verdicts: &[HookVerdict]) -> Option<String> {
    let reasons: Vec<&str> = verdicts
        .iter()
        .filter(|v| v.decision == HookDecision::Block)
        .filter_map(|v| v.reason.as_deref())
        .collect();
    (!reasons.is_empty()).then(|| reasons.join("\n"))
}

fn contexts(verdicts: &[HookVerdict]) -> Vec<String> {
    verdicts
        .iter()
        .filter(|v| v.decision != HookDecision::Failed)
        .filter_map(|v| v.additional_context.clone())
        .filter(|c| !c.trim().is_empty())
        .collect()
}

/// Codex's `permission_mode` names for the session's policy.
fn permission_mode(settings: &SessionSettings) -> &'static str {
    if settings.context.collaboration_mode == CollaborationMode::Plan {
        "plan"
    } else if settings.approval_policy == AskForApproval::Never
        && settings.sandbox_mode == SandboxMode::DangerFullAccess
    {
        "bypassPermissions"
    } else {
        "default"
    }
}

#[cfg(test)]
#[path = "output_tests.rs"]
mod output_tests;
