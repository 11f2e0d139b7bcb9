//! Decoding the rows both dialects return: the columns of a table have the same names and
//! the same types in SQLite and PostgreSQL (text, 64-bit integers, bytes), so one decoder
//! reads either.

use std::path::PathBuf;

use hearth_core::{
    ChatOrigin, ChatSummary, ChatUri, ConversationId, HarnessData, HarnessId, Owner, ProjectId,
    ProposalId, Provenance, Scope, SessionSummary, SessionUri, Timestamp, TurnId, UserMessage,
};
use sqlx::{ColumnIndex, Decode, Row, Type};

use crate::audit::{AuditDraft, AuditRecord};
use crate::codec::{from_json, from_millis, parse_id};
use crate::error::{StoreError, StoreResult};
use crate::projects::ProjectRecord;
use crate::proposals::ProposalRecord;
use crate::store::ChatRecord;
use crate::trash::{TrashItem, TrashKind};
use crate::users::UserRecord;

/// A row of either dialect, read column by column by name.
pub(crate) trait Columns {
    /// A text column.
    fn text(&self, column: &str) -> Result<String, sqlx::Error>;
    /// A text column that may be NULL.
    fn text_or_null(&self, column: &str) -> Result<Option<String>, sqlx::Error>;
    /// An integer column.
    fn integer(&self, column: &str) -> Result<i64, sqlx::Error>;
    /// An integer column that may be NULL.
    fn integer_or_null(&self, column: &str) -> Result<Option<i64>, sqlx::Error>;
    /// A bytes column that may be NULL.
    fn bytes_or_null(&self, column: &str) -> Result<Option<Vec<u8>>, sqlx::Error>;
}

impl<R> Columns for R
where
    R: Row,
    for<'a> &'a str: ColumnIndex<R>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> Vec<u8>: Decode<'r, R::Database> + Type<R::Database>,
{
    fn text(&self, column: &str) -> Result<String, sqlx::Error> {
        self.try_get(column)
    }

    fn text_or_null(&self, column: &str) -> Result<Option<String>, sqlx::Error> {
        self.try_get(column)
    }

    fn integer(&self, column: &str) -> Result<i64, sqlx::Error> {
        self.try_get(column)
    }

    fn integer_or_null(&self, column: &str) -> Result<Option<i64>, sqlx::Error> {
        self.try_get(column)
    }

    fn bytes_or_null(&self, column: &str) -> Result<Option<Vec<u8>>, sqlx::Error> {
        self.try_get(column)
    }
}

fn decode_error(what: &'static str) -> impl Fn(sqlx::Error) -> StoreError {
    move |error| StoreError::Decode {
        what,
        detail: error.to_string(),
    }
}

/// A session from the columns of `SESSION_COLUMNS`.
pub(crate) fn decode_session(row: &impl Columns) -> StoreResult<SessionSummary> {
    let get = decode_error("session");
    let uri = row.text("uri").map_err(&get)?;
    let provider = row.text("provider").map_err(&get)?;
    let provenance = row.text("provenance").map_err(&get)?;
    let project_id = row
        .text_or_null("project_id")
        .map_err(&get)?
        .map(|project| parse_id("project id", &project, hearth_core::ProjectId::parse))
        .transpose()?;
    Ok(SessionSummary {
        uri: parse_id("session uri", &uri, SessionUri::parse)?,
        harness: parse_id("provider id", &provider, HarnessId::parse)?,
        title: row.text_or_null("title").map_err(&get)?,
        provenance: if provenance == "external" {
            Provenance::External
        } else {
            Provenance::Hearth
        },
        source: row.text("source").map_err(&get)?,
        scope: Scope::from_project(project_id),
        model: row.text_or_null("model").map_err(&get)?,
        working_directories: crate::sessions::decode_directories(
            row.text_or_null("working_directories").map_err(&get)?,
        )?,
        started_at: from_millis(row.integer("started_at").map_err(&get)?)?,
        updated_at: from_millis(row.integer("updated_at").map_err(&get)?)?,
        pinned: row.integer("pinned").map_err(&get)? != 0,
        archived: row.integer("archived").map_err(&get)? != 0,
        owner: decode_owner(row, &get)?,
    })
}

