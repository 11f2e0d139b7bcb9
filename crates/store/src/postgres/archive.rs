//! A session, or everything, as a lossless JSON Lines archive, from PostgreSQL: the same
//! records as the SQLite store writes (see `crate::archive`), so either store's archive
//! imports into the other.

use std::io::Write;

use hearth_core::SessionUri;
use sqlx::postgres::PgRow;

use super::PgStore;
use crate::archive::{export_all, export_session};
use crate::error::{StoreError, StoreResult};

crate::archive::archive_source!(PgStore, PgRow, "$1");

impl PgStore {
    pub(crate) async fn archive_session_impl(&self, uri: &SessionUri) -> StoreResult<String> {
        let mut out = Vec::new();
        export_session(self, uri, &mut out).await?;
        String::from_utf8(out)
            .map_err(|error| StoreError::Archive(format!("the archive is not UTF-8: {error}")))
    }

    /// Writes the archive of everything (see [`crate::SqliteStore::export_all`]).
    pub async fn export_all(&self, out: &mut (dyn Write + Send)) -> StoreResult<()> {
        export_all(self, out).await
    }
}
