//! Collects the blocks of a word-processing document (DOCX, ODT) as its XML is
//! walked: paragraphs nested in text boxes join the paragraph around them, paragraphs
//! in table cells become cell text, nested tables are flattened into their cell.

use super::markdown::Block;

/// What a paragraph is, once known.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Kind {
    /// Body text.
    #[default]
    Paragraph,
    /// A heading of this level (1–6).
    Heading(usize),
    /// A list item.
    ListItem { depth: usize, ordered: bool },
}

#[derive(Default)]
struct Paragraph {
    text: String,
    kind: Kind,
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    cell: String,
}

/// The blocks read so far and the paragraphs and tables still open.
#[derive(Default)]
pub(super) struct Collector {
    blocks: Vec<Block>,
    paragraphs: Vec<Paragraph>,
    tables: Vec<Table>,
}

impl Collector {
    /// A paragraph of `kind` opens.
    pub(super) fn open_paragraph(&mut self, kind: Kind) {
        self.paragraphs.push(Paragraph {
            text: String::new(),
            kind,
        });
    }

    /// The innermost open paragraph turns out to be of `kind`.
    pub(super) fn set_kind(&mut self, kind: Kind) {
        if let Some(paragraph) = self.paragraphs.last_mut() {
            paragraph.kind = kind;
        }
    }

    /// Text for the innermost open paragraph (dropped outside paragraphs).
    pub(super) fn push_text(&mut self, text: &str) {
        if let Some(paragraph) = self.paragraphs.last_mut() {
            paragraph.text.push_str(text);
        }
    }

    /// The innermost paragraph ends.
    pub(super) fn close_paragraph(&mut self) {
        let Some(paragraph) = self.paragraphs.pop() else {
            return;
        };
        let text = paragraph.text.replace('\t', " ");
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        if let Some(outer) = self.paragraphs.last_mut() {
            outer.text.push('\n');
            outer.text.push_str(text);
        } else if let Some(table) = self.tables.last_mut() {
            append_line(&mut table.cell, text);
        } else {
            let text = text.to_owned();
            self.blocks.push(match paragraph.kind {
                Kind::Paragraph => Block::Paragraph(text),
                Kind::Heading(level) => Block::Heading { level, text },
                Kind::ListItem { depth, ordered } => Block::ListItem {
                    depth,
                    ordered,
                    text,
                },
            });
        }
    }

    /// A table opens.
    pub(super) fn open_table(&mut self) {
        self.tables.push(Table::default());
    }

    /// A row of the innermost table opens.
    pub(super) fn open_row(&mut self) {
        if let Some(table) = self.tables.last_mut() {
            table.row.clear();
        }
    }

    /// A cell of the innermost table opens.
    pub(super) fn open_cell(&mut self) {
        if let Some(table) = self.tables.last_mut() {
            table.cell.clear();
        }
    }

    /// The cell ends, and `repeated` copies of it are added to the row.
    pub(super) fn close_cell(&mut self, repeated: usize) {
        if let Some(table) = self.tables.last_mut() {
            let cell = std::mem::take(&mut table.cell);
            for _ in 0..repeated.max(1) {
                table.row.push(cell.clone());
            }
        }
    }

    /// The row ends.
    pub(super) fn close_row(&mut self) {
        if let Some(table) = self.tables.last_mut() {
            let mut row = std::mem::take(&mut table.row);
            // Trailing empty cells (spreadsheet-style padding) add nothing.
            while row.last().is_some_and(String::is_empty) {
                row.pop();
            }
            if !row.is_empty() {
                table.rows.push(row);
            }
        }
    }

    /// The innermost table ends: a block, or text of the cell holding it.
    pub(super) fn close_table(&mut self) {
        let Some(table) = self.tables.pop() else {
            return;
        };
        if table.rows.is_empty() {
            return;
        }
        if let Some(outer) = self.tables.last_mut() {
            for row in &table.rows {
                append_line(&mut outer.cell, &row.join(" · "));
            }
        } else {
            self.blocks.push(Block::Table(table.rows));
        }
    }

    /// Every block read, open paragraphs and tables closed.
    pub(super) fn finish(mut self) -> Vec<Block> {
        while !self.paragraphs.is_empty() {
            self.close_paragraph();
        }
        while !self.tables.is_empty() {
            self.close_row();
            self.close_table();
        }
        self.blocks
    }
}

fn append_line(cell: &mut String, text: &str) {
    if !cell.is_empty() {
        cell.push('\n');
    }
    cell.push_str(text);
}
