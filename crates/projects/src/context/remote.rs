//! Converting a web source: one guarded fetch, then HTML through readability, or a
//! document (PDF, DOCX, …) through the local converters.

use std::path::Path;

use hearth_fetch::{ContentTypes, FetchRequest, Fetcher, convert_html};

use super::error::{ContextError, Result};
use crate::convert::{ConvertLimits, SourceFormat, convert_bytes};

/// Largest body fetched for one remote source (the fetcher's policy cap still applies).
pub(crate) const MAX_REMOTE_BYTES: u64 = 25 * 1024 * 1024;

/// A source converted into Markdown, ready to be written as a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub(crate) title: Option<String>,
    pub(crate) markdown: String,
    pub(crate) truncated: bool,
}

/// Media types of documents, and the format each is read as.
const MEDIA_TYPES: &[(&str, SourceFormat)] = &[
    ("application/pdf", SourceFormat::Pdf),
    (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        SourceFormat::Docx,
    ),
    (
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        SourceFormat::Pptx,
    ),
    (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        SourceFormat::Xlsx,
    ),
    ("application/vnd.ms-excel", SourceFormat::Xlsx),
    (
        "application/vnd.oasis.opendocument.spreadsheet",
        SourceFormat::Xlsx,
    ),
    ("application/vnd.oasis.opendocument.text", SourceFormat::Odt),
    ("application/epub+zip", SourceFormat::Epub),
    ("text/markdown", SourceFormat::Markdown),
    ("text/x-markdown", SourceFormat::Markdown),
    ("text/plain", SourceFormat::Text),
    ("text/csv", SourceFormat::Text),
    ("image/png", SourceFormat::Image),
    ("image/jpeg", SourceFormat::Image),
    ("image/gif", SourceFormat::Image),
    ("image/webp", SourceFormat::Image),
];

/// Fetches `url` and converts what it serves.
pub(crate) async fn convert_web(
    fetcher: &Fetcher,
    url: &str,
    limits: &ConvertLimits,
) -> Result<Snapshot> {
    let request = FetchRequest::new(url, ContentTypes::any()).with_max_bytes(MAX_REMOTE_BYTES);
    let response = fetcher.fetch(&request).await?;
    let essence = response.media_type.essence.clone();
    if response.media_type.is_html() || essence == "application/xhtml+xml" {
        let html = response.text();
        let base = response.final_url.to_string();
        let document = tokio::task::spawn_blocking(move || convert_html(&html, Some(&base)))
            .await
            .map_err(ContextError::task)?;
        let title = Some(document.title.trim().to_owned()).filter(|title| !title.is_empty());
        return Ok(Snapshot {
            title,
            markdown: document.markdown,
            truncated: false,
        });
    }
    let format = MEDIA_TYPES
        .iter()
        .find(|(media_type, _)| *media_type == essence)
        .map(|(_, format)| *format)
        .or_else(|| SourceFormat::from_path(Path::new(response.final_url.path())));
    let Some(format) = format else {
        return Err(ContextError::UnsupportedContent {
            url: url.to_owned(),
            content_type: essence,
        });
    };
    let converted = convert_bytes(response.body, format, limits).await?;
    Ok(Snapshot {
        title: converted.title,
        markdown: converted.markdown,
        truncated: converted.truncated,
    })
}
