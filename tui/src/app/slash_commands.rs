//! More of [`App`]: what each slash command does (the popup and its parsing are in
//! `slash.rs`).

use super::{override_op, Action, App, Overlay};
use crate::slash::{self, SlashCommand};
use troupe_messages::ops::{Op, UserInput};

impl App {
    pub(super) fn run_slash(&mut self, command: SlashCommand, arg: &str) -> Vec<Action> {
        let client = self.threads[self.current].client;
        let submit = |op| vec![Action::Submit { client, op }];
        match command {
            SlashCommand::New => vec![Action::NewThread],
            SlashCommand::Resume => {
                self.picker_shows_agents = arg.trim() == "all";
                vec![Action::ListThreads]
            }
            SlashCommand::Fork => match self.threads[self.current].id {
                Some(id) => vec![Action::Fork(id)],
                None => {
                    self.info("this thread has not started yet");
                    Vec::new()
                }
            },
            SlashCommand::Compact => submit(Op::Compact),
            SlashCommand::Goal => {
                if arg.is_empty() {
                    self.info("usage: /goal OBJECTIVE (the thread then continues by itself until the goal is complete)");
                    return Vec::new();
                }
                // As `exec --goal` without a prompt: the objective starts the first turn.
                self.threads[self.current]
                    .view
                    .user_message(arg.to_string());
                vec![
                    Action::Submit {
                        client,
                        op: Op::CreateGoal {
                            objective: arg.to_string(),
                            token_budget: None,
                        },
                    },
                    Action::Submit {
                        client,
                        op: Op::UserInput {
                            items: vec![UserInput::Text {
                                text: arg.to_string(),
                            }],
                        },
                    },
                ]
            }
            SlashCommand::Model => self.model_command(arg),
            SlashCommand::Approvals => match slash::parse_approval(arg) {
                Some(policy) => {
                    self.status.approval = policy;
                    self.info(format!("approval policy: {}", policy.as_str()));
                    submit(override_op(None, Some(policy), None))
                }
                None => {
                    self.info(format!("approval policy: {} (change it with /approvals untrusted|on-request|on-failure|never)", self.status.approval.as_str()));
                    Vec::new()
                }
            },
            SlashCommand::Status => {
                let view = &self.threads[self.current].view;
                let entry = &self.threads[self.current];
                let rollout = entry
                    .rollout
                    .as_ref()
                    .map_or("-".to_string(), |p| p.display().to_string());
                let text = format!(
                    "model: {}{}\napproval: {} · sandbox: {}\ncontext: {}\ntokens: {} total ({} in, {} out)\nrollout: {rollout}",
                    self.status.model,
                    self.status.effort.as_ref().map_or(String::new(), |e| format!(" ({e})")),
                    self.status.approval.as_str(),
                    self.status.sandbox.as_str(),
                    crate::status_line::context_text(view.context_tokens, self.status.context_window),
                    view.total_usage.total_tokens,
                    view.total_usage.input_tokens,
                    view.total_usage.output_tokens,
                );
                self.info(text);
                Vec::new()
            }
            SlashCommand::Agents => {
                self.overlay = Overlay::Threads {
                    selected: self.current,
                };
                Vec::new()
            }
            SlashCommand::Diff => self.diff(),
            SlashCommand::Rewind => self.rewind(),
            SlashCommand::Review => self.review(arg),
            SlashCommand::Init => vec![Action::InitAgentsMd],
            SlashCommand::Help => {
                let lines: Vec<String> = SlashCommand::ALL
                    .iter()
                    .map(|c| format!("/{:<10} {}", c.name(), c.help()))
                    .collect();
                self.info(format!("commands:\n{}\nkeys: Enter send · Ctrl+J newline · Esc interrupt · Ctrl+O transcript · Ctrl+T threads · Ctrl+C quit", lines.join("\n")));
                Vec::new()
            }
            SlashCommand::Quit => self.quit(),
            SlashCommand::Permissions => self.permissions(arg),
            SlashCommand::Plan => self.toggle_plan(),
            SlashCommand::Mention => {
                self.composer.insert("@");
                Vec::new()
            }
            SlashCommand::Reasoning => self.toggle_reasoning(arg),
        }
    }
}
