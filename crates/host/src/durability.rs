//! Durability: how hard a write is retried, and what the store refused that the host still
//! holds.
//!
//! A write that fails with a transient error (another process held the database locked,
//! a passing I/O failure) is tried again after short pauses, a bounded number of times. A
//! turn's final state and a harness's provider data — what nothing later repeats — are
//! also tried again a few times when the disk was full. What still fails is kept here, in
//! memory, reported to callers ([`Host::unsaved`](crate::Host::unsaved)) and tried again
//! before the chat's next turn and at shutdown.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use hearth_core::{Backoff, ChatUri, HarnessData, Turn, TurnId};
use hearth_store::{StoreError, StoreResult};

/// Pauses before each new attempt of a write that failed with a transient error: 50 ms,
/// 200 ms, 800 ms, 1 s.
const TRANSIENT: Backoff = Backoff::doubling(Duration::from_millis(50), Duration::from_secs(1))
    .with_factor(4)
    .with_retries(4);

/// Pauses before each new attempt of a final write that failed because the disk was full
/// (space may come back: SQLite checkpoints its log, the user deletes a file): 250 ms,
/// 500 ms, 1 s.
const FULL_DISK: Backoff =
    Backoff::doubling(Duration::from_millis(250), Duration::from_secs(1)).with_retries(3);

/// No retry.
const NONE: Backoff = Backoff::doubling(Duration::ZERO, Duration::ZERO).with_retries(0);

/// How hard a write is retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Persistence {
    /// A checkpoint of a running turn, titles, activity times, leases: transient failures
    /// are retried (a later checkpoint or the final save repeats a checkpoint's text).
    Routine,
    /// A turn's final state, a harness's provider data: transient failures are retried,
    /// and a full disk a few times too.
    Final,
}

/// The pauses before the attempts after `error`.
fn backoff(persistence: Persistence, error: &StoreError) -> Backoff {
    if error.is_transient() {
        return TRANSIENT;
    }
    match (persistence, error) {
        (Persistence::Final, StoreError::DiskFull { .. }) => FULL_DISK,
        _ => NONE,
    }
}

/// Runs `attempt` until it succeeds, or fails with an error not worth retrying, or the
/// pauses for its kind of failure ran out.
pub(crate) async fn with_retries<'a, T>(
    persistence: Persistence,
    what: &str,
    mut attempt: impl FnMut() -> BoxFuture<'a, StoreResult<T>>,
) -> StoreResult<T> {
    let mut retries = 0;
    loop {
        let error = match attempt().await {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        let Some(pause) = backoff(persistence, &error).next(retries) else {
            return Err(error);
        };
        retries += 1;
        tracing::debug!(%error, retries, "could not save {what}; trying again");
        tokio::time::sleep(pause).await;
    }
}

/// A part of a chat the store does not hold as the host does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnsavedPart {
    /// A turn's answer: the store holds its prompt and what was checkpointed before, read
    /// as incomplete.
    Answer(TurnId),
    /// What the harness keeps of the chat (the history its next turns build on).
    History,
}

/// What the store could not save of a chat. The host keeps it in memory and tries again
/// before the chat's next turn and at shutdown; it is lost if the process ends first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsaved {
    /// The chat.
    pub chat: ChatUri,
    /// What is not saved, answers first, oldest first.
    pub parts: Vec<UnsavedPart>,
    /// Why: the store's last error.
    pub reason: String,
}

impl Unsaved {
    /// How many answers are not saved.
    pub fn answers(&self) -> usize {
        self.parts
            .iter()
            .filter(|part| matches!(part, UnsavedPart::Answer(_)))
            .count()
    }
}

impl fmt::Display for Unsaved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.answers() {
            0 => write!(
                f,
                "the agent's record of chat `{}` was not saved, so its next turn will not see the last answer: {}",
                self.chat, self.reason
            ),
            1 => write!(f, "the answer was not saved: {}", self.reason),
            count => write!(f, "{count} answers were not saved: {}", self.reason),
        }
    }
}

