//! The user's own shell command (`Op::RunUserShellCommand`, the TUI's `!cmd`).
//!
//! The user typed it, so it runs as the user would run it in their terminal: unconfined (no
//! sandbox, no approval), in the thread's working directory, with the environment Troupe
//! gives the programs it starts for the user (hooks, `notify`). It runs in a task of the
//! session; its output streams as `ExecCommandOutputDelta` and its end is an
//! `ExecCommandEnd`, both marked `user_shell`. The command and its output then join the
//! history as a user message ([`record_text`]), so the model sees them on the next turn,
//! and the rollout holds both (a resumed thread shows the command and tells the model).
//!
//! One at a time, and never beside a turn: the history a turn works on must not change
//! under it, so the op is refused while a turn runs, and input sent while the command runs
//! starts its turn once the command has ended. `Op::Interrupt` kills the command's process
//! group.

use super::{SessionMsg, SessionState};
use ractor::ActorRef;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use troupe_messages::events::EventMsg;
use troupe_messages::items::ResponseItem;
use troupe_messages::policy::PermissionProfile;
use troupe_messages::tools::{ExecOutputSink, ExecRequest, ExecResult};
use troupe_sandbox::process::{kill_all, run_process, Containment, LiveGroups};

/// How long a user's command may run before it is killed (Esc stops it sooner), unless the
/// op names its own timeout.
const USER_SHELL_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// The user's command running now.
pub(super) struct RunningShell {
    run: u64,
    /// The submission that asked for it; its events carry this id.
    submission: String,
    live: LiveGroups,
    /// Set when the user stopped it (`Op::Interrupt`): the model is told so.
    interrupted: Arc<AtomicBool>,
    /// Input sent meanwhile (by this submission): its turn starts once the command ended.
    pub(super) then_start: Option<String>,
}

/// The session's user commands: the one running, if any, and the number of the next.
#[derive(Default)]
pub(super) struct UserShell {
    pub(super) running: Option<RunningShell>,
    next_run: u64,
}

impl UserShell {
    /// Kills the running command's process group (its task then reports its end).
    pub(super) fn kill(&self) -> bool {
        match &self.running {
            Some(running) => {
                running.interrupted.store(true, Ordering::Relaxed);
                kill_all(&running.live);
                true
            }
            None => false,
        }
    }
}

/// The argv running `command`: the user's login shell from `$SHELL` when it names an
/// absolute path, else `/bin/sh`, with `-c` (no profile sourced: the TUI's own environment,
/// inherited from the user's terminal, already has it).
pub fn shell_argv(shell_var: Option<&str>, command: &str) -> Vec<String> {
    let shell = shell_var
        .filter(|shell| Path::new(shell).is_absolute())
        .unwrap_or("/bin/sh");
    vec![shell.to_string(), "-c".to_string(), command.to_string()]
}

/// What the model reads of a user's command: the command, how it ended, how long it took
/// and its output (bounded head+tail), in a `<user_shell_command>` block so it is told apart
/// from a message the user wrote.
pub fn record_text(
    command: &str,
    exit_code: Option<i32>,
    interrupted: bool,
    duration: Duration,
    output: &str,
) -> String {
    let ended = match (exit_code, interrupted) {
        (_, true) => "Exit code: none (interrupted by the user)".to_string(),
        (Some(code), false) => format!("Exit code: {code}"),
        (None, false) => "Exit code: none (killed by a signal)".to_string(),
    };
    format!(
        "<user_shell_command>\n<command>\n{command}\n</command>\n<result>\n{ended}\nDuration: {:.4} seconds\nOutput:\n{}\n</result>\n</user_shell_command>",
        duration.as_secs_f64(),
        output.trim_end_matches('\n')
    )
}

