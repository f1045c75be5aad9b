//! One loaded thread's pump: the only task that reads the thread's runtime events and submits
//! its ops, so translation state, subscribers and pending approvals change in one place and
//! every subscriber sees the thread's notifications in the same order.

use crate::held::{Incoming, Link};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use troupe_app_server_protocol::jsonrpc::{self, Line};
use troupe_app_server_protocol::protocol::{
    ApprovalDecision, ServerRequestResolvedNotification, ThreadStatus,
    ThreadStatusChangedNotification, ThreadUnsubscribeResponse, ThreadUnsubscribeStatus, Turn,
    TurnItemsView, TurnStartResponse, TurnStatus, TurnSteerResponse, UserInput,
};
use troupe_app_server_protocol::translate::{parse_turn_id, Out, Translator};
use troupe_messages::events::EventMsg;
use troupe_messages::ops::{Op, ReviewDecision, UserInput as RuntimeInput};

pub use crate::sinks::{Approvals, ClientSink, LagBoard};

/// What handlers ask of a thread's pump.
pub enum Control {
    /// Send `response` (its `thread.status` and open turn filled in) then every later event.
    Subscribe {
        client: ClientSink,
        response: Option<(Value, Value)>,
        /// Lines to send right after the response (`thread/started`).
        after: Vec<Line>,
    },
    Unsubscribe {
        conn: u64,
    },
    StartTurn {
        client: ClientSink,
        id: Value,
        input: Vec<UserInput>,
        /// `turn/start`'s overrides, resolved: applied just before the input.
        overrides: Option<Box<crate::turn_settings::TurnOverrides>>,
    },
    Steer {
        client: ClientSink,
        id: Value,
        expected_turn_id: String,
        input: Vec<UserInput>,
    },
    Interrupt {
        client: ClientSink,
        id: Value,
        turn_id: String,
    },
    /// `thread/unsubscribe`: this client stops getting the thread's notifications.
    UnsubscribeClient {
        client: ClientSink,
        id: Value,
    },
    /// `thread/compact/start`: summarise the history now (a compaction turn).
    Compact {
        client: ClientSink,
        id: Value,
    },
    /// `thread/shellCommand`: the user's own command, run in the thread.
    ShellCommand {
        client: ClientSink,
        id: Value,
        command: String,
        timeout: Option<Duration>,
    },
    Answer {
        client: ClientSink,
        request_id: i64,
        decision: ApprovalDecision,
    },
    /// A client's answers to an `item/tool/requestUserInput` request.
    AnswerQuestions {
        client: ClientSink,
        request_id: i64,
        answers: troupe_messages::questions::UserInputAnswers,
    },
    /// The thread's status and open turn, for `thread/read` and `thread/list`.
    Snapshot {
        reply: tokio::sync::oneshot::Sender<(
            troupe_app_server_protocol::protocol::ThreadStatus,
            Option<Turn>,
        )>,
    },
}

/// What an idle-unloaded pump leaves for the thread's next load.
#[derive(Default)]
pub struct Handover {
    pub subscribers: Vec<ClientSink>,
    /// Requests that arrived while it was being unloaded.
    pub leftover: Vec<Control>,
}

impl Control {
    /// Answers a request that cannot be carried out (the thread could not be reloaded).
    pub fn fail(self, message: &str) {
        match self {
            Control::StartTurn { client, id, .. }
            | Control::Compact { client, id }
            | Control::ShellCommand { client, id, .. }
            | Control::UnsubscribeClient { client, id }
            | Control::Steer { client, id, .. }
            | Control::Interrupt { client, id, .. } => {
                client.send(jsonrpc::error(&id, message));
            }
            Control::Subscribe {
                client,
                response: Some((id, _)),
                ..
            } => {
                client.send(jsonrpc::error(&id, message));
            }
            Control::Answer {
                client, request_id, ..
            }
            | Control::AnswerQuestions {
                client, request_id, ..
            } => {
                client.send(jsonrpc::error(&json!(request_id), message));
            }
            Control::Subscribe { response: None, .. }
            | Control::Unsubscribe { .. }
            | Control::Snapshot { .. } => {}
        }
    }
}

struct PendingAsk {
    call_id: String,
    line: Line,
    /// `item/tool/requestUserInput` asks want answers, not an approval decision.
    question: bool,
    /// The sub-agent that asked through this thread (the root of its tree), if not this one.
    agent: Option<String>,
}

