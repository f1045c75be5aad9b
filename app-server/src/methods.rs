//! One connection's requests: parse params in Codex's shapes, act on the hub, answer.

use crate::hub::{
    check_thread_id, sandbox_policy, Hub, HubError, LiveThread, SettingsRequest, ThreadSettings,
};
use crate::live::{ClientSink, Control};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use troupe_app_server_protocol::jsonrpc::{self, invalid_params};
use troupe_app_server_protocol::method_names::unknown_method;
use troupe_app_server_protocol::protocol::*;

/// What a handler produced: an answer now, or one the thread's pump sends later.
pub enum Reply {
    Now(Result<Value, String>),
    Later,
}

fn parse<T: DeserializeOwned>(params: Value) -> Result<T, String> {
    // Absent params are an empty object for methods whose fields are all optional.
    let params = if params.is_null() { json!({}) } else { params };
    serde_json::from_value(params).map_err(|err| invalid_params(&err))
}

fn value(result: impl Serialize) -> Result<Value, String> {
    serde_json::to_value(result).map_err(|err| err.to_string())
}

fn err(e: HubError) -> String {
    e.to_string()
}

/// Handles one request of an initialized connection.
pub async fn handle(
    hub: &Arc<Hub>,
    client: &ClientSink,
    id: &Value,
    method: &str,
    params: Value,
) -> Reply {
    let result = match method {
        "thread/start" => return finish(thread_start(hub, client, id, params).await),
        "thread/resume" => return thread_resume(hub, client, id, params).await,
        "thread/fork" => return finish(thread_fork(hub, client, id, params).await),
        "thread/list" => thread_list(hub, params).await,
        "thread/read" => thread_read(hub, params).await,
        "thread/archive" => thread_archive(hub, params).await,
        "thread/unarchive" => thread_unarchive(hub, params).await,
        "thread/name/set" => thread_name_set(hub, params).await,
        "turn/start" => return turn_start(hub, client, id, params).await,
        "turn/steer" => return turn_steer(hub, client, id, params).await,
        "turn/interrupt" => return turn_interrupt(hub, client, id, params).await,
        "thread/compact/start" => return thread_compact_start(hub, client, id, params).await,
        "thread/unsubscribe" => return thread_unsubscribe(hub, client, id, params),
        "thread/shellCommand" => return thread_shell_command(hub, client, id, params).await,
        "fuzzyFileSearch" => match parse(params) {
            Ok(params) => crate::fuzzy_search::search(params).await.and_then(value),
            Err(message) => Err(message),
        },
        "model/list" => model_list(hub, params),
        "config/read" => config_read(hub, params),
        "review/start" => return crate::review::review_start(hub, client, id, params).await,
        "troupe/thread/lastTurns" => crate::last_turns::thread_last_turns(hub, params),
        "thread/loaded/list" => thread_loaded_list(hub, params),
        "troupe/thread/rewind" => crate::rewind::thread_rewind(hub, params).await,
        "thread/revert" => return crate::revert::thread_revert(hub, client, id, params).await,
        "command/exec" => match parse(params) {
            Ok(params) => crate::command_exec::command_exec(hub, params)
                .await
                .and_then(value),
            Err(message) => Err(message),
        },
        "thread/turns/list" => match parse(params) {
            Ok(params) => crate::turns_list::turns_list(hub, params)
                .await
                .and_then(value),
            Err(message) => Err(message),
        },
        "thread/items/list" => match parse(params) {
            Ok(params) => crate::items_list::items_list(hub, params)
                .await
                .and_then(value),
            Err(message) => Err(message),
        },
        "skills/list" => match parse(params) {
            Ok(params) => crate::skills_list::skills_list(hub, params)
                .await
                .and_then(value),
            Err(message) => Err(message),
        },
        "initialize" => Err("Already initialized".into()),
        other if other.starts_with("fs/") => match crate::fs_methods::handle(other, params).await {
            Some(result) => result,
            None => Err(troupe_app_server_protocol::unsupported::unsupported(other)
                .unwrap_or_else(|| unknown_method(other))),
        },
        other => Err(troupe_app_server_protocol::unsupported::unsupported(other)
            .unwrap_or_else(|| unknown_method(other))),
    };
    Reply::Now(result)
}

