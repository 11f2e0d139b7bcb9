//! The `Store` trait and the records it keeps.

use std::time::Duration;

use futures::future::BoxFuture;
use hearth_core::{
    ChatSummary, ChatUri, ConversationId, HarnessData, HarnessId, ProjectId, Provenance,
    SessionSummary, SessionUri, Timestamp, Turn, TurnId,
};

use crate::error::StoreResult;
use crate::leases::{ChatLease, LeaseGrant, LeaseHolder, Takeover};
use crate::search::{SearchPage, SearchQuery};
use crate::trash::{Removal, TrashItem, TrashKind};

/// A chat as the catalog stores it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatRecord {
    /// Summary (uri, origin, title, model, times).
    pub summary: ChatSummary,
    /// The harness's opaque blob.
    pub provider_data: Option<HarnessData>,
    /// The harness's own conversation behind the chat.
    pub conversation: Option<ConversationId>,
    /// The unsent draft.
    pub draft: Option<String>,
    /// Messages waiting for the running turn (with their attachments), in sending order.
    pub queued: Vec<hearth_core::UserMessage>,
}

/// A session to register with its default chat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSession {
    /// The session.
    pub summary: SessionSummary,
    /// Its default chat.
    pub default_chat: ChatRecord,
}

/// Which sessions a listing returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ScopeFilter {
    /// Every scope.
    #[default]
    Any,
    /// Only the global scope.
    Global,
    /// Only one project.
    Project(ProjectId),
}

/// A page request for the session list (newest first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionQuery {
    /// Scope filter.
    pub scope: ScopeFilter,
    /// Only this provider.
    pub provider: Option<HarnessId>,
    /// Only sessions of this provenance (created through Hearth, or found by discovery).
    pub provenance: Option<Provenance>,
    /// Only sessions whose title contains this text (ASCII letters in any case).
    pub title_contains: Option<String>,
    /// Only pinned sessions (`Some(true)`) or only those not pinned (`Some(false)`).
    pub pinned: Option<bool>,
    /// Only archived sessions (`Some(true)`) or only those not archived (`Some(false)`).
    pub archived: Option<bool>,
    /// Only what this user (an id) may see: their own sessions and those shared with a
    /// team they are a member of; a session that belongs to no user is never among them.
    /// `None`: every session (a single user's Hearth).
    pub viewer: Option<String>,
    /// Continue after this cursor (from a previous page).
    pub cursor: Option<String>,
    /// Page size (1..=500).
    pub limit: u32,
}

impl Default for SessionQuery {
    fn default() -> Self {
        Self {
            scope: ScopeFilter::Any,
            provider: None,
            provenance: None,
            title_contains: None,
            pinned: None,
            archived: None,
            viewer: None,
            cursor: None,
            limit: 50,
        }
    }
}

/// One page of sessions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionPage {
    /// The sessions, newest first.
    pub sessions: Vec<SessionSummary>,
    /// Cursor of the next page, if there is one.
    pub next_cursor: Option<String>,
}

/// A page of a chat's turns.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnPage {
    /// The turns, oldest first.
    pub turns: Vec<Turn>,
    /// Whether the chat has turns before the first of these.
    pub has_more: bool,
}

/// What `register_discovered` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Registration {
    /// The session was added.
    Added,
    /// A session with this URI was already registered; nothing changed.
    AlreadyKnown,
    /// The session was deleted by the user; it stays deleted.
    Tombstoned,
}

