//! ODT: `content.xml` read as blocks — headings (`text:h` and its outline level),
//! paragraphs, list items (numbered or bulleted per their list style), tables — and
//! the title from `meta.xml`.

use std::collections::HashMap;

use super::Draft;
use super::blocks::{Collector, Kind};
use super::error::Result;
use super::format::SourceFormat;
use super::markdown::render;
use super::xml::{Archive, Step, attribute, first_text, walk};

const FORMAT: SourceFormat = SourceFormat::Odt;
const CONTENT: &str = "content.xml";

/// Elements whose content is not body text: footnote and endnote bodies, comments,
/// tracked deletions.
const SKIPPED: &[&str] = &["note-body", "annotation", "tracked-changes"];

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
    let mut reader = BodyReader {
        list_styles: &list_styles,
        collector: Collector::default(),
        lists: Vec::new(),
        repeated: 1,
        skipping: 0,
    };
    walk(&content, FORMAT, CONTENT, |step| reader.step(step))?;
    Ok(Draft {
        title,
        markdown: render(&reader.collector.finish()),
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

/// The state of one pass over `content.xml`.
struct BodyReader<'a> {
    list_styles: &'a ListStyles,
    collector: Collector,
    /// Open lists, outermost first, with the list style in force.
    lists: Vec<Option<String>>,
    /// Copies of the open table cell (`table:number-columns-repeated`).
    repeated: usize,
    skipping: usize,
}

impl BodyReader<'_> {
    fn step(&mut self, step: Step<'_>) {
        if self.skipping > 0 {
            match step {
                Step::Open { .. } => self.skipping += 1,
                Step::Close { .. } => self.skipping -= 1,
                Step::Text(_) => {}
            }
            return;
        }
        match step {
            Step::Open { name, .. } if SKIPPED.contains(&name) => self.skipping = 1,
            Step::Open { name, element } => match name {
                "h" => {
                    let level = attribute(element, "outline-level")
                        .and_then(|level| level.parse::<usize>().ok())
                        .unwrap_or(1);
                    self.collector
                        .open_paragraph(Kind::Heading(level.clamp(1, 6)));
                }
                "p" => {
                    let kind =
                        match self.lists.len() {
                            0 => Kind::Paragraph,
                            depth => Kind::ListItem {
                                depth: depth - 1,
                                ordered: self.lists.last().cloned().flatten().is_some_and(
                                    |style| self.list_styles.is_numbered(&style, depth),
                                ),
                            },
                        };
                    self.collector.open_paragraph(kind);
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
                    self.collector.push_text(&" ".repeat(count.min(64)));
                }
                "tab" => self.collector.push_text("\t"),
                "line-break" => self.collector.push_text("\n"),
                "table" => self.collector.open_table(),
                "table-row" => self.collector.open_row(),
                "table-cell" | "covered-table-cell" => {
                    self.repeated = attribute(element, "number-columns-repeated")
                        .and_then(|count| count.parse::<usize>().ok())
                        .unwrap_or(1)
                        .clamp(1, MAX_REPEATED_CELLS);
                    self.collector.open_cell();
                }
                _ => {}
            },
            Step::Close { name } => match name {
                "h" | "p" => self.collector.close_paragraph(),
                "list" => {
                    self.lists.pop();
                }
                "table-cell" | "covered-table-cell" => self.collector.close_cell(self.repeated),
                "table-row" => self.collector.close_row(),
                "table" => self.collector.close_table(),
                _ => {}
            },
            Step::Text(text) => self.collector.push_text(&collapse_whitespace(text)),
        }
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
