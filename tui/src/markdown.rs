//! Assistant text as terminal lines: headings, emphasis, lists, block quotes, tables, links,
//! inline code and fenced code (highlighted). Every piece of text is sanitised first.

use crate::highlight::highlight_line;
use crate::sanitize::sanitize_line;
use crate::theme;
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// Renders `source` as markdown lines (not wrapped: the caller's paragraph wraps them).
pub fn render(source: &str) -> Vec<Line<'static>> {
    let mut writer = Writer::default();
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(source, options) {
        writer.event(event);
    }
    writer.finish()
}

#[derive(Default)]
struct Writer {
    lines: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    styles: Vec<Style>,
    /// One entry per open list: the next number of an ordered list.
    lists: Vec<Option<u64>>,
    quote_depth: usize,
    /// Inside a fenced or indented block: its language and text so far.
    code: Option<(String, String)>,
    link: Option<String>,
    table: Option<Table>,
    /// Whether the next block needs a blank line before it.
    needs_gap: bool,
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    cell: String,
    header_rows: usize,
}

impl Writer {
    fn style(&self) -> Style {
        self.styles
            .iter()
            .fold(Style::default(), |acc, s| acc.patch(*s))
    }

    fn prefix(&self) -> Vec<Span<'static>> {
        let mut spans = Vec::new();
        for _ in 0..self.quote_depth {
            spans.push(Span::styled("▌ ", theme::dim()));
        }
        spans
    }

    fn push_text(&mut self, text: &str) {
        if let Some(table) = &mut self.table {
            table.cell.push_str(&sanitize_line(text));
            return;
        }
        if self.current.is_empty() {
            self.current = self.prefix();
        }
        let style = self.style();
        self.current.push(Span::styled(sanitize_line(text), style));
    }

    fn end_line(&mut self) {
        let spans = std::mem::take(&mut self.current);
        self.lines.push(Line::from(spans));
    }

    fn gap(&mut self) {
        if self.needs_gap && !self.lines.is_empty() {
            self.lines.push(Line::from(self.prefix()));
        }
        self.needs_gap = false;
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some((lang, text)) = &mut self.code {
            match event {
                Event::Text(t) => text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    let (lang, text) = (lang.clone(), std::mem::take(text));
                    self.code = None;
                    for line in text.trim_end_matches('\n').split('\n') {
                        let mut spans = self.prefix();
                        spans.push(Span::styled("  ", theme::dim()));
                        spans.extend(highlight_line(&sanitize_line(line), &lang));
                        self.lines.push(Line::from(spans));
                    }
                    self.needs_gap = true;
                }
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.push_text(&text),
            Event::Code(code) => {
                if let Some(table) = &mut self.table {
                    table.cell.push_str(&sanitize_line(&code));
                } else {
                    if self.current.is_empty() {
                        self.current = self.prefix();
                    }
                    self.current
                        .push(Span::styled(sanitize_line(&code), theme::inline_code()));
                }
            }
            Event::SoftBreak => self.push_text(" "),
            Event::HardBreak => self.end_line(),
            Event::Rule => {
                self.gap();
                self.lines.push(Line::styled("────────", theme::dim()));
                self.needs_gap = true;
            }
            Event::TaskListMarker(done) => self.push_text(if done { "[x] " } else { "[ ] " }),
            // Raw HTML and math are shown as the text they are.
            Event::Html(text)
            | Event::InlineHtml(text)
            | Event::InlineMath(text)
            | Event::DisplayMath(text) => {
                for (i, line) in text.trim_end_matches('\n').split('\n').enumerate() {
                    if i > 0 {
                        self.end_line();
                    }
                    self.push_text(line);
                }
            }
            Event::FootnoteReference(name) => self.push_text(&format!("[{name}]")),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.gap(),
            Tag::Heading { level, .. } => {
                self.gap();
                let hashes = match level {
                    HeadingLevel::H1 => "# ",
                    HeadingLevel::H2 => "## ",
                    HeadingLevel::H3 => "### ",
                    _ => "#### ",
                };
                self.styles.push(theme::heading());
                self.push_text(hashes);
            }
            Tag::BlockQuote(_) => {
                self.gap();
                self.quote_depth += 1;
                self.styles
                    .push(theme::dim().add_modifier(Modifier::ITALIC));
            }
            Tag::CodeBlock(kind) => {
                self.gap();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_lowercase()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                if self.lists.is_empty() {
                    self.gap();
                } else if !self.current.is_empty() {
                    self.end_line();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                if !self.current.is_empty() {
                    self.end_line();
                }
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                self.current = self.prefix();
                self.current
                    .push(Span::raw(format!("{}{marker}", "  ".repeat(depth))));
            }
            Tag::Emphasis => self
                .styles
                .push(Style::default().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(theme::bold()),
            Tag::Strikethrough => self
                .styles
                .push(Style::default().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.styles.push(theme::link());
                self.link = Some(dest_url.to_string());
            }
            Tag::Image { dest_url, .. } => self.push_text(&format!("[image {dest_url}] ")),
            Tag::Table(_) => {
                self.gap();
                self.table = Some(Table::default());
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(table) = &mut self.table {
                    table.cell.clear();
                }
            }
            Tag::FootnoteDefinition(_)
            | Tag::HtmlBlock
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.end_line();
                self.needs_gap = self.lists.is_empty();
            }
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.end_line();
                self.needs_gap = true;
            }
            TagEnd::BlockQuote(_) => {
                self.styles.pop();
                if !self.current.is_empty() {
                    self.end_line();
                }
                self.quote_depth = self.quote_depth.saturating_sub(1);
                self.needs_gap = true;
            }
            TagEnd::List(_) => {
                if !self.current.is_empty() {
                    self.end_line();
                }
                self.lists.pop();
                self.needs_gap = self.lists.is_empty();
            }
            TagEnd::Item => {
                if !self.current.is_empty() {
                    self.end_line();
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    let shown = self.current.last().map(|s| s.content.to_string());
                    if shown.as_deref() != Some(url.as_str()) && !url.starts_with('#') {
                        let url = sanitize_line(&url);
                        self.current
                            .push(Span::styled(format!(" ({url})"), theme::dim()));
                    }
                }
            }
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    let cell = std::mem::take(&mut table.cell);
                    if let Some(row) = table.rows.last_mut() {
                        row.push(cell.trim().to_string());
                    }
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    table.header_rows = table.rows.len();
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_lines(&table);
                }
                self.needs_gap = true;
            }
            TagEnd::CodeBlock
            | TagEnd::TableRow
            | TagEnd::Image
            | TagEnd::FootnoteDefinition
            | TagEnd::HtmlBlock
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {}
        }
    }

    fn table_lines(&mut self, table: &Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; columns];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell.width());
            }
        }
        for (r, row) in table.rows.iter().enumerate() {
            let mut spans = self.prefix();
            for (i, width) in widths.iter().enumerate() {
                let cell = row.get(i).map(String::as_str).unwrap_or("");
                let pad = width.saturating_sub(cell.width());
                let style = if r < table.header_rows {
                    theme::bold()
                } else {
                    Style::default()
                };
                if i > 0 {
                    spans.push(Span::styled(" │ ", theme::dim()));
                }
                spans.push(Span::styled(format!("{cell}{}", " ".repeat(pad)), style));
            }
            self.lines.push(Line::from(spans));
            if r + 1 == table.header_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.lines
                    .push(Line::styled(rule.join("─┼─"), theme::dim()));
            }
        }
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        if !self.current.is_empty() {
            self.end_line();
        }
        // A stream cut inside a fence still shows the code received so far.
        if let Some((lang, text)) = self.code.take() {
            for line in text.split('\n') {
                let mut spans = vec![Span::styled("  ", theme::dim())];
                spans.extend(highlight_line(&sanitize_line(line), &lang));
                self.lines.push(Line::from(spans));
            }
        }
        self.lines
    }
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
