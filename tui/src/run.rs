//! The event loop: terminal input, runtime events and signals in one `select!`, a redraw
//! after each wake-up (nothing wakes it while idle but a 1 s timer during a turn), and the
//! actions the app asks for carried out against the runtime.

use crate::app::{Action, App, StatusInfo};
use crate::terminal::{self, Tui};
use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
use ractor::ActorRef;
use ratatui::widgets::{Paragraph, Widget, Wrap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;
use troupe_actors::runtime::{Runtime, RuntimeError, ThreadClient};
use troupe_actors::thread_store::{ops, reconcile, ThreadStore};
use troupe_messages::events::Event;
use troupe_messages::mailboxes::SessionMsg;
use troupe_messages::ops::{Op, Submission, UserInput};
use troupe_messages::settings::SessionSettings;

/// Rows of one cell written into the scrollback at most (a hostile 100,000-line answer is
/// cut rather than laid out whole).
const MAX_INSERT_ROWS: u16 = 2000;
/// Runtime events handled before the next redraw (a burst of deltas draws once).
const EVENTS_PER_FRAME: usize = 512;

#[derive(Debug, Error)]
pub enum TuiError {
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// What to open.
pub struct Launch {
    pub runtime: Runtime,
    pub settings: SessionSettings,
    pub home: PathBuf,
    pub store: Option<Arc<ThreadStore>>,
    /// The rollout of a thread to resume instead of starting one.
    pub resume: Option<PathBuf>,
    pub prompt: Option<String>,
}

/// How the UI ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuiExit {
    Quit,
    /// SIGTERM (15) or SIGHUP (1).
    Signal(i32),
}

struct Runner {
    launch: Launch,
    sessions: Vec<ActorRef<SessionMsg>>,
    open_clients: usize,
    events_tx: mpsc::UnboundedSender<(usize, Option<Event>)>,
    submitted: u64,
}

pub async fn run(launch: Launch) -> Result<TuiExit, TuiError> {
    crate::theme::init_from_env();
    let settings = &launch.settings;
    let status = StatusInfo {
        model: settings.model.clone(),
        effort: settings.context.reasoning_effort.clone(),
        approval: settings.approval_policy,
        sandbox: settings.sandbox_mode,
        cwd: settings.cwd.clone(),
        branch: crate::status_line::git_branch(&settings.cwd),
        context_window: settings.context.model_context_window,
    };
    let (events_tx, mut events_rx) = mpsc::unbounded_channel();
    let mut runner = Runner {
        launch,
        sessions: Vec::new(),
        open_clients: 0,
        events_tx,
        submitted: 0,
    };
    let mut app = App::new(status);
    let first = match runner.launch.resume.clone() {
        Some(path) => {
            runner
                .launch
                .runtime
                .resume_thread(runner.launch.settings.clone(), path)
                .await?
        }
        None => {
            runner
                .launch
                .runtime
                .start_thread(runner.launch.settings.clone())
                .await?
        }
    };
    let client = runner.attach(first);
    app.add_root(client, "main".into(), Instant::now());
    if let Some(prompt) = runner.launch.prompt.take() {
        app.threads[0].view.user_message(prompt.clone());
        runner.submit(
            &mut app,
            client,
            Op::UserInput {
                items: vec![UserInput::Text { text: prompt }],
            },
        );
    }

    let mut tui = terminal::init()?;
    let result = event_loop(&mut runner, &mut app, &mut tui, &mut events_rx).await;
    // Leave a clean line for the shell under the scrollback.
    let _ = tui.clear();
    terminal::restore();
    runner.shut_down(&mut events_rx).await;
    result
}

async fn event_loop(
    runner: &mut Runner,
    app: &mut App,
    tui: &mut Tui,
    events_rx: &mut mpsc::UnboundedReceiver<(usize, Option<Event>)>,
) -> Result<TuiExit, TuiError> {
    let mut input = EventStream::new();
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hang_up = signal(SignalKind::hangup())?;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        draw(tui, app)?;
        let running = (0..app.threads.len()).any(|i| app.is_running(i));
        let actions = tokio::select! {
            event = input.next() => match event {
                Some(Ok(TermEvent::Key(key))) if key.kind != KeyEventKind::Release => app.on_key(key),
                Some(Ok(TermEvent::Paste(text))) => {
                    app.on_paste(&text);
                    Vec::new()
                }
                Some(Ok(_)) => Vec::new(),
                Some(Err(err)) => return Err(err.into()),
                // The terminal is gone: nothing can be shown or typed any more.
                None => return Ok(TuiExit::Signal(libc::SIGHUP)),
            },
            Some((client, event)) = events_rx.recv() => {
                let mut actions = runner.on_runtime_event(app, client, event);
                for _ in 0..EVENTS_PER_FRAME {
                    match events_rx.try_recv() {
                        Ok((client, event)) => actions.extend(runner.on_runtime_event(app, client, event)),
                        Err(_) => break,
                    }
                }
                actions
            }
            _ = tick.tick(), if running => Vec::new(),
            _ = terminate.recv() => return Ok(TuiExit::Signal(libc::SIGTERM)),
            _ = hang_up.recv() => return Ok(TuiExit::Signal(libc::SIGHUP)),
        };
        for action in actions {
            if runner.perform(app, action).await {
                return Ok(TuiExit::Quit);
            }
        }
    }
}

