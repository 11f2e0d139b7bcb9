//! Tables in a rendered answer: the cells gathered while parsing, and the lines they
//! become at a given width (aligned columns, squeezed and wrapped, or records).

use pulldown_cmark::Alignment;

use crate::style::visible_width;

/// A table as it is parsed: its columns' alignments, the rows done, the row and the
/// cell being read.
pub(super) struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    pub(super) cell: String,
}

impl Table {
    pub(super) fn new(alignments: Vec<Alignment>) -> Self {
        Self {
            alignments,
            rows: Vec::new(),
            row: Vec::new(),
            cell: String::new(),
        }
    }

    /// Ends the cell being read: its text, trimmed, joins the row.
    pub(super) fn end_cell(&mut self) {
        let cell = std::mem::take(&mut self.cell);
        self.row.push(cell.trim().to_owned());
    }

    /// Ends the row being read (the header row too).
    pub(super) fn end_row(&mut self) {
        let row = std::mem::take(&mut self.row);
        self.rows.push(row);
    }

    /// The table's lines in `available` columns (see [`table_lines`]).
    pub(super) fn lines(&self, available: usize) -> Vec<String> {
        table_lines(self, available)
    }
}

/// The narrowest a column is made when a table is squeezed to fit.
const NARROWEST_COLUMN: usize = 6;

/// A table's lines: aligned columns when they fit in `available` columns; else each
/// column squeezed and its cells wrapped, when every column can keep
/// [`NARROWEST_COLUMN`]; else each row as `header: value` lines.
fn table_lines(table: &Table, available: usize) -> Vec<String> {
    let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
    if columns == 0 {
        return Vec::new();
    }
    let mut widths = vec![0; columns];
    for row in &table.rows {
        for (index, cell) in row.iter().enumerate() {
            widths[index] = widths[index].max(visible_width(cell));
        }
    }
    let separators = 3 * (columns - 1);
    let natural: usize = widths.iter().sum::<usize>() + separators;
    if natural > available {
        if columns * NARROWEST_COLUMN + separators > available {
            return records(table);
        }
        squeeze(&mut widths, available - separators);
    }
    let bar = "\x1b[2m │ \x1b[0m";
    let mut lines = Vec::new();
    for (row_index, row) in table.rows.iter().enumerate() {
        let wrapped: Vec<Vec<String>> = (0..columns)
            .map(|index| wrap(row.get(index).map_or("", String::as_str), widths[index]))
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        for line_index in 0..height {
            let cells: Vec<String> = (0..columns)
                .map(|index| {
                    let text = wrapped[index].get(line_index).map_or("", String::as_str);
                    let alignment = table
                        .alignments
                        .get(index)
                        .copied()
                        .unwrap_or(Alignment::None);
                    pad(text, widths[index], alignment)
                })
                .collect();
            lines.push(cells.join(bar).trim_end().to_owned());
        }
        if row_index == 0 {
            let rule: Vec<String> = widths.iter().map(|width| "─".repeat(*width)).collect();
            lines.push(format!("\x1b[2m{}\x1b[0m", rule.join("─┼─")));
        }
    }
    lines
}

/// Shrinks the widest columns until they fit in `space`.
fn squeeze(widths: &mut [usize], space: usize) {
    while widths.iter().sum::<usize>() > space {
        let Some(widest) = widths
            .iter_mut()
            .filter(|width| **width > NARROWEST_COLUMN)
            .max_by_key(|width| **width)
        else {
            return;
        };
        *widest -= 1;
    }
}

/// A table too wide even squeezed: each row as `header: value` lines, rows apart.
fn records(table: &Table) -> Vec<String> {
    let Some((header, rows)) = table.rows.split_first() else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        if index > 0 {
            lines.push(String::new());
        }
        for (column, cell) in row.iter().enumerate() {
            let name = header.get(column).map_or("", String::as_str);
            lines.push(format!("{name}: {cell}"));
        }
    }
    lines
}

/// `text` padded to `width` columns, as aligned.
fn pad(text: &str, width: usize, alignment: Alignment) -> String {
    let room = width.saturating_sub(visible_width(text));
    match alignment {
        Alignment::Right => format!("{}{text}", " ".repeat(room)),
        Alignment::Center => {
            let left = room / 2;
            format!("{}{text}{}", " ".repeat(left), " ".repeat(room - left))
        }
        Alignment::None | Alignment::Left => format!("{text}{}", " ".repeat(room)),
    }
}

/// A styled cell cut into lines of at most `width` columns: at spaces where it can,
/// inside a word where it must. A style open at a cut is closed there and opened again
/// on the next line.
fn wrap(text: &str, width: usize) -> Vec<String> {
    if visible_width(text) <= width {
        return vec![text.to_owned()];
    }
    // Pieces: (styles open before it, visible character or whole escape).
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut line_width = 0;
    let mut open_style: Option<String> = None;
    let mut last_space: Option<(usize, usize)> = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("\x1b[")
            && let Some(end) = rest.find('m')
        {
            let escape = &rest[..=end];
            open_style = (escape != "\x1b[0m").then(|| escape.to_owned());
            line.push_str(escape);
            rest = &rest[end + 1..];
            continue;
        }
        let columns = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if line_width + columns > width && line_width > 0 {
            let (cut, carried) = match last_space {
                Some((byte, _)) if c != ' ' => (byte, line[byte + 1..].to_owned()),
                _ => (line.len(), String::new()),
            };
            let mut done = line[..cut].trim_end().to_owned();
            if open_style.is_some() {
                done.push_str("\x1b[0m");
            }
            lines.push(done);
            line = open_style.clone().unwrap_or_default();
            line.push_str(&carried);
            line_width = visible_width(&carried);
            last_space = None;
            if c == ' ' {
                rest = &rest[1..];
                continue;
            }
        }
        if c == ' ' {
            last_space = Some((line.len(), line_width));
        }
        line.push(c);
        line_width += columns;
        rest = &rest[c.len_utf8()..];
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}
