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
    let pages = all_pages(&document, &page_numbers);
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

/// Every page's text, in order. Pages are independent, so a long document is split
/// between the machine's cores (each page still under its own `catch_unwind`).
fn all_pages(document: &Document, numbers: &[u32]) -> Vec<String> {
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(numbers.len().div_ceil(PAGES_PER_WORKER))
        .max(1);
    if workers == 1 {
        return numbers
            .iter()
            .map(|number| page_text(document, *number))
            .collect();
    }
    let share = numbers.len().div_ceil(workers);
    std::thread::scope(|scope| {
        // Every worker is started before the first is joined: collected on purpose.
        #[allow(clippy::needless_collect)]
        let running: Vec<_> = numbers
            .chunks(share)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|number| page_text(document, *number))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        running
            .into_iter()
            .zip(numbers.chunks(share))
            .flat_map(|(worker, chunk)| {
                worker.join().unwrap_or_else(|_| {
                    chunk
                        .iter()
                        .map(|number| {
                            format!("[Page {number} could not be read: its content is damaged]")
                        })
                        .collect()
                })
            })
            .collect()
    })
}

/// Fewer pages than this are not worth a thread of their own.
const PAGES_PER_WORKER: usize = 8;

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
