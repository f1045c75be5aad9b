//! `notify`: a program run when a turn completes, with Codex's JSON payload as its last
//! argument (`{"type":"agent-turn-complete","thread-id",…}`). It runs outside the sandbox
//! (it is the user's own program, from their config), is never waited for by the session,
//! and a program that cannot start only costs a warning in the log.

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use troupe_messages::ids::ThreadId;

/// Codex's `agent-turn-complete` notification, field for field.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Notification<'a> {
    #[serde(rename_all = "kebab-case")]
    AgentTurnComplete {
        thread_id: String,
        turn_id: String,
        cwd: &'a Path,
        client: &'static str,
        input_messages: &'a [String],
        last_assistant_message: Option<&'a str>,
    },
}

/// How long a notify program may run before it is killed (it must not pile up).
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(60);

/// The payload for one completed turn.
pub fn payload(
    thread_id: ThreadId,
    turn_id: u64,
    cwd: &Path,
    input_messages: &[String],
    last_assistant_message: Option<&str>,
) -> String {
    let notification = Notification::AgentTurnComplete {
        thread_id: thread_id.to_string(),
        turn_id: turn_id.to_string(),
        cwd,
        client: "troupe",
        input_messages,
        last_assistant_message,
    };
    serde_json::to_string(&notification).unwrap_or_default()
}

/// Starts `argv` + `payload` in the background with exactly `env`; reaps it (or kills it after
/// a minute) while the runtime lives, and leaves it running when the runtime ends first.
pub fn spawn(argv: &[String], payload: String, cwd: &Path, env: &BTreeMap<String, String>) {
    let Some((program, args)) = argv.split_first() else {
        return;
    };
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .arg(payload)
        .current_dir(cwd)
        .env_clear()
        .envs(env)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // Not killed on drop, and spared by the frontend's final sweep: a one-shot `exec` ends
    // right after its last turn, and the user's program must still get to run to its end.
    crate::file_mask::restore_user_mask(&mut command);
    match command.spawn() {
        Ok(mut child) => {
            // The frontend's last sweep of leftover processes leaves it be.
            let pid = child.id().map(|pid| pid as i32);
            if let Some(pid) = pid {
                troupe_sandbox::descendants::spare(pid);
            }
            tokio::spawn(async move {
                if tokio::time::timeout(NOTIFY_TIMEOUT, child.wait())
                    .await
                    .is_err()
                {
                    tracing::warn!("the notify program ran over a minute: killed");
                    let _ = child.kill().await;
                }
                if let Some(pid) = pid {
                    troupe_sandbox::descendants::unspare(pid);
                }
            });
        }
        Err(err) => tracing::warn!(%err, program, "cannot run the notify program"),
    }
}

#[cfg(test)]
#[path = "notify_tests.rs"]
mod tests;
