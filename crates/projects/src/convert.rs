//! Local conversion of documents into Markdown: PDF, DOCX, PPTX, spreadsheets (XLSX,
//! XLS, ODS), ODT, EPUB, HTML, Markdown, text, and images (described by their
//! dimensions, no pixels decoded). Nothing here touches the network.
//!
//! [`convert_file`] checks the file's size from its metadata before reading it,
//! recognises the format from the extension (and from the first bytes when the
//! extension lies about a PDF or a zip-based document), and converts on a blocking
//! thread, under `catch_unwind`, within [`ConvertLimits::time_limit`]: a hostile or
//! damaged document yields a [`ConvertError`] naming its format, never a panic.
//! [`convert_bytes`] does the same for bytes already in memory (a download). With
//! [`Isolation::Child`] (how Hearth's commands and server run it) the recognising and
//! converting happen in a child process under limits on memory, CPU time and output
//! instead, so a document built to overflow a stack or exhaust memory fails alone
//! ([`ConvertError::Crashed`]) and the process that asked carries on.
//!
//! Output longer than [`ConvertLimits::max_output_bytes`] is cut on a character
//! boundary, ends with a note saying so, and is marked [`Converted::truncated`].
//!
//! It does not cache, fetch, or decide what to convert: that is the context cache's job.

mod blocks;
mod body;
mod child;
mod docx;
mod epub;
mod error;
mod format;
mod image;
mod isolate;
mod limits;
mod markdown;
mod odt;
mod pdf;
mod pptx;
mod sheet;
mod sniff;
mod text;
mod xml;

use std::path::Path;

use bytes::Bytes;
use tokio::io::AsyncReadExt;

pub use child::{DOCUMENT_JOB, document_job};
pub use error::{ConvertError, Result};
pub use format::SourceFormat;
pub use image::ImageInfo;
pub use limits::{
    ConvertLimits, DEFAULT_MAX_INPUT_BYTES, DEFAULT_MAX_OUTPUT_BYTES, DEFAULT_TIME_LIMIT, Isolation,
};

/// A document converted into Markdown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Converted {
    /// The format the document was read as.
    pub format: SourceFormat,
    /// The document's title, when it declares one.
    pub title: Option<String>,
    /// The content as Markdown (for an image, a one-line description).
    pub markdown: String,
    /// For an image, its dimensions and media type.
    pub image: Option<ImageInfo>,
    /// Whether the Markdown was cut at [`ConvertLimits::max_output_bytes`].
    pub truncated: bool,
}

/// What a converter produces before the output cap is applied.
#[derive(Debug, Default)]
struct Draft {
    title: Option<String>,
    markdown: String,
    image: Option<ImageInfo>,
}

/// Converts the file at `path` into Markdown.
///
/// The size is checked from the file's metadata before anything is read, so a file
/// over [`ConvertLimits::max_input_bytes`] is refused without being loaded. The format
/// comes from the extension; a PDF or zip-based document whose extension names another
/// format is read as what its first bytes say it is.
pub async fn convert_file(path: &Path, limits: &ConvertLimits) -> Result<Converted> {
    let io_error = |source| ConvertError::Io {
        path: path.to_path_buf(),
        source,
    };
    let named = SourceFormat::from_path(path).ok_or_else(|| ConvertError::Unsupported {
        extension: path
            .extension()
            .map(|extension| extension.to_string_lossy().into_owned())
            .unwrap_or_default(),
    })?;
    let mut file = tokio::fs::File::open(path).await.map_err(io_error)?;
    let size = file.metadata().await.map_err(io_error)?.len();
    check_input_size(size, limits)?;
    // The file may grow between the check and the read: read one byte past the limit
    // at most, and refuse if that byte arrives.
    let mut contents = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    (&mut file)
        .take(limits.max_input_bytes.saturating_add(1))
        .read_to_end(&mut contents)
        .await
        .map_err(io_error)?;
    check_input_size(contents.len() as u64, limits)?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned());
    convert(Bytes::from(contents), named, name, limits).await
}

