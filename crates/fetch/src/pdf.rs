//! PDF to text, isolated: the extractor panics on some malformed files and can take
//! long on hostile ones, so it runs on a blocking thread, under `catch_unwind`, with a
//! time limit.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use bytes::Bytes;

use crate::error::{FetchError, Result};

/// Default time allowed for one PDF.
pub const DEFAULT_PDF_TIME_LIMIT: Duration = Duration::from_secs(20);

fn failure(message: impl Into<String>) -> FetchError {
    FetchError::Conversion {
        format: "PDF",
        message: message.into(),
    }
}

/// Extracts the text of a PDF.
///
/// A panic inside the extractor becomes an error. When the time limit runs out the
/// call fails at once; the extraction thread cannot be stopped and finishes in the
/// background (bounded by the size cap on what was fetched).
pub async fn pdf_to_text(body: Bytes, time_limit: Duration) -> Result<String> {
    let task = tokio::task::spawn_blocking(move || {
        catch_unwind(AssertUnwindSafe(|| {
            pdf_extract::extract_text_from_mem(&body)
        }))
    });
    let joined = tokio::time::timeout(time_limit, task)
        .await
        .map_err(|_| failure(format!("extraction took longer than {time_limit:?}")))?;
    let caught = joined.map_err(|error| failure(format!("extraction task failed: {error}")))?;
    let extracted = caught.map_err(|_| failure("the file is malformed (the extractor crashed)"))?;
    let text = extracted.map_err(|error| failure(error.to_string()))?;
    Ok(tidy(&text))
}

/// Extracted text tidied: trailing spaces dropped, runs of blank lines collapsed to one,
/// leading and trailing blank lines removed.
pub fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines().map(str::trim_end) {
        if line.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn garbage_is_an_error_not_a_panic() {
        let error = pdf_to_text(
            Bytes::from_static(b"%PDF-1.4 garbage"),
            DEFAULT_PDF_TIME_LIMIT,
        )
        .await
        .unwrap_err();
        assert!(
            error.to_string().starts_with("could not read the PDF"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn truncated_header_is_an_error_not_a_panic() {
        let error = pdf_to_text(Bytes::from_static(b""), DEFAULT_PDF_TIME_LIMIT)
            .await
            .unwrap_err();
        assert!(
            error.to_string().starts_with("could not read the PDF"),
            "{error}"
        );
    }
}
