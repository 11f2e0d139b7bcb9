//! Statements on sessions, chats and leases both databases share (numbered `$N`
//! parameters; a later time kept with `CASE`, as `MAX` and `GREATEST` are each only one
//! database's). What takes a database's own locks or transactions stays with that
//! database's store.

use hearth_core::{
    ChatSummary, ChatUri, ConversationId, HarnessData, HarnessId, SessionSummary, SessionUri,
    UserMessage, now,
};

use crate::chats::expect_row;
use crate::codec::{from_millis, limit_clause, parse_id, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::leases::{ChatLease, holder_from};
use crate::postgres::PgStore;
use crate::rows::{decode_session, encode_queue};
use crate::sessions::{
    SESSION_COLUMNS, decode_cursor, encode_cursor, encode_directories, like_pattern,
    provenance_text, session_filters,
};
use crate::sqlite::SqliteStore;
use crate::store::{ChatRecord, NewSession, ScopeFilter, SessionPage, SessionQuery};
use sqlx::Row;

macro_rules! row_statements {
    ($store:ty) => {
        impl $store {
    pub(crate) async fn session_impl(
        &self,
        uri: &SessionUri,
    ) -> StoreResult<Option<SessionSummary>> {
        let sql =
            format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE uri = $1 AND deleted_at IS NULL");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(uri.to_string())
            .fetch_optional(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        row.as_ref().map(decode_session).transpose()
    }

    /// A page of sessions, newest first, after the query's cursor.
    pub(crate) async fn list_sessions_impl(
        &self,
        query: &SessionQuery,
    ) -> StoreResult<SessionPage> {
        let limit = i64::from(query.limit.clamp(1, 500));
        let cursor = query.cursor.as_deref().map(decode_cursor).transpose()?;
        let (filters, next) = session_filters(query, Self::CASELESS_LIKE);
        let mut sql =
            format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE deleted_at IS NULL{filters}");
        if cursor.is_some() {
            sql.push_str(&format!(" AND (updated_at, id) < (${next}, ${})", next + 1));
        }
        sql.push_str(" ORDER BY updated_at DESC, id DESC");
        sql.push_str(&limit_clause(limit + 1));
        let mut statement = sqlx::query(sqlx::AssertSqlSafe(sql));
        if let ScopeFilter::Project(project) = &query.scope {
            statement = statement.bind(project.as_str().to_owned());
        }
        if let Some(provider) = &query.provider {
            statement = statement.bind(provider.as_str().to_owned());
        }
        if let Some(provenance) = query.provenance {
            statement = statement.bind(provenance_text(provenance));
        }
        if let Some(text) = &query.title_contains {
            statement = statement.bind(like_pattern(text));
        }
        if let Some(viewer) = &query.viewer {
            statement = statement.bind(viewer.clone());
        }
        if let Some((time, id)) = cursor {
            statement = statement.bind(time).bind(id);
        }
        let rows = statement
            .fetch_all(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        let has_more = rows.len() as i64 > limit;
        let mut sessions = Vec::with_capacity(rows.len().min(limit as usize));
        let mut next_cursor = None;
        for row in rows.iter().take(limit as usize) {
            sessions.push(decode_session(row)?);
            if has_more {
                next_cursor = Some(encode_cursor(
                    row.try_get("updated_at").map_err(|e| self.error(e))?,
                    row.try_get("id").map_err(|e| self.error(e))?,
                ));
            }
        }
        Ok(SessionPage {
            sessions,
            next_cursor,
        })
    }

    pub(crate) async fn is_tombstoned_impl(&self, uri: &SessionUri) -> StoreResult<bool> {
        let found =
            sqlx::query("SELECT 1 FROM sessions WHERE uri = $1 AND deleted_at IS NOT NULL")
                .bind(uri.to_string())
                .fetch_optional(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
        Ok(found.is_some())
    }

    pub(crate) async fn update_session_impl(&self, summary: &SessionSummary) -> StoreResult<()> {
        let result = sqlx::query(
            "UPDATE sessions SET title = $1, model = $2, pinned = $3, archived = $4,
                    updated_at = CASE WHEN updated_at > $5 THEN updated_at ELSE $5 END
             WHERE uri = $6 AND deleted_at IS NULL",
        )
        .bind(summary.title.as_deref())
        .bind(summary.model.as_deref())
        .bind(i64::from(summary.pinned))
        .bind(i64::from(summary.archived))
        .bind(to_millis(&summary.updated_at))
        .bind(summary.uri.to_string())
        .execute(&self.relaxed)
        .await
        .map_err(|e| self.error(e))?;
        if result.rows_affected() == 0 {
            return Err(StoreError::NotFound {
                what: "session",
                key: summary.uri.to_string(),
            });
        }
        Ok(())
    }

    pub(crate) async fn is_conversation_impl(
        &self,
        provider: &HarnessId,
        conversation: &ConversationId,
    ) -> StoreResult<bool> {
        let found =
            sqlx::query("SELECT 1 FROM chat_backings WHERE provider = $1 AND backing = $2")
                .bind(provider.as_str())
                .bind(conversation.as_str())
                .fetch_optional(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
        Ok(found.is_some())
    }

    pub(crate) async fn mark_conversation_impl(
        &self,
        provider: &HarnessId,
        conversation: &ConversationId,
        chat: &ChatUri,
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO chat_backings (provider, backing, chat_uri) VALUES ($1, $2, $3)
             ON CONFLICT (provider, backing) DO UPDATE SET chat_uri = excluded.chat_uri",
        )
        .bind(provider.as_str())
        .bind(conversation.as_str())
        .bind(chat.to_string())
        .execute(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        Ok(())
    }

    pub(crate) async fn set_draft_impl(
        &self,
        chat: &ChatUri,
        draft: Option<&str>,
    ) -> StoreResult<()> {
        let result = sqlx::query(
            "UPDATE chats SET draft = $1, updated_at = CASE WHEN updated_at > $2 THEN updated_at ELSE $2 END WHERE uri = $3",
        )
        .bind(draft)
        .bind(to_millis(&now()))
        .bind(chat.to_string())
        .execute(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        expect_row(result.rows_affected(), "chat", chat)
    }

    pub(crate) async fn set_provider_data_impl(
        &self,
        chat: &ChatUri,
        provider_data: &HarnessData,
    ) -> StoreResult<()> {
        let result = sqlx::query("UPDATE chats SET provider_data = $1 WHERE uri = $2")
            .bind(provider_data.as_bytes())
            .bind(chat.to_string())
            .execute(&self.relaxed)
            .await
            .map_err(|e| self.error(e))?;
        expect_row(result.rows_affected(), "chat", chat)
    }

    pub(crate) async fn set_queue_impl(
        &self,
        chat: &ChatUri,
        queued: &[UserMessage],
    ) -> StoreResult<()> {
        let text = encode_queue(queued)?;
        let result = sqlx::query(
            "UPDATE chats SET queued = $1, updated_at = CASE WHEN updated_at > $2 THEN updated_at ELSE $2 END WHERE uri = $3",
        )
        .bind(text)
        .bind(to_millis(&now()))
        .bind(chat.to_string())
        .execute(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        expect_row(result.rows_affected(), "chat", chat)
    }

    pub(crate) async fn update_chat_impl(&self, summary: &ChatSummary) -> StoreResult<()> {
        let result =
            sqlx::query("UPDATE chats SET title = $1, model = $2, updated_at = $3 WHERE uri = $4")
                .bind(summary.title.as_deref())
                .bind(summary.model.as_deref())
                .bind(to_millis(&summary.updated_at))
                .bind(summary.uri.to_string())
                .execute(&self.relaxed)
                .await
                .map_err(|e| self.error(e))?;
        expect_row(result.rows_affected(), "chat", &summary.uri)
    }

    pub(crate) async fn leases_impl(&self, session: &SessionUri) -> StoreResult<Vec<ChatLease>> {
        let rows: Vec<(String, String, i64, String, i64, i64)> = sqlx::query_as(
            "SELECT l.chat_uri, l.owner, l.pid, l.host, l.epoch, l.expires_at
             FROM chat_leases l JOIN chats c ON c.uri = l.chat_uri
             JOIN sessions s ON s.id = c.session_id
             WHERE s.uri = $1",
        )
        .bind(session.to_string())
        .fetch_all(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        rows.into_iter()
            .map(|(chat, owner, pid, host, epoch, expires_at)| {
                Ok(ChatLease {
                    chat: parse_id("chat uri", &chat, ChatUri::parse)?,
                    holder: holder_from(owner, pid, host),
                    epoch,
                    expires_at: from_millis(expires_at)?,
                })
            })
            .collect()
    }

    pub(crate) async fn set_provider_data_at_impl(
        &self,
        chat: &ChatUri,
        provider_data: &HarnessData,
        epoch: i64,
    ) -> StoreResult<bool> {
        let result = sqlx::query(
            "UPDATE chats SET provider_data = $1 WHERE uri = $2
             AND COALESCE((SELECT epoch FROM chat_leases WHERE chat_uri = $2), 0) = $3",
        )
        .bind(provider_data.as_bytes())
        .bind(chat.to_string())
        .bind(epoch)
        .execute(&self.relaxed)
        .await
        .map_err(|e| self.error(e))?;
        if result.rows_affected() > 0 {
            return Ok(true);
        }
        let exists = sqlx::query("SELECT 1 FROM chats WHERE uri = $1")
            .bind(chat.to_string())
            .fetch_optional(&self.relaxed)
            .await
            .map_err(|e| self.error(e))?;
        match exists {
            Some(_) => Ok(false),
            None => Err(StoreError::NotFound {
                what: "chat",
                key: chat.to_string(),
            }),
        }
    }
        }
    };
}

row_statements!(SqliteStore);
row_statements!(PgStore);

/// Statements run inside another write, on its connection (`$connection`).
macro_rules! write_statements {
    ($store:ty, $connection:ty) => {
        impl $store {
    pub(crate) async fn insert_session_rows(
        connection: &mut $connection,
        session: &NewSession,
    ) -> Result<(), sqlx::Error> {
        let summary = &session.summary;
        let session_id: i64 = sqlx::query_scalar(
            "INSERT INTO sessions (uri, provider, title, provenance, source, project_id, model, working_directories, started_at, updated_at, owner, team)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
        )
        .bind(summary.uri.to_string())
        .bind(summary.harness.as_str())
        .bind(summary.title.as_deref())
        .bind(provenance_text(summary.provenance))
        .bind(&summary.source)
        .bind(summary.scope.project_id().map(|id| id.as_str()))
        .bind(summary.model.as_deref())
        .bind(encode_directories(&summary.working_directories))
        .bind(to_millis(&summary.started_at))
        .bind(to_millis(&summary.updated_at))
        .bind(summary.owner.as_ref().map(|owner| owner.user.as_str()))
        .bind(summary.owner.as_ref().and_then(|owner| owner.team.as_deref()))
        .fetch_one(&mut *connection)
        .await?;
        Self::insert_chat_row(connection, session_id, 0, &session.default_chat).await
    }
    /// Bumps a session's `updated_at` (inside another write).
    pub(crate) async fn touch_session(
        connection: &mut $connection,
        session: &SessionUri,
        at: i64,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE sessions SET updated_at = CASE WHEN updated_at > $1 THEN updated_at ELSE $1 END WHERE uri = $2")
            .bind(at)
            .bind(session.to_string())
            .execute(&mut *connection)
            .await
            .map(|_| ())
    }
    pub(crate) async fn insert_chat_row(
        connection: &mut $connection,
        session_id: i64,
        position: i64,
        chat: &ChatRecord,
    ) -> Result<(), sqlx::Error> {
        let origin = serde_json::to_string(&chat.summary.origin)
            .map_err(|error| sqlx::Error::Encode(Box::new(error)))?;
        sqlx::query(
            "INSERT INTO chats (session_id, uri, position, origin, title, model, provider_data, backing, draft, queued, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        )
        .bind(session_id)
        .bind(chat.summary.uri.to_string())
        .bind(position)
        .bind(origin)
        .bind(chat.summary.title.as_deref())
        .bind(chat.summary.model.as_deref())
        .bind(chat.provider_data.as_ref().map(HarnessData::as_bytes))
        .bind(chat.conversation.as_ref().map(ConversationId::as_str))
        .bind(chat.draft.as_deref())
        .bind(
            encode_queue(&chat.queued).map_err(|error| sqlx::Error::Encode(Box::new(error)))?,
        )
        .bind(to_millis(&chat.summary.created_at))
        .bind(to_millis(&chat.summary.updated_at))
        .execute(&mut *connection)
        .await
        .map(|_| ())
    }
        }
    };
}

write_statements!(SqliteStore, sqlx::SqliteConnection);
write_statements!(PgStore, sqlx::PgConnection);
