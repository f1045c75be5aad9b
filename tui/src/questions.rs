//! The overlay of `request_user_input`: the model's questions one at a time, each with its
//! options (the first is the recommended one). Up/Down or a digit picks, Enter answers and
//! goes to the next question; Esc answers nothing (the model is told no option was chosen).
//! When the last question is answered the answers go back as `Op::UserInputAnswer`.

use crate::sanitize::sanitize_line;
use crate::theme;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;
use troupe_messages::questions::{QuestionAnswer, UserInputAnswers, UserQuestion};

/// One `request_user_input` call waiting for the person.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingQuestions {
    /// Index of the thread that asked.
    pub thread: usize,
    pub call_id: String,
    pub questions: Vec<UserQuestion>,
    /// The question shown, and the option under the cursor.
    current: usize,
    selected: usize,
    answers: UserInputAnswers,
}

impl PendingQuestions {
    pub fn new(thread: usize, call_id: String, questions: Vec<UserQuestion>) -> Self {
        Self {
            thread,
            call_id,
            questions,
            current: 0,
            selected: 0,
            answers: UserInputAnswers::new(),
        }
    }

    /// Handles a key; `Some` with every answer once the last question is answered (or all
    /// are declined with Esc).
    pub fn on_key(&mut self, key: KeyEvent) -> Option<UserInputAnswers> {
        let options = self
            .questions
            .get(self.current)
            .map_or(0, |q| q.options.len());
        match key.code {
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(options.saturating_sub(1)),
            KeyCode::Char(c) if c.is_ascii_digit() => {
                let n = c.to_digit(10).unwrap_or(0) as usize;
                if (1..=options).contains(&n) {
                    self.selected = n - 1;
                    return self.choose();
                }
            }
            KeyCode::Enter => return self.choose(),
            KeyCode::Esc => return Some(UserInputAnswers::new()),
            _ => {}
        }
        None
    }

    fn choose(&mut self) -> Option<UserInputAnswers> {
        let question = self.questions.get(self.current)?;
        let answers = question
            .options
            .get(self.selected)
            .map(|option| option.label.clone())
            .into_iter()
            .collect();
        self.answers
            .insert(question.id.clone(), QuestionAnswer { answers });
        self.current += 1;
        self.selected = 0;
        (self.current >= self.questions.len()).then(|| std::mem::take(&mut self.answers))
    }

    pub fn render(&self, thread_path: &str, frame: &mut Frame, area: Rect) {
        let Some(question) = self.questions.get(self.current) else {
            return;
        };
        let mut lines = vec![
            Line::styled(sanitize_line(&question.question), theme::bold()),
            Line::default(),
        ];
        for (i, option) in question.options.iter().enumerate() {
            let style = if i == self.selected {
                theme::selected()
            } else {
                theme::dim()
            };
            lines.push(Line::styled(
                format!(
                    " {}. {} — {}",
                    i + 1,
                    sanitize_line(&option.label),
                    sanitize_line(&option.description)
                ),
                style,
            ));
        }
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled("↑↓/1-9", theme::accent()),
            Span::raw(" pick  "),
            Span::styled("Enter", theme::accent()),
            Span::raw(" answer  "),
            Span::styled("Esc", theme::warning()),
            Span::raw(" answer nothing"),
        ]));
        let title = format!(
            " {} · question {}/{} · {} ",
            sanitize_line(&question.header),
            self.current + 1,
            self.questions.len(),
            sanitize_line(thread_path)
        );
        let block = Block::default()
            .borders(Borders::ALL)
            .title(Span::styled(title, theme::accent()));
        frame.render_widget(Clear, area);
        frame.render_widget(
            Paragraph::new(lines)
                .wrap(Wrap { trim: false })
                .block(block),
            area,
        );
    }
}

#[cfg(test)]
#[path = "questions_tests.rs"]
mod tests;
