//! A remote thread's git workspace on this worker (`[cluster] workspace = "git"` at the
//! requester): checked out before the thread starts, its work committed and pushed back to
//! the requester's remote as a branch once the turn is over (the end message names the
//! branch), and the worktree removed. The git work itself is in
//! `troupe_actors::agents::git_checkout`; here it runs off the runtime's threads.

use anyhow::{Context, Result};
use std::path::Path;
use troupe_actors::agents::git_checkout::{self, RemoteCheckout};
use troupe_cluster::wire::{GitWorkspace, SpawnRequest, WorkspaceOutcome};
use troupe_messages::agents::AgentMeta;

/// A checked-out workspace and the message its work is committed with.
pub(super) struct Delivery {
    pub checkout: RemoteCheckout,
    pub message: String,
}

/// Checks out the request's commit under `home` when it carries one.
pub(super) async fn for_request(home: &Path, request: &SpawnRequest) -> Result<Option<Delivery>> {
    let Some(workspace) = request.workspace.clone() else {
        return Ok(None);
    };
    let name = format!("remote thread of request {}", request.request_id);
    check_out(
        home,
        workspace,
        request.agent.as_ref().map(|a| &a.meta),
        name,
    )
    .await
    .map(Some)
}

/// Checks the base commit out again for a thread taken over from a lost worker: what
/// that worker had not pushed is lost with it (as its unpublished output is).
pub(super) async fn for_take_over(
    home: &Path,
    workspace: &GitWorkspace,
    agent: Option<&AgentMeta>,
    thread_id: &str,
) -> Result<Delivery> {
    let name = format!("thread {thread_id} (taken over)");
    check_out(home, workspace.clone(), agent, name).await
}

/// A sub-agent's branch is named after its task (`troupe/<task>-<id>`), as locally; a
/// whole thread's is `troupe/<id>`.
async fn check_out(
    home: &Path,
    workspace: GitWorkspace,
    agent: Option<&AgentMeta>,
    name: String,
) -> Result<Delivery> {
    let label = agent.map(|meta| {
        let path = meta.task_path.as_str();
        path.rsplit('/').next().unwrap_or(path).to_string()
    });
    let message = match agent {
        Some(meta) => format!("troupe: {} (remote)", meta.task_path),
        None => format!("troupe: {name}"),
    };
    let home = home.to_path_buf();
    let checkout = tokio::task::spawn_blocking(move || {
        git_checkout::check_out(&home, &workspace, label.as_deref())
    })
    .await
    .context("the checkout task stopped")?
    .context("cannot check out the requester's commit")?;
    Ok(Delivery { checkout, message })
}

/// Commits and pushes the work, then removes the worktree; what the end message says.
pub(super) async fn deliver(delivery: Delivery, worker: &str) -> WorkspaceOutcome {
    let branch = delivery.checkout.worktree.branch.clone();
    let root = delivery.checkout.worktree.root.clone();
    let done = tokio::task::spawn_blocking(move || {
        git_checkout::deliver(&delivery.checkout, &delivery.message)
    })
    .await;
    let error = match done {
        Ok(Ok(diffstat)) => return WorkspaceOutcome::Pushed { branch, diffstat },
        Ok(Err(err)) => err.to_string(),
        Err(err) => format!("the delivery task stopped: {err}"),
    };
    eprintln!(
        "worker {worker}: the work on branch {branch} was not pushed ({error}); its worktree \
         stays at {}",
        root.display()
    );
    WorkspaceOutcome::Failed {
        error: format!(
            "{error} (worker {worker} keeps the work on branch {branch} in {})",
            root.display()
        ),
    }
}

/// A workspace whose thread never started: removed, nothing to push.
pub(super) async fn discard(delivery: Delivery) {
    let removed =
        tokio::task::spawn_blocking(move || git_checkout::remove(&delivery.checkout)).await;
    match removed {
        Ok(Ok(())) => {}
        Ok(Err(err)) => tracing::warn!(%err, "an unused worktree was not removed"),
        Err(err) => tracing::warn!(%err, "an unused worktree was not removed"),
    }
}
