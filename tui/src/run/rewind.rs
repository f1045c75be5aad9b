//! `/rewind` for the runner: the turns and the preview are worked out off the event loop
//! (the thread stays open: nothing is written); the rewind itself closes the thread (its
//! session holds the rollout and would write over the cut), rewinds it through the thread
//! store, and opens it again with its history as it now is.

use super::{replayed, Background, Runner};
use crate::app::rewind::RewindMode;
use crate::app::App;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use troupe_actors::session::checkpoints;
use troupe_actors::thread_store::rewind::{rewind, RewindOutcome, RewindRequest};
use troupe_actors::thread_store::rewind_preview;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::SessionMsg;
use troupe_messages::ops::{Op, Submission};

/// How long a closing thread may take to flush and stop before the rewind goes ahead.
const CLOSE_GRACE: Duration = Duration::from_secs(15);

/// A confirmed `/rewind`.
pub(super) struct RewindArgs {
    pub client: usize,
    pub thread: ThreadId,
    pub turn: u64,
    pub mode: RewindMode,
    pub force: bool,
    pub prompt: String,
}

impl Runner {
    fn rewind_request(
        &self,
        app: &App,
        thread: ThreadId,
        turn: u64,
        mode: RewindMode,
    ) -> RewindRequest {
        RewindRequest {
            thread: thread.to_string(),
            to_turn: Some(turn),
            code: mode.code(),
            conversation: mode.conversation(),
            dry_run: false,
            force: false,
            options: checkpoints::options(&self.current_settings(app), true),
        }
    }

    pub(super) fn rewind_turns(&self, client: usize, thread: ThreadId) {
        let (home, store) = (self.launch.home.clone(), self.launch.store.clone());
        let tx = self.background_tx.clone();
        tokio::task::spawn_blocking(move || {
            let turns = rewind_preview::turns(&home, store.as_deref(), &thread.to_string())
                .map_err(|err| err.to_string());
            let _ = tx.send(Background::RewindTurns(client, thread, turns));
        });
    }

    pub(super) fn rewind_preview(&self, app: &App, thread: ThreadId, turn: u64, mode: RewindMode) {
        let request = self.rewind_request(app, thread, turn, mode);
        send_preview(
            &self.launch.home,
            self.launch.store.clone(),
            request,
            &self.background_tx,
        );
    }

    pub(super) async fn rewind(&mut self, app: &mut App, args: RewindArgs) {
        let Some(rollout) = app
            .threads
            .iter()
            .find(|t| t.client == args.client && !t.is_agent)
            .and_then(|t| t.rollout.clone())
        else {
            app.info("cannot rewind: this thread's rollout is not known yet");
            return;
        };
        self.close(args.client).await;
        let request = RewindRequest {
            force: args.force,
            ..self.rewind_request(app, args.thread, args.turn, args.mode)
        };
        let (home, store) = (self.launch.home.clone(), self.launch.store.clone());
        let done =
            tokio::task::spawn_blocking(move || rewind(&home, store.as_deref(), &request)).await;
        let (summary, conversation) = match done {
            Ok(Ok(outcome)) => (
                describe(&outcome, args.turn),
                outcome.conversation.is_some(),
            ),
            Ok(Err(err)) => (format!("cannot rewind: {err}"), false),
            Err(err) => (format!("cannot rewind: {err}"), false),
        };
        // Opened again whatever happened: a refused rewind leaves the thread as it was.
        let view = replayed(app, rollout.clone()).await;
        let opened = self
            .launch
            .runtime
            .resume_thread(self.current_settings(app), rollout)
            .await;
        match opened {
            Ok(thread) => {
                let client = self.attach(thread);
                app.rewound(
                    args.client,
                    client,
                    view,
                    summary,
                    conversation.then_some(args.prompt),
                );
            }
            Err(err) => app.info(format!(
                "{summary}; the thread cannot be opened again (/resume it): {err}"
            )),
        }
    }

    /// Shuts root `client`'s thread down and waits until its session has stopped.
    async fn close(&mut self, client: usize) {
        if let Some(session) = self.sessions.get(client) {
            let _ = session.send_message(SessionMsg::Submit(Submission {
                id: "tui-rewind".into(),
                op: Op::Shutdown,
            }));
        }
        if let Some(stopped) = self.stopped.get(client) {
            let mut stopped = stopped.clone();
            let _ = tokio::time::timeout(CLOSE_GRACE, stopped.wait_for(|s| *s)).await;
        }
    }
}

fn send_preview(
    home: &std::path::Path,
    store: Option<std::sync::Arc<troupe_actors::thread_store::ThreadStore>>,
    request: RewindRequest,
    tx: &UnboundedSender<Background>,
) {
    let (home, tx) = (home.to_path_buf(), tx.clone());
    tokio::task::spawn_blocking(move || {
        let preview = rewind_preview::preview(&home, store.as_deref(), &request)
            .map_err(|err| err.to_string());
        let _ = tx.send(Background::RewindPreview(Box::new(preview)));
    });
}

/// What the rewind did, in one notice.
fn describe(outcome: &RewindOutcome, turn: u64) -> String {
    let mut parts = Vec::new();
    if let Some(code) = &outcome.code {
        parts.push(format!("{} path(s) restored", code.changes.len()));
        if !code.failed.is_empty() {
            let failed: Vec<String> = code
                .failed
                .iter()
                .map(|(path, why)| format!("{}: {why}", path.display()))
                .collect();
            parts.push(format!("not restored: {}", failed.join("; ")));
        }
    }
    if let Some(conversation) = &outcome.conversation {
        parts.push(format!(
            "conversation cut to {} turn(s)",
            conversation.turns_after
        ));
    }
    format!(
        "rewound to before turn {turn}: {} (undo: `troupe rewind {} --undo` once troupe has exited)",
        parts.join(", "),
        outcome.thread_id
    )
}
