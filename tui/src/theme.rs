//! Styles, in one place so `NO_COLOR` (and 16-colour terminals) are handled once: only the
//! 16 ANSI colours are used, and with `NO_COLOR` set every style keeps its modifiers (bold,
//! dim, underline) but no colour.

use ratatui::style::{Color, Modifier, Style};
use std::sync::atomic::{AtomicBool, Ordering};

static NO_COLOR: AtomicBool = AtomicBool::new(false);

/// Reads `NO_COLOR` once at start-up.
pub fn init_from_env() {
    let set = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    NO_COLOR.store(set, Ordering::Relaxed);
}

fn fg(color: Color) -> Style {
    if NO_COLOR.load(Ordering::Relaxed) {
        Style::default()
    } else {
        Style::default().fg(color)
    }
}

pub fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}
pub fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}
pub fn user() -> Style {
    fg(Color::Cyan).add_modifier(Modifier::BOLD)
}
pub fn heading() -> Style {
    fg(Color::Magenta).add_modifier(Modifier::BOLD)
}
pub fn link() -> Style {
    fg(Color::Blue).add_modifier(Modifier::UNDERLINED)
}
pub fn inline_code() -> Style {
    fg(Color::Cyan)
}
pub fn code() -> Style {
    Style::default()
}
pub fn keyword() -> Style {
    fg(Color::Magenta)
}
pub fn string() -> Style {
    fg(Color::Green)
}
pub fn comment() -> Style {
    fg(Color::DarkGray).add_modifier(Modifier::ITALIC)
}
pub fn number() -> Style {
    fg(Color::Yellow)
}
pub fn added() -> Style {
    fg(Color::Green)
}
pub fn removed() -> Style {
    fg(Color::Red)
}
pub fn hunk() -> Style {
    fg(Color::Cyan)
}
pub fn success() -> Style {
    fg(Color::Green).add_modifier(Modifier::BOLD)
}
pub fn failure() -> Style {
    fg(Color::Red).add_modifier(Modifier::BOLD)
}
pub fn warning() -> Style {
    fg(Color::Yellow)
}
pub fn accent() -> Style {
    fg(Color::Cyan)
}
pub fn selected() -> Style {
    if NO_COLOR.load(Ordering::Relaxed) {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default().fg(Color::Black).bg(Color::Cyan)
    }
}
