//! Runtime events → `exec --json` lines ([`ThreadEvent`]), shaped exactly like Codex's
//! `exec --json` output.

use super::render::EventRenderer;
use super::thread_event::{
    FileUpdate, FileUpdateKind, ItemDetails, ItemStatus, McpToolCallError, McpToolCallResult,
    ThreadError, ThreadEvent, ThreadItem, TodoItem, Usage,
};
use std::collections::HashMap;
use troupe_cli::output::StdoutError;
use troupe_messages::agents::CollabCallStatus;
use troupe_messages::errors::TurnError;
use troupe_messages::events::{AbortReason, EventMsg};
use troupe_messages::tools::{FileChange, FileChangeKind, PlanItem, StepStatus};
use troupe_messages::usage::TokenUsage;

/// Converts events to `exec --json` lines; remembers item ids and the turn's last error.
#[derive(Default)]
pub struct JsonEvents {
    next_item: u64,
    /// Command or patch call id → item id of its `item.started`.
    commands: HashMap<String, String>,
    last_error: Option<String>,
    /// Id and last items of the turn's `todo_list`, once `update_plan` was called.
    todo_list: Option<(String, Vec<TodoItem>)>,
}

/// The `exec --json` renderer: one JSON line per [`ThreadEvent`] on stdout.
#[derive(Default)]
pub struct JsonOutput {
    events: JsonEvents,
}

impl EventRenderer for JsonOutput {
    fn render(&mut self, msg: &EventMsg) -> Result<(), StdoutError> {
        for event in self.events.convert(msg) {
            // Serializing these plain structs cannot fail; a failure would be a bug, not input.
            let line = serde_json::to_string(&event)
                .map_err(|err| StdoutError(std::io::Error::other(err)))?;
            troupe_cli::output::line(line)?;
        }
        Ok(())
    }
}

/// The command line Codex shows for an argv.
pub fn command_line(argv: &[String]) -> String {
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}

impl JsonEvents {
    fn item_id(&mut self) -> String {
        let id = format!("item_{}", self.next_item);
        self.next_item += 1;
        id
    }

    fn item(&mut self, details: ItemDetails) -> ThreadItem {
        ThreadItem {
            id: self.item_id(),
            details,
        }
    }

    /// The lines one event produces (often none).
    pub fn convert(&mut self, msg: &EventMsg) -> Vec<ThreadEvent> {
        match msg {
            EventMsg::SessionConfigured { .. }
            | EventMsg::TurnStarted { .. }
            | EventMsg::TurnComplete { .. }
            | EventMsg::TurnAborted { .. }
            | EventMsg::Warning { .. }
            | EventMsg::StreamRetry { .. }
            | EventMsg::Error { .. }
            | EventMsg::AgentMessage { .. }
            | EventMsg::AgentReasoning { .. } => self.convert_lifecycle(msg),
            EventMsg::ExecCommandBegin { .. }
            | EventMsg::ExecCommandEnd { .. }
            | EventMsg::PatchApplyBegin { .. }
            | EventMsg::PatchApplyEnd { .. }
            | EventMsg::PlanUpdated { .. } => self.convert_work(msg),
            EventMsg::McpToolCallBegin { .. }
            | EventMsg::McpToolCallEnd { .. }
            | EventMsg::CollabToolCall { .. } => self.convert_tools(msg),
            EventMsg::HookStarted { .. }
            | EventMsg::HookCompleted { .. }
            | EventMsg::PermissionsGranted { .. } => self.convert_hooks(msg),
            // Codex's `exec --json` has no line for these: deltas (items are sent whole),
            // approval requests (exec denies them and warns), questions (exec answers them
            // and warns), goal bookkeeping (each follow-up turn has its own turn lines), and
            // internal bookkeeping.
            EventMsg::InputInjected { .. }
            | EventMsg::AgentMessageDelta { .. }
            | EventMsg::AgentReasoningDelta { .. }
            | EventMsg::ExecCommandOutputDelta { .. }
            | EventMsg::ExecApprovalRequest { .. }
            | EventMsg::ApplyPatchApprovalRequest { .. }
            | EventMsg::ToolCallBegin { .. }
            | EventMsg::ToolCallEnd { .. }
            | EventMsg::TurnDiff { .. }
            | EventMsg::ItemRecorded { .. }
            | EventMsg::ContextCompacted { .. }
            | EventMsg::TokenCount { .. }
            | EventMsg::AgentEvent { .. }
            | EventMsg::GoalUpdated { .. }
            | EventMsg::RequestUserInput { .. }
            | EventMsg::ShutdownComplete => Vec::new(),
        }
    }