/// The pump's state.
pub struct Pump {
    thread_id: String,
    thread: Link,
    translator: Translator,
    subscribers: Vec<ClientSink>,
    asks: HashMap<i64, PendingAsk>,
    approvals: Arc<Approvals>,
    turn_waiters: Vec<(ClientSink, Value)>,
    /// The session is another's (a sub-agent its parent holds): never stopped from here.
    attached: bool,
    /// The last `thread/tokenUsage/updated`: a client that subscribes gets it after the
    /// answer (a followed thread's usage was told before anyone listened).
    last_usage: Option<Line>,
    /// The thread's settings, shared with its `LiveThread`; `turn/start` overrides land here.
    settings: Option<Arc<std::sync::Mutex<crate::hub::ThreadSettings>>>,
}

impl Pump {
    /// Hands a question's answers to the thread and tells every client it is resolved.
    fn answer_questions(
        &mut self,
        request_id: i64,
        call_id: String,
        answers: troupe_messages::questions::UserInputAnswers,
    ) {
        let _ = self.thread.submit(Op::UserInputAnswer { call_id, answers });
        let resolved = ServerRequestResolvedNotification {
            thread_id: self.thread_id.clone(),
            request_id,
        };
        self.broadcast(jsonrpc::notification(
            "serverRequest/resolved",
            serde_json::to_value(resolved).unwrap_or(Value::Null),
        ));
    }

    pub fn new(thread_id: String, thread: Link, approvals: Arc<Approvals>) -> Self {
        Self {
            translator: Translator::new(thread_id.clone()),
            thread_id,
            thread,
            subscribers: Vec::new(),
            asks: HashMap::new(),
            approvals,
            turn_waiters: Vec::new(),
            attached: false,
            last_usage: None,
            settings: None,
        }
    }

    /// Where `turn/start`'s overrides are kept once applied.
    pub fn with_settings(
        mut self,
        settings: Arc<std::sync::Mutex<crate::hub::ThreadSettings>>,
    ) -> Self {
        self.settings = Some(settings);
        self
    }

    /// Token usage notifications carry the model's context window.
    pub fn with_context_window(mut self, window: Option<u64>) -> Self {
        self.translator.context_window = window;
        self
    }

    /// The pump watches a session another owns: primed with its rollout so far (the turn in
    /// progress is known), and leaving the session running when it ends.
    pub fn attached(mut self, lines: &[troupe_messages::rollout::RolloutLine]) -> Self {
        troupe_app_server_protocol::rollout_turns::replay_into(&mut self.translator, lines);
        self.attached = true;
        self
    }

    /// The pump follows a thread another process holds (`held`): primed with its rollout so
    /// far as a live client would have seen it, so the approvals and questions still open
    /// there are asked of this server's clients when they subscribe.
    pub fn following(mut self, lines: &[troupe_messages::rollout::RolloutLine]) -> Self {
        for line in lines {
            self.on_line(line);
        }
        self.attached = true;
        self
    }