fn settings_request(
    cwd: Option<String>,
    model: Option<String>,
    model_provider: Option<String>,
    approval: Option<AskForApproval>,
    sandbox: Option<SandboxMode>,
    config: Option<serde_json::Map<String, Value>>,
) -> Result<SettingsRequest, String> {
    use troupe_messages::policy as p;
    let mut raw = Vec::new();
    for (key, value) in config.unwrap_or_default() {
        raw.push(format!("{key}={}", toml_value(&value)?));
    }
    Ok(SettingsRequest {
        cwd: cwd.map(PathBuf::from),
        model,
        model_provider,
        approval_policy: approval.map(approval_policy),
        sandbox_mode: sandbox.map(|s| match s {
            SandboxMode::ReadOnly => p::SandboxMode::ReadOnly,
            SandboxMode::WorkspaceWrite => p::SandboxMode::WorkspaceWrite,
            SandboxMode::DangerFullAccess => p::SandboxMode::DangerFullAccess,
        }),
        raw,
    })
}

/// Codex's approval policy as Troupe's.
pub fn approval_policy(policy: AskForApproval) -> troupe_messages::policy::AskForApproval {
    use troupe_messages::policy::AskForApproval as Policy;
    match policy {
        AskForApproval::Untrusted => Policy::UnlessTrusted,
        AskForApproval::OnFailure => Policy::OnFailure,
        AskForApproval::OnRequest => Policy::OnRequest,
        AskForApproval::Never => Policy::Never,
    }
}

/// A JSON value as a TOML value for a `key=value` override.
fn toml_value(value: &Value) -> Result<String, String> {
    match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => Ok(value.to_string()),
        Value::Array(items) => Ok(format!(
            "[{}]",
            items
                .iter()
                .map(toml_value)
                .collect::<Result<Vec<_>, _>>()?
                .join(", ")
        )),
        Value::Object(map) => Ok(format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| Ok(format!("{} = {}", Value::String(k.clone()), toml_value(v)?)))
                .collect::<Result<Vec<_>, String>>()?
                .join(", ")
        )),
        Value::Null => Err("Invalid request: config values cannot be null".into()),
    }
}

fn opened(hub: &Hub, thread: Thread, live: &LiveThread) -> ThreadOpenedResponse {
    let _ = hub;
    let settings = live.settings();
    ThreadOpenedResponse {
        thread,
        model: settings.model.clone(),
        model_provider: settings.provider.id.clone(),
        cwd: settings.cwd.display().to_string(),
        approval_policy: serde_json::to_value(settings.approval_policy).unwrap_or(Value::Null),
        approvals_reviewer: "user".into(),
        sandbox: sandbox_policy(&settings),
        instruction_sources: Vec::new(),
        reasoning_effort: settings.context.reasoning_effort.clone(),
        service_tier: None,
        disabled_plugin_ids: Vec::new(),
    }
}

/// `thread/resume`'s answer: the opened thread and its collaboration mode.
fn resumed(hub: &Hub, thread: Thread, live: &LiveThread) -> ThreadResumeResponse {
    use troupe_messages::policy::CollaborationMode as Mode;
    let settings = live.settings();
    let mode = match settings.context.collaboration_mode {
        Mode::Plan => "plan",
        Mode::Default => "default",
    };
    ThreadResumeResponse {
        opened: opened(hub, thread, live),
        collaboration_mode: Some(CollaborationMode {
            mode: mode.into(),
            settings: CollaborationModeSettings {
                model: settings.model.clone(),
                reasoning_effort: settings.context.reasoning_effort.clone(),
                developer_instructions: settings.context.developer_instructions,
            },
        }),
        items_backwards_cursor: None,
        turns_backwards_cursor: None,
    }
}

