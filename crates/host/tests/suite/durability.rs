//! Durability: a final save the store refuses is retried, then reported and kept in
//! memory until a later attempt stores it; transient failures are retried until the write
//! lands. The store is the real SQLite store behind a wrapper that fails chosen writes.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use hearth_core::{
    ChatSummary, ChatUri, ConversationId, Harness, HarnessData, HarnessId, ResourceUri, Signal,
    StopReason, Turn, TurnId, UserMessage,
};
use hearth_host::{Host, UnsavedPart};
use hearth_store::{
    ChatLease, ChatRecord, LeaseGrant, LeaseHolder, NewSession, Registration, SessionPage,
    SessionQuery, SqliteStore, Store, StoreError, StoreResult, Takeover,
};
use hearth_test_support::{FakeAgent, test_config, until_turn_completes};
use pretty_assertions::assert_eq;

/// How a write fails.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// SQLITE_BUSY: another process held the database locked too long.
    Busy,
    /// SQLITE_FULL.
    Full,
}

impl Fault {
    fn error(self, path: PathBuf) -> StoreError {
        match self {
            Self::Busy => StoreError::Busy { path },
            Self::Full => StoreError::DiskFull { path },
        }
    }
}

/// The SQLite store, with the next turn saves and provider-data writes failing as told.
pub struct FaultyStore {
    inner: SqliteStore,
    turn_saves: Mutex<VecDeque<Fault>>,
    provider_data: Mutex<VecDeque<Fault>>,
    /// `save_turn` calls so far.
    pub save_attempts: AtomicUsize,
}

impl FaultyStore {
    pub async fn open(path: &std::path::Path) -> Arc<Self> {
        Arc::new(Self {
            inner: SqliteStore::open(path).await.unwrap(),
            turn_saves: Mutex::new(VecDeque::new()),
            provider_data: Mutex::new(VecDeque::new()),
            save_attempts: AtomicUsize::new(0),
        })
    }

    /// Makes the next `count` turn saves fail with `fault`.
    pub fn fail_turn_saves(&self, fault: Fault, count: usize) {
        self.turn_saves
            .lock()
            .unwrap()
            .extend((0..count).map(|_| fault));
    }

    /// Makes the next `count` provider-data writes fail with `fault`.
    pub fn fail_provider_data(&self, fault: Fault, count: usize) {
        self.provider_data
            .lock()
            .unwrap()
            .extend((0..count).map(|_| fault));
    }

    /// Lets every write through again.
    pub fn heal(&self) {
        self.turn_saves.lock().unwrap().clear();
        self.provider_data.lock().unwrap().clear();
    }

    fn fault(&self, queue: &Mutex<VecDeque<Fault>>) -> Option<StoreError> {
        let fault = queue.lock().unwrap().pop_front()?;
        Some(fault.error(self.inner.path().to_path_buf()))
    }
}

fn failed<'a, T: Send + 'a>(error: StoreError) -> BoxFuture<'a, StoreResult<T>> {
    Box::pin(async move { Err(error) })
}

