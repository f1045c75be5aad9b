//! The model's streamed answer and reasoning.

use super::*;

impl ThreadView {
    /// The model's answer and reasoning, streamed and final.
    pub(super) fn on_stream(&mut self, msg: &EventMsg) {
        match msg {
            EventMsg::AgentMessageDelta { delta } => {
                self.reasoning.clear();
                match self.live.iter_mut().find_map(|c| match c {
                    Cell::Assistant {
                        markdown,
                        streaming: true,
                    } => Some(markdown),
                    _ => None,
                }) {
                    Some(markdown) => append_bounded(markdown, delta),
                    None => self.live.push(Cell::Assistant {
                        markdown: delta.clone(),
                        streaming: true,
                    }),
                }
            }
            EventMsg::AgentMessage { message } => {
                self.live.retain(|c| !matches!(c, Cell::Assistant { .. }));
                self.push(Cell::Assistant {
                    markdown: message.clone(),
                    streaming: false,
                });
            }
            EventMsg::AgentReasoningDelta { delta } => append_bounded(&mut self.reasoning, delta),
            EventMsg::AgentReasoning { text } => {
                self.reasoning.clear();
                self.push(Cell::Reasoning {
                    text: text.clone(),
                    expanded: false,
                });
            }
            _ => {}
        }
    }
}

/// Appends a streamed piece, keeping the last [`STREAM_KEEP_BYTES`] (a model that streams
/// forever costs a bounded buffer; the finished message replaces it anyway).
fn append_bounded(buffer: &mut String, delta: &str) {
    buffer.push_str(delta);
    if buffer.len() > STREAM_KEEP_BYTES {
        let cut = floor_char_boundary(buffer, buffer.len() - STREAM_KEEP_BYTES);
        let cut = (cut..=buffer.len())
            .find(|i| buffer.is_char_boundary(*i))
            .unwrap_or(buffer.len());
        buffer.drain(..cut);
    }
}