/// Hearth's durable source of truth. Every write that acknowledges user input (sessions
/// and chats created, turns inserted, drafts, deletions) is on disk when it returns. The
/// writes marked *relaxed* survive a crash of the process but may roll back on a power
/// loss: they are the ones repeated often while answers stream. Implemented for SQLite;
/// the trait keeps other backends possible.
pub trait Store: Send + Sync + 'static {
    /// Registers a session created through Hearth with its default chat (clears a
    /// tombstone of the same URI).
    fn create_session<'a>(&'a self, session: &'a NewSession) -> BoxFuture<'a, StoreResult<()>>;

    /// Registers a discovered session unless it is known or tombstoned (atomically).
    fn register_discovered<'a>(
        &'a self,
        session: &'a NewSession,
    ) -> BoxFuture<'a, StoreResult<Registration>>;

    /// A live (not deleted) session.
    fn session<'a>(
        &'a self,
        session: &'a SessionUri,
    ) -> BoxFuture<'a, StoreResult<Option<SessionSummary>>>;

    /// Whether the session was deleted.
    fn is_tombstoned<'a>(&'a self, session: &'a SessionUri) -> BoxFuture<'a, StoreResult<bool>>;

    /// A page of live sessions, newest first.
    fn list_sessions<'a>(
        &'a self,
        query: &'a SessionQuery,
    ) -> BoxFuture<'a, StoreResult<SessionPage>>;

    /// The proposals changed (staged or decided, by any process) at or after `after`,
    /// oldest change first, at most 500: their ids with the time of the change. A store
    /// that cannot tell answers none.
    fn proposals_changed_after<'a>(
        &'a self,
        after: Timestamp,
    ) -> BoxFuture<'a, StoreResult<Vec<(String, Timestamp)>>> {
        let _ = after;
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Turns of live sessions holding every word of the query, newest chat first (see
    /// [`SearchQuery`]).
    fn search_turns<'a>(&'a self, query: &'a SearchQuery)
    -> BoxFuture<'a, StoreResult<SearchPage>>;

    /// Builds the search index again from every stored turn; returns how many turns it
    /// holds.
    fn rebuild_search(&self) -> BoxFuture<'_, StoreResult<u64>>;

    /// Live sessions whose id (the URI's part after `<provider>/`) starts with `prefix`,
    /// of every provider, newest first; at most `max` (1..=500).
    fn sessions_with_id_prefix<'a>(
        &'a self,
        prefix: &'a str,
        max: u32,
    ) -> BoxFuture<'a, StoreResult<Vec<SessionSummary>>>;

    /// Chats of live sessions whose chat id starts with `prefix` (default chats never
    /// match), newest first; at most `max` (1..=500).
    fn chats_with_id_prefix<'a>(
        &'a self,
        prefix: &'a str,
        max: u32,
    ) -> BoxFuture<'a, StoreResult<Vec<ChatRecord>>>;

    /// Updates a session's title, model and `updated_at` (relaxed).
    fn update_session<'a>(&'a self, summary: &'a SessionSummary) -> BoxFuture<'a, StoreResult<()>>;

    /// Deletes a session: leaves a tombstone (URI and times), erases its chats, turns,
    /// drafts, title and its proposals' text so that none can be read back from disk.
    /// Returns whether a live session was deleted.
    fn delete_session<'a>(&'a self, session: &'a SessionUri) -> BoxFuture<'a, StoreResult<bool>>;

    /// Deletes a session the user's way: moves it to the trash (restorable; see
    /// [`Store::restore_from_trash`]), or erases it at once, as [`Store::delete_session`]
    /// does, when it was never used — no turn, no draft, no queued message — and was made
    /// through Hearth.
    fn trash_session<'a>(&'a self, session: &'a SessionUri) -> BoxFuture<'a, StoreResult<Removal>>;

    /// Every session and project in the trash, newest deletion first.
    fn trash_items(&self) -> BoxFuture<'_, StoreResult<Vec<TrashItem>>>;

    /// Takes a session (by URI) or project (by id) out of the trash. Fails with
    /// `NotFound` when it is not in the trash, with a conflict when a project's folder
    /// now belongs to another project.
    fn restore_from_trash<'a>(
        &'a self,
        kind: TrashKind,
        id: &'a str,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Erases what was moved to the trash at or before `before` (everything when
    /// `None`) as securely as [`Store::delete_session`], in one transaction. Returns the
    /// items erased.
    fn empty_trash(
        &self,
        before: Option<hearth_core::Timestamp>,
    ) -> BoxFuture<'_, StoreResult<Vec<TrashItem>>>;

    /// A live session as a lossless JSON Lines archive (see [`SqliteStore::export_session`](crate::SqliteStore::export_session)).
    fn archive_session<'a>(&'a self, session: &'a SessionUri)
    -> BoxFuture<'a, StoreResult<String>>;

    /// Writes the lossless archive of everything: every project, every session (live, in
    /// the trash, or a tombstone) with its records, and proposals of no session (see
    /// [`SqliteStore::export_session`](crate::SqliteStore::export_session)).
    fn export_all<'a>(
        &'a self,
        out: &'a mut (dyn std::io::Write + Send),
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Imports an archive either store wrote, all or nothing: what is already here (by
    /// id) is skipped and reported, never overwritten.
    fn import_archive<'a>(
        &'a self,
        input: &'a mut (dyn std::io::BufRead + Send),
    ) -> BoxFuture<'a, StoreResult<crate::ImportReport>>;

    /// The session's chat catalog, default chat first.
    fn chats<'a>(&'a self, session: &'a SessionUri) -> BoxFuture<'a, StoreResult<Vec<ChatRecord>>>;

    /// Adds a chat to its session's catalog.
    fn insert_chat<'a>(&'a self, chat: &'a ChatRecord) -> BoxFuture<'a, StoreResult<()>>;

    /// Updates a chat's title, model and `updated_at` (relaxed).
    fn update_chat<'a>(&'a self, summary: &'a ChatSummary) -> BoxFuture<'a, StoreResult<()>>;

    /// Removes a chat and its turns, erased like a deleted session's.
    fn delete_chat<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, StoreResult<()>>;

    /// Replaces a chat's provider data, verbatim (relaxed).
    fn set_provider_data<'a>(
        &'a self,
        chat: &'a ChatUri,
        provider_data: &'a HarnessData,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Sets or clears a chat's draft (durable when it returns).
    fn set_draft<'a>(
        &'a self,
        chat: &'a ChatUri,
        draft: Option<&'a str>,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Replaces a chat's queue of waiting messages (durable when it returns).
    fn set_queue<'a>(
        &'a self,
        chat: &'a ChatUri,
        queued: &'a [hearth_core::UserMessage],
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Records that a provider conversation backs a chat.
    fn mark_conversation<'a>(
        &'a self,
        provider: &'a HarnessId,
        conversation: &'a ConversationId,
        chat: &'a ChatUri,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Whether a provider conversation backs some chat.
    fn is_conversation<'a>(
        &'a self,
        provider: &'a HarnessId,
        conversation: &'a ConversationId,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// Appends a turn (durable when it returns: the user's message is acknowledged).
    fn insert_turn<'a>(
        &'a self,
        chat: &'a ChatUri,
        turn: &'a Turn,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Saves a turn's response so far, or its final state (relaxed).
    fn save_turn<'a>(&'a self, chat: &'a ChatUri, turn: &'a Turn)
    -> BoxFuture<'a, StoreResult<()>>;

    /// A chat's turns, oldest first; one that cannot be read back is in its place as a
    /// turn ending in an error that names the chat and the turn.
    fn turns<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, StoreResult<Vec<Turn>>>;

    /// At most `limit` of a chat's turns: those just before the turn `before`, or the
    /// newest when it is absent; oldest first. Costs the page, not the chat's length.
    /// Fails with `NotFound` for an unknown chat, or an unknown `before` turn.
    fn turn_page<'a>(
        &'a self,
        chat: &'a ChatUri,
        before: Option<&'a TurnId>,
        limit: u32,
    ) -> BoxFuture<'a, StoreResult<TurnPage>>;

    /// Copies a chat's turns up to and including `through` into another chat (forks).
    fn copy_turns<'a>(
        &'a self,
        from: &'a ChatUri,
        to: &'a ChatUri,
        through: &'a TurnId,
    ) -> BoxFuture<'a, StoreResult<usize>>;

    /// Takes (or renews) a chat's lease for `ttl`: when it is free, ended, already the
    /// holder's, or held by the instance `takeover` names as stopped. Fails with
    /// [`StoreError::Leased`](crate::StoreError::Leased) naming the holder otherwise.
    fn take_lease<'a>(
        &'a self,
        chat: &'a ChatUri,
        holder: &'a LeaseHolder,
        ttl: Duration,
        takeover: &'a Takeover,
    ) -> BoxFuture<'a, StoreResult<LeaseGrant>>;

    /// Ends a chat's lease if `holder` holds it (its row stays, with its epoch).
    fn release_lease<'a>(
        &'a self,
        chat: &'a ChatUri,
        holder: &'a LeaseHolder,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// The leases of a session's chats, held or ended.
    fn leases<'a>(&'a self, session: &'a SessionUri) -> BoxFuture<'a, StoreResult<Vec<ChatLease>>>;

    /// Asks whoever answers a chat elsewhere (another node on this database) to do
    /// something of its running turn: stop it, or take an answer to its agent's
    /// permission request. Returns whether the ask was sent; a database that does not
    /// carry asks (SQLite) sends none.
    fn ask_holder<'a>(&'a self, ask: &'a crate::HolderAsk) -> BoxFuture<'a, StoreResult<bool>>;

    /// Replaces a chat's provider data, verbatim, unless its lease passed to another
    /// owner after `epoch` (relaxed). Returns whether it wrote.
    fn set_provider_data_at<'a>(
        &'a self,
        chat: &'a ChatUri,
        provider_data: &'a HarnessData,
        epoch: i64,
    ) -> BoxFuture<'a, StoreResult<bool>>;
}