/// The owner of a session or project from its `owner` and `team` columns: none when it
/// belongs to no user (a team without an owner is not read).
pub(crate) fn decode_owner(
    row: &impl Columns,
    get: &impl Fn(sqlx::Error) -> StoreError,
) -> StoreResult<Option<Owner>> {
    let Some(user) = row.text_or_null("owner").map_err(get)? else {
        return Ok(None);
    };
    Ok(Some(Owner {
        user,
        team: row.text_or_null("team").map_err(get)?,
    }))
}

/// The columns [`decode_chat`] reads, of a `chats` table named `c`.
pub(crate) const CHAT_COLUMNS: &str = "c.uri, c.origin, c.title, c.model, c.provider_data, c.backing, c.draft, c.queued, c.created_at, c.updated_at";

/// A chat from the columns of [`CHAT_COLUMNS`].
pub(crate) fn decode_chat(row: &impl Columns) -> StoreResult<ChatRecord> {
    let get = decode_error("chat");
    let uri = row.text("uri").map_err(&get)?;
    let origin = row.text("origin").map_err(&get)?;
    let conversation = row.text_or_null("backing").map_err(&get)?;
    Ok(ChatRecord {
        summary: ChatSummary {
            uri: parse_id("chat uri", &uri, ChatUri::parse)?,
            origin: from_json::<ChatOrigin>("chat origin", &origin)?,
            title: row.text_or_null("title").map_err(&get)?,
            model: row.text_or_null("model").map_err(&get)?,
            created_at: from_millis(row.integer("created_at").map_err(&get)?)?,
            updated_at: from_millis(row.integer("updated_at").map_err(&get)?)?,
        },
        provider_data: row
            .bytes_or_null("provider_data")
            .map_err(&get)?
            .map(HarnessData::from_bytes),
        conversation: conversation
            .map(|text| parse_id("conversation id", &text, ConversationId::parse))
            .transpose()?,
        draft: row.text_or_null("draft").map_err(&get)?,
        queued: match row.text_or_null("queued").map_err(&get)? {
            Some(text) => decode_queue(&text)?,
            None => Vec::new(),
        },
    })
}

/// One message of a chat's stored queue (the `queued` column, a JSON array): a message
/// with its attachments, or the bare text a queue held before messages kept theirs.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum StoredQueued {
    Text(String),
    Message(UserMessage),
}

/// A chat's queue from its `queued` column.
pub(crate) fn decode_queue(text: &str) -> StoreResult<Vec<UserMessage>> {
    Ok(from_json::<Vec<StoredQueued>>("chat queue", text)?
        .into_iter()
        .map(|queued| match queued {
            StoredQueued::Text(text) => UserMessage::text(text),
            StoredQueued::Message(message) => message,
        })
        .collect())
}

/// A chat's queue as its `queued` column holds it: a JSON array, or NULL for none.
pub(crate) fn encode_queue(queued: &[UserMessage]) -> StoreResult<Option<String>> {
    if queued.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(queued)
        .map(Some)
        .map_err(|error| StoreError::Decode {
            what: "chat queue",
            detail: error.to_string(),
        })
}

/// A trash item from `kind, id, title, deleted_at, owner, team`.
pub(crate) fn decode_trash_item(row: &impl Columns) -> StoreResult<TrashItem> {
    let get = decode_error("trash item");
    let kind = row.text("kind").map_err(&get)?;
    Ok(TrashItem {
        kind: TrashKind::parse(&kind).ok_or_else(|| StoreError::Decode {
            what: "trash item",
            detail: format!("unknown kind `{kind}`"),
        })?,
        id: row.text("id").map_err(&get)?,
        title: row.text_or_null("title").map_err(&get)?,
        deleted_at: from_millis(row.integer("deleted_at").map_err(&get)?)?,
        owner: decode_owner(row, &get)?,
    })
}

/// A project from `id, folder, name, created_at, updated_at, trusted_digest` (a deleted
/// project's folder and name may be NULL: read as empty).
pub(crate) fn decode_project(row: &impl Columns) -> StoreResult<ProjectRecord> {
    let get = decode_error("project");
    let id = row.text("id").map_err(&get)?;
    Ok(ProjectRecord {
        id: parse_id("project id", &id, ProjectId::parse)?,
        folder: PathBuf::from(
            row.text_or_null("folder")
                .map_err(&get)?
                .unwrap_or_default(),
        ),
        name: row.text_or_null("name").map_err(&get)?.unwrap_or_default(),
        created_at: from_millis(row.integer("created_at").map_err(&get)?)?,
        updated_at: from_millis(row.integer("updated_at").map_err(&get)?)?,
        trusted_digest: row.text_or_null("trusted_digest").map_err(&get)?,
    })
}

