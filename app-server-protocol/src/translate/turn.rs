//! A turn as the translator keeps it: opening it (a client's turn or the user's own shell
//! command), its items started, streamed and completed, and its end.

use super::*;

impl Translator {
    pub(super) fn item_id(&mut self, prefix: &str) -> String {
        self.next_item += 1;
        format!("{prefix}_{}", self.next_item)
    }

    pub(super) fn status_changed(&self) -> Out {
        notify(
            "thread/status/changed",
            &ThreadStatusChangedNotification {
                thread_id: self.thread_id.clone(),
                status: self.status(),
            },
        )
    }

    pub(super) fn started(&self, turn_id: &str, item: ThreadItem, now_ms: i64) -> Out {
        notify(
            "item/started",
            &ItemStartedNotification {
                thread_id: self.thread_id.clone(),
                turn_id: turn_id.to_string(),
                started_at_ms: now_ms,
                item,
            },
        )
    }

    pub(super) fn completed(&mut self, item: ThreadItem, now_ms: i64) -> Out {
        let turn_id = self.turn_id();
        if let Some(turn) = self.turn.as_mut() {
            turn.items.push(item.clone());
        }
        notify(
            "item/completed",
            &ItemCompletedNotification {
                thread_id: self.thread_id.clone(),
                turn_id,
                completed_at_ms: now_ms,
                content_token_count: None,
                item,
            },
        )
    }

    pub(super) fn delta(&self, method: &'static str, item_id: &str, delta: &str) -> Out {
        notify(
            method,
            &ItemDeltaNotification {
                thread_id: self.thread_id.clone(),
                turn_id: self.turn_id(),
                item_id: item_id.to_string(),
                delta: delta.to_string(),
            },
        )
    }

    pub(super) fn turn_id(&self) -> String {
        self.turn.as_ref().map(|t| t.id.clone()).unwrap_or_default()
    }

    /// Opens turn `id`: the thread is active and `turn/started` is told.
    pub(super) fn open(
        &mut self,
        id: String,
        now_ms: i64,
        user_shell: Option<String>,
        out: &mut Vec<Out>,
    ) {
        self.turn = Some(OpenTurn {
            id,
            started_ms: now_ms,
            items: Vec::new(),
            agent: None,
            reasoning: None,
            error: None,
            command_cwds: HashMap::new(),
            streamed: HashSet::new(),
            asked: HashMap::new(),
            tool_started_ms: HashMap::new(),
            user_shell,
        });
        out.push(self.status_changed());
        if let Some(turn) = self.open_turn() {
            out.push(notify(
                "turn/started",
                &TurnNotification {
                    thread_id: self.thread_id.clone(),
                    turn: Turn {
                        items: Vec::new(),
                        ..turn
                    },
                },
            ));
        }
    }

    /// The user's own command began (or, replaying a rollout, ended: its begin is not
    /// recorded) with no turn running: it runs in a turn of its own, as in Codex, whose id
    /// is the UUID of the command's call id (`user-shell-<UUIDv7>`).
    pub(crate) fn open_user_shell_turn(&mut self, call_id: &str, now_ms: i64, out: &mut Vec<Out>) {
        if self.turn.is_some() {
            return;
        }
        let id = call_id
            .strip_prefix("user-shell-")
            .filter(|uuid| uuid::Uuid::parse_str(uuid).is_ok())
            .unwrap_or(call_id)
            .to_string();
        self.open(id, now_ms, Some(call_id.to_string()), out);
    }

    /// The user's own command ended: its turn (if it had one of its own) ends with it.
    pub(crate) fn close_user_shell_turn(
        &mut self,
        call_id: &str,
        interrupted: bool,
        now_ms: i64,
    ) -> Vec<Out> {
        let ours = self
            .turn
            .as_ref()
            .is_some_and(|t| t.user_shell.as_deref() == Some(call_id));
        if !ours {
            return Vec::new();
        }
        let status = if interrupted {
            TurnStatus::Interrupted
        } else {
            TurnStatus::Completed
        };
        self.end_turn(status, now_ms)
    }

    /// A tool call began: its duration counts from now.
    pub(super) fn tool_began(&mut self, call_id: &str, now_ms: i64) {
        if let Some(turn) = self.turn.as_mut() {
            turn.tool_started_ms.insert(call_id.to_string(), now_ms);
        }
    }

    /// A tool call ended: how long it ran, if its start was seen.
    pub(super) fn tool_duration(&mut self, call_id: &str, now_ms: i64) -> Option<i64> {
        self.turn
            .as_mut()
            .and_then(|turn| turn.tool_started_ms.remove(call_id))
            .map(|started| (now_ms - started).max(0))
    }

    pub(super) fn error(&self, error: TurnError, will_retry: bool) -> Out {
        notify(
            "error",
            &ErrorNotification {
                thread_id: self.thread_id.clone(),
                turn_id: self.turn_id(),
                will_retry,
                error,
            },
        )
    }

    pub(super) fn user_message(&mut self, content: Vec<UserInput>, now_ms: i64) -> Vec<Out> {
        let item = ThreadItem::UserMessage {
            id: self.item_id("user"),
            content,
        };
        vec![
            self.started(&self.turn_id(), item.clone(), now_ms),
            self.completed(item, now_ms),
        ]
    }

    pub(super) fn open_agent(&mut self, out: &mut Vec<Out>, now_ms: i64) -> String {
        if let Some((id, _)) = self.turn.as_ref().and_then(|t| t.agent.as_ref()) {
            return id.clone();
        }
        let id = self.item_id("msg");
        let item = ThreadItem::AgentMessage {
            id: id.clone(),
            text: String::new(),
            phase: None,
        };
        out.push(self.started(&self.turn_id(), item, now_ms));
        if let Some(turn) = self.turn.as_mut() {
            turn.agent = Some((id.clone(), String::new()));
        }
        id
    }

    pub(super) fn open_reasoning(&mut self, out: &mut Vec<Out>, now_ms: i64) -> String {
        if let Some((id, _)) = self.turn.as_ref().and_then(|t| t.reasoning.as_ref()) {
            return id.clone();
        }
        let id = self.item_id("rs");
        let item = ThreadItem::Reasoning {
            id: id.clone(),
            summary: Vec::new(),
            content: Vec::new(),
        };
        out.push(self.started(&self.turn_id(), item, now_ms));
        if let Some(turn) = self.turn.as_mut() {
            turn.reasoning = Some((id.clone(), String::new()));
        }
        id
    }

    pub(super) fn end_turn(&mut self, status: TurnStatus, now_ms: i64) -> Vec<Out> {
        let Some(open) = self.turn.take() else {
            return Vec::new();
        };
        self.waiting.clear();
        let turn = Turn {
            root_turn_id: Some(open.id.clone()),
            id: open.id,
            items: open.items,
            items_view: TurnItemsView::Full,
            status,
            error: open.error,
            started_at: Some(open.started_ms / 1000),
            completed_at: Some(now_ms / 1000),
            duration_ms: Some(now_ms - open.started_ms),
        };
        if let Some(finished) = self.finished.as_mut() {
            finished.push(turn.clone());
        }
        vec![
            self.status_changed(),
            notify(
                "turn/completed",
                &TurnNotification {
                    thread_id: self.thread_id.clone(),
                    turn: summary_view(turn),
                },
            ),
        ]
    }
}
