//! The SQLite implementation of [`Store`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::future::BoxFuture;
use hearth_core::{
    ChatSummary, ChatUri, ConversationId, HarnessData, HarnessId, SessionSummary, SessionUri,
    Timestamp, Turn, TurnId,
};
use sqlx::SqlitePool;

use crate::error::{StoreError, StoreResult};
use crate::leases::{ChatLease, LeaseGrant, LeaseHolder, Takeover};
use crate::open::{Access, open_memory_pool, open_pool, open_read_only_pool, unwritable_reason};
use crate::store::{
    ChatRecord, NewSession, Registration, SessionPage, SessionQuery, Store, TurnPage,
};

/// Hearth's store on SQLite: WAL journal, `synchronous=FULL`, foreign keys on, numbered
/// migrations. Several processes may open one database at once.
#[derive(Clone, Debug)]
pub struct SqliteStore {
    pub(crate) pool: SqlitePool,
    /// For writes that need not be on disk before they return (see `Pools`).
    pub(crate) relaxed: SqlitePool,
    path: PathBuf,
    access: Access,
}

impl SqliteStore {
    /// Opens (creating if needed) the database at `path` and migrates it. Refuses a file
    /// that is not an SQLite database, a database from a newer Hearth, and never
    /// overwrites either.
    pub async fn open(path: &Path) -> StoreResult<Self> {
        let pools = open_pool(path).await?;
        Ok(Self {
            pool: pools.durable,
            relaxed: pools.relaxed,
            path: path.to_path_buf(),
            access: Access::ReadWrite,
        })
    }

    /// Opens an existing database for reading only, whatever its permissions: nothing is
    /// created, migrated or changed, and every write fails with [`StoreError::ReadOnly`].
    pub async fn open_read_only(path: &Path) -> StoreResult<Self> {
        Self::read_only(path, "reading only was asked for".to_owned()).await
    }

    /// Opens the database at `path` for reading and writing, or, when it exists but
    /// this process cannot write it (the file, its directory or its file system is
    /// read-only), for reading only: [`access`](Self::access) says which, and why.
    pub async fn open_or_read_only(path: &Path) -> StoreResult<Self> {
        if let Some(reason) = unwritable_reason(path) {
            return Self::read_only(path, reason).await;
        }
        match Self::open(path).await {
            Err(StoreError::ReadOnly { detail, .. }) if path.exists() => {
                Self::read_only(path, detail).await
            }
            other => other,
        }
    }

    async fn read_only(path: &Path, reason: String) -> StoreResult<Self> {
        let pool = open_read_only_pool(path).await?;
        Ok(Self {
            relaxed: pool.clone(),
            pool,
            path: path.to_path_buf(),
            access: Access::ReadOnly { reason },
        })
    }

    /// A private in-memory database (tests).
    pub async fn open_in_memory() -> StoreResult<Self> {
        let pools = open_memory_pool().await?;
        Ok(Self {
            pool: pools.durable,
            relaxed: pools.relaxed,
            path: PathBuf::from(":memory:"),
            access: Access::ReadWrite,
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the store can be written, and if not, why.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// The connection pool, for crates that keep their own tables in this database.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Waits for open connections to finish and closes them.
    pub async fn close(&self) {
        self.relaxed.close().await;
        self.pool.close().await;
    }

    pub(crate) fn error(&self, error: sqlx::Error) -> StoreError {
        match (StoreError::from_sqlx(&self.path, error), &self.access) {
            (StoreError::ReadOnly { path, .. }, Access::ReadOnly { reason }) => {
                StoreError::ReadOnly {
                    path,
                    detail: format!("it is open for reading only: {reason}"),
                }
            }
            (error, _) => error,
        }
    }

    /// Maps a uniqueness violation to a conflict naming the record.
    pub(crate) fn unique_conflict(&self, error: sqlx::Error, what: &str, key: &str) -> StoreError {
        if let sqlx::Error::Database(db) = &error
            && db.is_unique_violation()
        {
            return StoreError::Conflict(format!("{what} {key} already exists"));
        }
        self.error(error)
    }
}

impl Store for SqliteStore {
    fn create_session<'a>(&'a self, session: &'a NewSession) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.create_session_impl(session))
    }

    fn register_discovered<'a>(
        &'a self,
        session: &'a NewSession,
    ) -> BoxFuture<'a, StoreResult<Registration>> {
        Box::pin(self.register_discovered_impl(session))
    }

