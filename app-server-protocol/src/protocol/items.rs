//! The items of a turn on the wire (`ThreadItem` and what it holds), in Codex's shapes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One user input piece.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserInput {
    Text {
        text: String,
        #[serde(default)]
        text_elements: Vec<Value>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ItemStatus {
    InProgress,
    Completed,
    Failed,
    Declined,
}

/// What a command does, for display (Codex's `CommandAction`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum CommandAction {
    Read {
        command: String,
        /// The file's name.
        name: String,
        path: String,
    },
    ListFiles {
        command: String,
        path: Option<String>,
    },
    Search {
        command: String,
        query: Option<String>,
        path: Option<String>,
    },
    Unknown {
        command: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PatchChangeKind {
    Add,
    Delete,
    Update { move_path: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileUpdateChange {
    pub path: String,
    pub kind: PatchChangeKind,
    pub diff: String,
}

/// What a collaboration call learned of one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollabAgentState {
    /// `running`, `completed`, `interrupted`, `errored`, `shutdown`.
    pub status: String,
    pub message: Option<String>,
}

/// An item of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadItem {
    #[serde(rename_all = "camelCase")]
    UserMessage { id: String, content: Vec<UserInput> },
    #[serde(rename_all = "camelCase")]
    AgentMessage {
        id: String,
        text: String,
        phase: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Reasoning {
        id: String,
        summary: Vec<String>,
        content: Vec<String>,
    },
    #[serde(rename_all = "camelCase")]
    CommandExecution {
        id: String,
        command: String,
        cwd: String,
        process_id: Option<String>,
        source: String,
        status: ItemStatus,
        command_actions: Vec<CommandAction>,
        aggregated_output: Option<String>,
        exit_code: Option<i32>,
        duration_ms: Option<i64>,
    },
    #[serde(rename_all = "camelCase")]
    FileChange {
        id: String,
        changes: Vec<FileUpdateChange>,
        status: ItemStatus,
    },
    /// A collaboration tool call (`spawn_agent`, `wait_agent`, …), Codex's collab item.
    #[serde(rename_all = "camelCase")]
    CollabAgentToolCall {
        id: String,
        /// `spawnAgent`, `sendMessage`, `followupTask`, `wait`, `interruptAgent`,
        /// `listAgents`, `closeAgent`.
        tool: String,
        status: ItemStatus,
        sender_thread_id: String,
        receiver_thread_ids: Vec<String>,
        prompt: Option<String>,
        model: Option<String>,
        reasoning_effort: Option<String>,
        agents_states: std::collections::BTreeMap<String, CollabAgentState>,
    },
    /// A sub-agent's activity as its parent sees it (Codex's item); a report that entered
    /// the parent's history is shown as this, never as a user message. `agentNickname`,
    /// `status` and `message` (its final answer) are Troupe's additions.
    #[serde(rename_all = "camelCase")]
    SubAgentActivity {
        id: String,
        /// `started`, `interacted`, `interrupted` or `completed`.
        kind: String,
        agent_thread_id: String,
        agent_path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning_effort: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent_nickname: Option<String>,
        /// How its turn ended: `completed`, `failed`, `interrupted`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    DynamicToolCall {
        id: String,
        tool: String,
        arguments: Value,
        status: ItemStatus,
        success: Option<bool>,
        /// What the tool answered (the text the model was told); null while it runs.
        content_items: Option<Vec<DynamicToolCallOutputContentItem>>,
        /// From the call's start to its end, when both were seen.
        duration_ms: Option<i64>,
    },
    /// A call of an MCP server's tool.
    #[serde(rename_all = "camelCase")]
    McpToolCall {
        id: String,
        server: String,
        tool: String,
        arguments: Value,
        status: ItemStatus,
        /// The server's answer; null while it runs or when there is none.
        result: Option<McpToolCallResult>,
        /// Why there is no answer (a timeout, the transport, a protocol error).
        error: Option<McpToolCallError>,
        duration_ms: Option<i64>,
    },
}

/// An MCP server's answer to a tool call (MCP's `CallToolResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallResult {
    pub content: Vec<Value>,
    pub structured_content: Option<Value>,
    #[serde(rename = "_meta")]
    pub meta: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct McpToolCallError {
    pub message: String,
}

/// A piece of a tool call's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum DynamicToolCallOutputContentItem {
    InputText { text: String },
}
