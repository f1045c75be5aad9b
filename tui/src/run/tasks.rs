//! Work the runner starts off the event loop for a slash command (`/diff`'s work-tree diff,
//! `/review`'s target check: both run `git`), and what their results do to the app.

use super::{Background, Launch, MODEL_LIST_TIMEOUT};
use crate::app::model::ModelRequest;
use crate::app::{Action, App};
use tokio::sync::mpsc::UnboundedSender;
use troupe_actors::review::{self, ReviewTarget};
use troupe_messages::settings::{SessionSettings, TurnSettingsUpdate};

/// A result of background work arrived: the app takes it in.
pub(super) fn finished(app: &mut App, done: Background) -> Vec<Action> {
    match done {
        Background::Files(files) => app.files = files,
        Background::Skills(skills) => app.skills = skills,
        Background::Warning(text) => app.info(text),
        Background::WorkTreeDiff(diff) => app.show_work_tree_diff(diff),
        Background::Review(client, request) => return app.start_review(client, request),
        Background::Models(client, request, listed) => {
            return app.models_listed(client, request, listed)
        }
        Background::RewindTurns(client, thread, turns) => app.open_rewind(client, thread, turns),
        Background::RewindPreview(preview) => app.show_rewind_preview(*preview),
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

/// Asks the provider for its model list (`GET /models`) off the event loop.
pub(super) fn list_models(
    launch: &Launch,
    client: usize,
    request: ModelRequest,
    tx: &UnboundedSender<Background>,
) {
    let provider = launch.settings.provider.clone();
    let auth = launch.home.join(troupe_actors::sampler::auth::AUTH_FILE);
    let tx = tx.clone();
    tokio::spawn(async move {
        let listed = troupe_actors::sampler::models::list_models(
            &reqwest::Client::new(),
            &provider,
            &auth,
            MODEL_LIST_TIMEOUT,
        )
        .await
        .map(|models| {
            models
                .iter()
                .map(|m| crate::sanitize::sanitize_line(m))
                .collect()
        })
        .map_err(|err| crate::sanitize::sanitize_line(&err.to_string()));
        let _ = tx.send(Background::Models(client, request, listed));
    });
}

/// The thread's settings from now on with `model` and `effort` (the `/model` picker).
pub(super) fn model_update(
    settings: SessionSettings,
    model: String,
    effort: Option<String>,
) -> Box<TurnSettingsUpdate> {
    Box::new(TurnSettingsUpdate {
        model,
        approval_policy: settings.approval_policy,
        sandbox_mode: settings.sandbox_mode,
        writable_roots: settings.sandbox.writable_roots,
        network_access: settings.sandbox.network_access,
        exclude_tmpdir_env_var: settings.sandbox.exclude_tmpdir_env_var,
        exclude_slash_tmp: settings.sandbox.exclude_slash_tmp,
        cwd: settings.cwd,
        reasoning_effort: effort,
        output_schema_next_turn: None,
    })
}

thread_local! {
    /// The full-screen terminal of the open transcript overlay.
    static FULL_SCREEN: std::cell::RefCell<Option<crate::terminal::Tui>> = const { std::cell::RefCell::new(None) };
}

/// Draws the transcript overlay on the alternate screen when it is open (entering it first)
/// and says so; when it has just closed, leaves the alternate screen and has the inline
/// viewport drawn whole again.
pub(super) fn draw_transcript(
    screen: &mut crate::screen::Screen,
    app: &mut App,
) -> std::io::Result<bool> {
    let App {
        overlay,
        threads,
        current,
        ..
    } = app;
    let Some(view) = threads.get(*current).map(|t| &t.view) else {
        return Ok(false);
    };
    FULL_SCREEN.with(|full| {
        let mut full = full.borrow_mut();
        let crate::app::Overlay::Transcript(transcript) = overlay else {
            if full.take().is_some() {
                crate::terminal::leave_alternate_screen();
                screen.repaint()?;
            }
            return Ok(false);
        };
        if full.is_none() {
            *full = Some(crate::terminal::enter_alternate_screen()?);
        }
        if let Some(terminal) = full.as_mut() {
            terminal.autoresize()?;
            terminal.draw(|frame| {
                let area = frame.area();
                transcript.refresh(view, area.width.saturating_sub(2));
                transcript.render(view, frame, area);
            })?;
        }
        Ok(true)
    })
}