    /// Runs until the thread stops, every handle to it is dropped, or it has been idle for
    /// `idle_unload` and `unlink` took it out of the hub (then requests that were already
    /// queued come back in the handover, for the reloaded thread).
    pub async fn run(
        mut self,
        mut control: mpsc::UnboundedReceiver<Control>,
        idle_unload: Option<Duration>,
        unlink: impl Fn(&[ClientSink]) -> bool + Send,
    ) -> Handover {
        let mut handover = Handover::default();
        let mut last_activity = Instant::now();
        loop {
            let idle = idle_unload.filter(|_| self.is_idle());
            let deadline = last_activity + idle.unwrap_or(Duration::from_secs(3600));
            tokio::select! {
                incoming = self.thread.next() => match incoming {
                    Some(Incoming::Event(event)) => self.on_event(&event.msg, jsonrpc::now_ms()),
                    Some(Incoming::Line(line)) => self.on_line(&line),
                    None => {
                        // The session stopped by itself (or its holder let go): close the
                        // control first, so that a request sent on hearing `notLoaded` finds
                        // the thread unloaded and loads it again rather than reaching this
                        // pump as it ends; what was already queued goes to the handover.
                        control.close();
                        while let Ok(request) = control.try_recv() {
                            match request {
                                Control::Unsubscribe { conn } => {
                                    self.subscribers.retain(|c| c.conn != conn);
                                }
                                other => handover.leftover.push(other),
                            }
                        }
                        let status = ThreadStatusChangedNotification {
                            thread_id: self.thread_id.clone(),
                            status: ThreadStatus::NotLoaded,
                        };
                        let params = serde_json::to_value(status).unwrap_or(Value::Null);
                        self.broadcast(jsonrpc::notification("thread/status/changed", params));
                        break;
                    }
                },
                request = control.recv() => match request {
                    // Looking at a thread is not using it.
                    Some(request @ Control::Snapshot { .. }) => {
                        self.on_control(request);
                        continue;
                    }
                    Some(request) => self.on_control(request),
                    None => break,
                },
                () = tokio::time::sleep_until(deadline), if idle.is_some() => {
                    if unlink(&self.subscribers) {
                        control.close();
                        while let Ok(request) = control.try_recv() {
                            match request {
                                Control::Unsubscribe { conn } => {
                                    self.subscribers.retain(|c| c.conn != conn);
                                }
                                other => handover.leftover.push(other),
                            }
                        }
                        handover.subscribers = std::mem::take(&mut self.subscribers);
                        break;
                    }
                }
            }
            last_activity = Instant::now();
        }
        for id in self.asks.keys() {
            self.approvals.forget(*id);
        }
        // Unloaded: stop the session and wait until it has let go of its rollout (a watched
        // one is its owner's to stop).
        if !self.attached && self.thread.submit(Op::Shutdown).is_ok() {
            let drain = async { while self.thread.next().await.is_some() {} };
            let _ = tokio::time::timeout(Duration::from_secs(10), drain).await;
        }
        handover
    }

    /// Nothing runs and nobody waits for an answer: the thread may be unloaded.
    fn is_idle(&self) -> bool {
        self.translator.current_turn().is_none()
            && self.turn_waiters.is_empty()
            && self.asks.is_empty()
    }

    fn broadcast(&mut self, line: Line) {
        let thread_id = &self.thread_id;
        // A full queue drops the client from this thread (memory stays bounded); its writer
        // tells it to catch up with `thread/resume`.
        self.subscribers.retain(|client| {
            if client.send(line.clone()) {
                return true;
            }
            if !client.tx.is_closed() {
                client.lag.record(thread_id);
            }
            false
        });
    }

    fn subscribe(&mut self, client: &ClientSink) {
        if !self.subscribers.iter().any(|c| c.conn == client.conn) {
            self.subscribers.push(client.clone());
        }
    }

    /// A line the holder of a followed thread recorded: what it tells, as the event would
    /// have told it live. A recorded tool output settles whatever was asked about its call
    /// (the holder's own clients may have answered).
    fn on_line(&mut self, line: &troupe_messages::rollout::RolloutLine) {
        use troupe_messages::rollout::RolloutRecord;
        let now = jsonrpc::parse_time_ms(&line.timestamp);
        if let RolloutRecord::Event(msg) = &line.record {
            self.on_event(msg, now);
            return;
        }
        let outs =
            troupe_app_server_protocol::rollout_turns::replay_line(&mut self.translator, line, now);
        self.dispatch(outs);
        if let RolloutRecord::ResponseItem(item) = &line.record {
            if let Some(call_id) = troupe_app_server_protocol::translate::tool_output_call_id(item)
            {
                self.drop_asks_of_call(call_id);
            }
        }
    }

    /// Forgets what this thread asked about `call_id` (it was settled elsewhere).
    fn drop_asks_of_call(&mut self, call_id: &str) {
        let settled: Vec<i64> = self
            .asks
            .iter()
            .filter(|(_, ask)| ask.agent.is_none() && ask.call_id == call_id)
            .map(|(id, _)| *id)
            .collect();
        for request_id in settled {
            self.asks.remove(&request_id);
            self.approvals.forget(request_id);
            self.tell_resolved(request_id, None);
        }
    }

