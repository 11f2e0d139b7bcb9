//! PPTX: each slide in presentation order as `## Slide N`, its paragraphs of text, and
//! its speaker notes; the title from `docProps/core.xml`.

use super::Draft;
use super::error::Result;
use super::format::SourceFormat;
use super::markdown::{Block, render};
use super::xml::{Archive, Step, attribute, first_text, relationships, walk};

const FORMAT: SourceFormat = SourceFormat::Pptx;
const PRESENTATION: &str = "ppt/presentation.xml";
const SLIDE_RELATIONSHIP: &str = "/slide";
const NOTES_RELATIONSHIP: &str = "/notesSlide";

pub(super) fn convert(bytes: &[u8]) -> Result<Draft> {
    let mut archive = Archive::open(bytes, FORMAT)?;
    let slides = slide_parts(&mut archive)?;
    let title = archive
        .text("docProps/core.xml")?
        .and_then(|xml| first_text(&xml, FORMAT, "docProps/core.xml", "title"));
    let mut blocks = Vec::new();
    for (index, part) in slides.iter().enumerate() {
        blocks.push(Block::Heading {
            level: 2,
            text: format!("Slide {}", index + 1),
        });
        let xml = archive.required(part)?;
        blocks.extend(
            paragraphs(&xml, part, Placeholders::All)?
                .into_iter()
                .map(Block::Paragraph),
        );
        let notes_part = relationships(&mut archive, part)?
            .into_iter()
            .find(|relationship| relationship.kind.ends_with(NOTES_RELATIONSHIP));
        if let Some(notes_part) = notes_part
            && let Some(xml) = archive.text(&notes_part.target)?
        {
            let notes = paragraphs(&xml, &notes_part.target, Placeholders::BodyOnly)?;
            if !notes.is_empty() {
                blocks.push(Block::Paragraph(format!("Notes: {}", notes.join("\n"))));
            }
        }
    }
    Ok(Draft {
        title,
        markdown: render(&blocks),
        image: None,
    })
}

/// The slides' parts in presentation order (`p:sldIdLst`), or, if the presentation
/// part cannot say, every `ppt/slides/slideN.xml` in numeric order.
fn slide_parts(archive: &mut Archive<'_>) -> Result<Vec<String>> {
    let Some(xml) = archive.text(PRESENTATION)? else {
        return Ok(in_file_order(archive));
    };
    let mut ids = Vec::new();
    walk(&xml, FORMAT, PRESENTATION, |step| {
        if let Step::Open {
            name: "sldId",
            element,
        } = step
            && let Some(id) = relationship_id(element)
        {
            ids.push(id);
        }
    })?;
    let relationships = relationships(archive, PRESENTATION)?;
    let ordered: Vec<String> = ids
        .iter()
        .filter_map(|id| {
            relationships
                .iter()
                .find(|relationship| {
                    &relationship.id == id && relationship.kind.ends_with(SLIDE_RELATIONSHIP)
                })
                .map(|relationship| relationship.target.clone())
        })
        .collect();
    if ordered.is_empty() {
        Ok(in_file_order(archive))
    } else {
        Ok(ordered)
    }
}

fn in_file_order(archive: &Archive<'_>) -> Vec<String> {
    let mut numbered: Vec<(u64, String)> = archive
        .names()
        .into_iter()
        .filter_map(|name| {
            let number = name
                .strip_prefix("ppt/slides/slide")?
                .strip_suffix(".xml")?
                .parse::<u64>()
                .ok()?;
            Some((number, name))
        })
        .collect();
    numbered.sort();
    numbered.into_iter().map(|(_, name)| name).collect()
}

/// The `r:id` of a `p:sldId` (the only attribute named `id` in the relationships
/// namespace; the plain `id` attribute is a number).
fn relationship_id(element: &quick_xml::events::BytesStart<'_>) -> Option<String> {
    element.attributes().flatten().find_map(|attribute| {
        let key = attribute.key.as_ref();
        (key != "id" && attribute.key.local_name().as_ref() == "id")
            .then(|| attribute.value.clone().into_owned())
    })
}

/// Which shapes' text to keep.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Placeholders {
    /// Every shape's.
    All,
    /// Only the body placeholder's (speaker notes, without slide numbers and headers).
    BodyOnly,
}

/// The non-empty paragraphs (`a:p`) of a slide or notes part, line breaks kept.
fn paragraphs(xml: &str, part: &str, keep: Placeholders) -> Result<Vec<String>> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    let mut in_text = false;
    let mut shape_is_body = false;
    walk(xml, FORMAT, part, |step| match step {
        Step::Open { name: "sp", .. } => shape_is_body = false,
        Step::Open {
            name: "ph",
            element,
        } => {
            shape_is_body = attribute(element, "type").as_deref() == Some("body");
        }
        Step::Open { name: "p", .. } => current = Some(String::new()),
        Step::Open { name: "t", .. } => in_text = true,
        Step::Open { name: "br", .. } => {
            if let Some(paragraph) = current.as_mut() {
                paragraph.push('\n');
            }
        }
        Step::Close { name: "t" } => in_text = false,
        Step::Close { name: "p" } => {
            let keep = keep == Placeholders::All || shape_is_body;
            if let Some(paragraph) = current.take()
                && keep
                && !paragraph.trim().is_empty()
            {
                found.push(paragraph.trim().to_owned());
            }
        }
        Step::Text(text) if in_text => {
            if let Some(paragraph) = current.as_mut() {
                paragraph.push_str(text);
            }
        }
        _ => {}
    })?;
    Ok(found)
}
