//! `spawn_agent`: checks, the child's settings, its thread under the thread manager, its
//! watcher, and its task as its first user message.
//!
//! Runs in the tool call's task (not in an actor handler): it asks the thread manager to
//! start the thread and the parent's session for its history, and waits for both answers
//! with a timeout. Neither of them waits on the tool call, so nothing can deadlock.

use super::child_settings::{child_settings, ChildRequest};
use super::paths::{check_task_name, child_path, nickname};
use super::remote_spawn::{check_remote_args, resolve_placement, start_remote_child};
use super::spawn_request::{
    parse_fork_turns, task_text, ForkTurns, SpawnArgs, SpawnContext, Spawned,
};
use super::tree::{AgentNode, WorktreeSlot};
use super::watcher::{watch, Watched};
use super::worktree::{create, retire, Worktree};
use ractor::rpc::CallResult;
use ractor::ActorRef;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::task::AbortOnDropHandle;
use troupe_messages::agents::{AgentMeta, AgentStatus};
use troupe_messages::cluster::Placement;
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::{AgentStart, SessionMsg, ThreadManagerMsg};
use troupe_messages::ops::{Op, UserInput};
use troupe_messages::settings::SessionSettings;

/// Events a child may have queued for its watcher.
const WATCH_CAPACITY: usize = 4096;
/// How long a spawn waits for the thread manager or the parent's session.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Spawns the child; every refusal is an error text for the model.
pub async fn spawn(ctx: SpawnContext<'_>, args: SpawnArgs) -> Result<Spawned, String> {
    let settings = ctx.settings;
    check_task_name(&args.task_name)?;
    if args.message.trim().is_empty() {
        return Err("`message` is empty; give the agent its task".into());
    }
    let placement = resolve_placement(
        args.placement.as_deref(),
        &settings.cluster,
        ctx.tree.local_live(ctx.caller.root),
        settings.agents.max_threads,
    )?;
    if placement == Placement::Remote {
        check_remote_args(&args)?;
    }
    let fork = parse_fork_turns(args.fork_turns.as_deref())?;
    let depth = ctx.caller.depth + 1;
    if depth > settings.agents.max_depth {
        return Err(format!(
            "cannot spawn: this agent is at depth {} and agents.max_depth is {}; do the work \
             yourself or report back to your parent",
            ctx.caller.depth, settings.agents.max_depth
        ));
    }
    let role_name = args.agent_type.as_deref().unwrap_or("default");
    let role = settings.agents.roles.get(role_name).ok_or_else(|| {
        let known: Vec<&str> = settings.agents.roles.keys().map(String::as_str).collect();
        format!(
            "unknown `agent_type` `{role_name}`; known roles: {}",
            known.join(", ")
        )
    })?;
    let task_path = child_path(&ctx.caller.task_path, &args.task_name);
    if placement == Placement::Remote {
        ctx.tree.check_budget(
            ctx.caller.root,
            settings.agents.token_budget,
            &format!("spawn `{task_path}`"),
        )?;
        ctx.tree.reserve(
            ctx.caller.root,
            &task_path,
            settings.agents.max_threads,
            Placement::Remote,
        )?;
        let result = start_remote_child(&ctx, settings, &task_path, &args.message).await;
        if result.is_err() {
            ctx.tree.release(ctx.caller.root, &task_path);
        }
        return result;
    }
    let child = child_settings(
        settings,
        &ChildRequest {
            task_path: &task_path,
            role_name,
            role: Some(role),
            model: args.model.as_deref(),
            reasoning_effort: args.reasoning_effort.as_deref(),
        },
    )?;
    let mut child = child;
    ctx.tree.check_budget(
        ctx.caller.root,
        settings.agents.token_budget,
        &format!("spawn `{task_path}`"),
    )?;
    ctx.tree.reserve(
        ctx.caller.root,
        &task_path,
        settings.agents.max_threads,
        Placement::Local,
    )?;
    let worktree = if args.worktree {
        match make_worktree(settings, &task_path, &args.task_name).await {
            Ok(worktree) => {
                child.cwd = worktree.cwd.clone();
                Some(worktree)
            }
            Err(err) => {
                ctx.tree.release(ctx.caller.root, &task_path);
                return Err(err);
            }
        }
    } else {
        None
    };
    let result = start_child(
        &ctx,
        child,
        &task_path,
        fork,
        &args.message,
        worktree.clone(),
    )
    .await;
    if result.is_err() {
        ctx.tree.release(ctx.caller.root, &task_path);
        if let Some(worktree) = worktree {
            // Nothing ran in it: it holds no commit, so retiring removes it.
            let message = format!("troupe: {task_path} (never started)");
            let _ = tokio::task::spawn_blocking(move || retire(&worktree, &message)).await;
        }
    }
    result
}

