//! Building a session's state: a new thread (new rollout), or one resumed from its rollout
//! (history replayed, calls the dead process left without output answered as aborted, lines
//! appended to the same file).

use super::input_queue::InputQueue;
use super::persist::Persistence;
use super::subscribers::Subscribers;
use super::{SessionArgs, SessionStart, SessionState};
use crate::rollout_recorder::loader::check_writable;
use crate::rollout_recorder::meta::session_meta;
use crate::rollout_recorder::replay::{dangling_calls, replay, Tracker};
use crate::rollout_recorder::{RolloutArgs, RolloutOpen, RolloutRecorderActor};
use crate::turn::prompt;
use ractor::{Actor, ActorProcessingErr, ActorRef};
use std::sync::Arc;
use troupe_messages::items::ResponseItem;
use troupe_messages::mailboxes::SessionMsg;
use troupe_messages::rollout::RolloutRecord;
use troupe_messages::usage::TokenUsage;

/// The state of a session starting with `args`; spawns its rollout recorder.
pub(super) async fn start(
    myself: ActorRef<SessionMsg>,
    args: SessionArgs,
) -> Result<SessionState, ActorProcessingErr> {
    let (open, meta, lines, warnings) = match args.start {
        SessionStart::New => {
            let meta = session_meta(args.thread_id, &args.settings, None);
            (
                RolloutOpen::Create(Box::new(meta.clone())),
                meta,
                Vec::new(),
                Vec::new(),
            )
        }
        SessionStart::Resume(loaded) => {
            check_writable(&loaded)?;
            let loaded = *loaded;
            (
                RolloutOpen::Append,
                loaded.meta,
                loaded.lines,
                loaded.warnings,
            )
        }
    };
    let (recorder, _) = Actor::spawn_linked(
        None,
        RolloutRecorderActor,
        RolloutArgs {
            path: args.rollout_path.clone(),
            open,
        },
        myself.get_cell(),
    )
    .await?;
    let replayed = replay(&lines);
    let last_timestamp = lines
        .last()
        .map(|line| line.timestamp.clone())
        .unwrap_or_else(|| meta.created_at.clone());
    let mut persist = Persistence::new(
        recorder,
        args.settings.rollout_fsync,
        args.store,
        args.rollout_path.clone(),
        meta,
        Tracker::default(),
        last_timestamp,
    );
    persist.tracker = replayed.tracker;
    let mut state = SessionState {
        thread_id: args.thread_id,
        settings: Arc::new(args.settings),
        rollout_path: args.rollout_path,
        registry: args.registry,
        http: args.http,
        manager: args.manager,
        persist,
        startup_warnings: warnings,
        history: replayed.history,
        subscribers: Subscribers::default(),
        queue: InputQueue::default(),
        turn: None,
        turns_started: 0,
        total_usage: TokenUsage::default(),
    };
    state.turns_started = state.persist.tracker.turns;
    state.total_usage = state.persist.tracker.tokens;
    // A call the process died during has no output; the model must get one for each.
    let dangling = dangling_calls(&state.history);
    if !dangling.is_empty() {
        let outputs: Vec<ResponseItem> = dangling
            .into_iter()
            .map(|(call_id, custom)| {
                prompt::output_item(&troupe_messages::tools::ToolOutput {
                    call_id,
                    content: "aborted: the process running this call stopped before it \
                              finished"
                        .into(),
                    success: false,
                    custom,
                })
            })
            .collect();
        state.history.extend(outputs.iter().cloned());
        state.persist.record(
            outputs
                .into_iter()
                .map(RolloutRecord::ResponseItem)
                .collect(),
        );
        state.flush().await;
    }
    state.persist.update_index(false);
    Ok(state)
}