impl Store for FaultyStore {
    fn create_session<'a>(&'a self, session: &'a NewSession) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.create_session(session)
    }
    fn register_discovered<'a>(
        &'a self,
        session: &'a NewSession,
    ) -> BoxFuture<'a, StoreResult<Registration>> {
        self.inner.register_discovered(session)
    }
    fn session<'a>(
        &'a self,
        session: &'a hearth_core::SessionUri,
    ) -> BoxFuture<'a, StoreResult<Option<hearth_core::SessionSummary>>> {
        self.inner.session(session)
    }
    fn is_tombstoned<'a>(
        &'a self,
        session: &'a hearth_core::SessionUri,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        self.inner.is_tombstoned(session)
    }
    fn list_sessions<'a>(
        &'a self,
        query: &'a SessionQuery,
    ) -> BoxFuture<'a, StoreResult<SessionPage>> {
        self.inner.list_sessions(query)
    }
    fn search_turns<'a>(
        &'a self,
        query: &'a hearth_store::SearchQuery,
    ) -> BoxFuture<'a, StoreResult<hearth_store::SearchPage>> {
        self.inner.search_turns(query)
    }
    fn rebuild_search(&self) -> BoxFuture<'_, StoreResult<u64>> {
        self.inner.rebuild_search()
    }
    fn trash_session<'a>(
        &'a self,
        session: &'a hearth_core::SessionUri,
    ) -> BoxFuture<'a, StoreResult<hearth_store::Removal>> {
        self.inner.trash_session(session)
    }
    fn archive_session<'a>(
        &'a self,
        session: &'a hearth_core::SessionUri,
    ) -> BoxFuture<'a, StoreResult<String>> {
        self.inner.archive_session(session)
    }
    fn export_all<'a>(
        &'a self,
        out: &'a mut (dyn std::io::Write + Send),
    ) -> BoxFuture<'a, StoreResult<()>> {
        Store::export_all(&self.inner, out)
    }
    fn import_archive<'a>(
        &'a self,
        input: &'a mut (dyn std::io::BufRead + Send),
    ) -> BoxFuture<'a, StoreResult<hearth_store::ImportReport>> {
        Store::import_archive(&self.inner, input)
    }
    fn trash_items(&self) -> BoxFuture<'_, StoreResult<Vec<hearth_store::TrashItem>>> {
        self.inner.trash_items()
    }
    fn restore_from_trash<'a>(
        &'a self,
        kind: hearth_store::TrashKind,
        id: &'a str,
    ) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.restore_from_trash(kind, id)
    }
    fn empty_trash(
        &self,
        before: Option<hearth_core::Timestamp>,
    ) -> BoxFuture<'_, StoreResult<Vec<hearth_store::TrashItem>>> {
        self.inner.empty_trash(before)
    }
    fn sessions_with_id_prefix<'a>(
        &'a self,
        prefix: &'a str,
        max: u32,
    ) -> BoxFuture<'a, StoreResult<Vec<hearth_core::SessionSummary>>> {
        self.inner.sessions_with_id_prefix(prefix, max)
    }
    fn chats_with_id_prefix<'a>(
        &'a self,
        prefix: &'a str,
        max: u32,
    ) -> BoxFuture<'a, StoreResult<Vec<hearth_store::ChatRecord>>> {
        self.inner.chats_with_id_prefix(prefix, max)
    }
    fn update_session<'a>(
        &'a self,
        summary: &'a hearth_core::SessionSummary,
    ) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.update_session(summary)
    }
    fn delete_session<'a>(
        &'a self,
        session: &'a hearth_core::SessionUri,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        self.inner.delete_session(session)
    }
    fn chats<'a>(
        &'a self,
        session: &'a hearth_core::SessionUri,
    ) -> BoxFuture<'a, StoreResult<Vec<ChatRecord>>> {
        self.inner.chats(session)
    }
    fn insert_chat<'a>(&'a self, chat: &'a ChatRecord) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.insert_chat(chat)
    }
    fn update_chat<'a>(&'a self, summary: &'a ChatSummary) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.update_chat(summary)
    }
    fn delete_chat<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.delete_chat(chat)
    }
    fn set_provider_data<'a>(
        &'a self,
        chat: &'a ChatUri,
        provider_data: &'a HarnessData,
    ) -> BoxFuture<'a, StoreResult<()>> {
        match self.fault(&self.provider_data) {
            Some(error) => failed(error),
            None => self.inner.set_provider_data(chat, provider_data),
        }
    }
    fn set_draft<'a>(
        &'a self,
        chat: &'a ChatUri,
        draft: Option<&'a str>,
    ) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.set_draft(chat, draft)
    }
    fn set_queue<'a>(
        &'a self,
        chat: &'a ChatUri,
        queued: &'a [hearth_core::UserMessage],
    ) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.set_queue(chat, queued)
    }
    fn mark_conversation<'a>(
        &'a self,
        provider: &'a HarnessId,
        conversation: &'a ConversationId,
        chat: &'a ChatUri,
    ) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.mark_conversation(provider, conversation, chat)
    }
    fn is_conversation<'a>(
        &'a self,
        provider: &'a HarnessId,
        conversation: &'a ConversationId,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        self.inner.is_conversation(provider, conversation)
    }
    fn insert_turn<'a>(
        &'a self,
        chat: &'a ChatUri,
        turn: &'a Turn,
    ) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.insert_turn(chat, turn)
    }
    fn save_turn<'a>(
        &'a self,
        chat: &'a ChatUri,
        turn: &'a Turn,
    ) -> BoxFuture<'a, StoreResult<()>> {
        self.save_attempts.fetch_add(1, Ordering::SeqCst);
        match self.fault(&self.turn_saves) {
            Some(error) => failed(error),
            None => self.inner.save_turn(chat, turn),
        }
    }
    fn turns<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, StoreResult<Vec<Turn>>> {
        self.inner.turns(chat)
    }
    fn turn_page<'a>(
        &'a self,
        chat: &'a ChatUri,
        before: Option<&'a TurnId>,
        limit: u32,
    ) -> BoxFuture<'a, StoreResult<hearth_store::TurnPage>> {
        self.inner.turn_page(chat, before, limit)
    }
    fn copy_turns<'a>(
        &'a self,
        from: &'a ChatUri,
        to: &'a ChatUri,
        through: &'a TurnId,
    ) -> BoxFuture<'a, StoreResult<usize>> {
        self.inner.copy_turns(from, to, through)
    }
    fn take_lease<'a>(
        &'a self,
        chat: &'a ChatUri,
        holder: &'a LeaseHolder,
        ttl: Duration,
        takeover: &'a Takeover,
    ) -> BoxFuture<'a, StoreResult<LeaseGrant>> {
        self.inner.take_lease(chat, holder, ttl, takeover)
    }
    fn release_lease<'a>(
        &'a self,
        chat: &'a ChatUri,
        holder: &'a LeaseHolder,
    ) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.release_lease(chat, holder)
    }
    fn leases<'a>(
        &'a self,
        session: &'a hearth_core::SessionUri,
    ) -> BoxFuture<'a, StoreResult<Vec<ChatLease>>> {
        self.inner.leases(session)
    }
    fn ask_holder<'a>(
        &'a self,
        ask: &'a hearth_store::HolderAsk,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        self.inner.ask_holder(ask)
    }
    fn set_provider_data_at<'a>(
        &'a self,
        chat: &'a ChatUri,
        provider_data: &'a HarnessData,
        epoch: i64,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        match self.fault(&self.provider_data) {
            Some(error) => failed(error),
            None => self.inner.set_provider_data_at(chat, provider_data, epoch),
        }
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    store: Arc<FaultyStore>,
    fake: Arc<FakeAgent>,
    host: Host,
    chat: ChatUri,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = FaultyStore::open(&dir.path().join("hearth.db")).await;
    let fake = FakeAgent::new("fake");
    // Checkpoints only for large answers, so the tests count every save.
    let config = hearth_host::HostConfig {
        checkpoint_interval: Duration::from_secs(3600),
        ..test_config()
    };
    let host = Host::start(
        store.clone(),
        vec![fake.clone() as Arc<dyn Harness>],
        config,
    );
    let session = host
        .create_session(hearth_host::NewSessionRequest {
            provider: HarnessId::parse("fake").unwrap(),
            scope: hearth_core::Scope::Global,
            title: None,
            model: None,
            working_directories: Vec::new(),
            owner: None,
        })
        .await
        .unwrap();
    Setup {
        _dir: dir,
        store,
        fake,
        host,
        chat: ChatUri::default_for(&session),
    }
}

