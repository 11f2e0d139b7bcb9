//! DOCX: `word/document.xml` read as blocks — headings (from the paragraph style or
//! outline level), list items (bulleted or numbered per `word/numbering.xml`),
//! tables, paragraphs with their line breaks — and the title from `docProps/core.xml`.

use std::collections::HashMap;

use quick_xml::events::BytesStart;

use super::Draft;
use super::blocks::{Collector, Kind};
use super::body::{BodyFormat, BodyWalker, TableNames};
use super::error::Result;
use super::format::SourceFormat;
use super::markdown::render;
use super::xml::{Archive, Step, attribute, first_text, walk};

const FORMAT: SourceFormat = SourceFormat::Docx;
const DOCUMENT: &str = "word/document.xml";

pub(super) fn convert(bytes: &[u8]) -> Result<Draft> {
    let mut archive = Archive::open(bytes, FORMAT)?;
    let document = archive.required(DOCUMENT)?;
    let styles = archive
        .text("word/styles.xml")?
        .map(|xml| heading_styles(&xml))
        .transpose()?
        .unwrap_or_default();
    let numbering = archive
        .text("word/numbering.xml")?
        .map(|xml| Numbering::read(&xml))
        .transpose()?
        .unwrap_or_default();
    let title = archive
        .text("docProps/core.xml")?
        .and_then(|xml| first_text(&xml, FORMAT, "docProps/core.xml", "title"));
    let mut walker = BodyWalker::new(BodyReader::new(&styles, &numbering));
    walk(&document, FORMAT, DOCUMENT, |step| walker.step(step))?;
    Ok(Draft {
        title,
        markdown: render(&walker.finish()),
        image: None,
    })
}

/// Heading level (1–6) of each paragraph style that is a heading, by style id.
fn heading_styles(xml: &str) -> Result<HashMap<String, usize>> {
    let mut levels = HashMap::new();
    let mut current: Option<String> = None;
    walk(xml, FORMAT, "word/styles.xml", |step| match step {
        Step::Open {
            name: "style",
            element,
        } => current = attribute(element, "styleId"),
        Step::Open { name, element } if name == "name" || name == "outlineLvl" => {
            let (Some(id), Some(value)) = (&current, attribute(element, "val")) else {
                return;
            };
            let level = if name == "name" {
                heading_level_of_name(&value)
            } else {
                // Outline level 9 is body text.
                value
                    .parse::<usize>()
                    .ok()
                    .filter(|level| *level < 9)
                    .map(|level| level + 1)
            };
            if let Some(level) = level {
                levels.entry(id.clone()).or_insert(level.min(6));
            }
        }
        Step::Close { name: "style" } => current = None,
        _ => {}
    })?;
    Ok(levels)
}

/// "Title" → 1, "heading 2" / "Heading2" → 2.
fn heading_level_of_name(name: &str) -> Option<usize> {
    let lower = name.to_ascii_lowercase();
    if lower == "title" {
        return Some(1);
    }
    let digits = lower.strip_prefix("heading")?.trim();
    digits
        .parse::<usize>()
        .ok()
        .filter(|level| (1..=9).contains(level))
}

/// Which lists are numbered: numbering instance → abstract definition → level format.
#[derive(Default)]
struct Numbering {
    abstract_of: HashMap<String, String>,
    format_of: HashMap<(String, String), String>,
}

impl Numbering {
    fn read(xml: &str) -> Result<Self> {
        let mut numbering = Self::default();
        let mut abstract_id: Option<String> = None;
        let mut level: Option<String> = None;
        let mut num_id: Option<String> = None;
        walk(xml, FORMAT, "word/numbering.xml", |step| match step {
            Step::Open { name, element } => match name {
                "abstractNum" => abstract_id = attribute(element, "abstractNumId"),
                "lvl" => level = attribute(element, "ilvl"),
                "numFmt" => {
                    if let (Some(id), Some(level), Some(format)) =
                        (&abstract_id, &level, attribute(element, "val"))
                    {
                        numbering
                            .format_of
                            .insert((id.clone(), level.clone()), format);
                    }
                }
                "num" => num_id = attribute(element, "numId"),
                "abstractNumId" => {
                    if let (Some(num), Some(id)) = (&num_id, attribute(element, "val")) {
                        numbering.abstract_of.insert(num.clone(), id);
                    }
                }
                _ => {}
            },
            Step::Close { name } => match name {
                "abstractNum" => abstract_id = None,
                "lvl" => level = None,
                "num" => num_id = None,
                _ => {}
            },
            Step::Text(_) => {}
        })?;
        Ok(numbering)
    }