/// Implements [`Store`] for a store type by its methods of the same names with `_impl`
/// (each dialect's statements are its own; the trait's wiring is this once).
macro_rules! store_by_impls {
    ($store:ty) => {
        impl $crate::store::Store for $store {
            fn create_session<'a>(
                &'a self,
                session: &'a $crate::NewSession,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.create_session_impl(session))
            }

            fn register_discovered<'a>(
                &'a self,
                session: &'a $crate::NewSession,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<$crate::Registration>> {
                Box::pin(self.register_discovered_impl(session))
            }

            fn session<'a>(
                &'a self,
                session: &'a ::hearth_core::SessionUri,
            ) -> ::futures::future::BoxFuture<
                'a,
                $crate::StoreResult<Option<::hearth_core::SessionSummary>>,
            > {
                Box::pin(self.session_impl(session))
            }

            fn is_tombstoned<'a>(
                &'a self,
                session: &'a ::hearth_core::SessionUri,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<bool>> {
                Box::pin(self.is_tombstoned_impl(session))
            }

            fn list_sessions<'a>(
                &'a self,
                query: &'a $crate::SessionQuery,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<$crate::SessionPage>> {
                Box::pin(self.list_sessions_impl(query))
            }

            fn proposals_changed_after<'a>(
                &'a self,
                after: ::hearth_core::Timestamp,
            ) -> ::futures::future::BoxFuture<
                'a,
                $crate::StoreResult<Vec<(String, ::hearth_core::Timestamp)>>,
            > {
                Box::pin(self.proposals_changed_after_impl(after))
            }

            fn search_turns<'a>(
                &'a self,
                query: &'a $crate::SearchQuery,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<$crate::SearchPage>> {
                Box::pin(self.search_turns_impl(query))
            }

            fn rebuild_search(&self) -> ::futures::future::BoxFuture<'_, $crate::StoreResult<u64>> {
                Box::pin(self.rebuild_search_impl())
            }

            fn sessions_with_id_prefix<'a>(
                &'a self,
                prefix: &'a str,
                max: u32,
            ) -> ::futures::future::BoxFuture<
                'a,
                $crate::StoreResult<Vec<::hearth_core::SessionSummary>>,
            > {
                Box::pin(self.sessions_with_id_prefix_impl(prefix, max))
            }

            fn chats_with_id_prefix<'a>(
                &'a self,
                prefix: &'a str,
                max: u32,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<Vec<$crate::ChatRecord>>>
            {
                Box::pin(self.chats_with_id_prefix_impl(prefix, max))
            }

            fn update_session<'a>(
                &'a self,
                summary: &'a ::hearth_core::SessionSummary,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.update_session_impl(summary))
            }

            fn delete_session<'a>(
                &'a self,
                session: &'a ::hearth_core::SessionUri,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<bool>> {
                Box::pin(self.delete_session_impl(session))
            }

            fn trash_session<'a>(
                &'a self,
                session: &'a ::hearth_core::SessionUri,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<$crate::Removal>> {
                Box::pin(self.trash_session_impl(session))
            }

            fn archive_session<'a>(
                &'a self,
                session: &'a ::hearth_core::SessionUri,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<String>> {
                Box::pin(self.archive_session_impl(session))
            }

            fn export_all<'a>(
                &'a self,
                out: &'a mut (dyn ::std::io::Write + Send),
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(<$store>::export_all(self, out))
            }

            fn import_archive<'a>(
                &'a self,
                input: &'a mut (dyn ::std::io::BufRead + Send),
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<$crate::ImportReport>> {
                Box::pin(<$store>::import_archive(self, input))
            }

            fn trash_items(
                &self,
            ) -> ::futures::future::BoxFuture<'_, $crate::StoreResult<Vec<$crate::TrashItem>>> {
                Box::pin(self.trash_items_impl())
            }

            fn restore_from_trash<'a>(
                &'a self,
                kind: $crate::TrashKind,
                id: &'a str,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.restore_impl(kind, id))
            }

            fn empty_trash(
                &self,
                before: Option<hearth_core::Timestamp>,
            ) -> ::futures::future::BoxFuture<'_, $crate::StoreResult<Vec<$crate::TrashItem>>> {
                Box::pin(self.empty_trash_impl(before))
            }

            fn chats<'a>(
                &'a self,
                session: &'a ::hearth_core::SessionUri,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<Vec<$crate::ChatRecord>>>
            {
                Box::pin(self.chats_impl(session))
            }

            fn insert_chat<'a>(
                &'a self,
                chat: &'a $crate::ChatRecord,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.insert_chat_impl(chat))
            }

            fn update_chat<'a>(
                &'a self,
                summary: &'a ::hearth_core::ChatSummary,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.update_chat_impl(summary))
            }

            fn delete_chat<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.delete_chat_impl(chat))
            }

            fn set_provider_data<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
                provider_data: &'a ::hearth_core::HarnessData,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.set_provider_data_impl(chat, provider_data))
            }

            fn set_draft<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
                draft: Option<&'a str>,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.set_draft_impl(chat, draft))
            }

            fn set_queue<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
                queued: &'a [hearth_core::UserMessage],
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.set_queue_impl(chat, queued))
            }

            fn mark_conversation<'a>(
                &'a self,
                provider: &'a ::hearth_core::HarnessId,
                conversation: &'a ::hearth_core::ConversationId,
                chat: &'a ::hearth_core::ChatUri,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.mark_conversation_impl(provider, conversation, chat))
            }

            fn is_conversation<'a>(
                &'a self,
                provider: &'a ::hearth_core::HarnessId,
                conversation: &'a ::hearth_core::ConversationId,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<bool>> {
                Box::pin(self.is_conversation_impl(provider, conversation))
            }

            fn insert_turn<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
                turn: &'a ::hearth_core::Turn,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.insert_turn_impl(chat, turn))
            }

            fn save_turn<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
                turn: &'a ::hearth_core::Turn,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.save_turn_impl(chat, turn))
            }

            fn turns<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<Vec<::hearth_core::Turn>>>
            {
                Box::pin(self.turns_impl(chat))
            }

            fn turn_page<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
                before: Option<&'a ::hearth_core::TurnId>,
                limit: u32,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<$crate::TurnPage>> {
                Box::pin(self.turn_page_impl(chat, before, limit))
            }

            fn copy_turns<'a>(
                &'a self,
                from: &'a ::hearth_core::ChatUri,
                to: &'a ::hearth_core::ChatUri,
                through: &'a ::hearth_core::TurnId,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<usize>> {
                Box::pin(self.copy_turns_impl(from, to, through))
            }

            fn take_lease<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
                holder: &'a $crate::LeaseHolder,
                ttl: ::std::time::Duration,
                takeover: &'a $crate::Takeover,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<$crate::LeaseGrant>> {
                Box::pin(self.take_lease_impl(chat, holder, ttl, takeover))
            }

            fn release_lease<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
                holder: &'a $crate::LeaseHolder,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<()>> {
                Box::pin(self.release_lease_impl(chat, holder))
            }

            fn ask_holder<'a>(
                &'a self,
                ask: &'a $crate::HolderAsk,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<bool>> {
                Box::pin(self.ask_holder_impl(ask))
            }

            fn leases<'a>(
                &'a self,
                session: &'a ::hearth_core::SessionUri,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<Vec<$crate::ChatLease>>> {
                Box::pin(self.leases_impl(session))
            }

            fn set_provider_data_at<'a>(
                &'a self,
                chat: &'a ::hearth_core::ChatUri,
                provider_data: &'a ::hearth_core::HarnessData,
                epoch: i64,
            ) -> ::futures::future::BoxFuture<'a, $crate::StoreResult<bool>> {
                Box::pin(self.set_provider_data_at_impl(chat, provider_data, epoch))
            }
        }
    };
}
pub(crate) use store_by_impls;
