//! PDF: the text of each page, pages as `## Page N` sections when there are several,
//! and the title from the document information dictionary.
//!
//! Pages are extracted one by one, each under its own `catch_unwind`: the extractor
//! panics on some malformed content, and one damaged page should cost that page, not
//! the document. A page that fails is replaced by a line saying so.

use std::panic::{AssertUnwindSafe, catch_unwind};

use pdf_extract::{Document, PlainTextOutput, decode_text_string, output_doc_page};

use super::Draft;
use super::error::Result;
use super::format::SourceFormat;
use super::markdown::tidy;
use super::xml::malformed;

const FORMAT: SourceFormat = SourceFormat::Pdf;

/// Extracts the text of every page. Runs inside [`super::isolate::run`].
pub(super) fn convert(bytes: &[u8]) -> Result<Draft> {
    let mut document =
        Document::load_mem(bytes).map_err(|error| malformed(FORMAT, error.to_string()))?;
    if document.is_encrypted() && document.decrypt("").is_err() {
        return Err(malformed(
            FORMAT,
            "it is password-protected; save an unprotected copy and convert that",
        ));
    }
    let page_numbers: Vec<u32> = document.get_pages().keys().copied().collect();
    if page_numbers.is_empty() {
        return Err(malformed(FORMAT, "it has no pages"));
    }
    let pages: Vec<String> = page_numbers
        .iter()
        .map(|number| page_text(&document, *number))
        .collect();
    let markdown = if let [only] = pages.as_slice() {
        only.to_owned()
    } else {
        pages
            .iter()
            .enumerate()
            .map(|(index, text)| {
                let heading = format!("## Page {}", index + 1);
                if text.is_empty() {
                    heading
                } else {
                    format!("{heading}\n\n{text}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    Ok(Draft {
        title: title(&document),
        markdown,
        image: None,
    })
}

/// One page's text, tidied; a note if the page cannot be read.
fn page_text(document: &Document, number: u32) -> String {
    let extracted = catch_unwind(AssertUnwindSafe(|| {
        let mut text = String::new();
        let mut output = PlainTextOutput::new(&mut text);
        output_doc_page(document, &mut output, number).map(|()| text)
    }));
    match extracted {
        Ok(Ok(text)) => tidy(&text),
        Ok(Err(error)) => format!("[Page {number} could not be read: {error}]"),
        Err(_) => format!("[Page {number} could not be read: its content is damaged]"),
    }
}

/// `/Title` of the trailer's `/Info` dictionary, if present.
fn title(document: &Document) -> Option<String> {
    let info = document
        .trailer
        .get_deref(b"Info", document)
        .ok()?
        .as_dict()
        .ok()?;
    let title = decode_text_string(info.get_deref(b"Title", document).ok()?).ok()?;
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    (!title.is_empty()).then_some(title)
}