/// Runs one turn that answers `answer`, failing the final save with the faults set up by
/// `before_end`; returns the turn once its completion was announced and the writes
/// flushed.
async fn answer_turn(setup: &Setup, answer: &str, before_end: impl FnOnce()) -> TurnId {
    let Setup {
        host, fake, chat, ..
    } = setup;
    let mut subscription = host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn = host
        .send(chat, UserMessage::text("the question"))
        .await
        .unwrap();
    assert_eq!(fake.wait_for_send(chat).await, turn);
    fake.progress(
        chat,
        Signal::TextDelta {
            turn_id: turn.clone(),
            text: answer.into(),
        },
    )
    .await;
    host.flush().await;
    before_end();
    fake.progress(
        chat,
        Signal::ProviderDataChanged {
            provider_data: HarnessData::from_bytes(
                format!("{{\"said\":\"{answer}\"}}").into_bytes(),
            ),
        },
    )
    .await;
    fake.finish_ok(chat);
    let (_, reason) = until_turn_completes(&mut subscription.receiver, &turn).await;
    assert_eq!(reason, StopReason::EndTurn);
    host.flush().await;
    turn
}

async fn stored_provider_data(setup: &Setup) -> Option<HarnessData> {
    setup
        .store
        .chats(setup.chat.session_ref())
        .await
        .unwrap()
        .into_iter()
        .find(|record| record.summary.uri == setup.chat)
        .and_then(|record| record.provider_data)
}

