//! The main screen: a viewport sized to what it shows (live cells, composer, status line,
//! overlays) and, above it, the transcript written into the terminal's own scrollback.
//!
//! The UI writes that scrollback itself and keeps what it wrote, so a resize clears the
//! screen and the scrollback and writes the session's output again, laid out for the new
//! width: nothing is lost, nothing is doubled, and no copy of an old viewport is left
//! behind (a terminal reflowing an inline viewport on resize pushes copies of it into the
//! scrollback).
//!
//! No erase-below is ever sent from the top-left corner: tmux (`scroll-on-clear`) copies a
//! screen erased that way into its history. Rows are erased one by one instead.

use crate::app::App;
use crate::terminal;
use crossterm::cursor::MoveTo;
use crossterm::queue;
use crossterm::terminal::{Clear, ClearType};
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Buffer;
use ratatui::layout::{Rect, Size};
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget, Wrap};
use ratatui::{Terminal, TerminalOptions, Viewport};
use std::collections::VecDeque;
use std::io::{self, stdout, Stdout, Write};
use std::time::Instant;
use unicode_width::UnicodeWidthStr;

/// Rows of one cell written into the scrollback at most (a hostile 100,000-line answer is
/// cut rather than laid out whole).
const MAX_INSERT_ROWS: u16 = 2000;
/// Lines of output kept to write again after a resize (terminals keep 2,000–10,000 rows of
/// scrollback; older entries are dropped first).
const KEPT_LINES: usize = 20_000;

type Inner = Terminal<CrosstermBackend<Stdout>>;

pub struct Screen {
    tui: Inner,
    /// The terminal's size the screen is laid out for.
    size: Size,
    /// Where the viewport is.
    area: Rect,
    /// What was written above the viewport, oldest first.
    written: VecDeque<Vec<Line<'static>>>,
    written_lines: usize,
}

impl Screen {
    /// Takes the terminal (raw mode, bracketed paste, …) and starts the viewport where the
    /// cursor is.
    pub fn open() -> io::Result<Self> {
        terminal::enter_modes()?;
        let (width, rows) = crossterm::terminal::size()?;
        let (_, row) = crossterm::cursor::position()?;
        let area = Rect::new(0, row.min(rows.saturating_sub(1)), width, 1);
        Ok(Self {
            tui: fixed(area)?,
            size: Size::new(width, rows),
            area,
            written: VecDeque::new(),
            written_lines: 0,
        })
    }

    /// Writes the newly finished cells above the viewport, fits the viewport to what the
    /// app shows, and draws it. A changed terminal size first writes everything again.
    pub fn draw(&mut self, app: &mut App) -> io::Result<()> {
        let size = self.tui.size()?;
        if size != self.size {
            self.rewrite(size)?;
        }
        let cells = app.take_scrollback();
        let wrote = !cells.is_empty();
        for cell in cells {
            let lines = cell.lines();
            self.emit(&lines)?;
            self.keep(lines);
        }
        let max = terminal::viewport_height(self.size.height);
        let wanted = crate::ui::wanted_height(app, self.size.width, max).max(1);
        if wrote || wanted != self.area.height {
            self.place(wanted)?;
        }
        self.tui
            .draw(|frame| crate::ui::render(app, frame, Instant::now()))?;
        Ok(())
    }

    /// Draws the viewport whole on the next [`Screen::draw`] (the transcript overlay left the
    /// alternate screen; the terminal may have been resized meanwhile).
    pub fn repaint(&mut self) -> io::Result<()> {
        let size = self.tui.size()?;
        if size != self.size {
            return self.rewrite(size);
        }
        self.place(self.area.height)
    }

    /// Erases the viewport and leaves the cursor where it started, for the shell.
    pub fn leave(&mut self) -> io::Result<()> {
        let out = self.tui.backend_mut();
        for y in self.area.top()..self.area.bottom() {
            queue!(out, MoveTo(0, y), Clear(ClearType::CurrentLine))?;
        }
        queue!(out, MoveTo(0, self.area.y))?;
        Write::flush(out)
    }

    fn keep(&mut self, lines: Vec<Line<'static>>) {
        self.written_lines += lines.len();
        self.written.push_back(lines);
        while self.written_lines > KEPT_LINES && self.written.len() > 1 {
            if let Some(old) = self.written.pop_front() {
                self.written_lines -= old.len();
            }
        }
    }

