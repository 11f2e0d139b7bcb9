//! Source formats, recognised by extension and, where the extension lies, by the
//! file's first bytes.

use std::fmt;
use std::path::Path;

/// A kind of document Hearth converts into Markdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    /// Portable Document Format.
    Pdf,
    /// Word document (Office Open XML).
    Docx,
    /// PowerPoint presentation (Office Open XML).
    Pptx,
    /// Spreadsheet: Excel (`.xlsx`, `.xlsm`, `.xlsb`, `.xls`) or OpenDocument (`.ods`).
    Xlsx,
    /// OpenDocument text.
    Odt,
    /// EPUB e-book.
    Epub,
    /// HTML page.
    Html,
    /// Markdown, passed through.
    Markdown,
    /// Plain text (including CSV), passed through.
    Text,
    /// Raster image: described by its dimensions, no pixels decoded.
    Image,
}

/// Every format.
const ALL: [SourceFormat; 10] = [
    SourceFormat::Pdf,
    SourceFormat::Docx,
    SourceFormat::Pptx,
    SourceFormat::Xlsx,
    SourceFormat::Odt,
    SourceFormat::Epub,
    SourceFormat::Html,
    SourceFormat::Markdown,
    SourceFormat::Text,
    SourceFormat::Image,
];

/// Extensions (lower case) and the format each names.
const EXTENSIONS: &[(&str, SourceFormat)] = &[
    ("pdf", SourceFormat::Pdf),
    ("docx", SourceFormat::Docx),
    ("pptx", SourceFormat::Pptx),
    ("xlsx", SourceFormat::Xlsx),
    ("xlsm", SourceFormat::Xlsx),
    ("xlsb", SourceFormat::Xlsx),
    ("xls", SourceFormat::Xlsx),
    ("ods", SourceFormat::Xlsx),
    ("odt", SourceFormat::Odt),
    ("epub", SourceFormat::Epub),
    ("html", SourceFormat::Html),
    ("htm", SourceFormat::Html),
    ("xhtml", SourceFormat::Html),
    ("md", SourceFormat::Markdown),
    ("markdown", SourceFormat::Markdown),
    ("txt", SourceFormat::Text),
    ("text", SourceFormat::Text),
    ("csv", SourceFormat::Text),
    ("tsv", SourceFormat::Text),
    ("png", SourceFormat::Image),
    ("jpg", SourceFormat::Image),
    ("jpeg", SourceFormat::Image),
    ("gif", SourceFormat::Image),
    ("webp", SourceFormat::Image),
    ("bmp", SourceFormat::Image),
];

impl SourceFormat {
    /// The format a file's extension names (case-insensitive), if Hearth converts it.
    pub fn from_path(path: &Path) -> Option<Self> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        EXTENSIONS
            .iter()
            .find(|(known, _)| *known == extension)
            .map(|(_, format)| *format)
    }

    /// A stable one-word token (`pdf`, `docx`, …), as passed to an isolated converter.
    pub fn token(&self) -> &'static str {
        match self {
            Self::Pdf => "pdf",
            Self::Docx => "docx",
            Self::Pptx => "pptx",
            Self::Xlsx => "xlsx",
            Self::Odt => "odt",
            Self::Epub => "epub",
            Self::Html => "html",
            Self::Markdown => "markdown",
            Self::Text => "text",
            Self::Image => "image",
        }
    }

    /// The format a [`token`](Self::token) names.
    pub fn from_token(token: &str) -> Option<Self> {
        ALL.iter().copied().find(|format| format.token() == token)
    }

    /// A short human name: "PDF", "DOCX", "text", ….
    pub fn name(&self) -> &'static str {
        match self {
            Self::Pdf => "PDF",
            Self::Docx => "DOCX",
            Self::Pptx => "PPTX",
            Self::Xlsx => "spreadsheet",
            Self::Odt => "ODT",
            Self::Epub => "EPUB",
            Self::Html => "HTML",
            Self::Markdown => "Markdown",
            Self::Text => "text",
            Self::Image => "image",
        }
    }
}

impl fmt::Display for SourceFormat {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.name())
    }
}
