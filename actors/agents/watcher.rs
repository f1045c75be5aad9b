//! Reading a child's events: its status in the tree, its final answer to its parent (the
//! inbox `wait_agent` reads, and an item in the parent's history), and its activity told to
//! the root's subscribers with its task path.

use super::tree::{AgentTree, NewsKind, WorktreeSlot};
use super::worktree::{commit_all, diffstat, retire, Retired, WorktreeError};
use std::sync::Arc;
use tokio::sync::mpsc;
use troupe_messages::agents::AgentStatus;
use troupe_messages::events::{AbortReason, Event, EventMsg};
use troupe_messages::ids::ThreadId;
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::SessionMsg;
use troupe_messages::ops::{Op, UserInput};

/// Bytes of a final answer kept in the parent's history (head and tail).
pub const ANSWER_MAX_BYTES: usize = 8 * 1024;

/// Where a child sits, for its watcher.
pub struct Watched {
    pub thread_id: ThreadId,
    pub parent: ThreadId,
    pub root: ThreadId,
    pub task_path: String,
    pub nickname: String,
    /// Its git worktree, when it was spawned with one.
    pub worktree: Option<WorktreeSlot>,
}

/// Runs until the child's thread stops.
pub async fn watch(tree: Arc<AgentTree>, child: Watched, mut events: mpsc::Receiver<Event>) {
    let mut last_error: Option<String> = None;
    let mut closed = false;
    while let Some(event) = events.recv().await {
        match &event.msg {
            EventMsg::TurnStarted { .. } => {
                tree.set_status(child.thread_id, AgentStatus::Running);
            }
            EventMsg::Error { error, fatal: true } => last_error = Some(error.to_string()),
            EventMsg::TurnComplete {
                last_agent_message, ..
            } => {
                let mut answer = last_agent_message
                    .clone()
                    .unwrap_or_else(|| "(the agent ended its turn without a message)".into());
                if let Some(slot) = &child.worktree {
                    answer.push_str(&commit_turn(slot, &child.task_path).await);
                }
                finish(&tree, &child, AgentStatus::Completed, answer);
            }
            EventMsg::TurnAborted { reason, .. } => match reason {
                AbortReason::Failed => {
                    let answer = last_error
                        .take()
                        .unwrap_or_else(|| "the agent's turn failed".into());
                    finish(&tree, &child, AgentStatus::Failed, answer);
                }
                AbortReason::Interrupted => finish(
                    &tree,
                    &child,
                    AgentStatus::Interrupted,
                    "the agent's turn was interrupted".into(),
                ),
                AbortReason::Shutdown => {}
            },
            EventMsg::TokenCount { total, .. } => {
                tree.record_tokens(child.thread_id, child.root, total.total_tokens);
            }
            EventMsg::ShutdownComplete => closed = true,
            _ => {}
        }
        forward(&tree, &child, event.msg);
        if closed {
            break;
        }
    }
    if !closed {
        // The session died without shutting down (a crash): the child failed.
        let running = tree.view(child.thread_id).map(|v| v.status) == Some(AgentStatus::Running);
        if running {
            let answer =
                last_error.unwrap_or_else(|| "the agent's thread stopped unexpectedly".into());
            finish(&tree, &child, AgentStatus::Failed, answer);
        }
    }
    tree.set_status(child.thread_id, AgentStatus::Closed);
    if let Some(slot) = &child.worktree {
        retire_slot(slot, &child.task_path).await;
    }
}

/// Commits what the child changed in its worktree during the turn; the text its final
/// answer gets: the branch, the worktree and the diffstat since the worktree was made.
async fn commit_turn(slot: &WorktreeSlot, task_path: &str) -> String {
    let Some(worktree) = slot.lock().await.clone() else {
        return String::new();
    };
    let message = format!("troupe: {task_path}");
    let done = tokio::task::spawn_blocking(move || {
        commit_all(&worktree, &message)?;
        Ok::<_, WorktreeError>((diffstat(&worktree)?, worktree))
    })
    .await;
    match done {
        Ok(Ok((stat, worktree))) => format!(
            "\n\n[worktree] branch `{}` (worktree `{}`), changes since it was made:\n{stat}\n\
             Merge them with `git merge {}`; closing the agent removes the worktree and the \
             branch once nothing in it is left unmerged.",
            worktree.branch,
            worktree.root.display(),
            worktree.branch
        ),
        Ok(Err(err)) => format!("\n\n[worktree] its changes could not be committed: {err}"),
        Err(err) => format!("\n\n[worktree] its changes could not be committed: {err}"),
    }
}