/// Converts the file at `path` like [`convert_file`], but reads it through
/// [`hearth_confine::read_outside`]: a file that really lies in one of `protected`
/// (Hearth's data directory), through any symlink or hard link, is refused.
pub async fn convert_source(
    path: &Path,
    protected: &[std::path::PathBuf],
    limits: &ConvertLimits,
) -> Result<Converted> {
    let named = SourceFormat::from_path(path).ok_or_else(|| ConvertError::Unsupported {
        extension: path
            .extension()
            .map(|extension| extension.to_string_lossy().into_owned())
            .unwrap_or_default(),
    })?;
    let (owned, denied, max) = (
        path.to_path_buf(),
        protected.to_vec(),
        limits.max_input_bytes,
    );
    let read =
        tokio::task::spawn_blocking(move || hearth_confine::read_outside(&owned, &denied, max))
            .await
            .map_err(|error| ConvertError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other(error.to_string()),
            })?;
    let contents = read.map_err(|error| match error {
        hearth_confine::Error::TooLarge { size, limit, .. } => {
            ConvertError::TooLarge { bytes: size, limit }
        }
        hearth_confine::Error::Denied { .. } | hearth_confine::Error::HardLinked { .. } => {
            ConvertError::Protected {
                path: path.to_path_buf(),
                reason: error.to_string(),
            }
        }
        other => ConvertError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(other.to_string()),
        },
    })?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned());
    convert(Bytes::from(contents), named, name, limits).await
}

/// Converts a document already in memory (for example a PDF served over HTTP).
///
/// `format` is trusted except where the bytes plainly say otherwise (a PDF header, or
/// a zip archive of another document kind).
pub async fn convert_bytes(
    bytes: Bytes,
    format: SourceFormat,
    limits: &ConvertLimits,
) -> Result<Converted> {
    check_input_size(bytes.len() as u64, limits)?;
    convert(bytes, format, None, limits).await
}

fn check_input_size(bytes: u64, limits: &ConvertLimits) -> Result<()> {
    if bytes > limits.max_input_bytes {
        return Err(ConvertError::TooLarge {
            bytes,
            limit: limits.max_input_bytes,
        });
    }
    Ok(())
}

/// Recognises the format, converts in isolation, and applies the output cap.
async fn convert(
    bytes: Bytes,
    named: SourceFormat,
    name: Option<String>,
    limits: &ConvertLimits,
) -> Result<Converted> {
    if let Isolation::Child {
        isolator,
        memory_bytes,
    } = &limits.isolation
    {
        return child::convert(bytes, named, name, limits, isolator, *memory_bytes).await;
    }
    let sniffed = bytes.clone();
    let format = isolate::run(named, limits.time_limit, move || {
        Ok(sniff::actual_format(&sniffed, named))
    })
    .await?;
    let draft = isolate::run(format, limits.time_limit, move || {
        convert_blocking(&bytes, format, name.as_deref())
    })
    .await?;
    let (markdown, truncated) = markdown::cap(draft.markdown, limits.max_output_bytes);
    Ok(Converted {
        format,
        title: draft.title.filter(|title| !title.trim().is_empty()),
        markdown,
        image: draft.image,
        truncated,
    })
}

/// Dispatches to the converter of `format`; CPU-bound, run on a blocking thread.
fn convert_blocking(bytes: &[u8], format: SourceFormat, name: Option<&str>) -> Result<Draft> {
    match format {
        SourceFormat::Pdf => pdf::convert(bytes),
        SourceFormat::Docx => docx::convert(bytes),
        SourceFormat::Pptx => pptx::convert(bytes),
        SourceFormat::Xlsx => sheet::convert(bytes),
        SourceFormat::Odt => odt::convert(bytes),
        SourceFormat::Epub => epub::convert(bytes),
        SourceFormat::Html => Ok(text::html(bytes)),
        SourceFormat::Markdown => Ok(text::markdown(bytes)),
        SourceFormat::Text => Ok(text::plain(bytes)),
        SourceFormat::Image => image::describe(bytes, name),
    }
}
