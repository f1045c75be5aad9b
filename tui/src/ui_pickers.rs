//! Drawing the pickers opened by slash commands: `/model` (models and effort).

use crate::app::model::{effort_label, ModelPicker, EFFORTS};
use crate::sanitize::sanitize_line;
use crate::theme;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

/// The `/model` picker: the provider's models (↑↓), the effort row (←→), the current model
/// marked.
pub fn render_models(picker: &ModelPicker, current: &str, frame: &mut Frame, area: Rect) {
    let mut effort = vec![Span::styled("reasoning effort  ", theme::dim())];
    for (i, choice) in EFFORTS.iter().enumerate() {
        let label = format!(" {} ", effort_label(*choice));
        effort.push(if i == picker.effort {
            Span::styled(label, theme::selected())
        } else {
            Span::raw(label)
        });
    }
    let mut lines = vec![Line::from(effort), Line::raw("")];
    let rows = usize::from(area.height.saturating_sub(4));
    let first = picker.selected.saturating_sub(rows.saturating_sub(1));
    for (i, model) in picker.models.iter().enumerate().skip(first).take(rows) {
        let mark = if model == current { "  (current)" } else { "" };
        let line = Line::raw(format!("{}{mark}", sanitize_line(model)));
        lines.push(if i == picker.selected {
            line.style(theme::selected())
        } else {
            line
        });
    }
    let block = Block::default()
        .borders(Borders::ALL)
        .title(" model · ↑↓ model · ←→ effort · Enter switch · Esc close ");
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
