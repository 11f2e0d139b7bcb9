//! Answers rendered from Markdown for a terminal, as they stream: headings, emphasis,
//! lists (nested, numbered, tasks), block quotes, tables with aligned columns, links
//! with their address, inline code, and fenced code highlighted by its language.
//!
//! How a stream becomes lines, so that nothing printed is ever taken back:
//! 1. Text is cut into lines; only complete lines are looked at (the rest waits for its
//!    line end, or for [`MarkdownStream::finish`]). Every decision is made on complete
//!    lines, so however the text was split into deltas, the output is the same.
//! 2. A fenced code block is printed line by line as its lines arrive, highlighted.
//! 3. Other lines gather in a *unit* (the blocks since the last blank line that a new,
//!    unindented block follows); the unit is parsed again at each line end and the
//!    rendered lines not printed yet are printed, except those that may still change:
//!    a table until a line that is not of it, and a paragraph's last line holding a `|`
//!    (the next line may make it a table's header).
//! 4. A unit that grows past [`UNIT_LINES`] lines is closed at the next unindented line
//!    that is not a table's, so a long answer costs time in proportion to its length.
//!
//! Everything the agent wrote is escaped ([`escape_controls`]) before it is parsed: the
//! only escape sequences printed are the styles added here.

use std::ops::Range;

use hearth_core::escape_controls;
use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::highlight::{CodeHighlighter, Depth};
use crate::style::visible_width;

#[path = "markdown_table.rs"]
mod table;

use table::Table;

/// Lines after which a unit is closed at the next unindented line (see the module's
/// notes).
const UNIT_LINES: usize = 48;

/// The widest a rule is drawn.
const RULE_WIDTH: usize = 60;

/// Renders an answer's Markdown as its text streams in.
pub(crate) struct MarkdownStream {
    width: usize,
    depth: Depth,
    /// The line begun and not ended yet.
    partial: String,
    /// The current unit's complete lines, each with its `\n`.
    unit: String,
    unit_lines: usize,
    /// Rendered lines of the unit printed so far.
    emitted: usize,
    /// The unit's last line is blank.
    last_blank: bool,
    /// The fenced code block being printed.
    fence: Option<Fence>,
    /// Something was printed.
    started: bool,
    /// A blank line is due before the next printed line.
    separate: bool,
}

/// An open fenced code block.
struct Fence {
    marker: char,
    length: usize,
    indent: usize,
    highlighter: Option<CodeHighlighter>,
}

impl MarkdownStream {
    /// A renderer for a terminal `width` columns wide, colours written in `depth`.
    pub(crate) fn new(width: usize, depth: Depth) -> Self {
        Self {
            width: width.max(20),
            depth,
            partial: String::new(),
            unit: String::new(),
            unit_lines: 0,
            emitted: 0,
            last_blank: false,
            fence: None,
            started: false,
            separate: false,
        }
    }

    /// A renderer for this process's terminal.
    pub(crate) fn for_terminal() -> Self {
        let width = console::Term::stdout()
            .size_checked()
            .map_or(80, |(_, columns)| usize::from(columns));
        Self::new(width, Depth::of_terminal())
    }

    /// Takes more of the answer; appends to `out` what can be printed now.
    pub(crate) fn push(&mut self, delta: &str, out: &mut String) {
        if !delta.contains('\n') {
            self.partial.push_str(delta);
            return;
        }
        let mut rest = delta;
        while let Some(end) = rest.find('\n') {
            self.partial.push_str(&rest[..end]);
            let line = std::mem::take(&mut self.partial);
            self.line(&line, out);
            rest = &rest[end + 1..];
        }
        self.partial.push_str(rest);
    }

