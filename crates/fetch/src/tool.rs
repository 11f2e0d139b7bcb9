//! `web_fetch`: the agent tool that reads a web page as Markdown.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use hearth_core::{ToolCallContext, ToolError, ToolHandler, ToolOutput, ToolReach};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::calendar::summarize_calendar;
use crate::content::ContentTypes;
use crate::error::FetchError;
use crate::fetcher::{FetchRequest, FetchResponse, Fetcher};
use crate::html::convert_html;
use crate::observer::{FetchObserver, FetchRecord};
use crate::page_job::{PageIsolation, PageKind, read_isolated};
use crate::pdf::{DEFAULT_PDF_TIME_LIMIT, pdf_to_text};
use crate::policy::PrivateNetworks;

/// The tool's name, as models see it.
pub const WEB_FETCH_TOOL: &str = "web_fetch";

/// The most characters of content returned; longer content is cut with a marker.
pub const MAX_OUTPUT_CHARACTERS: usize = 100_000;

/// The content types `web_fetch` reads.
const READABLE_TYPES: &[&str] = &[
    "text/html",
    "application/xhtml+xml",
    "text/plain",
    "text/markdown",
    "text/csv",
    "text/xml",
    "application/xml",
    "application/rss+xml",
    "application/atom+xml",
    "application/json",
    "application/ld+json",
    "text/calendar",
    "application/pdf",
];

const DESCRIPTION: &str = "Fetch a public web page (http or https) and return its main \
content as Markdown, with its title and final URL. Also reads plain text, JSON, XML, \
iCalendar files (summarized as a list of events) and PDFs (as text). Content longer \
than 100,000 characters is cut and marked. Private, local and cloud-metadata addresses \
are refused.";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Arguments {
    url: String,
    #[serde(default)]
    max_characters: Option<usize>,
}

/// What a page turned into, before rendering for the model.
struct Page {
    title: String,
    content: String,
}

/// The `web_fetch` tool: read-only (`mutates() == false`), so it runs without approval;
/// every call is reported to the [`FetchObserver`], if one is set.
pub struct WebFetchTool {
    fetcher: Arc<Fetcher>,
    observer: Option<Arc<dyn FetchObserver>>,
    max_characters: usize,
    pdf_time_limit: Duration,
    isolation: Option<PageIsolation>,
}

/// Time allowed to read one HTML page.
const HTML_TIME_LIMIT: Duration = Duration::from_secs(30);

impl std::fmt::Debug for WebFetchTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebFetchTool")
            .field("fetcher", &self.fetcher)
            .field("observed", &self.observer.is_some())
            .field("max_characters", &self.max_characters)
            .field("isolated", &self.isolation.is_some())
            .finish()
    }
}

impl WebFetchTool {
    /// The tool over `fetcher`. Models choose its URLs, so a fetcher whose policy
    /// allows private networks is refused.
    pub fn new(fetcher: Arc<Fetcher>) -> Result<Self, FetchError> {
        if fetcher.policy().private_networks() == PrivateNetworks::Allow {
            return Err(FetchError::InvalidPolicy {
                reason: "web_fetch fetches URLs a model chose, so its policy must deny \
                         private networks"
                    .to_owned(),
            });
        }
        Ok(Self {
            fetcher,
            observer: None,
            max_characters: MAX_OUTPUT_CHARACTERS,
            pdf_time_limit: DEFAULT_PDF_TIME_LIMIT,
            isolation: None,
        })
    }

    /// Reads HTML and PDF pages in children of `isolator` under `limits` (memory,
    /// output; the time is the tool's own), so a page built to crash its parser fails
    /// that fetch and nothing else. Without it they are read on a thread of this
    /// process, which a hostile page can abort: Hearth's commands always isolate.
    pub fn with_isolation(
        mut self,
        isolator: hearth_process::Isolator,
        limits: hearth_process::JobLimits,
    ) -> Self {
        self.isolation = Some(PageIsolation { isolator, limits });
        self
    }

