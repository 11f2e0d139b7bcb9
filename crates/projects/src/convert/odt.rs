//! ODT: `content.xml` read as blocks — headings (`text:h` and its outline level),
//! paragraphs, list items (numbered or bulleted per their list style), tables — and
//! the title from `meta.xml`.

use std::collections::HashMap;

use quick_xml::events::BytesStart;

use super::Draft;
use super::blocks::{Collector, Kind};
use super::body::{BodyFormat, BodyWalker, TableNames};
use super::error::Result;
use super::format::SourceFormat;
use super::markdown::render;
use super::xml::{Archive, Step, attribute, first_text, walk};

const FORMAT: SourceFormat = SourceFormat::Odt;
const CONTENT: &str = "content.xml";

/// Largest number of copies of a repeated table cell kept.
const MAX_REPEATED_CELLS: usize = 64;

pub(super) fn convert(bytes: &[u8]) -> Result<Draft> {
    let mut archive = Archive::open(bytes, FORMAT)?;
    let content = archive.required(CONTENT)?;
    let mut list_styles = ListStyles::default();
    list_styles.read(&content, CONTENT)?;
    if let Some(styles) = archive.text("styles.xml")? {
        list_styles.read(&styles, "styles.xml")?;
    }
    let title = archive
        .text("meta.xml")?
        .and_then(|xml| first_text(&xml, FORMAT, "meta.xml", "title"));
    let mut walker = BodyWalker::new(BodyReader {
        list_styles: &list_styles,
        lists: Vec::new(),
    });
    walk(&content, FORMAT, CONTENT, |step| walker.step(step))?;
    Ok(Draft {
        title,
        markdown: render(&walker.finish()),
        image: None,
    })
}

/// For each list style, whether each level (1-based) is numbered.
#[derive(Default)]
struct ListStyles {
    numbered: HashMap<(String, usize), bool>,
}

impl ListStyles {
    fn read(&mut self, xml: &str, part: &str) -> Result<()> {
        let mut current: Option<String> = None;
        walk(xml, FORMAT, part, |step| match step {
            Step::Open {
                name: "list-style",
                element,
            } => current = attribute(element, "name"),
            Step::Open { name, element } if name.starts_with("list-level-style-") => {
                let level = attribute(element, "level").and_then(|level| level.parse().ok());
                if let (Some(style), Some(level)) = (&current, level) {
                    self.numbered
                        .insert((style.clone(), level), name == "list-level-style-number");
                }
            }
            Step::Close { name: "list-style" } => current = None,
            _ => {}
        })
    }

    fn is_numbered(&self, style: &str, level: usize) -> bool {
        self.numbered
            .get(&(style.to_owned(), level))
            .copied()
            .unwrap_or(false)
    }
}

/// The paragraphs, headings and lists of `content.xml` (its tables are the walker's).
struct BodyReader<'a> {
    list_styles: &'a ListStyles,
    /// Open lists, outermost first, with the list style in force.
    lists: Vec<Option<String>>,
}

impl BodyFormat for BodyReader<'_> {
    /// Footnote and endnote bodies, comments, tracked deletions.
    const SKIPPED: &'static [&'static str] = &["note-body", "annotation", "tracked-changes"];
    const TABLES: TableNames = TableNames {
        table: "table",
        row: "table-row",
        cells: &["table-cell", "covered-table-cell"],
    };

    /// `table:number-columns-repeated` copies, at most [`MAX_REPEATED_CELLS`].
    fn cell_copies(&self, element: &BytesStart<'_>) -> usize {
        attribute(element, "number-columns-repeated")
            .and_then(|count| count.parse::<usize>().ok())
            .unwrap_or(1)
            .clamp(1, MAX_REPEATED_CELLS)
    }

    fn open(&mut self, collector: &mut Collector, name: &str, element: &BytesStart<'_>) {
        match name {
            "h" => {
                let level = attribute(element, "outline-level")
                    .and_then(|level| level.parse::<usize>().ok())
                    .unwrap_or(1);
                collector.open_paragraph(Kind::Heading(level.clamp(1, 6)));
            }
            "p" => {
                let kind = match self.lists.len() {
                    0 => Kind::Paragraph,
                    depth => Kind::ListItem {
                        depth: depth - 1,
                        ordered: self
                            .lists
                            .last()
                            .cloned()
                            .flatten()
                            .is_some_and(|style| self.list_styles.is_numbered(&style, depth)),
                    },
                };
                collector.open_paragraph(kind);
            }
            "list" => {
                let inherited = self.lists.last().cloned().flatten();
                self.lists
                    .push(attribute(element, "style-name").or(inherited));
            }
            "s" => {
                let count = attribute(element, "c")
                    .and_then(|count| count.parse::<usize>().ok())
                    .unwrap_or(1);
                collector.push_text(&" ".repeat(count.min(64)));
            }
            "tab" => collector.push_text("\t"),
            "line-break" => collector.push_text("\n"),
            _ => {}
        }
    }

    fn close(&mut self, collector: &mut Collector, name: &str) {
        match name {
            "h" | "p" => collector.close_paragraph(),
            "list" => {
                self.lists.pop();
            }
            _ => {}
        }
    }

    fn text(&mut self, collector: &mut Collector, text: &str) {
        collector.push_text(&collapse_whitespace(text));
    }
}

/// ODF collapses runs of white space in text to one space (explicit spaces, tabs and
/// breaks are elements).
fn collapse_whitespace(text: &str) -> String {
    let mut collapsed = String::with_capacity(text.len());
    let mut previous_space = false;
    for character in text.chars() {
        let space = matches!(character, ' ' | '\t' | '\n' | '\r');
        if !(space && previous_space) {
            collapsed.push(if space { ' ' } else { character });
        }
        previous_space = space;
    }
    collapsed
}