/// A closed child's worktree: its last changes committed, then removed with its branch
/// unless the branch holds commits the repository has not merged (kept, so nothing is
/// lost). Done once, by whoever comes first: the child's watcher or its closing root.
pub async fn retire_slot(slot: &WorktreeSlot, task_path: &str) {
    let mut guard = slot.lock().await;
    let Some(worktree) = guard.take() else {
        return;
    };
    let message = format!("troupe: {task_path} (closed)");
    let path = task_path.to_string();
    let retired =
        tokio::task::spawn_blocking(move || retire(&worktree, &message).map(|r| (r, worktree)))
            .await;
    match retired {
        Ok(Ok((Retired::Removed, _))) => {
            tracing::debug!(agent = %path, "worktree removed");
        }
        Ok(Ok((Retired::Kept { unmerged }, worktree))) => tracing::info!(
            agent = %path,
            branch = %worktree.branch,
            worktree = %worktree.root.display(),
            unmerged,
            "worktree kept: its branch holds unmerged commits"
        ),
        Ok(Err(err)) => tracing::warn!(agent = %path, "worktree not retired: {err}"),
        Err(err) => tracing::warn!(agent = %path, "worktree not retired: {err}"),
    }
}

/// The child's turn ended: news for the parent's `wait_agent`, and the answer as an item in
/// the parent's history (joins its running turn, or waits for its next one).
fn finish(tree: &AgentTree, child: &Watched, status: AgentStatus, answer: String) {
    let text = notification(
        &child.task_path,
        &child.nickname,
        child.thread_id,
        status,
        &answer,
    );
    if let Some(parent) = tree.session(child.parent) {
        tree.submit(
            &parent,
            Op::AgentInput {
                items: vec![UserInput::Text { text }],
                start_turn: false,
            },
        );
    }
    tree.finished(child.thread_id, status, bounded(&answer));
}

/// Sub-agent activity worth showing: to the root's subscribers, tagged with the path. A
/// running command's output and the token counts go too (a supervisor watches them live);
/// the text the model streams does not (its finished message follows). Of the recorded
/// items only a call's output goes: it tells a frontend the call was settled, so an approval
/// it still shows was answered elsewhere (another process, through the child's inbox).
fn forward(tree: &AgentTree, child: &Watched, msg: EventMsg) {
    let settles_a_call = matches!(
        &msg,
        EventMsg::ItemRecorded {
            item: ResponseItem::FunctionCallOutput { .. }
                | ResponseItem::CustomToolCallOutput { .. }
        }
    );
    if !settles_a_call
        && matches!(
            msg,
            EventMsg::ItemRecorded { .. }
                | EventMsg::AgentMessageDelta { .. }
                | EventMsg::AgentReasoningDelta { .. }
        )
    {
        return;
    }
    if let Some(root) = tree.session(child.root) {
        let _ = root.send_message(SessionMsg::AgentEvent(EventMsg::AgentEvent {
            thread_id: child.thread_id,
            task_path: child.task_path.clone(),
            msg: Box::new(msg),
        }));
    }
}

/// The item a parent's history gets when a child's turn ends.
pub fn notification(
    path: &str,
    nickname: &str,
    thread_id: ThreadId,
    status: AgentStatus,
    answer: &str,
) -> String {
    format!(
        "<subagent_notification>\nagent: {path} ({nickname}, thread {thread_id})\nstatus: {}\n\
         final answer:\n{}\n</subagent_notification>",
        status.as_str(),
        bounded(answer)
    )
}

/// `text` within [`ANSWER_MAX_BYTES`]: head and tail, with what was cut named.
pub fn bounded(text: &str) -> String {
    if text.len() <= ANSWER_MAX_BYTES {
        return text.to_string();
    }
    let half = ANSWER_MAX_BYTES / 2;
    let mut head_end = half;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - half;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    format!(
        "{}\n[… {} bytes cut …]\n{}",
        &text[..head_end],
        tail_start - head_end,
        &text[tail_start..]
    )
}

/// A news item as `wait_agent` shows it.
pub fn news_line(from_path: &str, thread_id: ThreadId, kind: &NewsKind) -> String {
    match kind {
        NewsKind::Finished { status, answer } => format!(
            "{from_path} (thread {thread_id}) {}:\n{answer}",
            status.as_str()
        ),
        NewsKind::Message { text } => {
            format!("message from {from_path} (thread {thread_id}):\n{text}")
        }
    }
}
