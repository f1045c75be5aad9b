//! Commands as cells: begun, streaming output, ended.

use super::*;

impl ThreadView {
    /// Commands: the model's and the user's own (`!cmd`), with their live output.
    pub(super) fn on_command(&mut self, msg: &EventMsg, now: Instant) {
        match msg {
            EventMsg::ExecCommandBegin {
                call_id,
                command,
                user_shell,
                ..
            } => {
                let cell = command_cell(call_id, command, *user_shell);
                if *user_shell {
                    self.activity = format!("! {}", cell.command);
                    // Not a turn, but the thread is busy: Esc stops it, the timer runs.
                    if self.status == ThreadStatus::Idle {
                        self.status = ThreadStatus::Running;
                        self.turn_started = Some(now);
                        self.shell_running = Some(call_id.clone());
                    }
                } else {
                    self.activity = format!("$ {}", cell.command);
                }
                self.live.push(Cell::Command(cell));
            }
            EventMsg::ExecCommandOutputDelta { call_id, chunk, .. } => {
                let cell = self.live.iter_mut().find_map(|c| match c {
                    Cell::Command(cmd) if &cmd.call_id == call_id => Some(cmd),
                    _ => None,
                });
                if let Some(cell) = cell {
                    cell.output.push(chunk);
                }
            }
            EventMsg::ExecCommandEnd {
                call_id,
                command,
                exit_code,
                aggregated_output,
                duration_ms,
                timed_out,
                user_shell,
            } => {
                let index = self
                    .live
                    .iter()
                    .position(|c| matches!(c, Cell::Command(cmd) if &cmd.call_id == call_id));
                let index = match index {
                    Some(index) => index,
                    None => {
                        self.live
                            .push(Cell::Command(command_cell(call_id, command, *user_shell)));
                        self.live.len() - 1
                    }
                };
                if let Cell::Command(cell) = &mut self.live[index] {
                    // The final output is authoritative: streaming stops at a per-command cap,
                    // the end carries the output's real head and tail.
                    cell.output = OutputTail::default();
                    cell.output.push(aggregated_output);
                    cell.exit_code = Some(*exit_code);
                    cell.duration_ms = *duration_ms;
                    cell.timed_out = *timed_out;
                }
                self.finish(index);
                if self.shell_running.as_ref() == Some(call_id) {
                    self.shell_running = None;
                    self.turn_started = None;
                    if self.status == ThreadStatus::Running {
                        self.status = ThreadStatus::Idle;
                    }
                }
            }
            _ => {}
        }
    }
}

/// The cell of a command that begins (or ends unseen): the user's own shows what they typed
/// (the last word of `shell -c COMMAND`), the model's its whole argv.
fn command_cell(call_id: &str, argv: &[String], user_shell: bool) -> CommandCell {
    match (user_shell, argv) {
        (true, [_, flag, typed]) if flag == "-c" => {
            CommandCell::user_shell(call_id.to_string(), typed.clone())
        }
        (true, _) => CommandCell::user_shell(call_id.to_string(), crate::command_line(argv)),
        (false, _) => CommandCell::new(call_id.to_string(), crate::command_line(argv)),
    }
}
