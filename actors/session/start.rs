//! Building a session's state: a new thread (new rollout, initial context recorded), or one
//! resumed from its rollout (history replayed, calls the dead process left without output
//! answered as aborted, lines appended to the same file).

use super::input_queue::InputQueue;
use super::persist::Persistence;
use super::subscribers::Subscribers;
use super::{context, SessionArgs, SessionStart, SessionState};
use crate::rollout_recorder::loader::check_writable;
use crate::rollout_recorder::meta::session_meta;
use crate::rollout_recorder::replay::{dangling_calls, replay};
use crate::rollout_recorder::{RolloutArgs, RolloutOpen, RolloutRecorderActor};
use crate::turn::prompt;
use crate::turn::tokens::{context_window, TokenTracker};
use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::sync::Arc;
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::SessionMsg;
use troupe_messages::rollout::{RolloutLine, RolloutRecord};
use troupe_messages::settings::SessionSettings;
use troupe_messages::tools::ToolOutput;

/// The state of a session starting with `args`; spawns its rollout recorder.
#[allow(
    clippy::too_many_lines,
    reason = "a sequence of stages that read best in order; split when it grows"
)]
pub(super) async fn start(
    myself: ActorRef<SessionMsg>,
    args: SessionArgs,
) -> Result<SessionState, ActorProcessingErr> {
    let mut forked: Option<Vec<ResponseItem>> = None;
    let is_agent = matches!(args.start, SessionStart::Agent(_));
    let (open, meta, lines, mut warnings, resumed) = match args.start {
        SessionStart::New => {
            let meta = session_meta(args.thread_id, &args.settings, None);
            let open = RolloutOpen::Create(Box::new(meta.clone()));
            (open, meta, Vec::new(), Vec::new(), false)
        }
        SessionStart::Agent(agent) => {
            let mut meta = session_meta(args.thread_id, &args.settings, None);
            meta.parent_thread_id = Some(agent.parent_thread_id);
            meta.agent = Some(agent.meta.clone());
            let open = RolloutOpen::Create(Box::new(meta.clone()));
            forked = agent.forked_history;
            (open, meta, Vec::new(), Vec::new(), false)
        }
        SessionStart::Resume(loaded) => {
            check_writable(&loaded)?;
            let loaded = *loaded;
            let (meta, lines, warnings) = (loaded.meta, loaded.lines, loaded.warnings);
            (RolloutOpen::Append, meta, lines, warnings, true)
        }
    };
    // "Approved for the session" holds for the whole agent tree the thread belongs to (a
    // fork names its source as parent too, but is a tree of its own).
    let tree_member = match (&meta.agent, meta.parent_thread_id) {
        (Some(_), Some(parent)) => parent,
        _ => args.thread_id,
    };
    let approval_memory = match &args.agents {
        Some(tree) => tree.tree_approvals(tree_member),
        None => Default::default(),
    };
    let (recorder, _) = Actor::spawn_linked(
        None,
        RolloutRecorderActor,
        RolloutArgs {
            path: args.rollout_path.clone(),
            open,
            writer: args.rollout_writer,
            session: Some(myself.clone()),
        },
        myself.get_cell(),
    )
    .await
    .map_err(|err| crate::spawn_failure::cause(&err))?;
    let settings = Arc::new(args.settings);
    let settings_home = settings.troupe_home.clone();
    // Skills and AGENTS.md warnings come from the current files either way; a resumed
    // thread keeps the initial context it was started with (it is in its history).
    let initial = context::initial_context(&settings);
    let replayed = replay(&lines);
    if let Some(first) = replayed.errors.first() {
        // A history that cannot be rebuilt exactly is not continued (the model would see
        // something else than it saw); listing and forking still read the file.
        return Err(format!(
            "{}: the history cannot be rebuilt: {first}",
            args.rollout_path.display()
        )
        .into());
    }
    let session_grants = replayed.tracker.session_grants.clone();
    let last_timestamp = lines
        .last()
        .map(|line| line.timestamp.clone())
        .unwrap_or_else(|| meta.created_at.clone());
    let mut persist = Persistence::new(
        recorder,
        settings.rollout_fsync,
        // An ephemeral thread (its own rollout directory) leaves no index entry either.
        args.store.filter(|_| settings.rollout_dir.is_none()),
        args.rollout_path.clone(),
        meta,
        replayed.tracker.clone(),
        last_timestamp,
    );
    let (history, initial_items, told_settings) = if resumed {
        let told = replayed
            .tracker
            .last_settings
            .clone()
            .map(|s| Arc::new(*s))
            .unwrap_or_else(|| settings.clone());
        (replayed.history, leading_items(&lines), told)
    } else if let Some(history) = forked {
        // A forked sub-agent: the parent's history, recorded as its own, so a resume
        // rebuilds it; compaction keeps this thread's own initial context.
        persist.record(
            history
                .iter()
                .cloned()
                .map(RolloutRecord::ResponseItem)
                .collect(),
        );
        (history, initial.items.clone(), settings.clone())
    } else {
        persist.record(
            initial
                .items
                .iter()
                .cloned()
                .map(RolloutRecord::ResponseItem)
                .collect(),
        );
        (
            initial.items.clone(),
            initial.items.clone(),
            settings.clone(),
        )
    };
    let tokens = TokenTracker::for_history(&history);
    warnings.extend(initial.warnings);
    warnings.extend(window_warning(&settings, &tokens));
    let mut state = SessionState {
        thread_id: args.thread_id,
        told_settings,
        settings,
        next_turn_output_schema: None,
        rollout_path: args.rollout_path,
        registry: args.registry,
        http: args.http,
        manager: args.manager,
        persist,
        history,
        subscribers: Subscribers::default(),
        queue: InputQueue::default(),
        turn: None,
        ending: None,
        turns_started: replayed.tracker.turns,
        total_usage: replayed.tracker.tokens,
        startup_warnings: warnings,
        agents: args.agents,
        shutting_down: false,
        inbox: super::inbox::Inbox::start(myself.clone(), &settings_home, args.thread_id),
        // Sub-agents run no SessionStart hooks: their parent's session started.
        session_start_pending: match (is_agent, resumed) {
            (true, _) => None,
            (false, true) => Some("resume"),
            (false, false) => Some("startup"),
        },
        goals: super::goals::GoalState::restored(replayed.tracker.goal.clone()),
        checkpoints: super::checkpoints::SessionCheckpoints::new(args.thread_id),
        user_shell: Default::default(),
        initial_context: Arc::new(initial_items),
        tokens,
        skills: initial.skills,
        approvals: crate::approvals::SessionApprovals {
            cache: approval_memory,
            rules: args.rules,
            grants: Arc::new(std::sync::Mutex::new(session_grants)),
        },
    };
    if resumed && !is_agent {
        // Messages queued while the thread was closed are the next turn's first input.
        for text in state.inbox.claim_waiting().await {
            state
                .queue
                .push(vec![troupe_messages::ops::UserInput::Text { text }]);
        }
    }
    close_dangling_calls(&mut state).await;
    state.flush().await;
    if let Some(err) = state.persist.failure.clone() {
        // The recorder closes the file and releases the lock before the start fails.
        let _ = state
            .persist
            .recorder
            .stop_and_wait(Some("the thread cannot be saved".into()), None)
            .await;
        if !resumed {
            // A new thread that could not save its start is no thread: its rollout holds
            // nothing the user wrote (the lock went with the recorder).
            let _ = std::fs::remove_file(&state.rollout_path);
        }
        return Err(format!("cannot save the thread: {err}").into());
    }
    state.persist.update_index(false);
    Ok(state)
}

