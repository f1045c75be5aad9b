//! `spawn_agent {placement}`: where a child runs, and starting one on a worker of the pool.
//!
//! A remote child runs under the worker's own configuration and requirements (as
//! `exec --remote`): nothing the caller asks for can widen what the worker allows, so the
//! arguments that would shape its session here (a model, a role, a worktree, the caller's
//! history) are refused rather than silently dropped.

use super::git_workspace::{drop_base_ref, push_base, BasePushed};
use super::remote::{RemoteArgs, RemoteSessionActor};
use super::spawn_request::{task_text, SpawnArgs, SpawnContext, Spawned};
use super::tree::{AgentNode, RemoteLink};
use super::watcher::{watch, Watched};
use ractor::Actor;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::task::AbortOnDropHandle;
use troupe_cluster::sign::{ThreadKeys, ThreadSecret};
use troupe_cluster::spawn::request_spawn;
use troupe_cluster::wire::{RemoteAgent, SpawnRequest};
use troupe_messages::agents::{AgentMeta, AgentStatus};
use troupe_messages::cluster::{ClusterConfig, Placement, Workspace};
use troupe_messages::ids::ThreadId;
use troupe_messages::ops::UserInput;
use troupe_messages::settings::SessionSettings;

/// Events a remote child may have queued for its watcher.
const WATCH_CAPACITY: usize = 4096;

/// Where the child goes: `Local` or `Remote` (never `Auto`). `requested` is the call's
/// `placement`, else `[cluster] placement`, else local; `auto` goes remote when the tree's
/// local agents fill `[agents] max_threads`, and stays local without a pool.
pub fn resolve_placement(
    requested: Option<&str>,
    cluster: &ClusterConfig,
    local_live: usize,
    max_threads: usize,
) -> Result<Placement, String> {
    let placement = match requested {
        Some(text) => Placement::parse(text).ok_or_else(|| {
            format!("`placement` `{text}` is not supported; use `local`, `remote` or `auto`")
        })?,
        None => cluster.placement.unwrap_or_default(),
    };
    match placement {
        Placement::Local => Ok(Placement::Local),
        Placement::Remote if cluster.configured() => Ok(Placement::Remote),
        Placement::Remote => Err(
            "cannot place the agent remotely: no worker pool is configured (set `nats_url` \
             in [cluster]); spawn it with `placement: \"local\"`"
                .into(),
        ),
        Placement::Auto if cluster.configured() && local_live >= max_threads => {
            Ok(Placement::Remote)
        }
        Placement::Auto => Ok(Placement::Local),
    }
}

/// The arguments a remote child cannot take, refused with what to do instead.
pub fn check_remote_args(args: &SpawnArgs) -> Result<(), String> {
    let mut refused = Vec::new();
    if args.fork_turns.as_deref().map(str::trim) == Some("all") {
        refused.push("`fork_turns: \"all\"` (a remote agent starts with only its task)");
    }
    if args.model.is_some() {
        refused.push("`model`");
    }
    if args.reasoning_effort.is_some() {
        refused.push("`reasoning_effort`");
    }
    if args.agent_type.as_deref().is_some_and(|t| t != "default") {
        refused.push("`agent_type`");
    }
    if args.worktree {
        refused.push("`worktree`");
    }
    if refused.is_empty() {
        return Ok(());
    }
    Err(format!(
        "a remote agent runs under its worker's own configuration and cannot take {}; drop \
         them, or spawn it with `placement: \"local\"`",
        refused.join(", ")
    ))
}

