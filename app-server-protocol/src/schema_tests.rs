//! Troupe's generated wire schema against Codex's generated schema files: for every method
//! both implement, the field names Troupe uses exist in Codex's type, Troupe sends every
//! field Codex requires, and Troupe requires nothing Codex leaves optional.

use crate::schema::wire_schemas;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// Codex 0.169's generated schema files this test compares against, kept in the repository
/// (only the ones `codex_file` names) so the test reads nothing outside it.
fn codex_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/codex-schema")
}

/// Codex's file for one (method, kind).
fn codex_file(method: &str, kind: &str) -> Option<&'static str> {
    Some(match (method, kind) {
        ("initialize", "params") => "v1/InitializeParams.json",
        ("initialize", "response") => "v1/InitializeResponse.json",
        ("thread/start", "params") => "v2/ThreadStartParams.json",
        ("thread/start", "response") => "v2/ThreadStartResponse.json",
        ("thread/resume", "params") => "v2/ThreadResumeParams.json",
        ("thread/resume", "response") => "v2/ThreadResumeResponse.json",
        ("thread/fork", "params") => "v2/ThreadForkParams.json",
        ("thread/fork", "response") => "v2/ThreadForkResponse.json",
        ("thread/list", "params") => "v2/ThreadListParams.json",
        ("thread/list", "response") => "v2/ThreadListResponse.json",
        ("thread/read", "params") => "v2/ThreadReadParams.json",
        ("thread/read", "response") => "v2/ThreadReadResponse.json",
        ("thread/archive", "params") => "v2/ThreadArchiveParams.json",
        ("thread/archive", "response") => "v2/ThreadArchiveResponse.json",
        ("thread/unarchive", "params") => "v2/ThreadUnarchiveParams.json",
        ("thread/unarchive", "response") => "v2/ThreadUnarchiveResponse.json",
        ("thread/name/set", "params") => "v2/ThreadSetNameParams.json",
        ("thread/name/set", "response") => "v2/ThreadSetNameResponse.json",
        ("thread/loaded/list", "params") => "v2/ThreadLoadedListParams.json",
        ("thread/loaded/list", "response") => "v2/ThreadLoadedListResponse.json",
        ("turn/start", "params") => "v2/TurnStartParams.json",
        ("turn/start", "response") => "v2/TurnStartResponse.json",
        ("turn/steer", "params") => "v2/TurnSteerParams.json",
        ("turn/steer", "response") => "v2/TurnSteerResponse.json",
        ("turn/interrupt", "params") => "v2/TurnInterruptParams.json",
        ("turn/interrupt", "response") => "v2/TurnInterruptResponse.json",
        ("fuzzyFileSearch", "params") => "FuzzyFileSearchParams.json",
        ("fuzzyFileSearch", "response") => "FuzzyFileSearchResponse.json",
        ("thread/unsubscribe", "params") => "v2/ThreadUnsubscribeParams.json",
        ("thread/unsubscribe", "response") => "v2/ThreadUnsubscribeResponse.json",
        ("thread/compact/start", "params") => "v2/ThreadCompactStartParams.json",
        ("thread/compact/start", "response") => "v2/ThreadCompactStartResponse.json",
        ("thread/shellCommand", "params") => "v2/ThreadShellCommandParams.json",
        ("thread/shellCommand", "response") => "v2/ThreadShellCommandResponse.json",
        ("model/list", "params") => "v2/ModelListParams.json",
        ("model/list", "response") => "v2/ModelListResponse.json",
        ("config/read", "params") => "v2/ConfigReadParams.json",
        ("config/read", "response") => "v2/ConfigReadResponse.json",
        ("command/exec", "params") => "v2/CommandExecParams.json",
        ("command/exec", "response") => "v2/CommandExecResponse.json",
        ("thread/turns/list", "params") => "v2/ThreadTurnsListParams.json",
        ("thread/turns/list", "response") => "v2/ThreadTurnsListResponse.json",
        ("thread/items/list", "params") => "v2/ThreadItemsListParams.json",
        ("thread/items/list", "response") => "v2/ThreadItemsListResponse.json",
        ("skills/list", "params") => "v2/SkillsListParams.json",
        ("skills/list", "response") => "v2/SkillsListResponse.json",
        ("fs/readFile", "params") => "v2/FsReadFileParams.json",
        ("fs/readFile", "response") => "v2/FsReadFileResponse.json",
        ("fs/writeFile", "params") => "v2/FsWriteFileParams.json",
        ("fs/writeFile", "response") => "v2/FsWriteFileResponse.json",
        ("fs/createDirectory", "params") => "v2/FsCreateDirectoryParams.json",
        ("fs/createDirectory", "response") => "v2/FsCreateDirectoryResponse.json",
        ("fs/getMetadata", "params") => "v2/FsGetMetadataParams.json",
        ("fs/getMetadata", "response") => "v2/FsGetMetadataResponse.json",
        ("fs/readDirectory", "params") => "v2/FsReadDirectoryParams.json",
        ("fs/readDirectory", "response") => "v2/FsReadDirectoryResponse.json",
        ("fs/remove", "params") => "v2/FsRemoveParams.json",
        ("fs/remove", "response") => "v2/FsRemoveResponse.json",
        ("fs/copy", "params") => "v2/FsCopyParams.json",
        ("fs/copy", "response") => "v2/FsCopyResponse.json",
        // Written from Codex's `ThreadRevertParams` / `ThreadRevertResponse` types (their
        // fields and which are required); the notification is the definition in
        // ServerNotification.json.
        ("thread/revert", "params") => "v2/ThreadRevertParams.json",
        ("thread/revert", "response") => "v2/ThreadRevertResponse.json",
        ("thread/reverted", _) => "v2/ThreadRevertedNotification.json",
        ("thread/started", _) => "v2/ThreadStartedNotification.json",
        ("hook/started", _) => "v2/HookStartedNotification.json",
        ("hook/completed", _) => "v2/HookCompletedNotification.json",
        ("thread/status/changed", _) => "v2/ThreadStatusChangedNotification.json",
        ("turn/started", _) => "v2/TurnStartedNotification.json",
        ("turn/completed", _) => "v2/TurnCompletedNotification.json",
        ("item/started", _) => "v2/ItemStartedNotification.json",
        ("item/completed", _) => "v2/ItemCompletedNotification.json",
        ("item/agentMessage/delta", _) => "v2/AgentMessageDeltaNotification.json",
        ("item/commandExecution/outputDelta", _) => {
            "v2/CommandExecutionOutputDeltaNotification.json"
        }
        ("item/fileChange/outputDelta", _) => "v2/FileChangeOutputDeltaNotification.json",
        ("item/reasoning/summaryTextDelta", _) => "v2/ReasoningSummaryTextDeltaNotification.json",
        ("turn/diff/updated", _) => "v2/TurnDiffUpdatedNotification.json",
        ("turn/plan/updated", _) => "v2/TurnPlanUpdatedNotification.json",
        ("thread/tokenUsage/updated", _) => "v2/ThreadTokenUsageUpdatedNotification.json",
        ("error", _) => "v2/ErrorNotification.json",
        ("warning", _) => "v2/WarningNotification.json",
        ("thread/compacted", _) => "v2/ContextCompactedNotification.json",
        ("serverRequest/resolved", _) => "v2/ServerRequestResolvedNotification.json",
        ("item/commandExecution/requestApproval", "params") => {
            "CommandExecutionRequestApprovalParams.json"
        }
        ("item/commandExecution/requestApproval", "response") => {
            "CommandExecutionRequestApprovalResponse.json"
        }
        ("item/fileChange/requestApproval", "params") => "FileChangeRequestApprovalParams.json",
        ("item/fileChange/requestApproval", "response") => "FileChangeRequestApprovalResponse.json",
        _ => return None,
    })
}