/// A call the dead process never answered gets an "aborted" output (recorded), or the next
/// request would be rejected for a call without one.
async fn close_dangling_calls(state: &mut SessionState) {
    let outputs: Vec<ResponseItem> = dangling_calls(&state.history)
        .into_iter()
        .map(|(call_id, custom)| {
            prompt::output_item(&ToolOutput {
                call_id,
                content: "aborted: the process running this call stopped before it finished".into(),
                success: false,
                custom,
                parts: Vec::new(),
            })
        })
        .collect();
    if outputs.is_empty() {
        return;
    }
    for item in &outputs {
        state.push_history(item.clone());
    }
    state
        .record(
            outputs
                .into_iter()
                .map(RolloutRecord::ResponseItem)
                .collect(),
        )
        .await;
}

/// The initial context of a recorded thread: the items before its first turn.
fn leading_items(lines: &[RolloutLine]) -> Vec<ResponseItem> {
    lines
        .iter()
        .take_while(|line| !matches!(line.record, RolloutRecord::TurnContext(_)))
        .filter_map(|line| match &line.record {
            RolloutRecord::ResponseItem(item) => Some(item.clone()),
            _ => None,
        })
        .collect()
}

fn window_warning(settings: &SessionSettings, tokens: &TokenTracker) -> Option<String> {
    let window = context_window(settings)?;
    (tokens.current() >= window).then(|| {
        format!(
            "the initial context (about {} tokens: instructions, AGENTS.md, skills) does not fit \
             the model's context window ({window} tokens); shorten AGENTS.md \
             (project_doc_max_bytes) or raise model_context_window",
            tokens.current()
        )
    })
}
