//! Runtime events into the UI: which thread's view an event belongs to (sub-agents get
//! entries of their own as they appear) and what the app does beside the view.

use super::*;

impl App {
    /// An event from client `client` (the root thread it opened).
    pub fn on_event(&mut self, client: usize, msg: EventMsg, now: Instant) -> Vec<Action> {
        let Some(root) = self
            .threads
            .iter()
            .position(|t| t.client == client && !t.is_agent)
        else {
            return Vec::new();
        };
        let Some(msg) = self.review_event(client, msg) else {
            return Vec::new();
        };
        match msg {
            EventMsg::AgentEvent {
                thread_id,
                task_path,
                msg,
            } => {
                let index = self.agent_entry(client, thread_id, &task_path, now);
                self.apply(index, *msg, now)
            }
            EventMsg::CollabToolCall {
                ref receiver_thread_ids,
                ref prompt,
                ..
            } => {
                // A spawned agent appears in the panel as soon as its id is known.
                for id in receiver_thread_ids.clone() {
                    let index = self.agent_entry(client, id, "", now);
                    if self.threads[index].view.activity.is_empty() {
                        if let Some(prompt) = prompt {
                            self.threads[index].view.activity =
                                prompt.lines().next().unwrap_or("").to_string();
                        }
                    }
                }
                self.apply(root, msg, now)
            }
            msg => self.apply(root, msg, now),
        }
    }

    fn agent_entry(&mut self, client: usize, id: ThreadId, task_path: &str, now: Instant) -> usize {
        if let Some(index) = self.threads.iter().position(|t| t.id == Some(id)) {
            if !task_path.is_empty() && self.threads[index].path != task_path {
                self.threads[index].path = task_path.to_string();
                self.threads[index].depth = task_path.matches('/').count().saturating_sub(1);
            }
            return index;
        }
        let path = if task_path.is_empty() {
            format!("agent {}", crate::thread_view::agent_id(&id.to_string()))
        } else {
            task_path.to_string()
        };
        let mut view = ThreadView::new(now);
        view.status = ThreadStatus::Running;
        // After its root and that root's other agents, so the panel reads as a tree.
        let insert_at = self
            .threads
            .iter()
            .rposition(|t| t.client == client)
            .map_or(self.threads.len(), |i| i + 1);
        self.threads.insert(
            insert_at,
            ThreadEntry {
                id: Some(id),
                depth: path.matches('/').count().saturating_sub(1).max(1),
                path,
                client,
                is_agent: true,
                rollout: None,
                view,
                unrecorded: Vec::new(),
                untitled: false,
                queued: VecDeque::new(),
            },
        );
        if self.current >= insert_at {
            self.current += 1;
        }
        for approval in &mut self.approvals {
            if approval.thread >= insert_at {
                approval.thread += 1;
            }
        }
        if let Some(peek) = self
            .approval_peek
            .as_mut()
            .filter(|p| p.back_to >= insert_at)
        {
            peek.back_to += 1;
        }
        insert_at
    }

    fn apply(&mut self, index: usize, msg: EventMsg, now: Instant) -> Vec<Action> {
        let mut actions = Vec::new();
        let entry = &mut self.threads[index];
        if let EventMsg::SessionConfigured {
            thread_id,
            rollout_path,
            model,
            approval_policy,
            sandbox_mode,
            ..
        } = &msg
        {
            entry.id = Some(*thread_id);
            entry.rollout = Some(rollout_path.clone());
            let session_id = thread_id.to_string();
            actions.extend(
                std::mem::take(&mut entry.unrecorded)
                    .into_iter()
                    .map(|text| Action::RecordHistory {
                        session_id: session_id.clone(),
                        text,
                    }),
            );
            if !entry.is_agent {
                self.status.model = model.clone();
                self.status.approval = *approval_policy;
                self.status.sandbox = *sandbox_mode;
            }
        }
        let entry = &mut self.threads[index];
        entry.view.apply(&msg, now);
        match msg {
            EventMsg::ExecApprovalRequest {
                call_id,
                command,
                cwd,
                reason,
                sandbox_retry,
            } => self.approvals.push_back(PendingApproval {
                thread: index,
                call_id,
                subject: ApprovalSubject::Command {
                    command: crate::command_line(&command),
                    cwd,
                },
                reason,
                sandbox_retry,
            }),
            EventMsg::ApplyPatchApprovalRequest {
                call_id,
                files,
                reason,
            } => self.approvals.push_back(PendingApproval {
                thread: index,
                call_id,
                subject: ApprovalSubject::Patch { files },
                reason,
                sandbox_retry: None,
            }),
            EventMsg::RequestUserInput { call_id, questions } => {
                self.questions
                    .push_back(crate::questions::PendingQuestions::new(
                        index, call_id, questions,
                    ))
            }
            // A call that began or has its output was answered, here or elsewhere (a web page
            // answers through the thread's inbox): nothing is left to ask about it.
            EventMsg::ExecCommandBegin { call_id, .. }
            | EventMsg::PatchApplyBegin { call_id, .. }
            | EventMsg::ItemRecorded {
                item:
                    ResponseItem::FunctionCallOutput { call_id, .. }
                    | ResponseItem::CustomToolCallOutput { call_id, .. },
            } => self.call_settled(index, &call_id),
            // A turn that ended leaves nothing to approve.
            EventMsg::TurnComplete { .. }
            | EventMsg::TurnAborted { .. }
            | EventMsg::ShutdownComplete => {
                self.approvals.retain(|a| a.thread != index);
                self.questions.retain(|q| q.thread != index);
                actions
                    .extend(self.after_turn(index, matches!(msg, EventMsg::TurnComplete { .. })));
            }
            _ => {}
        }
        actions
    }
}
