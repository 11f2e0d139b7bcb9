//! The converter's one error type.

use std::path::PathBuf;
use std::time::Duration;

use thiserror::Error;

use super::format::SourceFormat;

/// Why a document could not be converted. Messages say what failed, on what, and what
/// to do about it.
#[derive(Debug, Error)]
pub enum ConvertError {
    /// The input is larger than [`ConvertLimits::max_input_bytes`](super::ConvertLimits).
    #[error(
        "the document is {bytes} bytes, over the {limit}-byte conversion limit; \
         convert a smaller file or raise the limit"
    )]
    TooLarge {
        /// Size of the input.
        bytes: u64,
        /// The limit it exceeded.
        limit: u64,
    },
    /// The file's extension names no format Hearth converts.
    #[error(
        "cannot convert files {}; Hearth converts PDF, DOCX, PPTX, XLSX/ODS, ODT, EPUB, \
         HTML, Markdown, text and images",
        describe_extension(.extension)
    )]
    Unsupported {
        /// The extension, without its dot (empty if the file has none).
        extension: String,
    },
    /// The document is damaged or not what its name says.
    #[error(
        "could not read the {format} document: {message}; check that the file is a valid {format} file"
    )]
    Malformed {
        /// The format the document was read as.
        format: SourceFormat,
        /// What went wrong.
        message: String,
    },
    /// Conversion ran past [`ConvertLimits::time_limit`](super::ConvertLimits).
    #[error(
        "converting the {format} document took longer than {limit:?}; \
         convert a smaller document or raise the time limit"
    )]
    TimedOut {
        /// The format being converted.
        format: SourceFormat,
        /// The time limit that ran out.
        limit: Duration,
    },
    /// The document ended its isolated converter: a parser crashed, overflowed its
    /// stack, or asked for more memory or CPU time than it may have. Nothing else was
    /// harmed.
    #[error(
        "the {format} document could not be converted: its converter {how}; the file is damaged or built to harm, and was skipped"
    )]
    Crashed {
        /// The format being converted.
        format: SourceFormat,
        /// How the converter died, in words.
        how: String,
    },
    /// The file really lies in Hearth's own data directory (through a symlink or a hard
    /// link): it is never a source.
    #[error(
        "{} is not used as a source: {reason}; a project's sources never include Hearth's own data directory",
        path.display()
    )]
    Protected {
        /// The source as given.
        path: PathBuf,
        /// The refusal.
        reason: String,
    },
    /// The file could not be read.
    #[error("could not read {}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

fn describe_extension(extension: &str) -> String {
    if extension.is_empty() {
        "without an extension".to_owned()
    } else {
        format!("with the extension .{extension}")
    }
}

/// Result of a conversion.
pub type Result<T, E = ConvertError> = std::result::Result<T, E>;
