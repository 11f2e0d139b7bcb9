//! The walk over the body of a word-processing document, shared by DOCX and ODT: the
//! subtrees of elements that hold no body text are left out, tables are read into the
//! [`Collector`] by the format's names for their parts, and every other step goes to
//! the format's own reader (paragraphs, headings, lists, runs).

use quick_xml::events::BytesStart;

use super::blocks::Collector;
use super::markdown::Block;
use super::xml::Step;

/// A format's names for a table and its parts.
pub(super) struct TableNames {
    /// The table.
    pub table: &'static str,
    /// A row.
    pub row: &'static str,
    /// A cell (ODT also has covered cells, hidden under a spanning neighbour).
    pub cells: &'static [&'static str],
}

/// What a format reads from its body besides tables and skipped elements.
pub(super) trait BodyFormat {
    /// Elements whose content is not body text (alternate renderings, notes, deletions).
    const SKIPPED: &'static [&'static str];
    /// Its names for tables.
    const TABLES: TableNames;

    /// How many copies of the cell that opens at `element` its row gets.
    fn cell_copies(&self, _element: &BytesStart<'_>) -> usize {
        1
    }

    /// Any other element opens.
    fn open(&mut self, collector: &mut Collector, name: &str, element: &BytesStart<'_>);

    /// Any other element closes.
    fn close(&mut self, collector: &mut Collector, name: &str);

    /// Character data outside skipped elements.
    fn text(&mut self, collector: &mut Collector, text: &str);
}

/// One pass over a body: feed it every [`Step`], then [`finish`](Self::finish).
pub(super) struct BodyWalker<F> {
    format: F,
    collector: Collector,
    /// Copies of each open cell, innermost last (a cell may hold a table).
    cells: Vec<usize>,
    /// How deep inside a skipped element the walk is (0: not in one).
    skipping: usize,
}

impl<F: BodyFormat> BodyWalker<F> {
    pub(super) fn new(format: F) -> Self {
        Self {
            format,
            collector: Collector::default(),
            cells: Vec::new(),
            skipping: 0,
        }
    }

    pub(super) fn step(&mut self, step: Step<'_>) {
        if self.skipping > 0 {
            match step {
                Step::Open { .. } => self.skipping += 1,
                Step::Close { .. } => self.skipping -= 1,
                Step::Text(_) => {}
            }
            return;
        }
        let tables = &F::TABLES;
        match step {
            Step::Open { name, .. } if F::SKIPPED.contains(&name) => self.skipping = 1,
            Step::Open { name, .. } if name == tables.table => self.collector.open_table(),
            Step::Open { name, .. } if name == tables.row => self.collector.open_row(),
            Step::Open { name, element } if tables.cells.contains(&name) => {
                self.cells.push(self.format.cell_copies(element));
                self.collector.open_cell();
            }
            Step::Open { name, element } => self.format.open(&mut self.collector, name, element),
            Step::Close { name } if name == tables.table => self.collector.close_table(),
            Step::Close { name } if name == tables.row => self.collector.close_row(),
            Step::Close { name } if tables.cells.contains(&name) => {
                let copies = self.cells.pop().unwrap_or(1);
                self.collector.close_cell(copies);
            }
            Step::Close { name } => self.format.close(&mut self.collector, name),
            Step::Text(text) => self.format.text(&mut self.collector, text),
        }
    }

    /// Every block read.
    pub(super) fn finish(self) -> Vec<Block> {
        self.collector.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::blocks::Kind;
    use crate::convert::format::SourceFormat;
    use crate::convert::xml::{attribute, walk};
    use pretty_assertions::assert_eq;

    /// A format of paragraphs only, with tables named as neither DOCX nor ODT names them.
    struct Plain;

    impl BodyFormat for Plain {
        const SKIPPED: &'static [&'static str] = &["note"];
        const TABLES: TableNames = TableNames {
            table: "grid",
            row: "line",
            cells: &["box", "hidden-box"],
        };

        fn cell_copies(&self, element: &BytesStart<'_>) -> usize {
            attribute(element, "copies").map_or(1, |copies| copies.parse().unwrap_or(1))
        }

        fn open(&mut self, collector: &mut Collector, name: &str, _element: &BytesStart<'_>) {
            if name == "p" {
                collector.open_paragraph(Kind::Paragraph);
            }
        }

        fn close(&mut self, collector: &mut Collector, name: &str) {
            if name == "p" {
                collector.close_paragraph();
            }
        }

        fn text(&mut self, collector: &mut Collector, text: &str) {
            collector.push_text(text);
        }
    }

    fn blocks(xml: &str) -> Vec<Block> {
        let mut walker = BodyWalker::new(Plain);
        walk(xml, SourceFormat::Odt, "body.xml", |step| walker.step(step)).unwrap();
        walker.finish()
    }

    #[test]
    fn tables_are_read_by_the_formats_names_with_nested_ones_flattened() {
        let xml = "<body><p>Before<note><p>not body text</p></note></p>\
            <grid><line><box copies=\"2\"><p>a</p></box><box><p>b</p>\
            <grid><line><box><p>inner</p></box><hidden-box copies=\"3\"><p>x</p></hidden-box></line></grid>\
            </box></line></grid></body>";
        assert_eq!(
            blocks(xml),
            [
                Block::Paragraph("Before".to_owned()),
                Block::Table(vec![vec![
                    "a".to_owned(),
                    "a".to_owned(),
                    "b\ninner · x · x · x".to_owned(),
                ]]),
            ]
        );
    }
}