async fn thread_start(
    hub: &Arc<Hub>,
    client: &ClientSink,
    id: &Value,
    params: Value,
) -> Result<Value, String> {
    let params: ThreadStartParams = parse(params)?;
    let ask = settings_request(
        params.cwd,
        params.model,
        params.model_provider,
        params.approval_policy,
        params.sandbox,
        params.config,
    )?;
    let settings = ThreadSettings {
        resolved: hub.settings(&ask).map_err(err)?,
        ask,
    };
    let (thread_id, live) = hub.start_thread(settings).await.map_err(err)?;
    let thread = hub.live_wire_thread(&thread_id, &live).await;
    let response = value(opened(hub, thread.clone(), &live))?;
    // The response first, then `thread/started`, then the thread's events: the pump sends
    // all three, in that order, to this client.
    let started = jsonrpc::notification(
        "thread/started",
        value(ThreadStartedNotification { thread })?,
    );
    live.control
        .send(Control::Subscribe {
            client: client.clone(),
            response: Some((id.clone(), response)),
            after: vec![started],
        })
        .map_err(|_| "the thread has stopped".to_string())?;
    Err(LATER.into())
}

/// Marks a result the pump answers.
const LATER: &str = "\u{0}later";

/// Maps the internal "answered later" marker.
pub fn finish(result: Result<Value, String>) -> Reply {
    match result {
        Err(message) if message == LATER => Reply::Later,
        other => Reply::Now(other),
    }
}

async fn thread_resume(hub: &Arc<Hub>, client: &ClientSink, id: &Value, params: Value) -> Reply {
    let result: Result<(), String> = async {
        let params: ThreadResumeParams = parse(params)?;
        let live = hub.thread(&params.thread_id).await.map_err(err)?;
        let summary = hub.summary(&params.thread_id).map_err(err)?;
        let thread = hub.wire_thread(&summary, !params.exclude_turns).await;
        let response = value(resumed(hub, thread, &live))?;
        // Followed, not opened: the client is told which process runs it.
        let after = match live.held_by {
            Some(pid) => vec![jsonrpc::notification(
                "troupe/thread/held",
                value(ThreadHeldNotification {
                    thread_id: params.thread_id.clone(),
                    held_by: HeldBy {
                        pid,
                        program: crate::last_turns::holder_program(pid),
                    },
                })?,
            )],
            None => Vec::new(),
        };
        live.control
            .send(Control::Subscribe {
                client: client.clone(),
                response: Some((id.clone(), response)),
                after,
            })
            .map_err(|_| "the thread has stopped".to_string())
    }
    .await;
    match result {
        Ok(()) => Reply::Later,
        Err(message) => Reply::Now(Err(message)),
    }
}

async fn thread_fork(
    hub: &Arc<Hub>,
    client: &ClientSink,
    id: &Value,
    params: Value,
) -> Result<Value, String> {
    let params: ThreadForkParams = parse(params)?;
    let at_turn = match &params.last_turn_id {
        Some(turn) => Some(
            troupe_app_server_protocol::translate::parse_turn_id(&params.thread_id, turn)
                .ok_or_else(|| format!("invalid turn id: {turn}"))?
                .0,
        ),
        None => None,
    };
    let (thread_id, live) = hub.fork(&params.thread_id, at_turn).await.map_err(err)?;
    let summary = hub.summary(&thread_id).map_err(err)?;
    let thread = hub.wire_thread(&summary, true).await;
    let response = value(opened(hub, thread.clone(), &live))?;
    let started = jsonrpc::notification(
        "thread/started",
        value(ThreadStartedNotification { thread })?,
    );
    live.control
        .send(Control::Subscribe {
            client: client.clone(),
            response: Some((id.clone(), response)),
            after: vec![started],
        })
        .map_err(|_| "the thread has stopped".to_string())?;
    Err(LATER.into())
}

