//! More of [`App`]: `/diff` and `/review`. `/diff` shows the turn's diff, or, when the turn
//! changed nothing, the work tree's (tracked changes and untracked files, as Codex's). `/review`
//! runs a code review as a turn of the current thread (as the app-server's `review/start`):
//! the review instructions and the request naming the target go in as the turn's input, and
//! the model's JSON answer is shown rendered (`troupe_actors::review::output`).

use super::{Action, App, Overlay};
use troupe_actors::review::{output, ReviewRequest, ReviewTarget};
use troupe_messages::events::EventMsg;
use troupe_messages::ops::{Op, UserInput};

impl App {
    pub(super) fn diff(&mut self) -> Vec<Action> {
        let turn_diff = &self.threads[self.current].view.turn_diff;
        if turn_diff.is_empty() {
            return vec![Action::WorkTreeDiff];
        }
        self.overlay = Overlay::Diff {
            scroll: 0,
            title: "turn diff".into(),
            text: turn_diff.clone(),
        };
        Vec::new()
    }

    /// The work tree's diff arrived (`Action::WorkTreeDiff`).
    pub fn show_work_tree_diff(&mut self, diff: Result<String, String>) {
        match diff {
            Ok(text) if text.trim().is_empty() => {
                self.info("no changes: this turn changed nothing and the work tree is clean")
            }
            Ok(text) => {
                self.overlay = Overlay::Diff {
                    scroll: 0,
                    title: "work tree diff (tracked and untracked)".into(),
                    text,
                }
            }
            Err(err) => self.info(format!("no diff to show: {err}")),
        }
    }

    /// `/review [base BRANCH | commit SHA [TITLE] | INSTRUCTIONS]`; no argument: the
    /// uncommitted changes.
    pub(super) fn review(&mut self, arg: &str) -> Vec<Action> {
        let index = self.current;
        if self.threads[index].is_agent {
            self.info("/review runs in a main thread: switch to it (Ctrl+T) first");
            return Vec::new();
        }
        if self.is_running(index) {
            self.info("a turn is running: /review once it has ended (Esc stops it)");
            return Vec::new();
        }
        let Some(target) = parse_target(arg) else {
            self.info("usage: /review [base BRANCH | commit SHA | INSTRUCTIONS]");
            return Vec::new();
        };
        vec![Action::Review {
            client: self.threads[index].client,
            target,
        }]
    }

    /// The review target was checked: start the review turn on root `client`.
    pub fn start_review(
        &mut self,
        client: usize,
        request: Result<ReviewRequest, String>,
    ) -> Vec<Action> {
        let request = match request {
            Ok(request) => request,
            Err(err) => {
                self.info(format!("cannot review: {err}"));
                return Vec::new();
            }
        };
        let Some(index) = self
            .threads
            .iter()
            .position(|t| t.client == client && !t.is_agent)
        else {
            return Vec::new();
        };
        self.reviewing.push(client);
        self.threads[index].view.notice(
            crate::cells::NoticeKind::Info,
            format!("reviewing {}", request.label),
        );
        let items = [
            troupe_actors::review::prompt::REVIEW_INSTRUCTIONS.to_string(),
            request.prompt,
        ]
        .into_iter()
        .map(|text| UserInput::Text { text })
        .collect();
        vec![Action::Submit {
            client,
            op: Op::UserInput { items },
        }]
    }

    /// A review turn's events: its answer (a JSON object) is not streamed but shown once,
    /// rendered. `None` drops the event.
    pub(super) fn review_event(&mut self, client: usize, msg: EventMsg) -> Option<EventMsg> {
        if !self.reviewing.contains(&client) {
            return Some(msg);
        }
        match msg {
            EventMsg::AgentMessageDelta { .. } => None,
            EventMsg::AgentMessage { message } => Some(EventMsg::AgentMessage {
                message: rendered(&message),
            }),
            EventMsg::TurnComplete { .. }
            | EventMsg::TurnAborted { .. }
            | EventMsg::ShutdownComplete => {
                self.reviewing.retain(|c| *c != client);
                Some(msg)
            }
            msg => Some(msg),
        }
    }
}

/// The review as people read it (markdown: the verdict, the explanation, one item per
/// finding with its place and body); an answer that is not a review is shown as it is.
fn rendered(message: &str) -> String {
    let Ok(review) = output::parse(message) else {
        return message.to_string();
    };
    let mut out = format!("**Review: {}**", review.overall_correctness.trim());
    if !review.overall_explanation.trim().is_empty() {
        out.push_str(&format!("\n\n{}", review.overall_explanation.trim()));
    }
    if review.findings.is_empty() {
        out.push_str("\n\nNo findings.");
    }
    for finding in &review.findings {
        let place = &finding.code_location;
        out.push_str(&format!(
            "\n\n- **{}** — `{}:{}-{}`",
            finding.title.trim(),
            place.absolute_file_path,
            place.line_range.start,
            place.line_range.end
        ));
        for line in finding.body.trim().lines() {
            out.push_str(&format!("  \n  {line}"));
        }
    }
    out
}

/// `/review`'s argument as a target.
pub fn parse_target(arg: &str) -> Option<ReviewTarget> {
    let arg = arg.trim();
    let (word, rest) = arg.split_once(char::is_whitespace).unwrap_or((arg, ""));
    let rest = rest.trim();
    Some(match word {
        "" | "uncommitted" => ReviewTarget::Uncommitted,
        "base" | "--base" if !rest.is_empty() && !rest.contains(char::is_whitespace) => {
            ReviewTarget::BaseBranch {
                branch: rest.to_string(),
            }
        }
        "commit" | "--commit" if !rest.is_empty() => {
            let (sha, title) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            ReviewTarget::Commit {
                sha: sha.to_string(),
                title: Some(title.trim().to_string()).filter(|t| !t.is_empty()),
            }
        }
        "base" | "--base" | "commit" | "--commit" => return None,
        _ => ReviewTarget::Custom {
            instructions: arg.to_string(),
        },
    })
}
