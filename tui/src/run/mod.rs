//! The event loop: terminal input, runtime events and signals in one `select!`, a redraw
//! after each wake-up (nothing wakes it while idle but a 1 s timer during a turn), and the
//! actions the app asks for carried out against the runtime.

use crate::app::{Action, App, StatusInfo};
use crate::screen::Screen;
use crate::terminal;
use crate::thread_view::ThreadView;
use crossterm::event::{Event as TermEvent, EventStream, KeyEventKind};
use futures::StreamExt;
use ractor::ActorRef;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;
use troupe_actors::runtime::{Runtime, RuntimeError, ThreadClient};
use troupe_actors::thread_store::{ops, reconcile, ThreadStore};
use troupe_messages::events::Event;
use troupe_messages::ids::ThreadId;
use troupe_messages::mailboxes::SessionMsg;
use troupe_messages::ops::{Op, Submission, UserInput};
use troupe_messages::policy::CollaborationMode;
use troupe_messages::settings::SessionSettings;

/// How long `/model NAME` waits for the provider's model list before giving up quietly.
const MODEL_LIST_TIMEOUT: Duration = Duration::from_secs(5);
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
    /// The prompt history: earlier sessions' entries, and how to append one.
    pub history: PromptHistory,
}

/// Appends one entry (thread id, text) to the prompt history; an error is shown as a warning.
pub type HistoryRecorder = Arc<dyn Fn(&str, &str) -> Result<(), String> + Send + Sync>;

/// The prompt history the UI browses with Up/Down and appends to.
#[derive(Default)]
pub struct PromptHistory {
    /// Texts from earlier sessions, oldest first.
    pub entries: Vec<String>,
    /// `None` when history is not kept (`[history] persistence = "none"`).
    pub record: Option<HistoryRecorder>,
}

/// Results of work done off the event loop.
enum Background {
    Files(Vec<String>),
    Skills(Vec<crate::completion::SkillEntry>),
    Warning(String),
    /// The work tree's diff for `/diff`.
    WorkTreeDiff(Result<String, String>),
    /// The provider's model list for a `/model` request from root `client`.
    Models(
        usize,
        crate::app::model::ModelRequest,
        Result<Vec<String>, String>,
    ),
    /// A `/review` target checked: the request to send to root `client`.
    Review(usize, Result<troupe_actors::review::ReviewRequest, String>),
    /// `/rewind`'s turns of root `client`'s thread.
    RewindTurns(
        usize,
        ThreadId,
        Result<Vec<troupe_actors::thread_store::rewind_preview::TurnRow>, String>,
    ),
    /// `/rewind`'s preview.
    RewindPreview(Box<Result<troupe_actors::thread_store::rewind_preview::RewindPreview, String>>),
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
    /// Per client: becomes true once its thread's events have ended (its session stopped).
    stopped: Vec<tokio::sync::watch::Receiver<bool>>,
    /// The threads opened here, by id (the /resume picker leaves them out even before
    /// their first event reached the app).
    opened_ids: Vec<ThreadId>,
    open_clients: usize,
    events_tx: mpsc::UnboundedSender<(usize, Option<Event>)>,
    background_tx: mpsc::UnboundedSender<Background>,
    submitted: u64,
}

/// The runtime and the thread index, still starting when the UI opens.
pub type Starting = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = Result<(Runtime, Option<Arc<ThreadStore>>), RuntimeError>>
            + Send,
    >,
>;

/// [`Launch`] whose runtime is still starting: the first frame is drawn while it starts (the
/// thread index and the runtime's actors take a few milliseconds that the composer need not
/// wait for); the thread starts once it is up.
pub struct LaunchStarting {
    pub starting: Starting,
    pub settings: SessionSettings,
    pub home: PathBuf,
    pub resume: Option<PathBuf>,
    pub prompt: Option<String>,
    pub history: PromptHistory,
}

