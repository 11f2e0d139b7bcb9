//! The table of a harness's live chats: each chat's conversation, its running turn, and a
//! token cancelling its background work.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use hearth_core::{ChatUri, HarnessData, HarnessError, HarnessErrorKind, TurnId};
use tokio_util::sync::CancellationToken;

/// Identifies one run of a turn in a [`ChatTable`], so that a finishing turn can tell
/// whether its chat is still the one it started in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunId(u64);

/// A running turn's handle.
#[derive(Debug)]
pub struct Run {
    /// Tells a finishing turn whether its chat is still the one it started in.
    pub id: RunId,
    /// The running turn.
    pub turn_id: TurnId,
    /// Cancelled by `abort`, `dispose_chat` and `release_chat`.
    pub cancel: CancellationToken,
}

/// A live chat: the harness's conversation `B`, its running turn, and a token cancelling its
/// background work.
#[derive(Debug)]
pub struct ChatEntry<B> {
    /// The harness's own record of the chat.
    pub conversation: B,
    /// The turn running in the chat, if any.
    pub run: Option<Run>,
    /// Cancels background work of the chat (title generation, say) when it goes away;
    /// background tasks take a child token.
    pub background: CancellationToken,
}

impl<B> ChatEntry<B> {
    fn idle(conversation: B) -> Self {
        Self {
            conversation,
            run: None,
            background: CancellationToken::new(),
        }
    }

    /// Cancels the running turn and the background work.
    fn cancel_all(&self) {
        self.background.cancel();
        if let Some(run) = &self.run {
            run.cancel.cancel();
        }
    }
}

/// Why the table refused an operation on a chat.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TableError {
    /// The chat is not held by the harness.
    #[error(
        "chat `{chat}` is not open in this harness (it was disposed or released, or never created here); materialize it from its stored provider data first"
    )]
    NotOpen {
        /// The chat.
        chat: ChatUri,
    },
    /// The chat already runs a turn.
    #[error("chat `{chat}` is already running turn `{turn}`; wait for it to finish or abort it")]
    Busy {
        /// The chat.
        chat: ChatUri,
        /// The running turn.
        turn: TurnId,
    },
}

impl From<TableError> for HarnessError {
    fn from(error: TableError) -> Self {
        let kind = match &error {
            TableError::NotOpen { .. } => HarnessErrorKind::NotFound,
            TableError::Busy { .. } => HarnessErrorKind::Busy,
        };
        HarnessError::new(kind, error.to_string())
    }
}

/// The chats a harness holds, each with its conversation `B` and its running turn.
///
/// Every operation takes the lock once, so a check and the change it guards cannot be
/// interleaved with another caller's. The closures given to [`start_run`](Self::start_run),
/// [`finish_run`](Self::finish_run) and [`with`](Self::with) run while the table is
/// locked: they must be quick and must not call back into the table (that would
/// deadlock). A panic while the lock was held does not make the table unusable: the next
/// caller takes the lock as it was left.
pub struct ChatTable<B> {
    chats: Mutex<HashMap<ChatUri, ChatEntry<B>>>,
    runs: AtomicU64,
}

impl<B> Default for ChatTable<B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<B> std::fmt::Debug for ChatTable<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Without the lock: formatting must not wait on (or deadlock with) a holder.
        f.debug_struct("ChatTable").finish_non_exhaustive()
    }
}

