//! The JSON schema of Troupe's wire, generated from the Rust types (`troupe app-server
//! generate-json-schema`): one definition per params/result/notification type, keyed by the
//! method it belongs to.

use crate::protocol::*;
use schemars::schema::RootSchema;
use schemars::schema_for;

/// `(method, kind, schema)` for every method and notification Troupe implements; `kind` is
/// `params`, `response` or `notification` (a server request's params are `params`).
#[allow(
    clippy::too_many_lines,
    reason = "a flat table of every method and notification with its types"
)]
pub fn wire_schemas() -> Vec<(&'static str, &'static str, RootSchema)> {
    vec![
        ("initialize", "params", schema_for!(InitializeParams)),
        ("initialize", "response", schema_for!(InitializeResponse)),
        ("thread/start", "params", schema_for!(ThreadStartParams)),
        (
            "thread/start",
            "response",
            schema_for!(ThreadOpenedResponse),
        ),
        ("thread/resume", "params", schema_for!(ThreadResumeParams)),
        (
            "thread/resume",
            "response",
            schema_for!(ThreadResumeResponse),
        ),
        ("thread/fork", "params", schema_for!(ThreadForkParams)),
        ("thread/fork", "response", schema_for!(ThreadOpenedResponse)),
        ("thread/list", "params", schema_for!(ThreadListParams)),
        ("thread/list", "response", schema_for!(ThreadListResponse)),
        ("thread/read", "params", schema_for!(ThreadReadParams)),
        ("thread/read", "response", schema_for!(ThreadReadResponse)),
        ("thread/archive", "params", schema_for!(ThreadIdParams)),
        ("thread/archive", "response", schema_for!(EmptyResponse)),
        ("thread/unarchive", "params", schema_for!(ThreadIdParams)),
        (
            "thread/unarchive",
            "response",
            schema_for!(ThreadUnarchiveResponse),
        ),
        (
            "thread/name/set",
            "params",
            schema_for!(ThreadSetNameParams),
        ),
        ("thread/name/set", "response", schema_for!(EmptyResponse)),
        (
            "thread/loaded/list",
            "params",
            schema_for!(ThreadLoadedListParams),
        ),
        (
            "thread/loaded/list",
            "response",
            schema_for!(ThreadLoadedListResponse),
        ),
        ("turn/start", "params", schema_for!(TurnStartParams)),
        ("turn/start", "response", schema_for!(TurnStartResponse)),
        ("turn/steer", "params", schema_for!(TurnSteerParams)),
        ("turn/steer", "response", schema_for!(TurnSteerResponse)),
        ("turn/interrupt", "params", schema_for!(TurnInterruptParams)),
        ("turn/interrupt", "response", schema_for!(EmptyResponse)),
        (
            "fuzzyFileSearch",
            "params",
            schema_for!(FuzzyFileSearchParams),
        ),
        (
            "fuzzyFileSearch",
            "response",
            schema_for!(FuzzyFileSearchResponse),
        ),
        ("thread/unsubscribe", "params", schema_for!(ThreadIdParams)),
        (
            "thread/unsubscribe",
            "response",
            schema_for!(ThreadUnsubscribeResponse),
        ),
        (
            "thread/compact/start",
            "params",
            schema_for!(ThreadIdParams),
        ),
        (
            "thread/compact/start",
            "response",
            schema_for!(EmptyResponse),
        ),
        (
            "thread/shellCommand",
            "params",
            schema_for!(ThreadShellCommandParams),
        ),
        (
            "thread/shellCommand",
            "response",
            schema_for!(EmptyResponse),
        ),
        (
            "troupe/thread/held",
            "notification",
            schema_for!(ThreadHeldNotification),
        ),
        ("model/list", "params", schema_for!(ModelListParams)),
        ("model/list", "response", schema_for!(ModelListResponse)),
        ("config/read", "params", schema_for!(ConfigReadParams)),
        ("config/read", "response", schema_for!(ConfigReadResponse)),
        ("command/exec", "params", schema_for!(CommandExecParams)),
        ("command/exec", "response", schema_for!(CommandExecResponse)),
        (
            "thread/turns/list",
            "params",
            schema_for!(ThreadTurnsListParams),
        ),
        (
            "thread/turns/list",
            "response",
            schema_for!(ThreadTurnsListResponse),
        ),
        (
            "thread/items/list",
            "params",
            schema_for!(ThreadItemsListParams),
        ),
        (
            "thread/items/list",
            "response",
            schema_for!(ThreadItemsListResponse),
        ),
        ("skills/list", "params", schema_for!(SkillsListParams)),
        ("skills/list", "response", schema_for!(SkillsListResponse)),
        ("fs/readFile", "params", schema_for!(FsPathParams)),
        ("fs/readFile", "response", schema_for!(FsReadFileResponse)),
        ("fs/writeFile", "params", schema_for!(FsWriteFileParams)),
        ("fs/writeFile", "response", schema_for!(EmptyResponse)),
        (
            "fs/createDirectory",
            "params",
            schema_for!(FsCreateDirectoryParams),
        ),
        ("fs/createDirectory", "response", schema_for!(EmptyResponse)),
        ("fs/getMetadata", "params", schema_for!(FsPathParams)),
        (
            "fs/getMetadata",
            "response",
            schema_for!(FsGetMetadataResponse),
        ),
        ("fs/readDirectory", "params", schema_for!(FsPathParams)),
        (
            "fs/readDirectory",
            "response",
            schema_for!(FsReadDirectoryResponse),
        ),
        ("fs/remove", "params", schema_for!(FsRemoveParams)),
        ("fs/remove", "response", schema_for!(EmptyResponse)),
        ("fs/copy", "params", schema_for!(FsCopyParams)),
        ("fs/copy", "response", schema_for!(EmptyResponse)),
        (
            "thread/started",
            "notification",
            schema_for!(ThreadStartedNotification),
        ),
        (
            "hook/started",
            "notification",
            schema_for!(crate::hooks::HookNotification),
        ),
        (
            "hook/completed",
            "notification",
            schema_for!(crate::hooks::HookNotification),
        ),
        (
            "thread/status/changed",
            "notification",
            schema_for!(ThreadStatusChangedNotification),
        ),
        (
            "turn/started",
            "notification",
            schema_for!(TurnNotification),
        ),
        (
            "turn/completed",
            "notification",
            schema_for!(TurnNotification),
        ),
        (
            "item/started",
            "notification",
            schema_for!(ItemStartedNotification),
        ),
        (
            "item/completed",
            "notification",
            schema_for!(ItemCompletedNotification),
        ),
        (
            "item/agentMessage/delta",
            "notification",
            schema_for!(ItemDeltaNotification),
        ),
        (
            "item/commandExecution/outputDelta",
            "notification",
            schema_for!(ItemDeltaNotification),
        ),
        (
            "item/fileChange/outputDelta",
            "notification",
            schema_for!(ItemDeltaNotification),
        ),
        (
            "item/reasoning/summaryTextDelta",
            "notification",
            schema_for!(ReasoningSummaryTextDeltaNotification),
        ),
        (
            "turn/diff/updated",
            "notification",
            schema_for!(TurnDiffUpdatedNotification),
        ),
        (
            "turn/plan/updated",
            "notification",
            schema_for!(TurnPlanUpdatedNotification),
        ),
        (
            "thread/tokenUsage/updated",
            "notification",
            schema_for!(ThreadTokenUsageUpdatedNotification),
        ),
        ("error", "notification", schema_for!(ErrorNotification)),
        ("warning", "notification", schema_for!(WarningNotification)),
        (
            "thread/compacted",
            "notification",
            schema_for!(ContextCompactedNotification),
        ),
        (
            "serverRequest/resolved",
            "notification",
            schema_for!(ServerRequestResolvedNotification),
        ),
        (
            "troupe/lagged",
            "notification",
            schema_for!(LaggedNotification),
        ),
        (
            "troupe/thread/lastTurns",
            "params",
            schema_for!(LastTurnsParams),
        ),
        (
            "troupe/thread/lastTurns",
            "response",
            schema_for!(LastTurnsResponse),
        ),
        ("thread/revert", "params", schema_for!(ThreadRevertParams)),
        (
            "thread/revert",
            "response",
            schema_for!(ThreadRevertResponse),
        ),
        (
            "thread/reverted",
            "notification",
            schema_for!(ThreadRevertedNotification),
        ),
        ("troupe/thread/rewind", "params", schema_for!(RewindParams)),
        (
            "troupe/thread/rewind",
            "response",
            schema_for!(RewindResponse),
        ),
        (
            "item/commandExecution/requestApproval",
            "params",
            schema_for!(CommandExecutionRequestApprovalParams),
        ),
        (
            "item/commandExecution/requestApproval",
            "response",
            schema_for!(ApprovalResponse),
        ),
        (
            "item/fileChange/requestApproval",
            "params",
            schema_for!(FileChangeRequestApprovalParams),
        ),
        (
            "item/fileChange/requestApproval",
            "response",
            schema_for!(ApprovalResponse),
        ),
    ]
}

/// One JSON document holding every schema: `{ "<method>": { "<kind>": schema } }`.
pub fn wire_schema_document() -> serde_json::Value {
    let mut document = serde_json::Map::new();
    for (method, kind, schema) in wire_schemas() {
        let entry = document
            .entry(method.to_string())
            .or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let Some(entry) = entry.as_object_mut() {
            entry.insert(
                kind.to_string(),
                serde_json::to_value(schema).unwrap_or(serde_json::Value::Null),
            );
        }
    }
    serde_json::Value::Object(document)
}
