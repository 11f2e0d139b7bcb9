//! Conversions between domain values and column values.

use hearth_core::Timestamp;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{StoreError, StoreResult};

/// Milliseconds since the epoch.
/// ` LIMIT rows`: a row limit written into a statement, never bound. SQLite's planner
/// reads a bound LIMIT's value, so a statement whose limit is a parameter is prepared
/// again each time it runs; that cost more than most of the queries themselves (a
/// `hearth sessions list` of 30 sessions prepared 151 statements twice).
pub(crate) fn limit_clause(rows: i64) -> String {
    format!(" LIMIT {rows}")
}

pub(crate) fn to_millis(time: &Timestamp) -> i64 {
    time.timestamp_millis()
}

/// A timestamp from milliseconds since the epoch.
pub(crate) fn from_millis(millis: i64) -> StoreResult<Timestamp> {
    Timestamp::from_timestamp_millis(millis).ok_or_else(|| StoreError::Decode {
        what: "timestamp",
        detail: format!("{millis} is out of range"),
    })
}

/// JSON text of a value.
pub(crate) fn to_json<T: Serialize>(what: &'static str, value: &T) -> StoreResult<String> {
    serde_json::to_string(value).map_err(|error| StoreError::Decode {
        what,
        detail: error.to_string(),
    })
}

/// A value from JSON text.
pub(crate) fn from_json<T: DeserializeOwned>(what: &'static str, text: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|error| StoreError::Decode {
        what,
        detail: error.to_string(),
    })
}

/// A parsed identifier column.
pub(crate) fn parse_id<T, E: std::fmt::Display>(
    what: &'static str,
    text: &str,
    parse: impl FnOnce(&str) -> Result<T, E>,
) -> StoreResult<T> {
    parse(text).map_err(|error| StoreError::Decode {
        what,
        detail: error.to_string(),
    })
}