fn names(schema: &Value, key: &str) -> BTreeSet<String> {
    match schema.get(key) {
        Some(Value::Object(map)) => map.keys().cloned().collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => BTreeSet::new(),
    }
}

#[test]
fn every_shared_method_matches_codex_schema() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for (method, kind, schema) in wire_schemas() {
        let Some(file) = codex_file(method, kind) else {
            assert!(
                method.starts_with("troupe/"),
                "{method} {kind}: not in Codex's schema and not under troupe/"
            );
            continue;
        };
        let path = codex_dir().join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|err| panic!("Codex schema {} unreadable: {err}", path.display()));
        let codex: Value = serde_json::from_str(&text).unwrap_or_default();
        let ours = serde_json::to_value(&schema).unwrap_or_default();
        let sent_by_us = kind != "params";
        compare(
            &format!("{method} {kind}"),
            file,
            &ours,
            &codex,
            sent_by_us,
            &mut problems,
        );
        // Nested types both schemas name the same way (Thread, Turn, TurnError, …).
        let ours_defs = ours
            .get("definitions")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let codex_defs = codex
            .get("definitions")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (name, definition) in &ours_defs {
            if let Some(theirs) = codex_defs.get(name) {
                if definition.get("properties").is_some() {
                    compare(
                        &format!("{method} {kind} {name}"),
                        file,
                        definition,
                        theirs,
                        sent_by_us,
                        &mut problems,
                    );
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 40, "only {checked} schemas checked");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

fn compare(
    what: &str,
    file: &str,
    ours: &Value,
    codex: &Value,
    sent_by_us: bool,
    problems: &mut Vec<String>,
) {
    {
        let codex_props = names(codex, "properties");
        let our_props = names(ours, "properties");
        let codex_required = names(codex, "required");
        let our_required = names(ours, "required");
        for field in our_props.difference(&codex_props) {
            problems.push(format!("{what}: field `{field}` is not in Codex's {file}"));
        }
        for field in &codex_required {
            if sent_by_us && !our_props.contains(field) {
                problems.push(format!(
                    "{what}: Codex requires `{field}`, Troupe never sends it"
                ));
            }
        }
        if !sent_by_us {
            for field in our_required.difference(&codex_required) {
                problems.push(format!("{what}: Troupe requires `{field}`, Codex does not"));
            }
        }
    }
}
