//! The collaboration tools (Codex's `multi_agent_v2` names and arguments): `spawn_agent`,
//! `send_message`, `followup_task`, `wait_agent`, `interrupt_agent`, `list_agents`,
//! `close_agent`. Offered while `[agents] enabled`; `spawn_agent` only while the caller's
//! depth is below `max_depth`. Every refusal is an error output; the caller's turn goes on.

use super::paths::resolve_target;
use super::spawn::spawn;
use super::spawn_request::{SpawnArgs, SpawnContext};
use super::specs::{self, CollabTool};
use super::tree::{AgentNews, AgentTree, Caller, NewsKind, RemoteLink};
use super::watcher::news_line;
use crate::tool_orchestrator::contract::{Concurrency, ToolContext, ToolHandler, ToolOutcome};
use futures::future::BoxFuture;
use ractor::ActorRef;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use troupe_cluster::spawn::thread_request;
use troupe_cluster::wire::ThreadRequest;
use troupe_messages::agents::{AgentStatus, CollabAgentState, CollabCallStatus, ROOT_TASK_PATH};
use troupe_messages::events::EventMsg;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::ThreadManagerMsg;
use troupe_messages::ops::{Op, UserInput};
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::{ToolPayload, ToolSpec};

/// Default and bounds of `wait_agent`'s `timeout_ms`.
const WAIT_DEFAULT_MS: u64 = 30_000;
const WAIT_MIN_MS: u64 = 100;
const WAIT_MAX_MS: u64 = 3_600_000;

/// How `tool` is offered under `settings`: not at all when `[agents]` is off, and
/// `spawn_agent` not at `max_depth`.
pub fn offered_spec(tool: CollabTool, settings: &SessionSettings) -> Option<ToolSpec> {
    let agents = &settings.agents;
    if !agents.enabled {
        return None;
    }
    if tool == CollabTool::Spawn && agents.depth >= agents.max_depth {
        return None;
    }
    // `placement` only where a pool is configured: elsewhere the schema is Codex's own.
    let placement = settings
        .cluster
        .configured()
        .then(|| settings.cluster.placement.unwrap_or_default());
    Some(specs::spec(tool, &agents.roles, placement))
}

/// Every collaboration tool offered under `settings` (what `troupe debug prompt-input`
/// adds to the built-in tools, as the thread manager does).
pub fn offered_specs(settings: &SessionSettings) -> Vec<ToolSpec> {
    CollabTool::ALL
        .iter()
        .filter_map(|tool| offered_spec(*tool, settings))
        .collect()
}

/// One collaboration tool bound to the runtime's agent tree and thread manager.
pub struct CollabHandler {
    pub tool: CollabTool,
    pub tree: Arc<AgentTree>,
    pub manager: ActorRef<ThreadManagerMsg>,
}

impl ToolHandler for CollabHandler {
    fn spec(&self) -> ToolSpec {
        specs::spec(self.tool, &troupe_messages::agents::builtin_roles(), None)
    }

    fn spec_for(&self, settings: &SessionSettings) -> Option<ToolSpec> {
        offered_spec(self.tool, settings)
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn handle(&self, ctx: ToolContext) -> BoxFuture<'static, ToolOutcome> {
        let (tool, tree, manager) = (self.tool, self.tree.clone(), self.manager.clone());
        Box::pin(async move {
            let prompt = prompt_of(&ctx);
            let mut report = Report::default();
            tell(&ctx, prompt.clone(), &report, CollabCallStatus::InProgress);
            let outcome = match run(tool, &tree, &manager, &ctx, &mut report).await {
                Ok(content) => ToolOutcome {
                    content,
                    success: true,
                    parts: Vec::new(),
                },
                Err(message) => ToolOutcome::error(message),
            };
            let status = if outcome.success {
                CollabCallStatus::Completed
            } else {
                CollabCallStatus::Failed
            };
            tell(&ctx, prompt, &report, status);
            outcome
        })
    }
}