    /// Reports every fetch to `observer` (Hearth's audit log).
    pub fn with_observer(mut self, observer: Arc<dyn FetchObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Lowers the content cut-off below [`MAX_OUTPUT_CHARACTERS`].
    pub fn with_max_characters(mut self, max_characters: usize) -> Self {
        self.max_characters = max_characters.min(MAX_OUTPUT_CHARACTERS);
        self
    }

    async fn run(
        &self,
        call: &ToolCallContext,
        arguments: Arguments,
    ) -> Result<ToolOutput, ToolError> {
        let request = FetchRequest::new(
            &arguments.url,
            ContentTypes::only(READABLE_TYPES.iter().copied()),
        );
        let started = Instant::now();
        let fetched = self.fetcher.fetch(&request).await;
        let record = FetchRecord::new(&arguments.url, &fetched, started.elapsed());
        tracing::info!(
            url = %record.url,
            final_url = record.final_url.as_deref().unwrap_or(""),
            status = record.status,
            bytes = record.bytes,
            outcome = ?record.outcome,
            "web_fetch"
        );
        if let Some(observer) = &self.observer {
            observer.observe(call, &record);
        }
        let response = fetched.map_err(tool_error)?;
        let page = self
            .read(&response)
            .await
            .map_err(|error| ToolError::Failed(format!("{error} (from {})", response.final_url)))?;
        let limit = arguments
            .max_characters
            .map_or(self.max_characters, |wanted| {
                wanted.clamp(1, self.max_characters)
            });
        Ok(render(&response, page, limit))
    }

    async fn read(&self, response: &FetchResponse) -> Result<Page, FetchError> {
        let media_type = &response.media_type;
        let kind = if media_type.is_html() {
            Some(PageKind::Html)
        } else if media_type.essence == "application/pdf" {
            Some(PageKind::Pdf)
        } else {
            None
        };
        if let (Some(kind), Some(isolation)) = (kind, &self.isolation) {
            let time_limit = match kind {
                PageKind::Html => HTML_TIME_LIMIT,
                PageKind::Pdf => self.pdf_time_limit,
            };
            let base = response.final_url.to_string();
            // HTML goes decoded from its charset (the child reads UTF-8); a PDF as it came.
            let body = match kind {
                PageKind::Html => bytes::Bytes::from(response.text()),
                PageKind::Pdf => response.body.clone(),
            };
            let (title, content) = read_isolated(isolation, kind, body, &base, time_limit).await?;
            return Ok(Page { title, content });
        }
        if media_type.is_html() {
            let html = response.text();
            let base = response.final_url.to_string();
            let document = tokio::task::spawn_blocking(move || convert_html(&html, Some(&base)))
                .await
                .map_err(|error| FetchError::Conversion {
                    format: "HTML",
                    message: error.to_string(),
                })?;
            return Ok(Page {
                title: document.title,
                content: document.markdown,
            });
        }
        let content = match media_type.essence.as_str() {
            "text/calendar" => summarize_calendar(&response.text()),
            "application/pdf" => pdf_to_text(response.body.clone(), self.pdf_time_limit).await?,
            _ => response.text(),
        };
        Ok(Page {
            title: String::new(),
            content,
        })
    }
}

fn tool_error(error: FetchError) -> ToolError {
    match &error {
        FetchError::Refused { .. } => ToolError::Refused(error.to_string()),
        FetchError::InvalidUrl { .. } => ToolError::InvalidArguments(error.to_string()),
        _ => ToolError::Failed(error.to_string()),
    }
}

/// Cuts `text` to at most `limit` characters; says so, and how much there was.
fn truncate(text: &str, limit: usize) -> (String, bool) {
    match text.char_indices().nth(limit) {
        None => (text.to_owned(), false),
        Some((end, _)) => {
            let total = text.chars().count();
            (
                format!(
                    "{}\n\n[Content truncated: showing the first {limit} of {total} characters.]",
                    &text[..end]
                ),
                true,
            )
        }
    }
}

fn render(response: &FetchResponse, page: Page, limit: usize) -> ToolOutput {
    let characters = page.content.chars().count();
    let (content, truncated) = truncate(&page.content, limit);
    let mut text = String::new();
    if !page.title.is_empty() {
        text.push_str(&format!("Title: {}\n", page.title));
    }
    text.push_str(&format!("URL: {}\n", response.final_url));
    if response.final_url != response.requested_url {
        text.push_str(&format!("Requested URL: {}\n", response.requested_url));
    }
    text.push_str(&format!(
        "Content-Type: {}\n\n",
        response.media_type.essence
    ));
    text.push_str(&content);
    let data = json!({
        "url": response.requested_url.as_str(),
        "final_url": response.final_url.as_str(),
        "title": page.title,
        "status": response.status,
        "content_type": response.media_type.essence,
        "bytes": response.body.len(),
        "characters": characters,
        "truncated": truncated,
    });
    ToolOutput::Content {
        text,
        data: Some(data),
    }
}

impl ToolHandler for WebFetchTool {
    fn name(&self) -> &str {
        WEB_FETCH_TOOL
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {
                    "type": "string",
                    "description": "The absolute http or https URL to read."
                },
                "max_characters": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_OUTPUT_CHARACTERS,
                    "description": "Return at most this many characters of content (default and maximum 100000)."
                }
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }

    fn mutates(&self) -> bool {
        false
    }

    fn reach(&self) -> ToolReach {
        ToolReach::Network {
            url_argument: "url",
        }
    }

    fn execute<'a>(
        &'a self,
        call: &'a ToolCallContext,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let arguments: Arguments = hearth_core::parse_arguments(WEB_FETCH_TOOL, arguments)?;
            self.run(call, arguments).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn truncation_counts_characters_and_says_so() {
        let (short, cut) = truncate("héllo", 5);
        assert_eq!((short.as_str(), cut), ("héllo", false));
        let (long, cut) = truncate("ééééééé", 3);
        assert!(cut);
        assert_eq!(
            long,
            "ééé\n\n[Content truncated: showing the first 3 of 7 characters.]"
        );
    }
}
