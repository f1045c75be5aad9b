//! The lines of `exec --json`, as types: Codex's `exec --json` format (`thread.started`,
//! `turn.*`, `item.*` with `command_execution`, `file_change`, `todo_list`, `agent_message`,
//! `reasoning` and `error` items, `error`), which Troupe matches exactly, key order included.

use serde::Serialize;

/// One line of `exec --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
pub enum ThreadEvent {
    #[serde(rename = "thread.started")]
    ThreadStarted { thread_id: String },
    #[serde(rename = "turn.started")]
    TurnStarted,
    #[serde(rename = "turn.completed")]
    TurnCompleted { usage: Usage },
    #[serde(rename = "turn.failed")]
    TurnFailed { error: ThreadError },
    #[serde(rename = "item.started")]
    ItemStarted { item: ThreadItem },
    #[serde(rename = "item.updated")]
    ItemUpdated { item: ThreadItem },
    #[serde(rename = "item.completed")]
    ItemCompleted { item: ThreadItem },
    /// A problem that is not (yet) the turn's failure, e.g. a stream being retried.
    #[serde(rename = "error")]
    Error { message: String },
}

/// Token counts of a finished turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    /// Codex reports it; Troupe's providers have no such figure, so it is always 0.
    pub cache_write_input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_output_tokens: u64,
}

/// Why a turn failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadError {
    pub message: String,
}

/// An item of the turn: `id` (`item_N`, in order of appearance), then its kind's fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadItem {
    pub id: String,
    #[serde(flatten)]
    pub details: ItemDetails,
}

/// What an item is, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ItemDetails {
    CommandExecution {
        /// The argv as one shell-quoted line.
        command: String,
        aggregated_output: String,
        exit_code: Option<i32>,
        status: ItemStatus,
    },
    FileChange {
        changes: Vec<FileUpdate>,
        status: ItemStatus,
    },
    TodoList {
        items: Vec<TodoItem>,
    },
    AgentMessage {
        text: String,
    },
    Reasoning {
        text: String,
    },
    Error {
        message: String,
    },
    /// A collaboration tool call (`spawn_agent`, `wait_agent`, …) and what it saw.
    CollabToolCall {
        tool: String,
        sender_thread_id: String,
        receiver_thread_ids: Vec<String>,
        prompt: Option<String>,
        agents_states:
            std::collections::BTreeMap<String, troupe_messages::agents::CollabAgentState>,
        status: troupe_messages::agents::CollabCallStatus,
    },
    /// A call to an MCP tool: `item.started` when it is sent (no result yet), then
    /// `item.completed` with the server's content blocks and structured content, or the
    /// error that left none. Fields and order as Codex's.
    McpToolCall {
        server: String,
        tool: String,
        arguments: serde_json::Value,
        result: Option<McpToolCallResult>,
        error: Option<McpToolCallError>,
        status: ItemStatus,
    },
    /// A Troupe item (not in Codex's `exec --json`): one run of a lifecycle hook.
    /// `item.started` has `in_progress`; `item.completed` adds the decision (`none`,
    /// `block`, `allow`, `deny`, `failed`), its reason or context, and the duration.
    HookRun {
        event_name: String,
        command: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_name: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        decision: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
        status: ItemStatus,
    },
}

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemStatus {
    InProgress,
    Completed,
    Failed,
}

/// One file a patch touched.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileUpdate {
    pub path: String,
    pub kind: FileUpdateKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileUpdateKind {
    Add,
    Delete,
    Update,
}

/// What an MCP server answered: its content blocks as sent, and its structured content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpToolCallResult {
    pub content: Vec<serde_json::Value>,
    pub structured_content: Option<serde_json::Value>,
}

/// Why an MCP call has no result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct McpToolCallError {
    pub message: String,
}

/// One step of the model's plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TodoItem {
    pub text: String,
    pub completed: bool,
}

#[cfg(test)]
#[path = "thread_event_tests.rs"]
mod tests;
