//! Work the runner starts off the event loop for a slash command (`/diff`'s work-tree diff,
//! `/review`'s target check: both run `git`), and what their results do to the app.

use super::Background;
use crate::app::{Action, App};
use tokio::sync::mpsc::UnboundedSender;
use troupe_actors::review::{self, ReviewTarget};
use troupe_messages::settings::SessionSettings;

/// A result of background work arrived: the app takes it in.
pub(super) fn finished(app: &mut App, done: Background) -> Vec<Action> {
    match done {
        Background::Files(files) => app.files = files,
        Background::Skills(skills) => app.skills = skills,
        Background::Warning(text) => app.info(text),
        Background::WorkTreeDiff(diff) => app.show_work_tree_diff(diff),
        Background::Review(client, request) => return app.start_review(client, request),
    }
    Vec::new()
}

pub(super) fn work_tree_diff(settings: &SessionSettings, tx: &UnboundedSender<Background>) {
    let (cwd, tx) = (settings.cwd.clone(), tx.clone());
    tokio::task::spawn_blocking(move || {
        let _ = tx.send(Background::WorkTreeDiff(review::work_tree::work_tree_diff(
            &cwd,
        )));
    });
}

pub(super) fn review(
    settings: &SessionSettings,
    client: usize,
    target: ReviewTarget,
    tx: &UnboundedSender<Background>,
) {
    let (cwd, tx) = (settings.cwd.clone(), tx.clone());
    tokio::task::spawn_blocking(move || {
        let request = review::resolve(&target, &cwd).map_err(|err| err.to_string());
        let _ = tx.send(Background::Review(client, request));
    });
}