/// A user from `id, name, issuer, subject, created_at`.
pub(crate) fn decode_user(row: &impl Columns) -> StoreResult<UserRecord> {
    let get = decode_error("user");
    Ok(UserRecord {
        id: row.text("id").map_err(&get)?,
        name: row.text("name").map_err(&get)?,
        issuer: row.text_or_null("issuer").map_err(&get)?,
        subject: row.text_or_null("subject").map_err(&get)?,
        created_at: from_millis(row.integer("created_at").map_err(&get)?)?,
    })
}

/// A proposal from the columns of `proposals::COLUMNS`.
pub(crate) fn decode_proposal(row: &impl Columns) -> StoreResult<ProposalRecord> {
    let get = decode_error("proposal");
    let text = |name: &str| row.text(name).map_err(&get);
    let optional_text = |name: &str| row.text_or_null(name).map_err(&get);
    let time =
        |name: &str| -> StoreResult<Timestamp> { from_millis(row.integer(name).map_err(&get)?) };
    let optional_time = |name: &str| -> StoreResult<Option<Timestamp>> {
        row.integer_or_null(name)
            .map_err(&get)?
            .map(from_millis)
            .transpose()
    };
    Ok(ProposalRecord {
        id: parse_id("proposal id", &text("id")?, ProposalId::parse)?,
        tool: text("tool")?,
        session: parse_id("session uri", &text("session_uri")?, SessionUri::parse)?,
        chat: parse_id("chat uri", &text("chat_uri")?, ChatUri::parse)?,
        turn_id: parse_id("turn id", &text("turn_id")?, TurnId::parse)?,
        call_id: text("call_id")?,
        summary: text("summary")?,
        diff: text("diff")?,
        payload: text("payload")?,
        payload_hash: text("payload_hash")?,
        status: text("status")?.parse()?,
        approved_hash: optional_text("approved_hash")?,
        decided_by: optional_text("decided_by")?,
        decided_at: optional_time("decided_at")?,
        reason: optional_text("reason")?,
        outcome: optional_text("outcome")?,
        error: optional_text("error")?,
        created_at: time("created_at")?,
        expires_at: time("expires_at")?,
        updated_at: time("updated_at")?,
        applied_at: optional_time("applied_at")?,
    })
}

/// An audit row from the columns of `audit::COLUMNS`.
pub(crate) fn decode_audit(row: &impl Columns) -> StoreResult<AuditRecord> {
    let get = decode_error("audit row");
    let text = |name: &str| row.text(name).map_err(&get);
    let optional_text = |name: &str| row.text_or_null(name).map_err(&get);
    Ok(AuditRecord {
        seq: row.integer("seq").map_err(&get)?,
        entry: AuditDraft {
            at: from_millis(row.integer("at").map_err(&get)?)?,
            actor: text("actor")?,
            kind: text("kind")?,
            tool: optional_text("tool")?,
            argument_hash: optional_text("argument_hash")?,
            proposal_id: optional_text("proposal_id")?,
            decision: text("decision")?,
            outcome: text("outcome")?,
            detail: optional_text("detail")?,
        },
        prev_hash: text("prev_hash")?,
        key_id: optional_text("key_id")?,
        hash: text("hash")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_stored_as_texts_reads_as_messages_beside_messages_with_attachments() {
        let stored = r#"["kept from before", {"text": "with a file", "attachments": [{"name": "a.txt", "media_type": "text/plain", "uri": "/data/a.txt"}]}]"#;
        let queued = decode_queue(stored).unwrap();
        assert_eq!(queued[0], UserMessage::text("kept from before"));
        assert_eq!(queued[1].text, "with a file");
        assert_eq!(queued[1].attachments[0].uri, "/data/a.txt");
        assert_eq!(queued.len(), 2);
        let again = encode_queue(&queued).unwrap().unwrap();
        assert_eq!(decode_queue(&again).unwrap(), queued);
        assert_eq!(encode_queue(&[]).unwrap(), None);
    }
}
