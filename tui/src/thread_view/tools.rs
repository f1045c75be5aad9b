//! Tool calls, patches, the turn diff and plans as cells.

use super::*;

impl ThreadView {
    /// Tool calls, patches and the turn's diff, plans.
    pub(super) fn on_tool(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::ToolCallBegin { tool_name, .. }
            | EventMsg::McpToolCallBegin { tool_name, .. } => {
                self.activity = tool_name.clone();
                self.live.push(Cell::Tool {
                    name: tool_name.clone(),
                    success: None,
                    output: String::new(),
                });
            }
            EventMsg::ToolCallEnd {
                tool_name,
                success,
                output,
                ..
            }
            | EventMsg::McpToolCallEnd {
                tool_name,
                success,
                output,
                ..
            } => {
                let index = self.live.iter().position(
                    |c| matches!(c, Cell::Tool { name, success: None, .. } if name == tool_name),
                );
                let cell = Cell::Tool {
                    name: tool_name.clone(),
                    success: Some(*success),
                    output: output.clone(),
                };
                match index {
                    Some(index) => {
                        self.live[index] = cell;
                        self.finish(index);
                    }
                    None => self.push(cell),
                }
            }
            EventMsg::PatchApplyBegin { call_id, changes } => {
                self.activity = "apply_patch".into();
                let files = changes
                    .iter()
                    .map(|c| (c.path.display().to_string(), c.kind))
                    .collect();
                self.live.push(Cell::Patch(PatchCell {
                    call_id: call_id.clone(),
                    files,
                    success: None,
                    output: String::new(),
                    diffs: Vec::new(),
                }));
            }
            EventMsg::PatchApplyEnd {
                call_id,
                changes,
                success,
                output,
            } => {
                let index = self
                    .live
                    .iter()
                    .position(|c| matches!(c, Cell::Patch(p) if &p.call_id == call_id));
                let files = changes
                    .iter()
                    .map(|c| (c.path.display().to_string(), c.kind))
                    .collect();
                let cell = PatchCell {
                    call_id: call_id.clone(),
                    files,
                    success: Some(*success),
                    output: output.clone(),
                    diffs: Vec::new(),
                };
                match index {
                    // A written patch waits in the viewport for the turn diff that follows it.
                    Some(index) if *success => self.live[index] = Cell::Patch(cell),
                    Some(index) => {
                        self.live[index] = Cell::Patch(cell);
                        self.finish(index);
                    }
                    None => self.push(Cell::Patch(cell)),
                }
            }
            EventMsg::TurnDiff { unified_diff } => {
                self.turn_diff = unified_diff.clone();
                let files = diff::split_files(unified_diff);
                while let Some(index) = self
                    .live
                    .iter()
                    .position(|c| matches!(c, Cell::Patch(p) if p.success == Some(true)))
                {
                    if let Cell::Patch(patch) = &mut self.live[index] {
                        patch.diffs = files
                            .iter()
                            .filter(|f| patch.files.iter().any(|(p, _)| diff::names(f, p)))
                            .cloned()
                            .collect();
                    }
                    self.finish(index);
                }
            }
            EventMsg::PlanUpdated { explanation, plan } => self.push(Cell::Plan {
                explanation: explanation.clone(),
                items: plan.clone(),
            }),
            _ => {}
        }
    }
}