async fn thread_list(hub: &Arc<Hub>, params: Value) -> Result<Value, String> {
    let params: ThreadListParams = parse(params)?;
    let archived = params.archived.unwrap_or(false);
    let offset: usize = match &params.cursor {
        Some(cursor) => cursor
            .parse()
            .map_err(|_| format!("invalid cursor: {cursor}"))?,
        None => 0,
    };
    let limit = params.limit.unwrap_or(25).clamp(1, 200) as usize;
    let cwd = params.cwd.as_ref().map(|dir| {
        std::fs::canonicalize(dir)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| dir.clone())
    });
    let search = params.search_term.as_ref().map(|s| s.to_lowercase());
    // Present but empty: every provider (Codex's rule). Filtered before paging, so a page
    // is full whenever more matching threads exist.
    let providers = params
        .model_providers
        .as_ref()
        .filter(|providers| !providers.is_empty());
    let summaries: Vec<_> = hub
        .all_summaries()
        .into_iter()
        .filter(|s| s.archived == archived)
        .filter(|s| providers.is_none_or(|list| list.contains(&s.model_provider)))
        .filter(|s| cwd.as_ref().is_none_or(|dir| &s.cwd == dir))
        .filter(|s| {
            search.as_ref().is_none_or(|term| {
                s.title.to_lowercase().contains(term)
                    || hub
                        .name(&s.id.to_string())
                        .is_some_and(|n| n.to_lowercase().contains(term))
            })
        })
        .collect();
    let page: Vec<_> = summaries.iter().skip(offset).take(limit).collect();
    let mut data = Vec::with_capacity(page.len());
    for summary in &page {
        data.push(hub.wire_thread(summary, false).await);
    }
    let next = offset + page.len();
    value(ThreadListResponse {
        data,
        next_cursor: (next < summaries.len()).then(|| next.to_string()),
        backwards_cursor: None,
    })
}

/// The threads loaded in this server (open sessions), in id order, paged by offset.
fn thread_loaded_list(hub: &Arc<Hub>, params: Value) -> Result<Value, String> {
    let params: ThreadLoadedListParams = parse(params)?;
    let mut ids = hub.loaded_ids();
    ids.sort();
    let offset: usize = match &params.cursor {
        Some(cursor) => cursor
            .parse()
            .map_err(|_| format!("invalid cursor: {cursor}"))?,
        None => 0,
    };
    let limit = params.limit.map_or(usize::MAX, |limit| limit as usize);
    let data: Vec<String> = ids.iter().skip(offset).take(limit).cloned().collect();
    let next = offset + data.len();
    value(ThreadLoadedListResponse {
        data,
        next_cursor: (next < ids.len()).then(|| next.to_string()),
    })
}

/// How each thread's last turn ended, from the index: what a thread list shows for threads
/// nobody has open.
async fn thread_read(hub: &Arc<Hub>, params: Value) -> Result<Value, String> {
    let params: ThreadReadParams = parse(params)?;
    let summary = hub.summary(&params.thread_id).map_err(err)?;
    let thread = hub.wire_thread(&summary, params.include_turns).await;
    value(ThreadReadResponse { thread })
}

async fn thread_archive(hub: &Arc<Hub>, params: Value) -> Result<Value, String> {
    let params: ThreadIdParams = parse(params)?;
    check_thread_id(&params.thread_id).map_err(err)?;
    if let Some(live) = hub.loaded(&params.thread_id) {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if live.control.send(Control::Snapshot { reply: tx }).is_ok() {
            if let Ok((ThreadStatus::Active { .. }, _)) = rx.await {
                return Err(format!(
                    "thread {} has a running turn; interrupt it first",
                    params.thread_id
                ));
            }
        }
        drop(live);
        hub.unload(&params.thread_id).await;
    }
    troupe_actors::thread_store::ops::archive(&hub.home, hub.store(), &params.thread_id)
        .map_err(|e| e.to_string())?;
    value(EmptyResponse {})
}