    fn is_ordered(&self, num_id: &str, level: usize) -> bool {
        self.abstract_of
            .get(num_id)
            .and_then(|id| self.format_of.get(&(id.clone(), level.to_string())))
            .is_some_and(|format| format != "bullet" && format != "none")
    }
}

/// What the properties of a paragraph being read say about it.
#[derive(Default)]
struct Properties {
    style: Option<String>,
    outline_level: Option<usize>,
    num_id: Option<String>,
    list_level: usize,
}

/// The paragraphs and runs of `word/document.xml` (its tables are the walker's).
struct BodyReader<'a> {
    styles: &'a HashMap<String, usize>,
    numbering: &'a Numbering,
    /// Properties of the open paragraphs (a text box nests paragraphs inside one).
    properties: Vec<Properties>,
    in_text: bool,
    in_run: bool,
}

impl BodyFormat for BodyReader<'_> {
    /// Alternate renderings (the fallback of a text box repeats its content), field
    /// instructions, deleted text.
    const SKIPPED: &'static [&'static str] = &["Fallback", "instrText", "delText", "del"];
    const TABLES: TableNames = TableNames {
        table: "tbl",
        row: "tr",
        cells: &["tc"],
    };

    fn open(&mut self, collector: &mut Collector, name: &str, element: &BytesStart<'_>) {
        let value = || attribute(element, "val");
        let properties = self.properties.last_mut();
        match (name, properties) {
            ("p", _) => {
                collector.open_paragraph(Kind::Paragraph);
                self.properties.push(Properties::default());
            }
            ("r", _) => self.in_run = true,
            ("t", _) => self.in_text = true,
            ("tab", _) if self.in_run => collector.push_text("\t"),
            ("br" | "cr", _) if self.in_run => collector.push_text("\n"),
            ("noBreakHyphen", _) if self.in_run => collector.push_text("-"),
            ("pStyle", Some(properties)) => properties.style = value(),
            ("outlineLvl", Some(properties)) => {
                properties.outline_level = value()
                    .and_then(|level| level.parse::<usize>().ok())
                    .filter(|level| *level < 9);
            }
            ("numId", Some(properties)) => properties.num_id = value(),
            ("ilvl", Some(properties)) => {
                properties.list_level = value().and_then(|level| level.parse().ok()).unwrap_or(0);
            }
            _ => {}
        }
    }

    fn close(&mut self, collector: &mut Collector, name: &str) {
        match name {
            "r" => self.in_run = false,
            "t" => self.in_text = false,
            "p" => {
                let properties = self.properties.pop().unwrap_or_default();
                collector.set_kind(self.kind(&properties));
                collector.close_paragraph();
            }
            _ => {}
        }
    }

    fn text(&mut self, collector: &mut Collector, text: &str) {
        if self.in_text {
            collector.push_text(text);
        }
    }
}

impl<'a> BodyReader<'a> {
    fn new(styles: &'a HashMap<String, usize>, numbering: &'a Numbering) -> Self {
        Self {
            styles,
            numbering,
            properties: Vec::new(),
            in_text: false,
            in_run: false,
        }
    }

    fn kind(&self, properties: &Properties) -> Kind {
        let heading = properties
            .style
            .as_ref()
            .and_then(|style| {
                self.styles
                    .get(style)
                    .copied()
                    .or_else(|| heading_level_of_name(style))
            })
            .or(properties.outline_level.map(|level| level + 1));
        if let Some(level) = heading {
            return Kind::Heading(level.min(6));
        }
        match properties.num_id.as_deref() {
            Some(num_id) if num_id != "0" => Kind::ListItem {
                depth: properties.list_level,
                ordered: self.numbering.is_ordered(num_id, properties.list_level),
            },
            _ => Kind::Paragraph,
        }
    }
}