pub async fn run(launch: Launch) -> Result<TuiExit, TuiError> {
    let Launch {
        runtime,
        settings,
        home,
        store,
        resume,
        prompt,
        history,
    } = launch;
    run_starting(LaunchStarting {
        starting: Box::pin(async move { Ok((runtime, store)) }),
        settings,
        home,
        resume,
        prompt,
        history,
    })
    .await
}

pub async fn run_starting(mut launch: LaunchStarting) -> Result<TuiExit, TuiError> {
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
        plan_mode: settings.context.collaboration_mode == CollaborationMode::Plan,
    };
    let (events_tx, mut events_rx) = mpsc::unbounded_channel();
    let (background_tx, mut background_rx) = mpsc::unbounded_channel();
    list_in_background(&launch.settings, &background_tx);
    let mut app = App::new(status);
    app.composer
        .load_history(std::mem::take(&mut launch.history.entries));
    // The first frame comes before the runtime is up and the thread starts (index, config,
    // sandbox, MCP servers): the composer is there at once and the thread's events fill the
    // view as they come. The first thread attached is client 0.
    let resume = launch.resume.clone();
    let view = match &resume {
        Some(path) => replayed(&mut app, path.clone()).await,
        None => ThreadView::new(Instant::now()),
    };
    let main = app.add_root_with(0, "main".into(), view);
    if resume.is_none() {
        app.name_by_first_message(main);
    }
    let mut tui = Screen::open()?;
    if let Err(err) = draw(&mut tui, &mut app) {
        terminal::restore();
        return Err(err.into());
    }
    let (runtime, store) = match launch.starting.await {
        Ok(started) => started,
        Err(err) => {
            let _ = tui.leave();
            terminal::restore();
            return Err(err.into());
        }
    };
    let mut runner = Runner {
        launch: Launch {
            runtime,
            settings: launch.settings,
            home: launch.home,
            store,
            resume: launch.resume,
            prompt: launch.prompt,
            history: launch.history,
        },
        sessions: Vec::new(),
        stopped: Vec::new(),
        opened_ids: Vec::new(),
        open_clients: 0,
        events_tx,
        background_tx,
        submitted: 0,
    };
    let opened = match resume {
        Some(path) => {
            runner
                .launch
                .runtime
                .resume_thread(runner.launch.settings.clone(), path)
                .await
        }
        None => {
            runner
                .launch
                .runtime
                .start_thread(runner.launch.settings.clone())
                .await
        }
    };
    let thread = match opened {
        Ok(thread) => thread,
        Err(err) => {
            let _ = tui.leave();
            terminal::restore();
            runner.launch.runtime.stop();
            return Err(err.into());
        }
    };
    let client = runner.attach(thread);
    if let Some(prompt) = runner.launch.prompt.take() {
        app.threads[0].view.user_message(prompt.clone());
        app.title_from(0, &prompt);
        // Recorded once the thread's id is known.
        let _ = app.remember_prompt(0, prompt.clone());
        runner.submit(
            &mut app,
            client,
            Op::UserInput {
                items: vec![UserInput::Text { text: prompt }],
            },
        );
    }

    let result = event_loop(
        &mut runner,
        &mut app,
        &mut tui,
        &mut events_rx,
        &mut background_rx,
    )
    .await;
    // Leave a clean line for the shell under the scrollback.
    let _ = tui.leave();
    terminal::restore();
    runner.shut_down(&mut events_rx).await;
    if matches!(result, Ok(TuiExit::Quit)) {
        for line in crate::farewell::exit_lines(&app) {
            println!("{line}");
        }
    }
    result
}