async fn thread_unarchive(hub: &Arc<Hub>, params: Value) -> Result<Value, String> {
    let params: ThreadIdParams = parse(params)?;
    check_thread_id(&params.thread_id).map_err(err)?;
    let summary =
        troupe_actors::thread_store::ops::unarchive(&hub.home, hub.store(), &params.thread_id)
            .map_err(|e| e.to_string())?;
    let thread = hub.wire_thread(&summary, false).await;
    value(ThreadUnarchiveResponse { thread })
}

async fn thread_name_set(hub: &Arc<Hub>, params: Value) -> Result<Value, String> {
    let params: ThreadSetNameParams = parse(params)?;
    hub.summary(&params.thread_id).map_err(err)?;
    hub.set_name(&params.thread_id, params.name)
        .await
        .map_err(err)?;
    value(EmptyResponse {})
}

async fn turn_start(hub: &Arc<Hub>, client: &ClientSink, id: &Value, params: Value) -> Reply {
    let result: Result<(), String> = async {
        let params: TurnStartParams = parse(params)?;
        if params.input.is_empty() {
            return Err("Invalid request: `input` is empty".to_string());
        }
        let live = hub.thread(&params.thread_id).await.map_err(err)?;
        let overrides = crate::turn_settings::resolve(hub, &live, &params)?.map(Box::new);
        live.control
            .send(Control::StartTurn {
                client: client.clone(),
                id: id.clone(),
                input: params.input,
                overrides,
            })
            .map_err(|_| "the thread has stopped".to_string())
    }
    .await;
    match result {
        Ok(()) => Reply::Later,
        Err(message) => Reply::Now(Err(message)),
    }
}

async fn turn_steer(hub: &Arc<Hub>, client: &ClientSink, id: &Value, params: Value) -> Reply {
    let result = parse::<TurnSteerParams>(params).and_then(|params| {
        if params.input.is_empty() {
            return Err("Invalid request: `input` is empty".to_string());
        }
        let not_running = format!("no turn is running on thread {}", params.thread_id);
        let control = Control::Steer {
            client: client.clone(),
            id: id.clone(),
            expected_turn_id: params.expected_turn_id,
            input: params.input,
        };
        to_loaded_thread(hub, &params.thread_id, not_running, control)
    });
    answered_later(result)
}

async fn turn_interrupt(hub: &Arc<Hub>, client: &ClientSink, id: &Value, params: Value) -> Reply {
    let result = parse::<TurnInterruptParams>(params).and_then(|params| {
        let not_running = format!("turn {} is not running", params.turn_id);
        let control = Control::Interrupt {
            client: client.clone(),
            id: id.clone(),
            turn_id: params.turn_id,
        };
        to_loaded_thread(hub, &params.thread_id, not_running, control)
    });
    answered_later(result)
}

async fn thread_compact_start(
    hub: &Arc<Hub>,
    client: &ClientSink,
    id: &Value,
    params: Value,
) -> Reply {
    let result: Result<(), String> = async {
        let params: ThreadIdParams = parse(params)?;
        let live = hub.thread(&params.thread_id).await.map_err(err)?;
        live.control
            .send(Control::Compact {
                client: client.clone(),
                id: id.clone(),
            })
            .map_err(|_| "the thread has stopped".to_string())
    }
    .await;
    answered_later(result)
}

