//! The chat catalog's shared pieces (its statements are `catalog_statements` and
//! `row_statements`, written once for both databases).

use hearth_core::ChatUri;

use crate::error::{StoreError, StoreResult};
pub(crate) use crate::rows::decode_chat;

/// `NotFound` for the chat when an update changed no row.
pub(crate) fn expect_row(affected: u64, what: &'static str, key: &ChatUri) -> StoreResult<()> {
    if affected == 0 {
        Err(StoreError::NotFound {
            what,
            key: key.to_string(),
        })
    } else {
        Ok(())
    }
}