/// What the store refused of one chat.
#[derive(Default)]
struct Kept {
    /// Final states of turns, oldest first.
    turns: Vec<Turn>,
    /// The latest provider data, with the lease epoch it was to be written at.
    provider_data: Option<(HarnessData, Option<i64>)>,
    /// The store's last error.
    reason: String,
}

impl Kept {
    fn is_empty(&self) -> bool {
        self.turns.is_empty() && self.provider_data.is_none()
    }
}

/// Work kept for one chat, to try again.
pub(crate) struct Retry {
    pub chat: ChatUri,
    pub turns: Vec<Turn>,
    pub provider_data: Option<(HarnessData, Option<i64>)>,
}

/// What the store refused, per chat, shared by the write queue (which fills and clears it)
/// and the host (which reports it).
#[derive(Default)]
pub(crate) struct Ledger {
    chats: Mutex<HashMap<ChatUri, Kept>>,
}

impl Ledger {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ChatUri, Kept>> {
        self.chats
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps a turn's final state the store refused.
    pub fn keep_turn(&self, chat: &ChatUri, turn: Turn, error: &StoreError) {
        let mut chats = self.lock();
        let kept = chats.entry(chat.clone()).or_default();
        match kept.turns.iter_mut().find(|kept| kept.id == turn.id) {
            Some(existing) => *existing = turn,
            None => kept.turns.push(turn),
        }
        kept.reason = error.to_string();
    }

    /// Keeps provider data the store refused (replacing older kept data).
    pub fn keep_provider_data(
        &self,
        chat: &ChatUri,
        provider_data: HarnessData,
        epoch: Option<i64>,
        error: &StoreError,
    ) {
        let mut chats = self.lock();
        let kept = chats.entry(chat.clone()).or_default();
        kept.provider_data = Some((provider_data, epoch));
        kept.reason = error.to_string();
    }

    /// A turn's final state is stored (or its chat is gone): nothing to keep.
    pub fn turn_settled(&self, chat: &ChatUri, turn: &TurnId) {
        let mut chats = self.lock();
        if let Some(kept) = chats.get_mut(chat) {
            kept.turns.retain(|kept| &kept.id != turn);
            if kept.is_empty() {
                chats.remove(chat);
            }
        }
    }

    /// Provider data as new as any kept is stored (or needs no writing): nothing to keep.
    pub fn provider_data_settled(&self, chat: &ChatUri) {
        let mut chats = self.lock();
        if let Some(kept) = chats.get_mut(chat) {
            kept.provider_data = None;
            if kept.is_empty() {
                chats.remove(chat);
            }
        }
    }

    /// Whether a turn's final state is kept.
    pub fn holds_turn(&self, chat: &ChatUri, turn: &TurnId) -> bool {
        self.lock()
            .get(chat)
            .is_some_and(|kept| kept.turns.iter().any(|kept| &kept.id == turn))
    }

    /// Whether anything of the chat is kept.
    pub fn holds(&self, chat: &ChatUri) -> bool {
        self.lock().contains_key(chat)
    }

    /// The kept final states of a chat's turns.
    pub fn kept_turns(&self, chat: &ChatUri) -> Vec<Turn> {
        self.lock()
            .get(chat)
            .map(|kept| kept.turns.clone())
            .unwrap_or_default()
    }

    /// Everything kept, to try again.
    pub fn retries(&self) -> Vec<Retry> {
        self.lock()
            .iter()
            .map(|(chat, kept)| Retry {
                chat: chat.clone(),
                turns: kept.turns.clone(),
                provider_data: kept.provider_data.clone(),
            })
            .collect()
    }

    /// What is not saved of a chat.
    pub fn unsaved(&self, chat: &ChatUri) -> Option<Unsaved> {
        self.lock().get(chat).map(|kept| unsaved(chat, kept))
    }

