//! Commands, patches and other tools as ACP tool calls (and the permission requests they
//! raise).

use super::*;

impl UpdateMapper {
    /// Commands as tool calls (with their live output) and the approvals they ask.
    pub(super) fn command_updates(&mut self, msg: &EventMsg) -> Vec<Value> {
        match msg {
            EventMsg::ExecCommandBegin {
                call_id,
                command,
                cwd,
                ..
            } => {
                let mut fields = json!({
                    "title": command_title(command),
                    "kind": command_kind(command),
                    "status": "in_progress",
                    "rawInput": {"command": command, "cwd": cwd},
                });
                if shows_in_terminal(self.terminal_output, command) {
                    merge(&mut fields, commands::terminal_begin(call_id, cwd));
                    self.terminals.insert(call_id.clone(), 0);
                }
                vec![self.start_or_update(call_id, fields)]
            }
            EventMsg::ExecCommandOutputDelta {
                call_id,
                chunk: piece,
                ..
            } => {
                if let Some(sent) = self.terminals.get_mut(call_id) {
                    return terminal_piece(call_id, sent, piece)
                        .map(|fields| vec![update(call_id, fields)])
                        .unwrap_or_default();
                }
                let Some(output) = self.known.get_mut(call_id) else {
                    return Vec::new();
                };
                if output.len() >= LIVE_OUTPUT_LIMIT {
                    return Vec::new();
                }
                output.push_str(piece);
                vec![update(call_id, json!({"content": [text_content(output)]}))]
            }
            EventMsg::ExecCommandEnd {
                call_id,
                exit_code,
                aggregated_output,
                duration_ms,
                timed_out,
                ..
            } => {
                self.known.remove(call_id);
                let status = if *exit_code == Some(0) {
                    "completed"
                } else {
                    "failed"
                };
                let raw = json!({"exitCode": exit_code, "durationMs": duration_ms, "timedOut": timed_out});
                if self.terminals.remove(call_id).is_some() {
                    // The terminal keeps what it showed: no content replaces it.
                    return vec![update(
                        call_id,
                        json!({
                            "status": status,
                            "rawOutput": raw,
                            "_meta": commands::terminal_exit(call_id, *exit_code),
                        }),
                    )];
                }
                vec![update(
                    call_id,
                    json!({
                        "status": status,
                        "content": [text_content(aggregated_output)],
                        "rawOutput": raw,
                    }),
                )]
            }
            EventMsg::ExecApprovalRequest {
                call_id,
                command,
                cwd,
                ..
            } => {
                let fields = json!({
                    "title": command_title(command),
                    "kind": command_kind(command),
                    "status": "pending",
                    "rawInput": {"command": command, "cwd": cwd},
                });
                vec![self.start_or_update(call_id, fields)]
            }
            _ => Vec::new(),
        }
    }

    /// Patches, other tools, MCP tools and plans.
    pub(super) fn edit_and_tool_updates(&mut self, msg: &EventMsg) -> Vec<Value> {
        match msg {
            EventMsg::ApplyPatchApprovalRequest { call_id, files, .. } => {
                let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
                let fields = json!({
                    "title": format!("Edit {}", names.join(", ")),
                    "kind": "edit",
                    "status": "pending",
                    "locations": names.iter().map(|path| json!({"path": path})).collect::<Vec<_>>(),
                });
                vec![self.start_or_update(call_id, fields)]
            }
            EventMsg::PatchApplyBegin { call_id, changes } => {
                let fields = json!({
                    "title": patch_title(changes),
                    "kind": "edit",
                    "status": "in_progress",
                    "locations": changes.iter().map(|c| json!({"path": c.path})).collect::<Vec<_>>(),
                    "content": changes.iter().map(diff_content).collect::<Vec<_>>(),
                });
                vec![self.start_or_update(call_id, fields)]
            }
            EventMsg::PatchApplyEnd {
                call_id,
                changes,
                success,
                output,
            } => {
                self.known.remove(call_id);
                let mut content: Vec<Value> = changes.iter().map(diff_content).collect();
                if !success {
                    content.push(text_content(output));
                }
                let status = if *success { "completed" } else { "failed" };
                vec![update(
                    call_id,
                    json!({"status": status, "content": content}),
                )]
            }
            EventMsg::ToolCallBegin { call_id, tool_name } => {
                let fields = json!({
                    "title": tool_title(tool_name),
                    "kind": tool_kind(tool_name),
                    "status": "in_progress",
                });
                vec![self.start_or_update(call_id, fields)]
            }
            EventMsg::ToolCallEnd {
                call_id,
                success,
                output,
                ..
            } => {
                self.known.remove(call_id);
                let status = if *success { "completed" } else { "failed" };
                vec![update(
                    call_id,
                    json!({"status": status, "content": [text_content(output)]}),
                )]
            }
            EventMsg::McpToolCallBegin {
                call_id,
                server,
                tool,
                arguments,
                ..
            } => {
                let fields = json!({
                    "title": format!("{server}: {tool}"),
                    "kind": "other",
                    "status": "in_progress",
                    "rawInput": arguments,
                });
                vec![self.start_or_update(call_id, fields)]
            }
            EventMsg::McpToolCallEnd {
                call_id,
                success,
                output,
                result,
                ..
            } => {
                self.known.remove(call_id);
                let status = if *success { "completed" } else { "failed" };
                vec![update(
                    call_id,
                    json!({"status": status, "content": [text_content(output)], "rawOutput": result}),
                )]
            }
            EventMsg::PlanUpdated { plan, .. } => vec![plan_update(plan)],
            _ => Vec::new(),
        }
    }
}