    /// The thread and turn lifecycle, the model's messages, retries, warnings and errors.
    fn convert_lifecycle(&mut self, msg: &EventMsg) -> Vec<ThreadEvent> {
        match msg {
            EventMsg::SessionConfigured { thread_id, .. } => vec![ThreadEvent::ThreadStarted {
                thread_id: thread_id.to_string(),
            }],
            EventMsg::TurnStarted { .. } => {
                self.last_error = None;
                vec![ThreadEvent::TurnStarted]
            }
            EventMsg::TurnComplete { usage, .. } => {
                let mut lines = self.finish_todo_list();
                lines.push(ThreadEvent::TurnCompleted {
                    usage: usage_of(usage),
                });
                lines
            }
            EventMsg::TurnAborted { reason, .. } => {
                let message = self.last_error.take().unwrap_or_else(|| match reason {
                    AbortReason::Interrupted => "the turn was interrupted".into(),
                    AbortReason::Shutdown => "the thread was shut down".into(),
                    AbortReason::Failed => "the turn failed".into(),
                });
                let mut lines = self.finish_todo_list();
                lines.push(ThreadEvent::TurnFailed {
                    error: ThreadError { message },
                });
                lines
            }
            EventMsg::Warning { message } => {
                let item = self.item(ItemDetails::Error {
                    message: message.clone(),
                });
                vec![ThreadEvent::ItemCompleted { item }]
            }
            EventMsg::StreamRetry {
                attempt,
                max_attempts,
                reason,
                ..
            } => vec![ThreadEvent::Error {
                message: format!("Reconnecting... {attempt}/{max_attempts} ({reason})"),
            }],
            EventMsg::Error { error, fatal } => {
                let message = error_text(error);
                if *fatal {
                    self.last_error = Some(message.clone());
                }
                vec![ThreadEvent::Error { message }]
            }
            EventMsg::AgentMessage { message } => {
                let item = self.item(ItemDetails::AgentMessage {
                    text: message.clone(),
                });
                vec![ThreadEvent::ItemCompleted { item }]
            }
            EventMsg::AgentReasoning { text } => {
                let item = self.item(ItemDetails::Reasoning { text: text.clone() });
                vec![ThreadEvent::ItemCompleted { item }]
            }
            _ => Vec::new(),
        }
    }