/// Places the child on a worker and puts its stand-in in the tree.
pub async fn start_remote_child(
    ctx: &SpawnContext<'_>,
    settings: &SessionSettings,
    task_path: &str,
    message: &str,
) -> Result<Spawned, String> {
    let cluster = ctx
        .tree
        .remote
        .connect(&settings.cluster)
        .await
        .map_err(|err| format!("cannot place `{task_path}` on the pool: {err}"))?;
    let nickname = super::paths::nickname(ctx.tree.next_spawn_number());
    let depth = ctx.caller.depth + 1;
    let deadline = cluster.options.spawn_deadline;
    let request_id = uuid::Uuid::now_v7().simple().to_string();
    let git = git_base(settings, task_path, &request_id).await?;
    // The thread's secret: only this tree and the worker that takes the request know it.
    let secret =
        ThreadSecret::generate().map_err(|err| format!("cannot place `{task_path}`: {err}"))?;
    let keys = ThreadKeys::from_secret(&secret);
    let request = SpawnRequest {
        secret: secret.to_hex(),
        request_id,
        cwd: settings.cwd.clone(),
        items: vec![UserInput::Text {
            text: task_text(task_path, &ctx.caller.task_path, message),
        }],
        deadline_ms: troupe_cluster::now_ms() + millis(deadline),
        agent: Some(RemoteAgent {
            parent_thread_id: ctx.caller.thread_id,
            meta: AgentMeta {
                root_thread_id: ctx.caller.root,
                task_path: task_path.to_string(),
                depth,
                nickname: nickname.clone(),
            },
        }),
        workspace: git.as_ref().map(|pushed| pushed.workspace.clone()),
    };
    let answer = match request_spawn(&cluster, &request).await {
        Ok(answer) => answer,
        Err(err) => {
            if let Some(pushed) = git {
                // Nobody will fetch the base commit: its ref goes.
                let _ = tokio::task::spawn_blocking(move || drop_base_ref(&pushed)).await;
            }
            return Err(format!("`{task_path}` was not started on the pool: {err}"));
        }
    };
    let thread_id: ThreadId = answer
        .thread_id
        .as_deref()
        .unwrap_or_default()
        .parse()
        .map_err(|err| format!("worker {} answered a bad thread id: {err}", answer.worker))?;
    let (events, receiver) = mpsc::channel(WATCH_CAPACITY);
    let (session, _) = Actor::spawn(
        None,
        RemoteSessionActor,
        RemoteArgs {
            cluster: cluster.clone(),
            thread_id,
            task_path: task_path.to_string(),
            home: settings.troupe_home.clone(),
            store: ctx.tree.remote.store(),
            watcher: events,
            git: git.clone(),
            keys: keys.clone(),
        },
    )
    .await
    .map_err(|err| format!("cannot follow `{task_path}` on its worker: {err}"))?;
    ctx.tree.insert(AgentNode {
        thread_id,
        parent: ctx.caller.thread_id,
        root: ctx.caller.root,
        task_path: task_path.to_string(),
        depth,
        nickname: nickname.clone(),
        status: AgentStatus::Running,
        session: Some(session),
        last_answer: None,
        watcher: None,
        worktree: None,
        remote: Some(RemoteLink {
            cluster,
            thread: thread_id.to_string(),
            keys,
        }),
    });
    let watched = Watched {
        thread_id,
        parent: ctx.caller.thread_id,
        root: ctx.caller.root,
        task_path: task_path.to_string(),
        nickname: nickname.clone(),
        worktree: None,
    };
    let watcher = tokio::spawn(watch(ctx.tree.clone(), watched, receiver));
    ctx.tree
        .set_watcher(thread_id, AbortOnDropHandle::new(watcher));
    Ok(Spawned {
        task_path: task_path.to_string(),
        thread_id,
        nickname,
        warning: git.and_then(|pushed| pushed.uncommitted_note()),
    })
}

/// With `[cluster] workspace = "git"`: the caller's HEAD commit pushed to `git_remote` for
/// the worker (git runs in a blocking task); none with a shared workspace.
async fn git_base(
    settings: &SessionSettings,
    task_path: &str,
    request_id: &str,
) -> Result<Option<BasePushed>, String> {
    match settings.cluster.workspace.unwrap_or_default() {
        Workspace::Shared => Ok(None),
        Workspace::Git => {
            let remote = settings.cluster.git_remote.clone().unwrap_or_default();
            let (cwd, id) = (settings.cwd.clone(), request_id.to_string());
            let pushed = tokio::task::spawn_blocking(move || push_base(&cwd, remote.as_str(), &id))
                .await
                .map_err(|err| format!("cannot send `{task_path}` its workspace: {err}"))?;
            // The branch that comes back must carry the task's name, as the worker writes it.
            let label = super::git_checkout::branch_label(
                task_path.rsplit('/').next().unwrap_or(task_path),
            );
            pushed
                .map(|mut pushed| {
                    pushed.label = Some(label);
                    Some(pushed)
                })
                .map_err(|err| {
                format!(
                    "cannot send `{task_path}` its workspace: {err}; or spawn it with                      `placement: \"local\"`"
                )
            })
        }
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX / 2)
}
