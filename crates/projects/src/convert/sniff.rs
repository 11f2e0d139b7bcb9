//! The format a document's first bytes prove, when its name says otherwise: a PDF
//! header, or a zip archive whose entries identify an OOXML, ODF or EPUB document.

use std::io::{Cursor, Read};

use zip::ZipArchive;

use super::format::SourceFormat;

/// How far into a file a PDF header may start (the specification allows leading junk
/// within the first kilobyte).
const PDF_HEADER_WINDOW: usize = 1024;

/// The format to read `bytes` as: what its content proves, else what it was named.
pub(super) fn actual_format(bytes: &[u8], named: SourceFormat) -> SourceFormat {
    if named != SourceFormat::Pdf && is_pdf(bytes) {
        return SourceFormat::Pdf;
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return zip_format(bytes).unwrap_or(named);
    }
    named
}

fn is_pdf(bytes: &[u8]) -> bool {
    let window = &bytes[..bytes.len().min(PDF_HEADER_WINDOW)];
    window.windows(5).any(|candidate| candidate == b"%PDF-")
}

/// Entries that identify a zip-based document, checked in order.
const MARKER_ENTRIES: &[(&str, SourceFormat)] = &[
    ("word/document.xml", SourceFormat::Docx),
    ("ppt/presentation.xml", SourceFormat::Pptx),
    ("xl/workbook.xml", SourceFormat::Xlsx),
    ("xl/workbook.bin", SourceFormat::Xlsx),
    ("META-INF/container.xml", SourceFormat::Epub),
];

/// ODF and EPUB `mimetype` entries and the format each names.
const MIMETYPES: &[(&str, SourceFormat)] = &[
    ("application/epub+zip", SourceFormat::Epub),
    ("application/vnd.oasis.opendocument.text", SourceFormat::Odt),
    (
        "application/vnd.oasis.opendocument.spreadsheet",
        SourceFormat::Xlsx,
    ),
];

fn zip_format(bytes: &[u8]) -> Option<SourceFormat> {
    let mut archive = ZipArchive::new(Cursor::new(bytes)).ok()?;
    if let Ok(entry) = archive.by_name("mimetype") {
        let mut mimetype = String::new();
        if entry.take(256).read_to_string(&mut mimetype).is_ok()
            && let Some((_, format)) = MIMETYPES
                .iter()
                .find(|(known, _)| *known == mimetype.trim())
        {
            return Some(*format);
        }
    }
    MARKER_ENTRIES
        .iter()
        .find(|(name, _)| archive.index_for_name(name).is_some())
        .map(|(_, format)| *format)
}