#[tokio::test]
async fn a_final_save_refused_for_a_full_disk_is_reported_kept_and_saved_later() {
    let setup = setup().await;
    let turn = answer_turn(&setup, "the whole answer", || {
        // Every attempt fails: the first and each retry.
        setup.store.fail_turn_saves(Fault::Full, 100);
        setup.store.fail_provider_data(Fault::Full, 100);
    })
    .await;

    // The caller is told what was not saved, and why.
    let unsaved = setup
        .host
        .unsaved(&setup.chat)
        .expect("reported as unsaved");
    assert_eq!(
        unsaved.parts,
        vec![UnsavedPart::Answer(turn.clone()), UnsavedPart::History]
    );
    assert!(unsaved.reason.contains("is full"), "{unsaved}");
    assert!(
        unsaved
            .to_string()
            .starts_with("the answer was not saved: the disk holding"),
        "{unsaved}"
    );
    assert_eq!(setup.host.unsaved_chats(), vec![unsaved]);
    // Retried: the save was attempted more than once before giving up.
    assert!(setup.store.save_attempts.load(Ordering::SeqCst) > 2);
    // What was saved stays consistent: the prompt, read as incomplete.
    let stored = setup.store.turns(&setup.chat).await.unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].user.text, "the question");
    assert_eq!(stored[0].response_text(), "");
    // The answer is still in memory.
    let state = setup.host.peek_chat(&setup.chat).unwrap();
    assert_eq!(state.turns[0].response_text(), "the whole answer");

    // Space comes back: the next attempt stores what was kept.
    setup.store.heal();
    assert_eq!(setup.host.save_unsaved().await, Vec::new());
    assert_eq!(setup.host.unsaved(&setup.chat), None);
    let stored = setup.store.turns(&setup.chat).await.unwrap();
    assert_eq!(stored[0].response_text(), "the whole answer");
    assert_eq!(stored[0].stop_reason, Some(StopReason::EndTurn));
    assert_eq!(
        stored_provider_data(&setup).await.unwrap().as_bytes(),
        b"{\"said\":\"the whole answer\"}"
    );
}

#[tokio::test]
async fn a_turn_kept_unsaved_is_saved_before_the_chats_next_turn() {
    let setup = setup().await;
    let first = answer_turn(&setup, "first answer", || {
        setup.store.fail_turn_saves(Fault::Full, 100);
    })
    .await;
    assert!(setup.host.unsaved(&setup.chat).is_some());
    setup.store.heal();
    answer_turn(&setup, "second answer", || {}).await;
    assert_eq!(setup.host.unsaved(&setup.chat), None);
    let stored = setup.store.turns(&setup.chat).await.unwrap();
    let answers: Vec<(TurnId, String)> = stored
        .iter()
        .map(|turn| (turn.id.clone(), turn.response_text()))
        .collect();
    assert_eq!(answers[0], (first, "first answer".to_owned()));
    assert_eq!(answers[1].1, "second answer");
}

#[tokio::test]
async fn transient_failures_are_retried_until_the_write_lands() {
    let setup = setup().await;
    answer_turn(&setup, "kept safe", || {
        setup.store.fail_turn_saves(Fault::Busy, 2);
        setup.store.fail_provider_data(Fault::Busy, 2);
    })
    .await;
    assert_eq!(setup.host.unsaved(&setup.chat), None);
    assert_eq!(setup.store.save_attempts.load(Ordering::SeqCst), 3);
    let stored = setup.store.turns(&setup.chat).await.unwrap();
    assert_eq!(stored[0].response_text(), "kept safe");
    assert_eq!(
        stored_provider_data(&setup).await.unwrap().as_bytes(),
        b"{\"said\":\"kept safe\"}"
    );
}

#[tokio::test]
async fn a_checkpoint_refused_for_a_full_disk_is_left_to_the_final_save() {
    let setup = setup().await;
    let Setup {
        host,
        fake,
        chat,
        store,
        ..
    } = &setup;
    let mut subscription = host
        .subscribe(&ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn = host.send(chat, UserMessage::text("dump")).await.unwrap();
    fake.wait_for_send(chat).await;
    store.fail_turn_saves(Fault::Full, 1);
    let chunk = "x".repeat(64 * 1024);
    fake.progress(
        chat,
        Signal::TextDelta {
            turn_id: turn.clone(),
            text: chunk.clone(),
        },
    )
    .await;
    host.flush().await;
    // The large answer was checkpointed once, refused, and not retried or reported.
    assert_eq!(store.save_attempts.load(Ordering::SeqCst), 1);
    assert_eq!(host.unsaved(chat), None);
    assert_eq!(store.turns(chat).await.unwrap()[0].response_text(), "");
    fake.finish_ok(chat);
    until_turn_completes(&mut subscription.receiver, &turn).await;
    host.flush().await;
    assert_eq!(store.save_attempts.load(Ordering::SeqCst), 2);
    assert_eq!(host.unsaved(chat), None);
    assert_eq!(store.turns(chat).await.unwrap()[0].response_text(), chunk);
}
