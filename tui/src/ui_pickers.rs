//! Drawing the pickers opened by slash commands: `/model` (models and effort), `/rewind`
//! (a turn, what to take back, the preview).

use crate::app::model::{effort_label, ModelPicker, EFFORTS};
use crate::app::rewind::{PreviewShown, RewindMode, RewindPicker, RewindStage};
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

/// The `/rewind` overlay at its stage.
pub fn render_rewind(picker: &RewindPicker, frame: &mut Frame, area: Rect) {
    let rows = usize::from(area.height.saturating_sub(2));
    let (title, lines) = match &picker.stage {
        RewindStage::Turns => (
            " rewind · ↑↓ turn · Enter choose · Esc close ",
            turn_lines(picker, rows),
        ),
        RewindStage::Mode { selected } => {
            let turn = picker.turn().map_or(0, |t| t.turn);
            let mut lines = vec![
                Line::raw(format!("rewind to before turn {turn}; take back:")),
                Line::raw(""),
            ];
            for (i, mode) in RewindMode::ALL.iter().enumerate() {
                let line = Line::raw(format!("  {}", mode.label()));
                lines.push(if i == *selected {
                    line.style(theme::selected())
                } else {
                    line
                });
            }
            (" rewind · ↑↓ choose · Enter preview · Esc back ", lines)
        }
        RewindStage::Loading { .. } => (
            " rewind · Esc back ",
            vec![Line::styled("working out what would change…", theme::dim())],
        ),
        RewindStage::Preview {
            preview, scroll, ..
        } => {
            let title = if preview.conflicts.is_empty() {
                " rewind · ↑↓ PgUp PgDn scroll · Enter rewind · Esc back "
            } else {
                " rewind · ↑↓ scroll · f rewind anyway · Esc back "
            };
            let lines = preview_lines(preview);
            let max = lines.len().saturating_sub(rows);
            let first = usize::from(*scroll).min(max);
            (title, lines.into_iter().skip(first).collect())
        }
    };
    let block = Block::default().borders(Borders::ALL).title(title);
    frame.render_widget(Clear, area);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// The turns, newest first: number, files changed, the prompt's first line.
fn turn_lines(picker: &RewindPicker, rows: usize) -> Vec<Line<'static>> {
    let first = picker.selected.saturating_sub(rows.saturating_sub(1));
    picker
        .turns
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, turn)| {
            let files = match turn.files_changed {
                Some(1) => "1 file".to_string(),
                Some(n) => format!("{n} files"),
                None => "no checkpoint".to_string(),
            };
            let line = Line::raw(format!(
                "turn {:>3}  {files:>13}  {}",
                turn.turn,
                sanitize_line(turn.first_line())
            ));
            if i == picker.selected {
                line.style(theme::selected())
            } else {
                line
            }
        })
        .collect()
}

fn preview_lines(preview: &PreviewShown) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = preview
        .summary
        .iter()
        .map(|line| Line::raw(sanitize_line(line)))
        .collect();
    if !preview.conflicts.is_empty() {
        lines.push(Line::styled(
            "changed outside the agent since the last turn (a rewind loses it):",
            theme::removed(),
        ));
        for path in &preview.conflicts {
            lines.push(Line::styled(
                format!("  {}", sanitize_line(path)),
                theme::removed(),
            ));
        }
    }
    for file in crate::diff::split_files(&preview.diff) {
        lines.extend(crate::diff::file_lines(&file));
    }
    lines
}
