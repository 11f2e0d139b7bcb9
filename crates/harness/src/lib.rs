//! What every Hearth harness shares: the scaffold between the [`Harness`] trait and a
//! harness's own conversation logic.
//!
//! Owns:
//! - [`ChatTable`]: the chats a harness holds, each a [`ChatEntry`] with the harness's
//!   conversation, the [`Run`] of its running turn, and a token cancelling its background
//!   work. It enforces one turn per chat ([`TableError::Busy`]), tells a finishing turn
//!   whether its chat was disposed, released or replaced meanwhile ([`RunId`]), keeps a
//!   running chat's live state when the host restores it, and cancels a chat's turn and
//!   background work when it goes away.
//! - [`SinkCell`]: the [`EventSink`] the host attached, discarding events until then.
//! - Versioned provider data: [`encode`] and [`decode`] a [`VersionedConversation`] as a JSON
//!   object with a `format` number, refusing data a newer build wrote
//!   ([`ConversationError::Newer`]).
//!
//! Does not own: what a conversation holds (history, model, title: each harness's own type),
//! how a turn runs, what a harness tells the host and when, or each harness's errors —
//! [`TableError`] and [`ConversationError`] convert to [`HarnessError`] as they are, or a
//! harness maps them into its own wording. URIs, the chat catalog and persistence are the
//! host's.
//!
//! [`Harness`]: hearth_core::Harness
//! [`EventSink`]: hearth_core::EventSink
//! [`HarnessError`]: hearth_core::HarnessError

mod sink;
mod table;
mod versioned;

pub use sink::SinkCell;
pub use table::{ChatEntry, ChatTable, Run, RunId, TableError};
pub use versioned::{ConversationError, VersionedConversation, decode, encode};