    /// Commands, patches and plans.
    fn convert_work(&mut self, msg: &EventMsg) -> Vec<ThreadEvent> {
        match msg {
            EventMsg::ExecCommandBegin {
                call_id, command, ..
            } => {
                let item = self.item(ItemDetails::CommandExecution {
                    command: command_line(command),
                    aggregated_output: String::new(),
                    exit_code: None,
                    status: ItemStatus::InProgress,
                });
                self.commands.insert(call_id.clone(), item.id.clone());
                vec![ThreadEvent::ItemStarted { item }]
            }
            EventMsg::ExecCommandEnd {
                call_id,
                command,
                exit_code,
                aggregated_output,
                ..
            } => {
                let id = match self.commands.remove(call_id) {
                    Some(id) => id,
                    None => self.item_id(),
                };
                let status = if *exit_code == Some(0) {
                    ItemStatus::Completed
                } else {
                    ItemStatus::Failed
                };
                let details = ItemDetails::CommandExecution {
                    command: command_line(command),
                    aggregated_output: aggregated_output.clone(),
                    exit_code: *exit_code,
                    status,
                };
                vec![ThreadEvent::ItemCompleted {
                    item: ThreadItem { id, details },
                }]
            }
            // Codex announces a patch as `item.started` (in progress), then completes the
            // same item.
            EventMsg::PatchApplyBegin { call_id, changes } => {
                let item = self.item(ItemDetails::FileChange {
                    changes: file_updates(changes),
                    status: ItemStatus::InProgress,
                });
                self.commands.insert(call_id.clone(), item.id.clone());
                vec![ThreadEvent::ItemStarted { item }]
            }
            EventMsg::PatchApplyEnd {
                call_id,
                changes,
                success,
                ..
            } => {
                let status = if *success {
                    ItemStatus::Completed
                } else {
                    ItemStatus::Failed
                };
                let id = match self.commands.remove(call_id) {
                    Some(id) => id,
                    None => self.item_id(),
                };
                let details = ItemDetails::FileChange {
                    changes: file_updates(changes),
                    status,
                };
                vec![ThreadEvent::ItemCompleted {
                    item: ThreadItem { id, details },
                }]
            }
            EventMsg::PlanUpdated { plan, .. } => {
                let items = todo_items(plan);
                match &mut self.todo_list {
                    Some((id, last)) => {
                        *last = items.clone();
                        let item = ThreadItem {
                            id: id.clone(),
                            details: ItemDetails::TodoList { items },
                        };
                        vec![ThreadEvent::ItemUpdated { item }]
                    }
                    None => {
                        let item = self.item(ItemDetails::TodoList {
                            items: items.clone(),
                        });
                        self.todo_list = Some((item.id.clone(), items));
                        vec![ThreadEvent::ItemStarted { item }]
                    }
                }
            }
            _ => Vec::new(),
        }
    }

    /// MCP tool calls and sub-agent calls.
    fn convert_tools(&mut self, msg: &EventMsg) -> Vec<ThreadEvent> {
        match msg {
            EventMsg::McpToolCallBegin {
                call_id,
                server,
                tool,
                arguments,
                ..
            } => {
                let id = self.item_id();
                self.commands.insert(call_id.clone(), id.clone());
                vec![ThreadEvent::ItemStarted {
                    item: ThreadItem {
                        id,
                        details: ItemDetails::McpToolCall {
                            server: server.clone(),
                            tool: tool.clone(),
                            arguments: arguments.clone(),
                            result: None,
                            error: None,
                            status: ItemStatus::InProgress,
                        },
                    },
                }]
            }
            EventMsg::McpToolCallEnd {
                call_id,
                server,
                tool,
                arguments,
                result,
                error,
                success,
                ..
            } => {
                let id = match self.commands.remove(call_id) {
                    Some(id) => id,
                    None => self.item_id(),
                };
                let result = result.as_ref().map(|result| McpToolCallResult {
                    content: result["content"].as_array().cloned().unwrap_or_default(),
                    structured_content: result
                        .get("structuredContent")
                        .filter(|v| !v.is_null())
                        .cloned(),
                });
                vec![ThreadEvent::ItemCompleted {
                    item: ThreadItem {
                        id,
                        details: ItemDetails::McpToolCall {
                            server: server.clone(),
                            tool: tool.clone(),
                            arguments: arguments.clone(),
                            result,
                            error: error.clone().map(|message| McpToolCallError { message }),
                            status: if *success {
                                ItemStatus::Completed
                            } else {
                                ItemStatus::Failed
                            },
                        },
                    },
                }]
            }
            EventMsg::CollabToolCall {
                call_id,
                tool,
                sender_thread_id,
                receiver_thread_ids,
                prompt,
                agents_states,
                status,
            } => {
                let (started, id) = match status {
                    CollabCallStatus::InProgress => {
                        let id = self.item_id();
                        self.commands.insert(call_id.clone(), id.clone());
                        (true, id)
                    }
                    CollabCallStatus::Completed | CollabCallStatus::Failed => {
                        let id = match self.commands.remove(call_id) {
                            Some(id) => id,
                            None => self.item_id(),
                        };
                        (false, id)
                    }
                };
                let receivers: Vec<String> = receiver_thread_ids
                    .iter()
                    .map(std::string::ToString::to_string)
                    .collect();
                let item = ThreadItem {
                    id,
                    details: ItemDetails::CollabToolCall {
                        tool: tool.clone(),
                        sender_thread_id: sender_thread_id.to_string(),
                        receiver_thread_ids: receivers,
                        prompt: prompt.clone(),
                        agents_states: agents_states.clone(),
                        status: *status,
                    },
                };
                vec![if started {
                    ThreadEvent::ItemStarted { item }
                } else {
                    ThreadEvent::ItemCompleted { item }
                }]
            }
            _ => Vec::new(),
        }
    }

