//! Failure markers: a project's memory of a source that failed with no usable
//! snapshot, so later automatic runs re-surface the error instead of retrying.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::source::ContextSource;

/// What a failure marker records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureMarker {
    /// The source that failed.
    pub source: ContextSource,
    /// The error, as shown to the user.
    pub error: String,
    /// The source's fingerprint when it failed: a file's `mtime_ns:size`, a remote's
    /// `kind:url`. A marker whose fingerprint differs from the current one is ignored.
    pub fingerprint: String,
    /// When it failed.
    pub failed_at: DateTime<Utc>,
}

impl FailureMarker {
    pub(crate) fn to_json(&self) -> Vec<u8> {
        // A marker is plain strings: serializing it cannot fail; an empty marker reads
        // as no marker, which only costs a retry.
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }

    pub(crate) fn from_json(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok()
    }
}
