//! The terminal: raw mode, bracketed paste and an inline viewport, restored on every way
//! out (normal exit, error, panic, SIGTERM/SIGHUP handled by the runner).

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{disable_raw_mode, enable_raw_mode};
use ratatui::backend::CrosstermBackend;
use ratatui::{Terminal, TerminalOptions, Viewport};
use std::io::{stdout, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};

pub type Tui = Terminal<CrosstermBackend<Stdout>>;

/// Whether the terminal is in our modes (restore is idempotent and safe from a panic hook).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Rows of an inline viewport for a terminal of `rows`: half the screen, at least 12, so
/// the scrollback above keeps showing the last finished cells (the main screen's viewport
/// takes at most this, and only the rows its content needs).
pub fn viewport_height(rows: u16) -> u16 {
    rows.min((rows / 2).max(12))
}

/// Takes the terminal with an inline viewport of `height` rows (the trust screen and the
/// resume picker; the main screen is [`crate::screen::Screen`]).
pub fn init_with_height(height: u16) -> std::io::Result<Tui> {
    enter_modes()?;
    Terminal::with_options(
        CrosstermBackend::new(stdout()),
        TerminalOptions {
            viewport: Viewport::Inline(height),
        },
    )
}

/// Raw mode, bracketed paste and the keyboard protocol, undone by [`restore`] (also from
/// the panic hook).
pub fn enter_modes() -> std::io::Result<()> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    // Shift+Enter is only told apart from Enter by terminals that speak this protocol; the
    // others ignore the request.
    execute!(
        stdout(),
        EnableBracketedPaste,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    )
}

/// Puts the terminal back as it was: cooked mode, no bracketed paste, cursor shown.
pub fn restore() {
    leave_alternate_screen();
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = execute!(
            stdout(),
            PopKeyboardEnhancementFlags,
            DisableBracketedPaste,
            crossterm::cursor::Show
        );
        let _ = disable_raw_mode();
    }
}

/// Whether the transcript overlay holds the alternate screen.
static ALTERNATE: AtomicBool = AtomicBool::new(false);

/// A full-screen terminal on the alternate screen (the transcript overlay); the inline
/// viewport and the scrollback wait on the main screen, untouched.
pub fn enter_alternate_screen() -> std::io::Result<Tui> {
    execute!(stdout(), crossterm::terminal::EnterAlternateScreen)?;
    ALTERNATE.store(true, Ordering::SeqCst);
    let mut full = Terminal::new(CrosstermBackend::new(stdout()))?;
    full.clear()?;
    Ok(full)
}

/// Back to the main screen, if the alternate one was entered.
pub fn leave_alternate_screen() {
    if ALTERNATE.swap(false, Ordering::SeqCst) {
        let _ = execute!(stdout(), crossterm::terminal::LeaveAlternateScreen);
    }
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}