    /// Hooks and granted permissions.
    fn convert_hooks(&mut self, msg: &EventMsg) -> Vec<ThreadEvent> {
        match msg {
            EventMsg::HookStarted {
                run_id,
                event_name,
                command,
                tool_name,
                ..
            } => {
                let item = self.item(ItemDetails::HookRun {
                    event_name: event_name.as_str().into(),
                    command: command.clone(),
                    tool_name: tool_name.clone(),
                    decision: None,
                    message: None,
                    duration_ms: None,
                    status: ItemStatus::InProgress,
                });
                self.commands.insert(run_id.clone(), item.id.clone());
                vec![ThreadEvent::ItemStarted { item }]
            }
            EventMsg::HookCompleted {
                run_id,
                event_name,
                command,
                duration_ms,
                decision,
                message,
            } => {
                let id = match self.commands.remove(run_id) {
                    Some(id) => id,
                    None => self.item_id(),
                };
                let status = if *decision == troupe_messages::hooks::HookDecision::Failed {
                    ItemStatus::Failed
                } else {
                    ItemStatus::Completed
                };
                let item = ThreadItem {
                    id,
                    details: ItemDetails::HookRun {
                        event_name: event_name.as_str().into(),
                        command: command.clone(),
                        tool_name: None,
                        decision: Some(decision.as_str().into()),
                        message: message.clone(),
                        duration_ms: Some(*duration_ms),
                        status,
                    },
                };
                vec![ThreadEvent::ItemCompleted { item }]
            }
            // Codex's `exec --json` has no item for a grant.
            EventMsg::PermissionsGranted { .. } => Vec::new(),
            _ => Vec::new(),
        }
    }

    /// The plan's last state as a completed item, at the end of its turn.
    fn finish_todo_list(&mut self) -> Vec<ThreadEvent> {
        self.todo_list
            .take()
            .map(|(id, items)| ThreadEvent::ItemCompleted {
                item: ThreadItem {
                    id,
                    details: ItemDetails::TodoList { items },
                },
            })
            .into_iter()
            .collect()
    }
}

fn file_updates(changes: &[FileChange]) -> Vec<FileUpdate> {
    changes
        .iter()
        .map(|change| FileUpdate {
            path: change.path.display().to_string(),
            kind: match change.kind {
                FileChangeKind::Add => FileUpdateKind::Add,
                FileChangeKind::Delete => FileUpdateKind::Delete,
                FileChangeKind::Update => FileUpdateKind::Update,
            },
        })
        .collect()
}

fn todo_items(plan: &[PlanItem]) -> Vec<TodoItem> {
    plan.iter()
        .map(|item| TodoItem {
            text: item.step.clone(),
            completed: item.status == StepStatus::Completed,
        })
        .collect()
}

/// The user-facing text of a turn error.
pub fn error_text(error: &TurnError) -> String {
    match error {
        TurnError::Model(model) => model.to_string(),
        TurnError::Internal { message } => format!("internal error: {message}"),
    }
}

fn usage_of(usage: &TokenUsage) -> Usage {
    Usage {
        input_tokens: usage.input_tokens,
        cached_input_tokens: usage.cached_input_tokens,
        cache_write_input_tokens: 0,
        output_tokens: usage.output_tokens,
        reasoning_output_tokens: usage.reasoning_output_tokens,
    }
}