/// What a call found out, for its `CollabToolCall` event.
#[derive(Default)]
struct Report {
    receivers: Vec<ThreadId>,
    states: BTreeMap<String, CollabAgentState>,
}

impl Report {
    fn saw(&mut self, thread_id: ThreadId, status: AgentStatus, message: Option<String>) {
        if !self.receivers.contains(&thread_id) {
            self.receivers.push(thread_id);
        }
        self.states
            .insert(thread_id.to_string(), CollabAgentState { status, message });
    }
}

fn prompt_of(ctx: &ToolContext) -> Option<String> {
    let ToolPayload::Function { arguments } = &ctx.call.payload else {
        return None;
    };
    let value: serde_json::Value = serde_json::from_str(arguments).ok()?;
    value["message"].as_str().map(str::to_string)
}

fn tell(ctx: &ToolContext, prompt: Option<String>, report: &Report, status: CollabCallStatus) {
    ctx.services.tell(EventMsg::CollabToolCall {
        call_id: ctx.call.call_id.clone(),
        tool: ctx.call.tool_name.clone(),
        sender_thread_id: ctx.thread_id,
        receiver_thread_ids: report.receivers.clone(),
        prompt,
        agents_states: report.states.clone(),
        status,
    });
}

fn args<T: DeserializeOwned>(ctx: &ToolContext) -> Result<T, String> {
    let ToolPayload::Function { arguments } = &ctx.call.payload else {
        return Err(format!("`{}` takes JSON arguments", ctx.call.tool_name));
    };
    let text = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    serde_json::from_str(text)
        .map_err(|err| format!("invalid arguments for `{}`: {err}", ctx.call.tool_name))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TargetMessage {
    target: String,
    message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Target {
    target: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WaitArgs {
    #[serde(default)]
    timeout_ms: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    path_prefix: Option<String>,
}

#[allow(
    clippy::too_many_lines,
    reason = "a sequence of stages that read best in order; split when it grows"
)]
async fn run(
    tool: CollabTool,
    tree: &Arc<AgentTree>,
    manager: &ActorRef<ThreadManagerMsg>,
    ctx: &ToolContext,
    report: &mut Report,
) -> Result<String, String> {
    let caller = tree.caller(ctx.thread_id, &ctx.session);
    match tool {
        CollabTool::Spawn => {
            let spawn_args: SpawnArgs = args(ctx)?;
            let spawned = spawn(
                SpawnContext {
                    tree,
                    manager,
                    caller: &caller,
                    caller_session: &ctx.session,
                    settings: &ctx.settings,
                },
                spawn_args,
            )
            .await?;
            report.saw(spawned.thread_id, AgentStatus::Running, None);
            let mut output = serde_json::json!({
                "task_name": spawned.task_path,
                "agent_id": spawned.thread_id.to_string(),
                "nickname": spawned.nickname,
            });
            if let Some(warning) = spawned.warning {
                output["warning"] = warning.into();
            }
            Ok(output.to_string())
        }
        CollabTool::SendMessage => {
            let a: TargetMessage = args(ctx)?;
            let target = resolve(tree, &caller, &a.target)?;
            let session = tree.session(target).ok_or_else(|| {
                tree.detached(target).unwrap_or_else(|| {
                    format!("`{}` is closed; it cannot receive messages", a.target)
                })
            })?;
            let text = format!("[message from `{}`]\n{}", caller.task_path, a.message);
            if let Some(link) = tree.remote_link(target) {
                let request = ThreadRequest::AgentInput {
                    items: vec![UserInput::Text { text }],
                    start_turn: false,
                };
                remote_request(&link, &path_of(tree, target), request).await?;
                report_target(tree, report, target);
                return Ok(format!(
                    "message queued for {} on its worker",
                    path_of(tree, target)
                ));
            }
            tree.message(
                target,
                AgentNews {
                    from_path: caller.task_path.clone(),
                    thread_id: caller.thread_id,
                    kind: NewsKind::Message {
                        text: a.message.clone(),
                    },
                },
            );
            let items = vec![UserInput::Text { text }];
            report_target(tree, report, target);
            tree.submit(
                &session,
                Op::AgentInput {
                    items,
                    start_turn: false,
                },
            );
            Ok(format!("message queued for {}", path_of(tree, target)))
        }
        CollabTool::Followup => {
            let a: TargetMessage = args(ctx)?;
            let target = resolve(tree, &caller, &a.target)?;
            if target == caller.root {
                return Err("followup_task targets a sub-agent, not the root".into());
            }
            tree.check_budget(
                caller.root,
                ctx.settings.agents.token_budget,
                &format!("give `{}` a follow-up task", a.target),
            )?;
            let session = tree.session(target).ok_or_else(|| {
                tree.detached(target)
                    .unwrap_or_else(|| format!("`{}` is closed; spawn a new agent", a.target))
            })?;
            let text = format!(
                "[follow-up task from `{}`]\n{}",
                caller.task_path, a.message
            );
            if let Some(link) = tree.remote_link(target) {
                let request = ThreadRequest::AgentInput {
                    items: vec![UserInput::Text { text }],
                    start_turn: true,
                };
                remote_request(&link, &path_of(tree, target), request).await?;
                report_target(tree, report, target);
                return Ok(format!(
                    "follow-up task sent to {} on its worker",
                    path_of(tree, target)
                ));
            }
            tree.set_status(target, AgentStatus::Running);
            report_target(tree, report, target);
            tree.submit(
                &session,
                Op::AgentInput {
                    items: vec![UserInput::Text { text }],
                    start_turn: true,
                },
            );
            Ok(format!("follow-up task sent to {}", path_of(tree, target)))
        }
        CollabTool::Wait => {
            let a: WaitArgs = args(ctx)?;
            let timeout_ms = match a.timeout_ms {
                None => WAIT_DEFAULT_MS,
                Some(ms) if ms.is_finite() && ms >= 0.0 => {
                    (ms as u64).clamp(WAIT_MIN_MS, WAIT_MAX_MS)
                }
                Some(ms) => return Err(format!("`timeout_ms` {ms} is not a duration")),
            };
            wait(tree, &caller, Duration::from_millis(timeout_ms), report).await
        }
        CollabTool::Interrupt => {
            let a: Target = args(ctx)?;
            let target = resolve(tree, &caller, &a.target)?;
            if target == caller.thread_id {
                return Err("an agent cannot interrupt itself; end your turn instead".into());
            }
            let view = tree
                .view(target)
                .ok_or_else(|| format!("no agent `{}` in this tree", a.target))?;
            let session = tree.session(target).ok_or_else(|| {
                tree.detached(target)
                    .unwrap_or_else(|| format!("`{}` is closed", a.target))
            })?;
            match tree.remote_link(target) {
                Some(link) => {
                    remote_request(&link, &view.task_path, ThreadRequest::Interrupt).await?;
                    // Its own sub-agents run on its worker and are interrupted there.
                }
                None => {
                    tree.submit(&session, Op::Interrupt);
                }
            }
            report.saw(target, view.status, None);
            Ok(format!(
                "interrupted {}; its previous status was {}",
                view.task_path,
                view.status.as_str()
            ))
        }
        CollabTool::List => {
            let a: ListArgs = args(ctx)?;
            let prefix = a.path_prefix.as_deref().map(|p| p.trim_end_matches('/'));
            let agents: Vec<serde_json::Value> = tree
                .list(caller.root, prefix)
                .into_iter()
                .map(|v| {
                    serde_json::json!({
                        "task_name": v.task_path,
                        "agent_id": v.thread_id.to_string(),
                        "nickname": v.nickname,
                        "status": v.status.as_str(),
                    })
                })
                .collect();
            Ok(serde_json::json!({ "agents": agents }).to_string())
        }
        CollabTool::Close => {
            let a: Target = args(ctx)?;
            let target = resolve(tree, &caller, &a.target)?;
            if target == caller.root || target == caller.thread_id {
                return Err("close_agent closes a sub-agent, not the root or yourself".into());
            }
            let session = tree.session(target).ok_or_else(|| {
                tree.detached(target)
                    .unwrap_or_else(|| format!("`{}` is already closed", a.target))
            })?;
            // Its own children first (deepest first), then itself.
            report_target(tree, report, target);
            if let Some(link) = tree.remote_link(target) {
                let path = path_of(tree, target);
                if let Err(err) = remote_request(&link, &path, ThreadRequest::Shutdown).await {
                    // Nobody there to close it: stop following it here, so that it ends
                    // in this tree (its watcher reports it failed, then closed).
                    session.stop(Some(
                        "closed by its parent; its worker did not answer".into(),
                    ));
                    return Err(format!(
                        "{err}; it is no longer followed here and is closed in this tree"
                    ));
                }
                return Ok(format!("closing {path} on its worker"));
            }
            let _ = tree.close_descendants(target);
            tree.submit(&session, Op::Shutdown);
            Ok(format!("closing {}", path_of(tree, target)))
        }
    }
}

/// Sends `request` to the worker running a remote agent; the tool's error when the
/// worker does not answer in time or refuses.
async fn remote_request(
    link: &RemoteLink,
    path: &str,
    request: ThreadRequest,
) -> Result<(), String> {
    thread_request(&link.cluster, &link.thread, &link.keys, &request)
        .await
        .map_err(|err| {
            format!(
                "`{path}` runs on a worker of the pool, which did not take the request: {err} \
                 (a remote agent whose turn has ended is gone from its worker)"
            )
        })
}

fn report_target(tree: &AgentTree, report: &mut Report, target: ThreadId) {
    if let Some(view) = tree.view(target) {
        report.saw(target, view.status, None);
    }
}

fn path_of(tree: &AgentTree, thread_id: ThreadId) -> String {
    tree.view(thread_id)
        .map(|v| v.task_path)
        .unwrap_or_else(|| thread_id.to_string())
}

/// A target (task path, relative name or thread id) in the caller's own tree.
fn resolve(tree: &AgentTree, caller: &Caller, target: &str) -> Result<ThreadId, String> {
    if let Ok(id) = target.trim().parse::<ThreadId>() {
        return if tree.in_tree(caller.root, id) {
            Ok(id)
        } else {
            Err(format!(
                "no agent with id `{target}` in this agent tree (agents of other trees cannot \
                 be reached)"
            ))
        };
    }
    let path = resolve_target(&caller.task_path, target)?;
    if path == ROOT_TASK_PATH {
        return Ok(caller.root);
    }
    tree.by_path(caller.root, &path).ok_or_else(|| {
        format!("no agent `{path}` in this tree; list_agents shows the agents there are")
    })
}

/// Waits until the caller's inbox has news, or the timeout; several waits collect several.
async fn wait(
    tree: &AgentTree,
    caller: &Caller,
    timeout: Duration,
    report: &mut Report,
) -> Result<String, String> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let (news, anyone_live, notify) = tree.take_news(caller);
        if !news.is_empty() {
            for n in &news {
                let (status, message) = match &n.kind {
                    NewsKind::Finished { status, answer } => (*status, answer.clone()),
                    NewsKind::Message { text } => (AgentStatus::Running, text.clone()),
                };
                report.saw(n.thread_id, status, Some(message));
            }
            let lines: Vec<String> = news
                .iter()
                .map(|n| news_line(&n.from_path, n.thread_id, &n.kind))
                .collect();
            return Ok(format!("Wait completed.\n\n{}", lines.join("\n\n")));
        }
        if !anyone_live {
            return Ok(
                "No agent is running and no news is waiting: nothing to wait for.".to_string(),
            );
        }
        if tokio::time::timeout_at(deadline, notify.notified())
            .await
            .is_err()
        {
            return Ok(format!(
                "Wait timed out after {} ms: no agent finished or sent a message.",
                timeout.as_millis()
            ));
        }
    }
}