    fn on_event(&mut self, msg: &EventMsg, now: i64) {
        let outs = self.translator.on_event(msg, now);
        if let EventMsg::TurnStarted { .. } = msg {
            self.answer_turn_waiters();
        }
        if let EventMsg::Error { error, .. } = msg {
            if self.translator.current_turn().is_none() {
                // A turn the runtime refused before it started.
                for (client, id) in self.turn_waiters.drain(..) {
                    client.send(jsonrpc::error(&id, error.to_string()));
                }
            }
        }
        self.dispatch(outs);
        if matches!(
            msg,
            EventMsg::TurnComplete { .. } | EventMsg::TurnAborted { .. }
        ) {
            // The runtime resolves whatever the ended turn still asked (as an abort); its
            // sub-agents may run on and keep theirs.
            self.drop_asks(None);
        }
    }

    /// Sends what the translator said: notifications to every subscriber, questions
    /// registered and asked.
    fn dispatch(&mut self, outs: Vec<Out>) {
        for out in outs {
            match out {
                Out::Notify { method, params } => {
                    let line = jsonrpc::notification(method, params);
                    if method == "thread/tokenUsage/updated" {
                        self.last_usage = Some(line.clone());
                    }
                    self.broadcast(line);
                }
                // A watched sub-agent's approvals are its root's to ask (the root relays
                // them): asked here too, a client would see each one twice. Its questions
                // have no relay and are asked here.
                Out::Ask {
                    agent: None,
                    method,
                    ..
                } if self.attached && method != "item/tool/requestUserInput" => {}
                Out::Ask {
                    method,
                    call_id,
                    params,
                    agent,
                } => {
                    let request_id = self.approvals.register(&self.thread_id);
                    let line = jsonrpc::server_request(request_id, method, params);
                    self.asks.insert(
                        request_id,
                        PendingAsk {
                            call_id,
                            question: method == "item/tool/requestUserInput",
                            line: line.clone(),
                            agent,
                        },
                    );
                    self.broadcast(line);
                }
                Out::AgentTurnEnded { thread_id } => self.drop_asks(Some(&thread_id)),
            }
        }
    }

    /// Forgets what `agent` (this thread itself when `None`) still asks, and tells every
    /// client those requests are moot.
    fn drop_asks(&mut self, agent: Option<&str>) {
        let mut moot: Vec<(i64, Option<String>)> = self
            .asks
            .iter()
            .filter(|(_, ask)| ask.agent.as_deref() == agent)
            .map(|(id, ask)| (*id, ask.agent.clone()))
            .collect();
        moot.sort_by_key(|(id, _)| *id);
        for (request_id, asker) in moot {
            self.asks.remove(&request_id);
            self.approvals.forget(request_id);
            self.tell_resolved(request_id, asker);
        }
    }

    fn tell_resolved(&mut self, request_id: i64, asker: Option<String>) {
        let resolved = ServerRequestResolvedNotification {
            thread_id: asker.unwrap_or_else(|| self.thread_id.clone()),
            request_id,
        };
        self.broadcast(jsonrpc::notification(
            "serverRequest/resolved",
            serde_json::to_value(resolved).unwrap_or(Value::Null),
        ));
    }

    fn answer_turn_waiters(&mut self) {
        let Some(turn) = self.translator.open_turn() else {
            return;
        };
        let response = TurnStartResponse {
            turn: Turn {
                items: Vec::new(),
                items_view: TurnItemsView::NotLoaded,
                started_at: None,
                ..turn
            },
        };
        let result = serde_json::to_value(response).unwrap_or(Value::Null);
        for (client, id) in self.turn_waiters.drain(..) {
            client.send(jsonrpc::response(&id, result.clone()));
        }
    }