impl SessionState {
    /// `Op::RunUserShellCommand`: refused with a warning while a turn (or another command)
    /// runs; otherwise started in a task.
    pub(super) async fn on_user_shell_command(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        submission: String,
        command: String,
        timeout: Option<Duration>,
    ) {
        let refusal = if self.turn.is_some() || self.ending.is_some() {
            Some("a turn is running: run the command again once it has ended (or Esc first)")
        } else if self.user_shell.running.is_some() {
            Some("a shell command is already running: wait for it, or Esc to stop it")
        } else if self.shutting_down || self.persist.failure.is_some() {
            Some("this thread is stopping")
        } else if command.trim().is_empty() {
            Some("no command given after `!`")
        } else {
            None
        };
        if let Some(why) = refusal {
            let message = format!("shell command not run: {why}");
            self.emit(&submission, EventMsg::Warning { message }).await;
            return;
        }
        let run = self.user_shell.next_run;
        self.user_shell.next_run += 1;
        // Unique across processes and reloads (the run number is not): clients key items by it.
        let call_id = format!("user-shell-{}", uuid::Uuid::now_v7());
        let argv = shell_argv(std::env::var("SHELL").ok().as_deref(), &command);
        let request = ExecRequest {
            argv: argv.clone(),
            cwd: self.settings.cwd.clone(),
            env: crate::tool_orchestrator::shell_env::spawn_env(&self.settings),
            timeout: timeout.unwrap_or(USER_SHELL_TIMEOUT),
            max_output_bytes: self.settings.tool_output_max_bytes,
            profile: PermissionProfile::Disabled,
            network_proxy: None,
        };
        let live = LiveGroups::new(Containment::Group);
        let interrupted = Arc::new(AtomicBool::new(false));
        self.user_shell.running = Some(RunningShell {
            run,
            submission: submission.clone(),
            live: live.clone(),
            interrupted: interrupted.clone(),
            then_start: None,
        });
        self.emit(
            &submission,
            EventMsg::ExecCommandBegin {
                call_id: call_id.clone(),
                command: argv.clone(),
                cwd: request.cwd.clone(),
                user_shell: true,
            },
        )
        .await;
        let myself = myself.clone();
        let output = {
            let myself = myself.clone();
            let call_id = call_id.clone();
            ExecOutputSink(Arc::new(move |stream, chunk| {
                let msg = EventMsg::ExecCommandOutputDelta {
                    call_id: call_id.clone(),
                    stream,
                    chunk,
                };
                let _ = myself.send_message(SessionMsg::UserShellOutput { run, msg });
            }))
        };
        tokio::spawn(async move {
            let started = Instant::now();
            let result = run_process(&request, &live, Some(&output))
                .await
                .unwrap_or_else(|message| ExecResult {
                    exit_code: None,
                    stdout: String::new(),
                    stderr: message.clone(),
                    aggregated_output: message,
                    truncated_bytes: 0,
                    duration: started.elapsed(),
                    timed_out: false,
                });
            let duration_ms = result.duration.as_millis() as u64;
            let end = EventMsg::ExecCommandEnd {
                call_id,
                command: argv,
                exit_code: result.exit_code,
                aggregated_output: result.aggregated_output.clone(),
                duration_ms,
                timed_out: result.timed_out,
                user_shell: true,
            };
            let text = record_text(
                &command,
                result.exit_code,
                interrupted.load(Ordering::Relaxed),
                result.duration,
                &result.aggregated_output,
            );
            let _ = myself.send_message(SessionMsg::UserShellEnded {
                run,
                end,
                record: ResponseItem::user_text(text),
            });
        });
    }

    /// A piece of the running command's output.
    pub(super) async fn on_user_shell_output(&mut self, run: u64, msg: EventMsg) {
        let Some(running) = self.user_shell.running.as_ref().filter(|r| r.run == run) else {
            return;
        };
        let submission = running.submission.clone();
        self.subscribers
            .send(troupe_messages::events::Event {
                id: submission,
                msg,
            })
            .await;
    }

    /// The command ended: its record joins the history (durably), its end is told, and input
    /// sent meanwhile starts its turn.
    pub(super) async fn on_user_shell_ended(
        &mut self,
        myself: &ActorRef<SessionMsg>,
        run: u64,
        end: EventMsg,
        record: ResponseItem,
    ) {
        if self.user_shell.running.as_ref().map(|r| r.run) != Some(run) {
            return;
        }
        let Some(running) = self.user_shell.running.take() else {
            return;
        };
        self.push_history(record.clone());
        self.record(vec![troupe_messages::rollout::RolloutRecord::ResponseItem(
            record.clone(),
        )])
        .await;
        self.emit(&running.submission, EventMsg::ItemRecorded { item: record })
            .await;
        self.emit(&running.submission, end).await;
        self.flush().await;
        self.persist.update_index(false);
        if let Some(submission) = running.then_start {
            if self.turn.is_none() && self.ending.is_none() && !self.shutting_down {
                let inputs = self.queue.take_all();
                self.start_turn(myself, submission, inputs).await;
            }
        }
    }
}

#[cfg(test)]
#[path = "user_shell_tests.rs"]
mod tests;