/// Writes the newly finished cells into the scrollback, then draws the viewport.
fn draw(tui: &mut Tui, app: &mut App) -> std::io::Result<()> {
    let width = tui.size()?.width;
    for cell in app.take_scrollback() {
        let height = cell.height(width).min(MAX_INSERT_ROWS);
        let lines = cell.lines();
        tui.insert_before(height, |buf| {
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .render(buf.area, buf);
        })?;
    }
    tui.draw(|frame| crate::ui::render(app, frame, Instant::now()))?;
    Ok(())
}

impl Runner {
    /// Keeps a way to submit to the thread and forwards its events into the loop.
    fn attach(&mut self, mut client: ThreadClient) -> usize {
        let index = self.sessions.len();
        self.sessions.push(client.handle.session.clone());
        self.open_clients += 1;
        let tx = self.events_tx.clone();
        tokio::spawn(async move {
            while let Some(event) = client.next_event().await {
                if tx.send((index, Some(event))).is_err() {
                    return;
                }
            }
            let _ = tx.send((index, None));
        });
        index
    }

    fn on_runtime_event(
        &mut self,
        app: &mut App,
        client: usize,
        event: Option<Event>,
    ) -> Vec<Action> {
        match event {
            Some(event) => app.on_event(client, event.msg, Instant::now()),
            None => {
                self.open_clients = self.open_clients.saturating_sub(1);
                Vec::new()
            }
        }
    }

    fn submit(&mut self, app: &mut App, client: usize, op: Op) {
        self.submitted += 1;
        let id = format!("tui-{}", self.submitted);
        let sent = self.sessions.get(client).is_some_and(|s| {
            s.send_message(SessionMsg::Submit(Submission { id, op }))
                .is_ok()
        });
        if !sent {
            app.info("that thread has stopped; /new starts another");
        }
    }