/// Runs the user's own command in the thread (unsandboxed, as the TUI's `!cmd`); answered
/// `{}` once the thread took it, its items follow as notifications.
async fn thread_shell_command(
    hub: &Arc<Hub>,
    client: &ClientSink,
    id: &Value,
    params: Value,
) -> Reply {
    let result: Result<(), String> = async {
        let params: ThreadShellCommandParams = parse(params)?;
        if params.command.trim().is_empty() {
            return Err("Invalid request: `command` is empty".to_string());
        }
        let timeout = match params.timeout_ms {
            Some(ms) => Some(std::time::Duration::from_millis(
                u64::try_from(ms).map_err(|_| {
                    format!("Invalid request: `timeoutMs` must not be negative, got {ms}")
                })?,
            )),
            None => None,
        };
        let live = hub.thread(&params.thread_id).await.map_err(err)?;
        live.control
            .send(Control::ShellCommand {
                client: client.clone(),
                id: id.clone(),
                command: params.command,
                timeout,
            })
            .map_err(|_| "the thread has stopped".to_string())
    }
    .await;
    answered_later(result)
}

/// Stops sending this client the thread's notifications (`notLoaded` when no one has it open;
/// it stays loaded for its other clients and its running turn).
fn thread_unsubscribe(hub: &Arc<Hub>, client: &ClientSink, id: &Value, params: Value) -> Reply {
    let result = parse::<ThreadIdParams>(params).and_then(|params| {
        check_thread_id(&params.thread_id).map_err(err)?;
        let Some(live) = hub.loaded(&params.thread_id) else {
            let status = ThreadUnsubscribeStatus::NotLoaded;
            return value(ThreadUnsubscribeResponse { status }).map(Some);
        };
        live.control
            .send(Control::UnsubscribeClient {
                client: client.clone(),
                id: id.clone(),
            })
            .map(|()| None)
            .map_err(|_| "the thread has stopped".to_string())
    });
    match result {
        Ok(Some(now)) => Reply::Now(Ok(now)),
        Ok(None) => Reply::Later,
        Err(message) => Reply::Now(Err(message)),
    }
}

/// Hands `control` to the loaded thread `thread_id`, which answers the request itself.
fn to_loaded_thread(
    hub: &Hub,
    thread_id: &str,
    not_loaded: String,
    control: Control,
) -> Result<(), String> {
    check_thread_id(thread_id).map_err(err)?;
    let live = hub.loaded(thread_id).ok_or(not_loaded)?;
    live.control
        .send(control)
        .map_err(|_| "the thread has stopped".to_string())
}

/// The reply to a request the thread answers later, or its error now.
fn answered_later(result: Result<(), String>) -> Reply {
    match result {
        Ok(()) => Reply::Later,
        Err(message) => Reply::Now(Err(message)),
    }
}

fn model_list(hub: &Arc<Hub>, params: Value) -> Result<Value, String> {
    let _params: ModelListParams = parse(params)?;
    // Troupe has no model catalogue: the configured model is the one it offers.
    let settings = hub.settings(&SettingsRequest::default()).map_err(err)?;
    let model = Model {
        id: settings.model.clone(),
        model: settings.model.clone(),
        display_name: settings.model.clone(),
        description: format!(
            "the configured model of provider `{}`",
            settings.provider.id
        ),
        hidden: false,
        is_default: true,
        default_reasoning_effort: "medium".into(),
        supported_reasoning_efforts: Vec::new(),
    };
    value(ModelListResponse {
        data: vec![model],
        next_cursor: None,
    })
}

fn config_read(hub: &Arc<Hub>, params: Value) -> Result<Value, String> {
    let params: ConfigReadParams = parse(params)?;
    let settings = hub
        .settings(&SettingsRequest {
            cwd: params.cwd.map(PathBuf::from),
            ..Default::default()
        })
        .map_err(err)?;
    let config = json!({
        "model": settings.model,
        "model_provider": settings.provider.id,
        "approval_policy": settings.approval_policy,
        "sandbox_mode": settings.sandbox_mode,
        "sandbox_workspace_write": {
            "writable_roots": settings.sandbox.writable_roots,
            "network_access": settings.sandbox.network_access,
        },
        "cwd": settings.cwd,
    });
    value(ConfigReadResponse {
        config,
        origins: serde_json::Map::new(),
        layers: None,
    })
}
