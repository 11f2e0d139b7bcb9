//! The hook through which every `web_fetch` call is reported, so Hearth's audit log
//! (or anything else) can record it.

use std::time::Duration;

use hearth_core::ToolCallContext;
use serde::Serialize;

use crate::error::FetchError;
use crate::fetcher::FetchResponse;
use crate::guard::redacted;

/// How a fetch ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FetchOutcome {
    /// A success status and a body within the caps.
    Fetched,
    /// The guard refused the URL, an address or a redirect.
    Refused {
        /// The rule's stable code ([`Rule::code`](crate::Rule::code)).
        rule: String,
        /// The refusal as a sentence.
        message: String,
    },
    /// The fetch failed for another reason.
    Failed {
        /// The error as a sentence (never a response body).
        message: String,
    },
}

/// What one fetch did, reported after it ends, refused and failed fetches included.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FetchRecord {
    /// The URL asked for, as given, its credentials redacted.
    pub url: String,
    /// The URL that answered, after redirects, if one answered.
    pub final_url: Option<String>,
    /// Redirects followed.
    pub redirects: usize,
    /// The HTTP status that ended the fetch, if the server answered.
    pub status: Option<u16>,
    /// Body bytes read.
    pub bytes: u64,
    /// The declared content type, if a body was read.
    pub content_type: Option<String>,
    /// How the fetch ended.
    pub outcome: FetchOutcome,
    /// Wall time of the fetch, in milliseconds.
    pub elapsed_ms: u64,
}

impl FetchRecord {
    pub(crate) fn new(
        requested: &str,
        result: &Result<FetchResponse, FetchError>,
        elapsed: Duration,
    ) -> Self {
        let elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        let url = url::Url::parse(requested.trim())
            .map(|url| redacted(&url))
            .unwrap_or_else(|_| {
                hearth_core::redact_userinfo(requested)
                    .chars()
                    .take(200)
                    .collect()
            });
        match result {
            Ok(response) => Self {
                url,
                final_url: Some(response.final_url.to_string()),
                redirects: response.redirects.len(),
                status: Some(response.status),
                bytes: response.body.len() as u64,
                content_type: Some(response.media_type.essence.clone()),
                outcome: FetchOutcome::Fetched,
                elapsed_ms,
            },
            Err(error) => Self {
                url,
                final_url: None,
                redirects: 0,
                status: error.status(),
                bytes: 0,
                content_type: None,
                outcome: match error.rule() {
                    Some(rule) => FetchOutcome::Refused {
                        rule: rule.code().to_owned(),
                        message: error.to_string(),
                    },
                    None => FetchOutcome::Failed {
                        message: error.to_string(),
                    },
                },
                elapsed_ms,
            },
        }
    }
}

/// Told about every fetch the `web_fetch` tool makes, after it ends.
///
/// Hearth's audit log implements this to record each fetch with the tool call that
/// made it. Implementations must be quick and must not fail the call: log their own
/// errors. Any `Fn(&ToolCallContext, &FetchRecord)` closure is an observer.
pub trait FetchObserver: Send + Sync + 'static {
    /// Records one fetch made for `call`.
    fn observe(&self, call: &ToolCallContext, record: &FetchRecord);
}

impl<F> FetchObserver for F
where
    F: Fn(&ToolCallContext, &FetchRecord) + Send + Sync + 'static,
{
    fn observe(&self, call: &ToolCallContext, record: &FetchRecord) {
        self(call, record);
    }
}
