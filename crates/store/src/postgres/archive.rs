//! A session, or everything, as a lossless JSON Lines archive, from PostgreSQL: the same
//! records as the SQLite store writes (see `crate::archive`), so either store's archive
//! imports into the other.

use std::io::Write;

use futures::future::BoxFuture;
use hearth_core::SessionUri;
use serde_json::{Map, Value};
use sqlx::postgres::PgRow;

use super::PgStore;
use crate::archive::{ArchiveSource, Read, export_all, export_session, read_sql, row_json};
use crate::error::{StoreError, StoreResult};

impl ArchiveSource for PgStore {
    fn read<'a>(&'a self, read: Read<'a>) -> BoxFuture<'a, StoreResult<Vec<Map<String, Value>>>> {
        Box::pin(async move {
            let sql = read_sql(read).replace("$key", "$1");
            let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
            if let Some(key) = read.key() {
                query = query.bind(key);
            }
            let rows: Vec<PgRow> = query
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
            rows.iter()
                .map(|row| row_json(row, read.keeps_id()))
                .collect()
        })
    }
}

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