    /// Clears the screen and the scrollback and writes what was written again, at `size`.
    fn rewrite(&mut self, size: Size) -> io::Result<()> {
        self.size = size;
        let out = self.tui.backend_mut();
        // Erase the screen before the scrollback: tmux copies an erased screen into its
        // history, which the second erase then empties.
        queue!(
            out,
            MoveTo(0, 0),
            Clear(ClearType::All),
            Clear(ClearType::Purge)
        )?;
        self.area = Rect::new(0, 0, size.width, self.area.height);
        let written = std::mem::take(&mut self.written);
        for lines in &written {
            self.emit(lines)?;
        }
        self.written = written;
        self.place(self.area.height)
    }

    /// Writes `lines` where the viewport starts; the viewport moves down (or the screen
    /// scrolls up, its top rows going into the scrollback) and is placed again by `place`.
    fn emit(&mut self, lines: &[Line<'static>]) -> io::Result<()> {
        let width = self.size.width.max(1);
        let rows = self.size.height.max(1);
        let paragraph = Paragraph::new(lines.to_vec()).wrap(Wrap { trim: false });
        let height = u16::try_from(paragraph.line_count(width))
            .unwrap_or(u16::MAX)
            .min(MAX_INSERT_ROWS);
        if height == 0 {
            return Ok(());
        }
        let mut buffer = Buffer::empty(Rect::new(0, 0, width, height));
        paragraph.render(buffer.area, &mut buffer);
        let out = self.tui.backend_mut();
        let mut row = self.area.y;
        for y in 0..height {
            if row >= rows {
                // A line feed on the last row scrolls the screen: its top row goes into the
                // scrollback.
                queue!(out, MoveTo(0, rows - 1))?;
                out.write_all(b"\n")?;
                row = rows - 1;
            }
            queue!(out, MoveTo(0, row), Clear(ClearType::CurrentLine))?;
            out.draw(row_cells(&buffer, y, row))?;
            row += 1;
        }
        Write::flush(out)?;
        self.area.y = row;
        Ok(())
    }

    /// Puts a viewport of `height` rows where the current one starts, scrolling the screen
    /// up when it would pass the bottom, and erases the rows it leaves or takes; the next
    /// draw paints it whole.
    fn place(&mut self, height: u16) -> io::Result<()> {
        let rows = self.size.height.max(1);
        let height = height.clamp(1, rows);
        let old = self.area;
        let out = self.tui.backend_mut();
        let bottom = self.area.y + height;
        let mut scrolled = 0;
        if bottom > rows {
            // Only rows above the viewport go up into the scrollback: height <= rows.
            scrolled = bottom - rows;
            queue!(out, MoveTo(0, rows - 1))?;
            for _ in 0..scrolled {
                out.write_all(b"\n")?;
            }
        }
        let area = Rect::new(0, self.area.y - scrolled, self.size.width, height);
        let erase_from = area.y.min(old.y.saturating_sub(scrolled));
        let erase_to = area
            .bottom()
            .max(old.bottom().saturating_sub(scrolled))
            .min(rows);
        for y in erase_from..erase_to {
            queue!(out, MoveTo(0, y), Clear(ClearType::CurrentLine))?;
        }
        Write::flush(out)?;
        self.area = area;
        // A fresh terminal: both buffers blank, so the next draw writes every cell.
        self.tui = fixed(area)?;
        Ok(())
    }
}

/// A terminal whose viewport is `area`, with nothing drawn yet.
fn fixed(area: Rect) -> io::Result<Inner> {
    Terminal::with_options(
        CrosstermBackend::new(stdout()),
        TerminalOptions {
            viewport: Viewport::Fixed(area),
        },
    )
}

/// Row `y` of `buffer` as cells to draw on screen row `row`: up to its last non-blank cell,
/// without the cells a wide character covers.
fn row_cells(
    buffer: &Buffer,
    y: u16,
    row: u16,
) -> impl Iterator<Item = (u16, u16, &ratatui::buffer::Cell)> {
    let width = buffer.area.width;
    let start = usize::from(y) * usize::from(width);
    let cells = &buffer.content[start..start + usize::from(width)];
    let blank = ratatui::buffer::Cell::default();
    let end = cells.iter().rposition(|c| *c != blank).map_or(0, |i| i + 1);
    let mut covered = 0;
    cells[..end]
        .iter()
        .enumerate()
        .filter_map(move |(x, cell)| {
            if covered > 0 {
                covered -= 1;
                return None;
            }
            covered = cell.symbol().width().saturating_sub(1);
            Some((x as u16, row, cell))
        })
}