impl<B> ChatTable<B> {
    /// An empty table.
    pub fn new() -> Self {
        Self {
            chats: Mutex::new(HashMap::new()),
            runs: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<ChatUri, ChatEntry<B>>> {
        self.chats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn next_run(&self) -> RunId {
        RunId(self.runs.fetch_add(1, Ordering::Relaxed))
    }

    /// Inserts or replaces a chat (cancelling the replaced entry's background work);
    /// refuses while the existing entry runs a turn.
    pub fn insert(&self, chat: &ChatUri, conversation: B) -> Result<(), TableError> {
        let mut chats = self.lock();
        if let Some(existing) = chats.get(chat) {
            if let Some(run) = &existing.run {
                return Err(TableError::Busy {
                    chat: chat.clone(),
                    turn: run.turn_id.clone(),
                });
            }
            existing.background.cancel();
            tracing::debug!(%chat, "replacing a held chat");
        }
        chats.insert(chat.clone(), ChatEntry::idle(conversation));
        Ok(())
    }

    /// Materialize semantics: inserts unless the chat is running a turn (then keeps the
    /// live state); returns whether it inserted.
    ///
    /// Restoring a held idle chat replaces its conversation and keeps its background work
    /// (it belongs to the same chat, and is still cancelled when the chat goes away).
    pub fn restore(&self, chat: &ChatUri, conversation: B) -> bool {
        let mut chats = self.lock();
        match chats.get_mut(chat) {
            Some(existing) if existing.run.is_some() => {
                tracing::debug!(%chat, "keeping a running chat's live state");
                false
            }
            Some(existing) => {
                existing.conversation = conversation;
                true
            }
            None => {
                chats.insert(chat.clone(), ChatEntry::idle(conversation));
                true
            }
        }
    }

    /// Marks the chat as running `turn_id`; `read` sees the conversation (to take the prior
    /// history, model, ...). Busy if it already runs.
    pub fn start_run<T>(
        &self,
        chat: &ChatUri,
        turn_id: &TurnId,
        cancel: &CancellationToken,
        read: impl FnOnce(&B) -> T,
    ) -> Result<(RunId, T), TableError> {
        self.try_start_run(chat, turn_id, cancel, |conversation| {
            Ok::<_, TableError>(read(conversation))
        })
    }

    /// Like [`start_run`](Self::start_run), but `read` may refuse the turn (no model
    /// chosen, say); then the chat is left as it was and `read`'s error is returned.
    pub fn try_start_run<T, E: From<TableError>>(
        &self,
        chat: &ChatUri,
        turn_id: &TurnId,
        cancel: &CancellationToken,
        read: impl FnOnce(&B) -> Result<T, E>,
    ) -> Result<(RunId, T), E> {
        let mut chats = self.lock();
        let entry = chats
            .get_mut(chat)
            .ok_or_else(|| TableError::NotOpen { chat: chat.clone() })?;
        if let Some(run) = &entry.run {
            return Err(TableError::Busy {
                chat: chat.clone(),
                turn: run.turn_id.clone(),
            }
            .into());
        }
        let read = read(&entry.conversation)?;
        let id = self.next_run();
        entry.run = Some(Run {
            id,
            turn_id: turn_id.clone(),
            cancel: cancel.clone(),
        });
        Ok((id, read))
    }

    /// Adds a chat the harness spawned, already running its first turn.
    pub fn add_running(
        &self,
        chat: &ChatUri,
        conversation: B,
        turn_id: &TurnId,
        cancel: &CancellationToken,
    ) -> RunId {
        let id = self.next_run();
        let mut entry = ChatEntry::idle(conversation);
        entry.run = Some(Run {
            id,
            turn_id: turn_id.clone(),
            cancel: cancel.clone(),
        });
        if let Some(replaced) = self.lock().insert(chat.clone(), entry) {
            tracing::warn!(%chat, "a spawned chat replaced a held chat of the same URI");
            replaced.cancel_all();
        }
        id
    }

    /// Ends a run: `finish` changes the conversation (records the turn) and its result is
    /// returned — unless the chat was disposed, released or replaced while the turn ran
    /// (then `None`, and `finish` is not called).
    pub fn finish_run<T>(
        &self,
        chat: &ChatUri,
        run: RunId,
        finish: impl FnOnce(&mut B) -> T,
    ) -> Option<T> {
        let mut chats = self.lock();
        let entry = chats
            .get_mut(chat)
            .filter(|entry| entry.run.as_ref().is_some_and(|current| current.id == run))?;
        entry.run = None;
        Some(finish(&mut entry.conversation))
    }

    /// What a harness's `materialize` does with its table. With no stored data: the
    /// stored form (`encode`) of the chat it still holds, or `no_data()` when it holds
    /// none. With data: the conversation `decode` reads from it, restored (a running
    /// chat keeps its live state), and nothing new to store.
    pub fn materialize<E: From<TableError>>(
        &self,
        chat: &ChatUri,
        provider_data: Option<HarnessData>,
        encode: impl FnOnce(&B) -> Result<HarnessData, E>,
        decode: impl FnOnce(&HarnessData) -> Result<B, E>,
        no_data: impl FnOnce() -> E,
    ) -> Result<Option<HarnessData>, E> {
        let Some(data) = provider_data else {
            return match self.with(chat, |entry| encode(&entry.conversation)) {
                Ok(encoded) => encoded.map(Some),
                Err(TableError::NotOpen { .. }) => Err(no_data()),
                Err(error) => Err(error.into()),
            };
        };
        let conversation = decode(&data)?;
        self.restore(chat, conversation);
        Ok(None)
    }

    /// Reads or changes a held chat.
    pub fn with<T>(
        &self,
        chat: &ChatUri,
        f: impl FnOnce(&mut ChatEntry<B>) -> T,
    ) -> Result<T, TableError> {
        let mut chats = self.lock();
        let entry = chats
            .get_mut(chat)
            .ok_or_else(|| TableError::NotOpen { chat: chat.clone() })?;
        Ok(f(entry))
    }

    /// Cancels the chat's running turn, if any; `Ok(whether one ran)`.
    pub fn cancel_run(&self, chat: &ChatUri) -> Result<bool, TableError> {
        self.with(chat, |entry| match &entry.run {
            Some(run) => {
                run.cancel.cancel();
                true
            }
            None => false,
        })
    }

    /// Forgets a chat, cancelling its run and background work; returns its conversation.
    pub fn forget(&self, chat: &ChatUri) -> Option<B> {
        let entry = self.lock().remove(chat)?;
        entry.cancel_all();
        Some(entry.conversation)
    }

    /// The chats held.
    pub fn chats(&self) -> Vec<ChatUri> {
        self.lock().keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::SessionUri;
    use pretty_assertions::assert_eq;

    fn chat(name: &str) -> ChatUri {
        ChatUri::default_for(&SessionUri::parse(&format!("hearth-session:test/{name}")).unwrap())
    }

    fn history(table: &ChatTable<Vec<&'static str>>, chat: &ChatUri) -> Vec<&'static str> {
        table
            .with(chat, |entry| entry.conversation.clone())
            .unwrap()
    }

    #[test]
    fn operations_on_a_chat_not_held_say_not_open() {
        let table: ChatTable<Vec<&str>> = ChatTable::new();
        let missing = chat("missing");
        let not_open = TableError::NotOpen {
            chat: missing.clone(),
        };
        let cancel = CancellationToken::new();
        let turn = TurnId::generate();
        assert_eq!(
            table.start_run(&missing, &turn, &cancel, Vec::len),
            Err(not_open.clone())
        );
        assert_eq!(table.with(&missing, |_| ()), Err(not_open.clone()));
        assert_eq!(table.cancel_run(&missing), Err(not_open.clone()));
        assert_eq!(table.forget(&missing), None);
        let error = HarnessError::from(not_open);
        assert_eq!(error.kind, HarnessErrorKind::NotFound);
        assert!(
            error
                .message
                .ends_with("materialize it from its stored provider data first"),
            "{error}"
        );
    }

    #[test]
    fn a_running_chat_is_busy_until_its_run_finishes() {
        let table = ChatTable::new();
        let held = chat("held");
        table.insert(&held, vec!["first"]).unwrap();
        let running = TurnId::generate();
        let cancel = CancellationToken::new();
        let (run, seen) = table
            .start_run(&held, &running, &cancel, Clone::clone)
            .unwrap();
        assert_eq!(seen, vec!["first"]);

        let busy = TableError::Busy {
            chat: held.clone(),
            turn: running.clone(),
        };
        let other = TurnId::generate();
        assert_eq!(
            table.start_run(&held, &other, &cancel, Vec::len),
            Err(busy.clone())
        );
        assert_eq!(table.insert(&held, vec!["replaced"]), Err(busy.clone()));
        assert_eq!(HarnessError::from(busy).kind, HarnessErrorKind::Busy);

        assert_eq!(
            table.finish_run(&held, run, |turns| turns.push("second")),
            Some(())
        );
        assert_eq!(history(&table, &held), vec!["first", "second"]);
        assert!(table.start_run(&held, &other, &cancel, Vec::len).is_ok());
    }

    #[derive(Debug, PartialEq)]
    enum Refusal {
        Table(TableError),
        NoModel,
    }

    impl From<TableError> for Refusal {
        fn from(error: TableError) -> Self {
            Self::Table(error)
        }
    }

    #[test]
    fn a_refused_start_leaves_the_chat_idle() {
        let table = ChatTable::new();
        let held = chat("held");
        table.insert(&held, Vec::<&str>::new()).unwrap();
        let cancel = CancellationToken::new();
        let refused = table.try_start_run(&held, &TurnId::generate(), &cancel, |_| {
            Err::<(), _>(Refusal::NoModel)
        });
        assert_eq!(refused, Err(Refusal::NoModel));
        assert_eq!(table.with(&held, |entry| entry.run.is_none()), Ok(true));
        let missing = chat("missing");
        let refused = table.try_start_run(&missing, &TurnId::generate(), &cancel, |_| {
            Ok::<_, Refusal>(())
        });
        assert_eq!(
            refused,
            Err(Refusal::Table(TableError::NotOpen { chat: missing }))
        );
    }

    #[test]
    fn finishing_after_the_chat_went_away_or_was_replaced_records_nothing() {
        let table = ChatTable::new();
        let cancel = CancellationToken::new();

        let forgotten = chat("forgotten");
        table.insert(&forgotten, vec!["first"]).unwrap();
        let (run, ()) = table
            .start_run(&forgotten, &TurnId::generate(), &cancel, |_| ())
            .unwrap();
        assert_eq!(table.forget(&forgotten), Some(vec!["first"]));
        assert!(cancel.is_cancelled(), "forgetting cancels the running turn");
        let mut called = false;
        assert_eq!(table.finish_run(&forgotten, run, |_| called = true), None);
        assert!(!called, "`finish` must not run for a forgotten chat");

        let replaced = chat("replaced");
        let cancel = CancellationToken::new();
        let run = table.add_running(&replaced, vec!["spawned"], &TurnId::generate(), &cancel);
        table.forget(&replaced);
        table.insert(&replaced, vec!["new"]).unwrap();
        assert_eq!(
            table.finish_run(&replaced, run, |turns| turns.push("late")),
            None
        );
        assert_eq!(history(&table, &replaced), vec!["new"]);

        // Control: the same finish on a chat still running the run records it.
        let kept = chat("kept");
        let run = table.add_running(&kept, vec!["spawned"], &TurnId::generate(), &cancel);
        assert_eq!(
            table.finish_run(&kept, run, |turns| turns.push("done")),
            Some(())
        );
        assert_eq!(history(&table, &kept), vec!["spawned", "done"]);
        assert_eq!(
            table.finish_run(&kept, run, |turns| turns.push("again")),
            None
        );
    }

    #[test]
    fn restore_keeps_a_running_chat_and_replaces_an_idle_one() {
        let table = ChatTable::new();
        let held = chat("held");
        let cancel = CancellationToken::new();
        let run = table.add_running(&held, vec!["live"], &TurnId::generate(), &cancel);
        assert!(!table.restore(&held, vec!["stored"]));
        assert_eq!(history(&table, &held), vec!["live"]);
        assert!(!cancel.is_cancelled());

        assert_eq!(table.finish_run(&held, run, |_| ()), Some(()));
        let background = table
            .with(&held, |entry| entry.background.child_token())
            .unwrap();
        assert!(table.restore(&held, vec!["stored"]));
        assert_eq!(history(&table, &held), vec!["stored"]);
        assert!(
            !background.is_cancelled(),
            "restoring the same chat keeps its background work"
        );
        table.forget(&held);
        assert!(background.is_cancelled());

        let new = chat("new");
        assert!(table.restore(&new, vec!["stored"]));
        assert_eq!(history(&table, &new), vec!["stored"]);
    }

    #[test]
    fn background_work_is_cancelled_when_the_chat_is_replaced_or_forgotten() {
        let table = ChatTable::new();
        let held = chat("held");
        table.insert(&held, vec!["first"]).unwrap();
        let first = table
            .with(&held, |entry| entry.background.child_token())
            .unwrap();
        table.insert(&held, vec!["second"]).unwrap();
        assert!(first.is_cancelled());
        assert_eq!(history(&table, &held), vec!["second"]);

        let second = table
            .with(&held, |entry| entry.background.child_token())
            .unwrap();
        assert!(!second.is_cancelled(), "the new entry's work is its own");
        assert_eq!(table.forget(&held), Some(vec!["second"]));
        assert!(second.is_cancelled());
        assert_eq!(table.chats(), Vec::<ChatUri>::new());
    }

    #[test]
    fn cancel_run_cancels_only_a_running_turn() {
        let table = ChatTable::new();
        let held = chat("held");
        table.insert(&held, vec!["first"]).unwrap();
        assert_eq!(table.cancel_run(&held), Ok(false));
        let cancel = CancellationToken::new();
        table
            .start_run(&held, &TurnId::generate(), &cancel, |_| ())
            .unwrap();
        let background = table
            .with(&held, |entry| entry.background.child_token())
            .unwrap();
        assert_eq!(table.cancel_run(&held), Ok(true));
        assert!(cancel.is_cancelled());
        assert!(!background.is_cancelled());
        assert_eq!(table.chats(), vec![held]);
    }
}
