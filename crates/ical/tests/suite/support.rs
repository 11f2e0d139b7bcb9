//! Helpers: times.

use chrono::{DateTime, Utc};

/// An RFC 3339 time as UTC.
pub fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}
