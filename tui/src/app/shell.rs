//! More of [`App`]: `!cmd`, the user's own shell command. The runtime runs it
//! (`Op::RunUserShellCommand`): its cell comes back as the thread's events, and the model sees
//! the command and its output on the next turn.

use super::{Action, App};
use troupe_messages::ops::Op;

impl App {
    /// `!command` typed in the composer (`typed` is the whole line, for the prompt history).
    /// Refused with one line while the thread works (a turn, or another command): the
    /// history must not change under a running turn, and queueing a command behind it would
    /// run it later against a tree the user has not seen yet.
    pub(super) fn run_shell_command(&mut self, command: String, typed: String) -> Vec<Action> {
        if command.is_empty() {
            self.info("type a shell command after `!` (it runs here, not in the sandbox)");
            return Vec::new();
        }
        let index = self.current;
        if self.threads[index].is_agent {
            self.info("`!command` runs in a main thread: switch to it (Ctrl+T) first");
            return Vec::new();
        }
        if self.is_running(index) {
            self.info("a turn is running: `!command` runs once it has ended (Esc stops it)");
            self.composer.set_text(&typed);
            return Vec::new();
        }
        let mut actions = vec![Action::Submit {
            client: self.threads[index].client,
            op: Op::RunUserShellCommand {
                command,
                timeout_ms: None,
            },
        }];
        actions.extend(self.remember_prompt(index, typed));
        actions
    }
}