    /// The answer ended (or stops for something printed beside it): appends the rest,
    /// its last line included. What comes after starts afresh.
    pub(crate) fn finish(&mut self, out: &mut String) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, out);
        }
        self.close_unit(out);
        self.fence = None;
        self.separate = false;
        self.last_blank = false;
    }

    /// Whether nothing waits to be printed.
    pub(crate) fn is_idle(&self) -> bool {
        self.partial.is_empty() && self.unit.is_empty() && self.fence.is_none()
    }

    fn line(&mut self, line: &str, out: &mut String) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let line = escape_controls(line);
        if let Some(fence) = &mut self.fence {
            if closes(fence, &line) {
                let shown = crate::style::Paint::DIM.paint(&line);
                self.fence = None;
                self.print(&shown, out);
            } else {
                let indent = fence.indent.min(leading_spaces(&line));
                let (margin, code) = line.split_at(indent);
                let mut shown = margin.to_owned();
                match &mut fence.highlighter {
                    Some(highlighter) => highlighter.line(code, &mut shown),
                    None => shown.push_str(code),
                }
                self.print(&shown, out);
            }
            return;
        }
        if let Some(fence) = opens(&line) {
            let blank_before = self.last_blank;
            self.close_unit(out);
            self.separate |= blank_before;
            let language = line[fence.indent + fence.length..].trim();
            let language = language.split_whitespace().next().unwrap_or_default();
            let shown = crate::style::Paint::DIM.paint(&line);
            self.print(&shown, out);
            self.fence = Some(Fence {
                highlighter: CodeHighlighter::new(language, self.depth),
                ..fence
            });
            return;
        }
        let blank = line.trim().is_empty();
        if blank {
            if self.unit.is_empty() {
                self.separate |= self.started;
                return;
            }
            self.unit.push('\n');
            self.unit_lines += 1;
            self.last_blank = true;
            // A blank line ends a table: what was held may go now.
            self.render(out, Close::No);
            return;
        }
        let unindented = !line.starts_with([' ', '\t']);
        if !self.unit.is_empty() && unindented {
            if self.last_blank {
                self.close_unit(out);
                self.separate = true;
            } else if self.unit_lines >= UNIT_LINES
                && !line.contains('|')
                && !self
                    .unit
                    .lines()
                    .next_back()
                    .is_some_and(|last| last.contains('|'))
            {
                self.close_unit(out);
            }
        }
        self.unit.push_str(&line);
        self.unit.push('\n');
        self.unit_lines += 1;
        self.last_blank = false;
        self.render(out, Close::No);
    }

    /// Prints the unit's rendered lines not printed yet and starts a new unit.
    fn close_unit(&mut self, out: &mut String) {
        if !self.unit.is_empty() {
            self.render(out, Close::Yes);
        }
        self.unit.clear();
        self.unit_lines = 0;
        self.emitted = 0;
        self.last_blank = false;
    }

    fn render(&mut self, out: &mut String, close: Close) {
        let rendered = render(&self.unit, self.width);
        let ready = match close {
            Close::Yes => rendered.lines.len(),
            Close::No => rendered.stable,
        };
        for index in self.emitted..ready {
            self.print(&rendered.lines[index], out);
        }
        self.emitted = self.emitted.max(ready);
    }

    fn print(&mut self, line: &str, out: &mut String) {
        if self.separate && self.started {
            out.push('\n');
        }
        self.separate = false;
        self.started = true;
        out.push_str(line);
        out.push('\n');
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Close {
    Yes,
    No,
}

fn leading_spaces(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// The fence a line opens (```` ``` ```` or `~~~`, three or more, indented or not).
fn opens(line: &str) -> Option<Fence> {
    let indent = leading_spaces(line);
    let rest = &line[indent..];
    let marker = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let length = rest.len() - rest.trim_start_matches(marker).len();
    if length < 3 {
        return None;
    }
    // ```` ```x``` ```` is inline code, not a fence.
    if marker == '`' && rest[length..].contains('`') {
        return None;
    }
    Some(Fence {
        marker,
        length,
        indent,
        highlighter: None,
    })
}

/// Whether a line closes `fence`: its marker, at least as many, nothing after.
fn closes(fence: &Fence, line: &str) -> bool {
    let rest = line.trim_start_matches(' ');
    let length = rest.len() - rest.trim_start_matches(fence.marker).len();
    length >= fence.length && rest[length..].trim().is_empty()
}

/// A unit rendered: its lines, and how many of them may be printed now.
struct Rendered {
    lines: Vec<String>,
    stable: usize,
}

/// Renders Markdown source to terminal lines (see the module's notes for `stable`).
fn render(source: &str, width: usize) -> Rendered {
    let mut options = Options::empty();
    options.insert(Options::ENABLE_TABLES);
    options.insert(Options::ENABLE_STRIKETHROUGH);
    options.insert(Options::ENABLE_TASKLISTS);
    let mut renderer = Renderer::new(source, width);
    for (event, range) in Parser::new_ext(source, options).into_offset_iter() {
        renderer.event(event, range);
    }
    renderer.end_line();
    let stable = renderer.hold_from.unwrap_or(renderer.lines.len());
    Rendered {
        lines: renderer.lines,
        stable,
    }
}

/// What prefixes the lines of a block inside a list item or a quote.
struct Container {
    /// The first line's prefix (a list marker).
    first: String,
    /// Later lines' prefix.
    rest: String,
    used: bool,
}

struct List {
    next: Option<u64>,
    loose: bool,
    items: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CodeKind {
    Fenced,
    Indented,
}

struct Link {
    url: String,
    text: String,
}

struct Renderer<'a> {
    source: &'a str,
    width: usize,
    lines: Vec<String>,
    current: String,
    line_open: bool,
    containers: Vec<Container>,
    styles: Vec<&'static str>,
    need_blank: bool,
    lists: Vec<List>,
    table: Option<Table>,
    links: Vec<Link>,
    code_block: Option<CodeKind>,
    hold_from: Option<usize>,
}

impl<'a> Renderer<'a> {
    fn new(source: &'a str, width: usize) -> Self {
        Self {
            source,
            width,
            lines: Vec::new(),
            current: String::new(),
            line_open: false,
            containers: Vec::new(),
            styles: Vec::new(),
            need_blank: false,
            lists: Vec::new(),
            table: None,
            links: Vec::new(),
            code_block: None,
            hold_from: None,
        }
    }

    /// Whether a block ending at `end` of the source may still grow: no blank line
    /// and nothing else follows it.
    fn open_at_end(&self, end: usize) -> bool {
        let rest = &self.source[end.min(self.source.len())..];
        let ended_with_line = self.source[..end.min(self.source.len())].ends_with('\n');
        let newlines = rest.matches('\n').count();
        rest.trim().is_empty() && newlines <= usize::from(!ended_with_line)
    }

    fn prefix_width(&self) -> usize {
        self.containers
            .iter()
            .map(|container| visible_width(&container.rest))
            .sum()
    }

    fn begin_line(&mut self) {
        if self.line_open {
            return;
        }
        self.current.clear();
        for container in &mut self.containers {
            if container.used {
                self.current.push_str(&container.rest);
            } else {
                container.used = true;
                self.current.push_str(&container.first);
            }
        }
        self.line_open = true;
    }

    fn end_line(&mut self) {
        if self.line_open {
            self.lines.push(std::mem::take(&mut self.current));
            self.line_open = false;
        }
    }

    fn blank(&mut self) {
        self.end_line();
        let mut line = String::new();
        for container in &self.containers {
            if container.used {
                line.push_str(&container.rest);
            }
        }
        self.lines.push(line.trim_end().to_owned());
        self.need_blank = false;
    }

    fn start_block(&mut self) {
        self.end_line();
        if self.need_blank && !self.lines.is_empty() {
            self.blank();
        }
        self.need_blank = false;
    }

    fn styled(&self, text: &str) -> String {
        if self.styles.is_empty() || text.is_empty() {
            text.to_owned()
        } else {
            format!("\x1b[{}m{text}\x1b[0m", self.styles.join(";"))
        }
    }

    fn text(&mut self, text: &str) {
        let styled = self.styled(text);
        if let Some(link) = self.links.last_mut() {
            link.text.push_str(text);
        }
        if let Some(table) = &mut self.table {
            table.cell.push_str(&styled);
            return;
        }
        self.begin_line();
        self.current.push_str(&styled);
    }

    fn with_style(&mut self, style: &'static str, text: &str) {
        self.styles.push(style);
        self.text(text);
        self.styles.pop();
    }

    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(tag) => self.end(tag, range),
            Event::Text(text) if self.code_block.is_some() => {
                for line in text.lines() {
                    self.begin_line();
                    self.current.push_str(line);
                    self.end_line();
                }
            }
            Event::Text(text) => self.text(&text),
            Event::Code(code) => self.with_style("36", &code),
            Event::InlineMath(math) | Event::DisplayMath(math) => self.text(&math),
            Event::Html(html) | Event::InlineHtml(html) => {
                for (index, line) in html.split('\n').enumerate() {
                    if index > 0 {
                        self.end_line();
                    }
                    if !line.is_empty() {
                        self.with_style("2", line);
                    }
                }
            }
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
            Event::SoftBreak | Event::HardBreak => {
                if let Some(table) = &mut self.table {
                    table.cell.push(' ');
                } else {
                    self.end_line();
                }
            }
            Event::Rule => {
                self.start_block();
                let width = self
                    .width
                    .saturating_sub(self.prefix_width())
                    .clamp(3, RULE_WIDTH);
                self.with_style("2", &"─".repeat(width));
                self.end_line();
                self.need_blank = true;
            }
            Event::TaskListMarker(checked) => {
                if checked {
                    self.with_style("32", "[x]");
                } else {
                    self.text("[ ]");
                }
                self.text(" ");
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>, range: Range<usize>) {
        match tag {
            Tag::Paragraph => self.start_paragraph(),
            Tag::Heading { level, .. } => {
                self.start_block();
                self.styles.push(match level {
                    HeadingLevel::H1 => "1;4",
                    HeadingLevel::H2 => "1",
                    _ => "1;3",
                });
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                let bar = "\x1b[2m│\x1b[0m ".to_owned();
                self.containers.push(Container {
                    first: bar.clone(),
                    rest: bar,
                    used: false,
                });
            }
            Tag::CodeBlock(kind) => self.start_code_block(kind),
            Tag::HtmlBlock => self.start_block(),
            Tag::List(start) => {
                self.start_block();
                self.lists.push(List {
                    next: start,
                    loose: false,
                    items: 0,
                });
            }
            Tag::Item => self.start_item(),
            Tag::Table(alignments) => self.start_table(alignments, range),
            Tag::TableHead => self.styles.push("1"),
            Tag::TableRow => {}
            Tag::TableCell => {
                if let Some(table) = &mut self.table {
                    table.cell.clear();
                }
            }
            Tag::Emphasis => self.styles.push("3"),
            Tag::Strong => self.styles.push("1"),
            Tag::Strikethrough => self.styles.push("9"),
            Tag::Link { dest_url, .. } => {
                self.styles.push("4;34");
                self.links.push(Link {
                    url: dest_url.into_string(),
                    text: String::new(),
                });
            }
            Tag::Image { dest_url, .. } => {
                self.text("[image: ");
                self.links.push(Link {
                    url: dest_url.into_string(),
                    text: String::new(),
                });
            }
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_)
            | Tag::Superscript
            | Tag::Subscript => {}
        }
    }

    /// A paragraph directly in a list item (the parser gives tight items none) marks
    /// the list loose: its items are set apart by blank lines.
    fn start_paragraph(&mut self) {
        if self.containers.last().is_some_and(|c| c.first != c.rest)
            && let Some(list) = self.lists.last_mut()
        {
            list.loose = true;
        }
        self.start_block();
    }

    fn start_code_block(&mut self, kind: CodeBlockKind<'_>) {
        self.start_block();
        self.code_block = Some(match kind {
            CodeBlockKind::Fenced(info) => {
                self.with_style("2", &format!("```{info}"));
                self.end_line();
                CodeKind::Fenced
            }
            CodeBlockKind::Indented => CodeKind::Indented,
        });
    }

    /// A list item: its marker (a number, or a bullet by nesting depth) prefixes its
    /// first line, spaces as wide prefix the rest.
    fn start_item(&mut self) {
        self.end_line();
        let depth = self.lists.len();
        let Some(list) = self.lists.last_mut() else {
            return;
        };
        if list.loose && list.items > 0 {
            self.need_blank = true;
        }
        list.items += 1;
        let marker = match &mut list.next {
            Some(number) => {
                let marker = format!("{number}. ");
                *number += 1;
                marker
            }
            None => match depth {
                0 | 1 => "• ".to_owned(),
                2 => "◦ ".to_owned(),
                _ => "▪ ".to_owned(),
            },
        };
        if self.need_blank {
            self.blank();
        }
        let rest = " ".repeat(visible_width(&marker));
        self.containers.push(Container {
            first: marker,
            rest,
            used: false,
        });
    }

    /// A table that may still grow holds its lines back until it is done.
    fn start_table(&mut self, alignments: Vec<Alignment>, range: Range<usize>) {
        self.start_block();
        if self.open_at_end(range.end) {
            self.hold_from.get_or_insert(self.lines.len());
        }
        self.table = Some(Table::new(alignments));
    }

    fn end(&mut self, tag: TagEnd, range: Range<usize>) {
        match tag {
            TagEnd::Paragraph => self.end_paragraph(range),
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.end_line();
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.end_line();
                self.containers.pop();
                self.need_blank = true;
            }
            TagEnd::CodeBlock => {
                if self.code_block == Some(CodeKind::Fenced) {
                    self.with_style("2", "```");
                }
                self.end_line();
                self.code_block = None;
                self.need_blank = true;
            }
            TagEnd::HtmlBlock => {
                self.end_line();
                self.need_blank = true;
            }
            TagEnd::List(_) => {
                self.end_line();
                self.lists.pop();
                self.need_blank = true;
            }
            TagEnd::Item => {
                self.end_line();
                self.containers.pop();
                self.need_blank = false;
            }
            TagEnd::Table => self.end_table(),
            TagEnd::TableHead => {
                self.styles.pop();
                if let Some(table) = &mut self.table {
                    table.end_row();
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    table.end_row();
                }
            }
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    table.end_cell();
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => self.end_link(),
            TagEnd::Image => self.end_image(),
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_)
            | TagEnd::Superscript
            | TagEnd::Subscript => {}
        }
    }

    /// A paragraph whose last line holds a `|` and that may still grow holds that line
    /// back: the next line may make it a table's header.
    fn end_paragraph(&mut self, range: Range<usize>) {
        self.end_line();
        self.need_blank = true;
        let last_line = self.source.trim_end().lines().next_back().unwrap_or("");
        if self.table.is_none()
            && last_line.contains('|')
            && self.open_at_end(range.end)
            && !self.lines.is_empty()
        {
            self.hold_from.get_or_insert(self.lines.len() - 1);
        }
    }

    fn end_table(&mut self) {
        if let Some(table) = self.table.take() {
            let available = self.width.saturating_sub(self.prefix_width());
            for line in table.lines(available) {
                self.begin_line();
                self.current.push_str(&line);
                self.end_line();
            }
        }
        self.need_blank = true;
    }

    /// A link's address follows its text, unless the text is the address.
    fn end_link(&mut self) {
        self.styles.pop();
        if let Some(link) = self.links.pop()
            && link.url != link.text
            && !link.url.is_empty()
        {
            self.with_style("2", &format!(" ({})", link.url));
        }
    }

    fn end_image(&mut self) {
        if let Some(link) = self.links.pop() {
            self.text("]");
            if !link.url.is_empty() {
                self.with_style("2", &format!(" ({})", link.url));
            }
        }
    }
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
