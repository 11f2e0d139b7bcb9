//! Where a subscription's iCalendar bytes come from. Hearth plugs its guarded fetcher in
//! here; [`LocalSource`] reads `file://` URLs and configured paths.

use std::path::PathBuf;

use futures::future::BoxFuture;

use crate::error::{CalendarError, Result};

/// A subscription to fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscription {
    /// The calendar's id.
    pub calendar: String,
    /// Its URL, if configured.
    pub url: Option<String>,
    /// A local copy to read instead of the URL, if configured.
    pub path: Option<PathBuf>,
    /// Whether the URL may point into a private network.
    pub allow_private_network: bool,
    /// The most bytes to accept.
    pub max_bytes: u64,
    /// How long a fetched copy is used before fetching again.
    pub refresh: std::time::Duration,
}

/// Fetches subscriptions.
pub trait SubscriptionSource: Send + Sync + 'static {
    /// The subscription's current iCalendar bytes, at most `max_bytes` of them.
    fn fetch<'a>(&'a self, subscription: &'a Subscription) -> BoxFuture<'a, Result<Vec<u8>>>;
}

/// Reads subscriptions from the local disk: the configured `path`, or a `file://` URL.
/// Any other URL is refused until a network source is plugged in.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalSource;

impl SubscriptionSource for LocalSource {
    fn fetch<'a>(&'a self, subscription: &'a Subscription) -> BoxFuture<'a, Result<Vec<u8>>> {
        Box::pin(async move {
            let url = subscription.url.clone().unwrap_or_default();
            let path = match (&subscription.path, url.strip_prefix("file://")) {
                (Some(path), _) => path.clone(),
                (None, Some(path)) => PathBuf::from(path),
                (None, None) => {
                    return Err(CalendarError::Fetch {
                        id: subscription.calendar.clone(),
                        url,
                        message: "fetching over the network is not available in this build; set `path` to a downloaded copy of the calendar".to_owned(),
                    });
                }
            };
            let limit = subscription.max_bytes;
            tokio::task::spawn_blocking(move || -> Result<Vec<u8>> {
                let size = std::fs::metadata(&path)
                    .map_err(|source| CalendarError::Read {
                        path: path.clone(),
                        source,
                    })?
                    .len();
                if size > limit {
                    return Err(CalendarError::TooLarge {
                        what: path.display().to_string(),
                        size,
                        limit,
                    });
                }
                std::fs::read(&path).map_err(|source| CalendarError::Read { path, source })
            })
            .await
            .map_err(|error| CalendarError::Task(error.to_string()))?
        })
    }
}