    #[allow(
        clippy::too_many_lines,
        reason = "a sequence of stages that read best in order; split when it grows"
    )]
    fn on_control(&mut self, request: Control) {
        match request {
            Control::Subscribe {
                client,
                response,
                after,
            } => {
                if let Some((id, mut result)) = response {
                    self.fill_state(&mut result);
                    client.send(jsonrpc::response(&id, result));
                }
                for line in after.into_iter().chain(self.last_usage.clone()) {
                    client.send(line);
                }
                self.subscribe(&client);
                // Questions still open go to a client that (re)joins: nothing is lost.
                let mut open: Vec<_> = self.asks.iter().collect();
                open.sort_by_key(|(id, _)| **id);
                for (_, ask) in open {
                    client.send(ask.line.clone());
                }
            }
            Control::Unsubscribe { conn } => self.subscribers.retain(|c| c.conn != conn),
            Control::StartTurn {
                client,
                id,
                input,
                overrides,
            } => {
                if let Some(why) = self.thread.refuse_local_only() {
                    client.send(jsonrpc::error(&id, why));
                    return;
                }
                if self.translator.current_turn().is_some() || !self.turn_waiters.is_empty() {
                    client.send(jsonrpc::error(
                        &id,
                        "a turn is already running on this thread; use turn/steer to add input",
                    ));
                    return;
                }
                if let Some(overrides) = overrides {
                    let update = Box::new(overrides.update());
                    if let Err(err) = self.thread.submit(Op::UpdateTurnSettings { update }) {
                        client.send(jsonrpc::error(&id, err));
                        return;
                    }
                    if let Some(shared) = &self.settings {
                        let applied = overrides.into_thread_settings();
                        match shared.lock() {
                            Ok(mut current) => *current = applied,
                            Err(poisoned) => *poisoned.into_inner() = applied,
                        }
                    }
                }
                self.subscribe(&client);
                self.translator.expect_input(input.clone());
                match self.thread.submit(Op::UserInput {
                    items: runtime_input(input),
                }) {
                    Ok(_) => self.turn_waiters.push((client, id)),
                    Err(err) => {
                        client.send(jsonrpc::error(&id, err));
                    }
                }
            }
            Control::Steer {
                client,
                id,
                expected_turn_id,
                input,
            } => {
                let running = self.translator.current_turn().map(str::to_string);
                match running {
                    Some(turn_id) if turn_id == expected_turn_id => {
                        let reply = match self.thread.submit(Op::UserInput {
                            items: runtime_input(input),
                        }) {
                            Ok(_) => jsonrpc::response(
                                &id,
                                serde_json::to_value(TurnSteerResponse { turn_id })
                                    .unwrap_or(Value::Null),
                            ),
                            Err(err) => jsonrpc::error(&id, err),
                        };
                        client.send(reply);
                    }
                    Some(turn_id) => {
                        client.send(jsonrpc::error(
                            &id,
                            format!(
                                "expected turn {expected_turn_id}, but turn {turn_id} is running"
                            ),
                        ));
                    }
                    None => {
                        client.send(jsonrpc::error(&id, "no turn is running on this thread"));
                    }
                }
            }
            Control::Interrupt {
                client,
                id,
                turn_id,
            } => {
                let running = self.translator.current_turn() == Some(turn_id.as_str());
                let reply = if !running {
                    if parse_turn_id(&self.thread_id, &turn_id).is_none() {
                        jsonrpc::error(&id, format!("invalid turn id: {turn_id}"))
                    } else {
                        jsonrpc::error(&id, format!("turn {turn_id} is not running"))
                    }
                } else {
                    let turn = parse_turn_id(&self.thread_id, &turn_id);
                    match self.thread.interrupt(turn) {
                        Ok(()) => jsonrpc::response(&id, json!({})),
                        Err(err) => jsonrpc::error(&id, err),
                    }
                };
                client.send(reply);
            }
            Control::Answer {
                client,
                request_id,
                decision,
            } => {
                let Some(ask) = self.asks.remove(&request_id) else {
                    client.send(jsonrpc::error(
                        &json!(request_id),
                        format!("server request {request_id} is unknown or already answered"),
                    ));
                    return;
                };
                self.approvals.forget(request_id);
                if ask.question {
                    // Declined (an error answer) or answered as an approval: no answers.
                    let answers = Default::default();
                    self.answer_questions(request_id, ask.call_id, answers);
                    return;
                }
                let decision = match decision {
                    ApprovalDecision::Accept => ReviewDecision::Approved,
                    ApprovalDecision::AcceptForSession => ReviewDecision::ApprovedForSession,
                    ApprovalDecision::Decline => ReviewDecision::Denied,
                    ApprovalDecision::Cancel => ReviewDecision::Abort,
                };
                let op = match &ask.agent {
                    // The root's session routes it to the agent that asked.
                    Some(agent) => match agent.parse() {
                        Ok(thread_id) => Op::AgentApproval {
                            thread_id,
                            call_id: ask.call_id.clone(),
                            decision,
                        },
                        Err(_) => return,
                    },
                    None => Op::ExecApproval {
                        call_id: ask.call_id.clone(),
                        decision,
                    },
                };
                if let Err(err) = self.thread.submit(op) {
                    // Not delivered (a followed thread's inbox could not be written): still
                    // open, for another answer.
                    client.send(jsonrpc::error(&json!(request_id), err));
                    self.approvals.keep(request_id, &self.thread_id);
                    self.asks.insert(request_id, ask);
                    return;
                }
                self.tell_resolved(request_id, ask.agent.clone());
                if ask.agent.is_none() {
                    for out in self.translator.approval_resolved(&ask.call_id) {
                        if let Out::Notify { method, params } = out {
                            self.broadcast(jsonrpc::notification(method, params));
                        }
                    }
                }
            }
            Control::Snapshot { reply } => {
                let _ = reply.send((self.translator.status(), self.translator.open_turn()));
            }
            // The session refuses a compaction while a turn runs with a warning, which the
            // client gets as Codex's `warning`; otherwise `thread/compacted` tells it is done.
            Control::UnsubscribeClient { client, id } => {
                let before = self.subscribers.len();
                self.subscribers.retain(|c| c.conn != client.conn);
                let status = if self.subscribers.len() < before {
                    ThreadUnsubscribeStatus::Unsubscribed
                } else {
                    ThreadUnsubscribeStatus::NotSubscribed
                };
                let result = serde_json::to_value(ThreadUnsubscribeResponse { status });
                client.send(jsonrpc::response(&id, result.unwrap_or(Value::Null)));
            }
            Control::Compact { client, id } => {
                if let Some(why) = self.thread.refuse_local_only() {
                    client.send(jsonrpc::error(&id, why));
                    return;
                }
                self.subscribe(&client);
                let reply = match self.thread.submit(Op::Compact) {
                    Ok(_) => jsonrpc::response(&id, json!({})),
                    Err(err) => jsonrpc::error(&id, err),
                };
                client.send(reply);
            }
            Control::ShellCommand {
                client,
                id,
                command,
                timeout,
            } => self.shell_command(client, id, command, timeout),
            Control::AnswerQuestions {
                client,
                request_id,
                answers,
            } => {
                let Some(ask) = self.asks.remove(&request_id).filter(|ask| ask.question) else {
                    client.send(jsonrpc::error(
                        &json!(request_id),
                        format!("server request {request_id} is not a pending question"),
                    ));
                    return;
                };
                self.approvals.forget(request_id);
                self.answer_questions(request_id, ask.call_id, answers);
            }
        }
    }

    /// Runs the user's command in the thread: refused while a turn runs (the session would
    /// refuse it: a turn's history must not change under it) and on a thread another process
    /// holds; its items and its turn come as the session's events.
    fn shell_command(
        &mut self,
        client: ClientSink,
        id: Value,
        command: String,
        timeout: Option<Duration>,
    ) {
        if let Some(why) = self.thread.refuse_local_only() {
            client.send(jsonrpc::error(&id, why));
            return;
        }
        if let Some(turn) = self.translator.current_turn() {
            let message =
                format!("turn {turn} is running on this thread; run the command once it has ended");
            client.send(jsonrpc::error(&id, message));
            return;
        }
        self.subscribe(&client);
        let op = Op::RunUserShellCommand {
            command,
            timeout_ms: timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        };
        let reply = match self.thread.submit(op) {
            Ok(()) => jsonrpc::response(&id, json!({})),
            Err(err) => jsonrpc::error(&id, err),
        };
        client.send(reply);
    }

    /// Puts the live status and the open turn (as it stands now) into a thread response.
    fn fill_state(&self, result: &mut Value) {
        let Some(thread) = result.get_mut("thread") else {
            return;
        };
        thread["status"] = serde_json::to_value(self.translator.status()).unwrap_or(Value::Null);
        let Some(turns) = thread.get_mut("turns").and_then(Value::as_array_mut) else {
            return;
        };
        if let Some(last) = turns.last() {
            if last.get("status") == Some(&json!(TurnStatus::InProgress)) {
                turns.pop();
            }
        }
        if let Some(open) = self.translator.open_turn() {
            turns.push(serde_json::to_value(open).unwrap_or(Value::Null));
        }
    }
}

fn runtime_input(input: Vec<UserInput>) -> Vec<RuntimeInput> {
    input
        .into_iter()
        .map(|piece| match piece {
            UserInput::Text { text, .. } => RuntimeInput::Text { text },
        })
        .collect()
}