async fn event_loop(
    runner: &mut Runner,
    app: &mut App,
    tui: &mut Screen,
    events_rx: &mut mpsc::UnboundedReceiver<(usize, Option<Event>)>,
    background_rx: &mut mpsc::UnboundedReceiver<Background>,
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
            Some(done) = background_rx.recv() => tasks::finished(app, done),
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

/// Writes the newly finished cells into the scrollback, then draws the viewport; with the
/// transcript open, draws it full screen instead (cells reach the scrollback once it closes).
fn draw(screen: &mut Screen, app: &mut App) -> std::io::Result<()> {
    if tasks::draw_transcript(screen, app)? {
        return Ok(());
    }
    screen.draw(app)
}

impl Runner {
    /// Keeps a way to submit to the thread and forwards its events into the loop.
    fn attach(&mut self, mut client: ThreadClient) -> usize {
        let index = self.sessions.len();
        self.sessions.push(client.handle.session.clone());
        self.opened_ids.push(client.handle.thread_id);
        self.open_clients += 1;
        let (stopped_tx, stopped) = tokio::sync::watch::channel(false);
        self.stopped.push(stopped);
        let tx = self.events_tx.clone();
        tokio::spawn(async move {
            while let Some(event) = client.next_event().await {
                if tx.send((index, Some(event))).is_err() {
                    return;
                }
            }
            let _ = stopped_tx.send(true);
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

    /// The launch settings with what the user changed since (`/model`, `/permissions`,
    /// `/approvals`, `/plan`): a new thread keeps them, as `/new` promises.
    fn current_settings(&self, app: &App) -> SessionSettings {
        let mut settings = self.launch.settings.clone();
        settings.model = app.status.model.clone();
        settings.approval_policy = app.status.approval;
        settings.sandbox_mode = app.status.sandbox;
        settings.context.reasoning_effort = app.status.effort.clone();
        settings.context.collaboration_mode = if app.status.plan_mode {
            CollaborationMode::Plan
        } else {
            CollaborationMode::Default
        };
        settings
    }

    /// Attaches a thread opened here; a `fresh` one (nothing in it yet) is named by its first
    /// message.
    fn opened(
        &mut self,
        app: &mut App,
        opened: Result<ThreadClient, RuntimeError>,
        label: &str,
        fresh: bool,
    ) {
        match opened {
            Ok(client) => {
                let index = self.attach(client);
                let roots = app.threads.iter().filter(|t| !t.is_agent).count();
                let added = app.add_root(index, format!("{label} {}", roots + 1), Instant::now());
                if fresh {
                    app.name_by_first_message(added);
                }
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

/// The transcript recorded at `path`, replayed off the event loop; empty (with a notice) when
/// it cannot be read — the runtime's resume then says why.
async fn replayed(app: &mut App, path: PathBuf) -> ThreadView {
    let now = Instant::now();
    match tokio::task::spawn_blocking(move || crate::replay::load(&path, now)).await {
        Ok(Ok(view)) => view,
        Ok(Err(err)) => {
            app.info(format!("the earlier transcript cannot be shown: {err}"));
            ThreadView::new(now)
        }
        Err(err) => {
            app.info(format!("the earlier transcript cannot be shown: {err}"));
            ThreadView::new(now)
        }
    }
}

/// Lists the files (`@`) and skills (`$`) for completion without holding up the first frame.
fn list_in_background(settings: &SessionSettings, tx: &mpsc::UnboundedSender<Background>) {
    let cwd = settings.cwd.clone();
    let files_tx = tx.clone();
    tokio::task::spawn_blocking(move || {
        let _ = files_tx.send(Background::Files(crate::completion::list_files(&cwd)));
    });
    let (home, cwd) = (settings.troupe_home.clone(), settings.cwd.clone());
    let markers = settings.context.project_root_markers.clone();
    let skills_tx = tx.clone();
    tokio::task::spawn_blocking(move || {
        let skills = crate::completion::list_skills(&home, &cwd, &markers);
        let _ = skills_tx.send(Background::Skills(skills));
    });
}

/// The recorded threads, not archived, newest first (the index reconciled with the files).
pub fn list_threads(
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

mod actions;
mod rewind;
mod tasks;