    /// What is not saved, per chat.
    pub fn all(&self) -> Vec<Unsaved> {
        let mut all: Vec<Unsaved> = self
            .lock()
            .iter()
            .map(|(chat, kept)| unsaved(chat, kept))
            .collect();
        all.sort_by(|a, b| a.chat.cmp(&b.chat));
        all
    }
}

fn unsaved(chat: &ChatUri, kept: &Kept) -> Unsaved {
    let mut parts: Vec<UnsavedPart> = kept
        .turns
        .iter()
        .map(|turn| UnsavedPart::Answer(turn.id.clone()))
        .collect();
    if kept.provider_data.is_some() {
        parts.push(UnsavedPart::History);
    }
    Unsaved {
        chat: chat.clone(),
        parts,
        reason: kept.reason.clone(),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::FutureExt;
    use hearth_core::{UserMessage, now};

    use super::*;

    fn full() -> StoreError {
        StoreError::DiskFull {
            path: PathBuf::from("/data/hearth.db"),
        }
    }

    fn busy() -> StoreError {
        StoreError::Busy {
            path: PathBuf::from("/data/hearth.db"),
        }
    }

    /// Counts attempts of a write that fails with `errors` in turn, then succeeds.
    async fn attempts(persistence: Persistence, errors: Vec<StoreError>) -> (usize, bool) {
        let count = AtomicUsize::new(0);
        let errors = Mutex::new(errors.into_iter());
        let result = with_retries(persistence, "a test write", || {
            count.fetch_add(1, Ordering::SeqCst);
            let next = errors.lock().unwrap().next();
            async move { next.map_or(Ok(()), Err) }.boxed()
        })
        .await;
        (count.load(Ordering::SeqCst), result.is_ok())
    }

    #[tokio::test(start_paused = true)]
    async fn transient_failures_are_retried_a_bounded_number_of_times() {
        assert_eq!(
            attempts(Persistence::Routine, vec![busy(), busy()]).await,
            (3, true)
        );
        assert_eq!(
            attempts(Persistence::Routine, (0..10).map(|_| busy()).collect()).await,
            (5, false)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_disk_is_retried_only_for_final_writes() {
        assert_eq!(
            attempts(Persistence::Routine, vec![full()]).await,
            (1, false)
        );
        assert_eq!(attempts(Persistence::Final, vec![full()]).await, (2, true));
        assert_eq!(
            attempts(Persistence::Final, (0..10).map(|_| full()).collect()).await,
            (4, false)
        );
        let decode = StoreError::Decode {
            what: "turn",
            detail: "bad".into(),
        };
        assert_eq!(attempts(Persistence::Final, vec![decode]).await, (1, false));
    }

    #[test]
    fn the_ledger_reports_what_it_keeps_until_it_is_saved() {
        let ledger = Ledger::default();
        let chat = ChatUri::parse("hearth-chat:replay/s/c").unwrap();
        let turn = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        assert_eq!(ledger.unsaved(&chat), None);
        ledger.keep_turn(&chat, turn.clone(), &full());
        ledger.keep_provider_data(
            &chat,
            HarnessData::from_bytes(b"{}".to_vec()),
            None,
            &full(),
        );
        let unsaved = ledger.unsaved(&chat).unwrap();
        assert_eq!(
            unsaved.parts,
            vec![UnsavedPart::Answer(turn.id.clone()), UnsavedPart::History]
        );
        assert!(
            unsaved
                .to_string()
                .starts_with("the answer was not saved: the disk holding /data/hearth.db is full"),
            "{unsaved}"
        );
        assert!(ledger.holds_turn(&chat, &turn.id));
        ledger.turn_settled(&chat, &turn.id);
        let unsaved = ledger.unsaved(&chat).unwrap();
        assert_eq!(unsaved.parts, vec![UnsavedPart::History]);
        assert!(
            unsaved
                .to_string()
                .starts_with("the agent's record of chat"),
            "{unsaved}"
        );
        ledger.provider_data_settled(&chat);
        assert_eq!(ledger.unsaved(&chat), None);
        assert!(!ledger.holds(&chat));
        assert!(ledger.all().is_empty());
    }
}
