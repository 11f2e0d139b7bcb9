//! Reading a fetched page in a child process: HTML through readability into Markdown,
//! a PDF into text. Both parsers meet whatever a web server sends — a page nested two
//! million elements deep overflows a stack and aborts the process it runs in — so
//! `web_fetch` runs them in a child of Hearth's binary under limits when it is given an
//! [`Isolator`], and a page that kills its reader is one failed fetch.
//!
//! The child gets the kind (`html` or `pdf`) and the page's URL as arguments, the body
//! on stdin; it writes the title on the first line and the content after it.

use std::time::Duration;

use bytes::Bytes;
use hearth_process::{Isolator, JobError, JobLimits};

use crate::error::{FetchError, Result};
use crate::html::convert_html;
use crate::pdf::tidy;

/// The job's name.
pub const PAGE_JOB: &str = "page";

/// What a page is read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PageKind {
    Html,
    Pdf,
}

impl PageKind {
    fn token(self) -> &'static str {
        match self {
            Self::Html => "html",
            Self::Pdf => "pdf",
        }
    }

    fn format(self) -> &'static str {
        match self {
            Self::Html => "HTML",
            Self::Pdf => "PDF",
        }
    }
}

/// How pages are read in children.
#[derive(Clone, Debug)]
pub(crate) struct PageIsolation {
    pub isolator: Isolator,
    pub limits: JobLimits,
}

/// A page read in a child: its title (empty when it has none) and content.
pub(crate) async fn read_isolated(
    isolation: &PageIsolation,
    kind: PageKind,
    body: Bytes,
    url: &str,
    time_limit: Duration,
) -> Result<(String, String)> {
    let limits = JobLimits {
        cpu_seconds: time_limit.as_secs().max(1),
        wall_time: time_limit,
        ..isolation.limits.clone()
    };
    let failure = |message: String| FetchError::Conversion {
        format: kind.format(),
        message,
    };
    let output = isolation
        .isolator
        .run(
            PAGE_JOB,
            &[kind.token().to_owned(), url.to_owned()],
            body,
            &limits,
        )
        .await
        .map_err(|error| match error {
            JobError::Failed(message) => failure(message),
            JobError::TimedOut(limit) => failure(format!("reading it took longer than {limit:?}")),
            other => failure(format!("{other}; the page is damaged or built to harm")),
        })?;
    let text = String::from_utf8_lossy(&output);
    let (title, content) = text.split_once('\n').unwrap_or(("", &text));
    Ok((title.to_owned(), content.to_owned()))
}

/// The child's side: `arguments` are the kind and the page's URL; `input` the body.
pub fn page_job(arguments: &[String], input: Vec<u8>) -> std::result::Result<Vec<u8>, String> {
    let kind = arguments.first().map(String::as_str);
    let url = arguments.get(1).map(String::as_str);
    let (title, content) = match kind {
        Some("html") => {
            let html = String::from_utf8_lossy(&input);
            let document = convert_html(&html, url);
            (document.title, document.markdown)
        }
        Some("pdf") => {
            let text =
                pdf_extract::extract_text_from_mem(&input).map_err(|error| error.to_string())?;
            (String::new(), tidy(&text))
        }
        _ => return Err("no page kind named (html or pdf)".to_owned()),
    };
    let mut output = title.replace('\n', " ").into_bytes();
    output.push(b'\n');
    output.extend_from_slice(content.as_bytes());
    Ok(output)
}