/// A new worktree of the caller's repository for the child (git runs in a blocking task).
async fn make_worktree(
    settings: &SessionSettings,
    task_path: &str,
    task_name: &str,
) -> Result<Worktree, String> {
    let (cwd, home, label) = (
        settings.cwd.clone(),
        settings.troupe_home.clone(),
        task_name.to_string(),
    );
    tokio::task::spawn_blocking(move || create(&cwd, &home, Some(&label)))
        .await
        .map_err(|err| format!("cannot make a worktree: {err}"))?
        .map_err(|err| {
            format!(
                "cannot give `{task_path}` a worktree: {err}; spawn it without `worktree` to \
                 let it work in your directory"
            )
        })
}

async fn start_child(
    ctx: &SpawnContext<'_>,
    settings: SessionSettings,
    task_path: &str,
    fork: ForkTurns,
    message: &str,
    worktree: Option<Worktree>,
) -> Result<Spawned, String> {
    let forked_history = match fork {
        ForkTurns::None => None,
        ForkTurns::All => Some(forkable_history(parent_history(ctx.caller_session).await?)),
    };
    let nickname = nickname(ctx.tree.next_spawn_number());
    let meta = AgentMeta {
        root_thread_id: ctx.caller.root,
        task_path: task_path.to_string(),
        depth: settings.agents.depth,
        nickname: nickname.clone(),
    };
    let start = AgentStart {
        parent_thread_id: ctx.caller.thread_id,
        meta,
        forked_history,
    };
    let reply = ctx
        .manager
        .call(
            |reply| ThreadManagerMsg::StartAgent {
                settings: Box::new(settings),
                start: Box::new(start),
                reply,
            },
            Some(CALL_TIMEOUT),
        )
        .await;
    let handle = match reply {
        Ok(CallResult::Success(result)) => result?,
        Ok(CallResult::Timeout) => return Err("the thread manager did not answer in time".into()),
        Ok(CallResult::SenderError) | Err(_) => return Err("the runtime is stopping".into()),
    };
    let mut text = task_text(task_path, &ctx.caller.task_path, message);
    if let Some(worktree) = &worktree {
        text = format!(
            "[You work in your own git worktree `{}` on branch `{}`; what you change there is \
             committed to that branch when your turn ends, for `{}` to merge.]\n{text}",
            worktree.root.display(),
            worktree.branch,
            ctx.caller.task_path
        );
    }
    let slot: Option<WorktreeSlot> = worktree.map(|w| Arc::new(tokio::sync::Mutex::new(Some(w))));
    let (events, receiver) = mpsc::channel(WATCH_CAPACITY);
    handle
        .session
        .send_message(SessionMsg::Subscribe { events })
        .map_err(|_| "the agent's thread stopped as it started".to_string())?;
    ctx.tree.insert(AgentNode {
        thread_id: handle.thread_id,
        parent: ctx.caller.thread_id,
        root: ctx.caller.root,
        task_path: task_path.to_string(),
        depth: ctx.caller.depth + 1,
        nickname: nickname.clone(),
        status: AgentStatus::Running,
        session: Some(handle.session.clone()),
        last_answer: None,
        watcher: None,
        worktree: slot.clone(),
        remote: None,
    });
    let watched = Watched {
        thread_id: handle.thread_id,
        parent: ctx.caller.thread_id,
        root: ctx.caller.root,
        task_path: task_path.to_string(),
        nickname: nickname.clone(),
        worktree: slot,
    };
    let watcher = tokio::spawn(watch(ctx.tree.clone(), watched, receiver));
    ctx.tree
        .set_watcher(handle.thread_id, AbortOnDropHandle::new(watcher));
    ctx.tree.submit(
        &handle.session,
        Op::UserInput {
            items: vec![UserInput::Text { text }],
        },
    );
    Ok(Spawned {
        task_path: task_path.to_string(),
        thread_id: handle.thread_id,
        nickname,
        warning: None,
    })
}

async fn parent_history(session: &ActorRef<SessionMsg>) -> Result<Vec<ResponseItem>, String> {
    match session
        .call(|reply| SessionMsg::GetHistory { reply }, Some(CALL_TIMEOUT))
        .await
    {
        Ok(CallResult::Success(history)) => Ok(history),
        _ => Err("could not read this thread's history to fork it".into()),
    }
}

/// The parent's history without the calls still running (the `spawn_agent` call itself and
/// its siblings): the rest is exactly what the parent's last request carried, so the child's
/// first request starts with the same bytes and reuses the prompt cache.
pub fn forkable_history(history: Vec<ResponseItem>) -> Vec<ResponseItem> {
    let dangling: std::collections::HashSet<String> =
        crate::rollout_recorder::replay::dangling_calls(&history)
            .into_iter()
            .map(|(id, _)| id)
            .collect();
    history
        .into_iter()
        .filter(|item| item.tool_call_id().is_none_or(|id| !dangling.contains(id)))
        .collect()
}
