//! One handle on everything Hearth keeps — sessions and chats, projects, proposals and the
//! audit log — whichever database keeps it: what a process opens once and shares.

use futures::future::BoxFuture;
use hearth_core::{ChatUri, SessionUri};
use tokio::sync::mpsc;

use crate::audit::AuditStore;
use crate::error::StoreResult;
use crate::open::Access;
use crate::postgres::PgStore;
use crate::projects::ProjectStore;
use crate::proposals::{ProposalRecord, ProposalStore};
use crate::sqlite::SqliteStore;
use crate::store::Store;
use crate::users::{UserCredentialStore, UserStore};

/// A change another process or node committed, as the database announced it: where to
/// look again, not what changed (that is read from the store).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// A chat's lease was released: someone finished answering in it.
    Chat(ChatUri),
    /// A chat's newest turn was stored: sent, checkpointed while it runs, or ended.
    Turn(ChatUri),
    /// A session was made.
    Session(SessionUri),
    /// Someone asked whoever answers a chat to do something of its running turn.
    Asked(HolderAsk),
    /// A session's summary changed outside any host (it was shared with a team).
    Summary(SessionUri),
}

/// What one node asks of the node answering a chat ([`Store::ask_holder`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case")]
pub enum HolderAsk {
    /// Stop the running turn.
    Abort {
        /// The chat.
        chat: ChatUri,
    },
    /// Answer the agent's permission request with one of its options.
    Answer {
        /// The chat.
        chat: ChatUri,
        /// The request.
        request_id: String,
        /// The option chosen.
        option_id: String,
        /// Whether a standing policy answered (not the user).
        by_policy: bool,
    },
}

impl HolderAsk {
    /// The chat it is about.
    pub fn chat(&self) -> &ChatUri {
        match self {
            Self::Abort { chat } | Self::Answer { chat, .. } => chat,
        }
    }
}

/// Every store trait of one database, with what a process asks of the database as a
/// whole. Implemented by [`SqliteStore`] and, with the other traits, by
/// [`PgStore`](crate::PgStore).
pub trait Stores:
    Store
    + ProjectStore
    + ProposalStore
    + AuditStore
    + UserStore
    + UserCredentialStore
    + std::fmt::Debug
{
    /// Whether the database can be written, and if not, why.
    fn access(&self) -> Access;

    /// Where the database is, for messages: a file, or a server and database name
    /// (never with a password).
    fn location(&self) -> String;

    /// The SQLite store, for what only it offers (archives of everything, imports).
    fn as_sqlite(&self) -> Option<&SqliteStore> {
        None
    }

    /// The PostgreSQL store, for what only it offers (advisory locks shared by nodes).
    fn as_postgres(&self) -> Option<&PgStore> {
        None
    }

    /// Proposals whose id starts with `prefix`, in id order; at most `max`.
    fn proposals_with_id_prefix<'a>(
        &'a self,
        prefix: &'a str,
        max: u32,
    ) -> BoxFuture<'a, StoreResult<Vec<ProposalRecord>>>;

    /// Waits for open connections to finish and closes them.
    fn close(&self) -> BoxFuture<'_, ()>;

    /// The changes committed from now on, as they are announced, when this database
    /// announces them (PostgreSQL); `None` when it does not (SQLite: look now and then).
    fn changes(&self) -> BoxFuture<'_, StoreResult<Option<mpsc::Receiver<Change>>>> {
        Box::pin(async { Ok(None) })
    }
}

impl Stores for SqliteStore {
    fn access(&self) -> Access {
        SqliteStore::access(self).clone()
    }

    fn location(&self) -> String {
        self.path().display().to_string()
    }

    fn as_sqlite(&self) -> Option<&SqliteStore> {
        Some(self)
    }

    fn proposals_with_id_prefix<'a>(
        &'a self,
        prefix: &'a str,
        max: u32,
    ) -> BoxFuture<'a, StoreResult<Vec<ProposalRecord>>> {
        Box::pin(SqliteStore::proposals_with_id_prefix(self, prefix, max))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(SqliteStore::close(self))
    }
}

impl Stores for PgStore {
    fn access(&self) -> Access {
        Access::ReadWrite
    }

    fn location(&self) -> String {
        self.name()
    }

    fn as_postgres(&self) -> Option<&PgStore> {
        Some(self)
    }

    fn proposals_with_id_prefix<'a>(
        &'a self,
        prefix: &'a str,
        max: u32,
    ) -> BoxFuture<'a, StoreResult<Vec<ProposalRecord>>> {
        Box::pin(PgStore::proposals_with_id_prefix(self, prefix, max))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(PgStore::close(self))
    }

    fn changes(&self) -> BoxFuture<'_, StoreResult<Option<mpsc::Receiver<Change>>>> {
        Box::pin(async { PgStore::changes(self).await.map(Some) })
    }
}
