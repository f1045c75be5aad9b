//! A rollout's turns, as `thread/read` and `thread/resume` return them: the recorded events
//! replayed through the same `Translator` a live client's notifications come from.

use crate::protocol::{Turn, UserInput};
use crate::translate::{Out, Translator};
use troupe_messages::agent_notice::{parse_report, task_of_first_message};
use troupe_messages::items::{ContentItem, ResponseItem, Role};
use troupe_messages::rollout::{RolloutLine, RolloutRecord};

/// How the history records the user's own shell command (`user_shell::record_text`).
const USER_SHELL_RECORD: &str = "<user_shell_command>";

/// The turns a rollout records, with their items, as `thread/read` returns them. A turn the
/// rollout leaves open (running now, or cut by a crash) is returned in progress.
pub fn turns_from_rollout(thread_id: &str, lines: &[RolloutLine]) -> Vec<Turn> {
    let mut translator = Translator::new(thread_id.to_string());
    translator.finished = Some(Vec::new());
    replay_into(&mut translator, lines);
    let open = translator.open_turn();
    let mut turns = translator.finished.take().unwrap_or_default();
    turns.extend(open);
    turns
}

/// Feeds a rollout's recorded events to `translator` (what it would have said is dropped):
/// afterwards it knows the turn the rollout leaves open, if any.
pub fn replay_into(translator: &mut Translator, lines: &[RolloutLine]) {
    for line in lines {
        let now_ms = crate::jsonrpc::parse_time_ms(&line.timestamp);
        replay_line(translator, line, now_ms);
    }
}

/// Feeds one recorded line to `translator`, at `now_ms`; returns what it says of it.
pub fn replay_line(translator: &mut Translator, line: &RolloutLine, now_ms: i64) -> Vec<Out> {
    match &line.record {
        RolloutRecord::ResponseItem(ResponseItem::Message {
            role: Role::User,
            content,
            ..
        }) if translator.turn.is_none() => {
            // The input of the next turn (inside a turn, `InputInjected` shows it).
            let text = content
                .iter()
                .filter_map(ContentItem::text)
                .collect::<String>();
            // A sub-agent's report waiting for the next turn is not what the user typed, and
            // the record of the user's own command is shown as its command item.
            if parse_report(&text).is_some() || text.starts_with(USER_SHELL_RECORD) {
                return Vec::new();
            }
            // A sub-agent's first message shows its task, without its place in the tree.
            let text = task_of_first_message(&text).to_string();
            translator.pending_inputs.clear();
            translator.expect_input(vec![UserInput::Text {
                text,
                text_elements: Vec::new(),
            }]);
            Vec::new()
        }
        RolloutRecord::Event(msg) => translator.on_event(msg, now_ms),
        // A tool's output ends its call (a denied command asked and never began).
        RolloutRecord::ResponseItem(item) => translator.tool_output(item, now_ms),
        RolloutRecord::SessionMeta(_)
        | RolloutRecord::TurnContext(_)
        | RolloutRecord::Compacted(_) => Vec::new(),
    }
}