    fn session<'a>(
        &'a self,
        session: &'a SessionUri,
    ) -> BoxFuture<'a, StoreResult<Option<SessionSummary>>> {
        Box::pin(self.session_impl(session))
    }

    fn is_tombstoned<'a>(&'a self, session: &'a SessionUri) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(self.is_tombstoned_impl(session))
    }

    fn list_sessions<'a>(
        &'a self,
        query: &'a SessionQuery,
    ) -> BoxFuture<'a, StoreResult<SessionPage>> {
        Box::pin(self.list_sessions_impl(query))
    }

    fn proposals_changed_after<'a>(
        &'a self,
        after: Timestamp,
    ) -> BoxFuture<'a, StoreResult<Vec<(String, Timestamp)>>> {
        Box::pin(self.proposals_changed_after_impl(after))
    }

    fn search_turns<'a>(
        &'a self,
        query: &'a crate::SearchQuery,
    ) -> BoxFuture<'a, StoreResult<crate::SearchPage>> {
        Box::pin(self.search_turns_impl(query))
    }

    fn rebuild_search(&self) -> BoxFuture<'_, StoreResult<u64>> {
        Box::pin(self.rebuild_search_impl())
    }

    fn sessions_with_id_prefix<'a>(
        &'a self,
        prefix: &'a str,
        max: u32,
    ) -> BoxFuture<'a, StoreResult<Vec<SessionSummary>>> {
        Box::pin(self.sessions_with_id_prefix_impl(prefix, max))
    }

    fn chats_with_id_prefix<'a>(
        &'a self,
        prefix: &'a str,
        max: u32,
    ) -> BoxFuture<'a, StoreResult<Vec<ChatRecord>>> {
        Box::pin(self.chats_with_id_prefix_impl(prefix, max))
    }

    fn update_session<'a>(&'a self, summary: &'a SessionSummary) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.update_session_impl(summary))
    }

    fn delete_session<'a>(&'a self, session: &'a SessionUri) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(self.delete_session_impl(session))
    }

    fn trash_session<'a>(
        &'a self,
        session: &'a SessionUri,
    ) -> BoxFuture<'a, StoreResult<crate::Removal>> {
        Box::pin(self.trash_session_impl(session))
    }

    fn archive_session<'a>(
        &'a self,
        session: &'a SessionUri,
    ) -> BoxFuture<'a, StoreResult<String>> {
        Box::pin(async move {
            let mut out = Vec::new();
            self.export_session(session, &mut out).await?;
            String::from_utf8(out)
                .map_err(|error| StoreError::Archive(format!("the archive is not UTF-8: {error}")))
        })
    }

    fn trash_items(&self) -> BoxFuture<'_, StoreResult<Vec<crate::TrashItem>>> {
        Box::pin(self.trash_items_impl())
    }

    fn restore_from_trash<'a>(
        &'a self,
        kind: crate::TrashKind,
        id: &'a str,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.restore_impl(kind, id))
    }

    fn empty_trash(
        &self,
        before: Option<hearth_core::Timestamp>,
    ) -> BoxFuture<'_, StoreResult<Vec<crate::TrashItem>>> {
        Box::pin(self.empty_trash_impl(before))
    }

    fn chats<'a>(&'a self, session: &'a SessionUri) -> BoxFuture<'a, StoreResult<Vec<ChatRecord>>> {
        Box::pin(self.chats_impl(session))
    }

    fn insert_chat<'a>(&'a self, chat: &'a ChatRecord) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.insert_chat_impl(chat))
    }

    fn update_chat<'a>(&'a self, summary: &'a ChatSummary) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.update_chat_impl(summary))
    }

    fn delete_chat<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.delete_chat_impl(chat))
    }

    fn set_provider_data<'a>(
        &'a self,
        chat: &'a ChatUri,
        provider_data: &'a HarnessData,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.set_provider_data_impl(chat, provider_data))
    }

    fn set_draft<'a>(
        &'a self,
        chat: &'a ChatUri,
        draft: Option<&'a str>,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.set_draft_impl(chat, draft))
    }

    fn set_queue<'a>(
        &'a self,
        chat: &'a ChatUri,
        queued: &'a [hearth_core::UserMessage],
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.set_queue_impl(chat, queued))
    }

    fn mark_conversation<'a>(
        &'a self,
        provider: &'a HarnessId,
        conversation: &'a ConversationId,
        chat: &'a ChatUri,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.mark_conversation_impl(provider, conversation, chat))
    }

    fn is_conversation<'a>(
        &'a self,
        provider: &'a HarnessId,
        conversation: &'a ConversationId,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(self.is_conversation_impl(provider, conversation))
    }

    fn insert_turn<'a>(
        &'a self,
        chat: &'a ChatUri,
        turn: &'a Turn,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.insert_turn_impl(chat, turn))
    }

    fn save_turn<'a>(
        &'a self,
        chat: &'a ChatUri,
        turn: &'a Turn,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.save_turn_impl(chat, turn))
    }

    fn turns<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, StoreResult<Vec<Turn>>> {
        Box::pin(self.turns_impl(chat))
    }

    fn turn_page<'a>(
        &'a self,
        chat: &'a ChatUri,
        before: Option<&'a TurnId>,
        limit: u32,
    ) -> BoxFuture<'a, StoreResult<TurnPage>> {
        Box::pin(self.turn_page_impl(chat, before, limit))
    }

    fn copy_turns<'a>(
        &'a self,
        from: &'a ChatUri,
        to: &'a ChatUri,
        through: &'a TurnId,
    ) -> BoxFuture<'a, StoreResult<usize>> {
        Box::pin(self.copy_turns_impl(from, to, through))
    }

    fn take_lease<'a>(
        &'a self,
        chat: &'a ChatUri,
        holder: &'a LeaseHolder,
        ttl: Duration,
        takeover: &'a Takeover,
    ) -> BoxFuture<'a, StoreResult<LeaseGrant>> {
        Box::pin(self.take_lease_impl(chat, holder, ttl, takeover))
    }

    fn release_lease<'a>(
        &'a self,
        chat: &'a ChatUri,
        holder: &'a LeaseHolder,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(self.release_lease_impl(chat, holder))
    }

    fn leases<'a>(&'a self, session: &'a SessionUri) -> BoxFuture<'a, StoreResult<Vec<ChatLease>>> {
        Box::pin(self.leases_impl(session))
    }

    fn set_provider_data_at<'a>(
        &'a self,
        chat: &'a ChatUri,
        provider_data: &'a HarnessData,
        epoch: i64,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(self.set_provider_data_at_impl(chat, provider_data, epoch))
    }
}