    /// Carries out one action; true when the app should exit.
    async fn perform(&mut self, app: &mut App, action: Action) -> bool {
        match action {
            Action::Submit { client, op } => self.submit(app, client, op),
            Action::Quit => return true,
            Action::NewThread => {
                let opened = self
                    .launch
                    .runtime
                    .start_thread(self.launch.settings.clone())
                    .await;
                self.opened(app, opened, "new thread");
            }
            Action::Resume(path) => {
                let opened = self
                    .launch
                    .runtime
                    .resume_thread(self.launch.settings.clone(), path)
                    .await;
                self.opened(app, opened, "resumed");
            }
            Action::Fork(id) => {
                let (home, store) = (self.launch.home.clone(), self.launch.store.clone());
                let forked = tokio::task::spawn_blocking(move || {
                    ops::fork(&home, store.as_deref(), &id.to_string(), None)
                })
                .await;
                match forked {
                    Ok(Ok(summary)) => {
                        let opened = self
                            .launch
                            .runtime
                            .resume_thread(self.launch.settings.clone(), summary.rollout_path)
                            .await;
                        self.opened(app, opened, "fork");
                    }
                    Ok(Err(err)) => app.info(format!("cannot fork: {err}")),
                    Err(err) => app.info(format!("cannot fork: {err}")),
                }
            }
            Action::ListThreads => {
                let (home, store) = (self.launch.home.clone(), self.launch.store.clone());
                let listed =
                    tokio::task::spawn_blocking(move || list_threads(&home, store.as_deref()))
                        .await;
                match listed {
                    Ok(Ok(items)) => app.open_picker(items),
                    Ok(Err(err)) => app.info(format!("cannot list threads: {err}")),
                    Err(err) => app.info(format!("cannot list threads: {err}")),
                }
            }
            Action::InitAgentsMd => {
                let path = self.launch.settings.cwd.join("AGENTS.md");
                let written =
                    tokio::task::spawn_blocking(move || write_agents_md(&path).map(|()| path))
                        .await;
                match written {
                    Ok(Ok(path)) => app.info(format!("wrote {}", path.display())),
                    Ok(Err(err)) => app.info(format!("cannot write AGENTS.md: {err}")),
                    Err(err) => app.info(format!("cannot write AGENTS.md: {err}")),
                }
            }
        }
        false
    }

    fn opened(&mut self, app: &mut App, opened: Result<ThreadClient, RuntimeError>, label: &str) {
        match opened {
            Ok(client) => {
                let index = self.attach(client);
                let roots = app.threads.iter().filter(|t| !t.is_agent).count();
                app.add_root(index, format!("{label} {}", roots + 1), Instant::now());
            }
            Err(err) => app.info(format!("cannot open the thread: {err}")),
        }
    }

    /// Asks every thread to shut down (flushing its rollout) and waits for them a while.
    async fn shut_down(&mut self, events_rx: &mut mpsc::UnboundedReceiver<(usize, Option<Event>)>) {
        for session in &self.sessions {
            let _ = session.send_message(SessionMsg::Submit(Submission {
                id: "tui-shutdown".into(),
                op: Op::Interrupt,
            }));
            let _ = session.send_message(SessionMsg::Submit(Submission {
                id: "tui-shutdown".into(),
                op: Op::Shutdown,
            }));
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.open_clients > 0 {
            match tokio::time::timeout_at(deadline, events_rx.recv()).await {
                Ok(Some((_, None))) => self.open_clients -= 1,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        self.launch.runtime.stop();
    }
}

/// Recorded threads, newest first, archived ones left out.
fn list_threads(
    home: &std::path::Path,
    store: Option<&ThreadStore>,
) -> Result<Vec<troupe_messages::threads::ThreadSummary>, String> {
    let mut threads = match store {
        Some(store) => {
            reconcile::reconcile(store, home).map_err(|e| e.to_string())?;
            store.list().map_err(|e| e.to_string())?
        }
        None => reconcile::scan(home).0,
    };
    threads.retain(|t| !t.archived);
    reconcile::sort_newest_first(&mut threads);
    Ok(threads)
}

const AGENTS_MD_SKELETON: &str = "# AGENTS.md\n\nInstructions for coding agents working in this repository.\n\n## Build and test\n\n- Build: \n- Test: \n\n## Conventions\n\n- \n";

/// Writes the skeleton; never overwrites an existing file.
fn write_agents_md(path: &std::path::Path) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(AGENTS_MD_SKELETON.as_bytes())
}
