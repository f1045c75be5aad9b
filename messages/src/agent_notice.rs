//! Reading back the item a parent's history gets when a child's turn ends (written by the
//! runtime's `agents::watcher::notification`). The model reads it as it is written (changing
//! it would change the prompt it caches); frontends show it as what it is, a sub-agent's
//! report, never as something the user typed. It lives here, beside the messages, so a
//! frontend reads it without the runtime.

use crate::agents::AgentStatus;

const OPEN: &str = "<subagent_notification>\n";
const CLOSE: &str = "\n</subagent_notification>";

/// What a sub-agent's report says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentReport {
    /// Its task path (`/root/explore`).
    pub path: String,
    pub nickname: String,
    pub thread_id: String,
    pub status: AgentStatus,
    pub answer: String,
}

impl AgentReport {
    /// One line for a transcript: `agent /root/a (Ada) finished: <first line of the answer>`.
    pub fn headline(&self) -> String {
        let verb = match self.status {
            AgentStatus::Completed => "finished",
            AgentStatus::Failed => "failed",
            AgentStatus::Interrupted => "was interrupted",
            AgentStatus::Running => "is running",
            AgentStatus::Closed => "was closed",
        };
        let first = self.answer.lines().find(|l| !l.trim().is_empty());
        match first {
            Some(line) => format!(
                "agent {} ({}) {verb}: {}",
                self.path,
                self.nickname,
                line.trim()
            ),
            None => format!("agent {} ({}) {verb}", self.path, self.nickname),
        }
    }
}

/// The report `text` is, when it is exactly one written by the runtime's format.
pub fn parse_report(text: &str) -> Option<AgentReport> {
    let body = text.strip_prefix(OPEN)?.strip_suffix(CLOSE)?;
    let (agent_line, rest) = body.split_once('\n')?;
    let (status_line, rest) = rest.split_once('\n')?;
    let answer = rest.strip_prefix("final answer:\n").or_else(|| {
        // An empty answer leaves no line of its own.
        (rest == "final answer:").then_some("")
    })?;
    let agent = agent_line.strip_prefix("agent: ")?;
    let (path, who) = agent.split_once(" (")?;
    let who = who.strip_suffix(')')?;
    let (nickname, thread_id) = who.rsplit_once(", thread ")?;
    let status = match status_line.strip_prefix("status: ")? {
        "completed" => AgentStatus::Completed,
        "failed" => AgentStatus::Failed,
        "interrupted" => AgentStatus::Interrupted,
        "running" => AgentStatus::Running,
        "closed" => AgentStatus::Closed,
        _ => return None,
    };
    Some(AgentReport {
        path: path.to_string(),
        nickname: nickname.to_string(),
        thread_id: thread_id.to_string(),
        status,
        answer: answer.to_string(),
    })
}

/// A sub-agent's first user message without the line that tells it its place in the tree:
/// its task, as the user would title it.
pub fn task_of_first_message(text: &str) -> &str {
    match text.strip_prefix("[You are agent `") {
        Some(rest) => match rest.split_once("delivered to it.]") {
            Some((_, task)) => task.trim_start(),
            None => text,
        },
        None => text,
    }
}

#[cfg(test)]
#[path = "agent_notice_tests.rs"]
mod tests;
