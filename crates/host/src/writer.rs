//! The write-behind queue: streaming checkpoints and other writes that do not
//! acknowledge user input are applied in order by one task, so the event loop never
//! waits on the disk. Chat leases go through it too, so a release always follows the
//! writes of the turn it ends.
//!
//! Failures are retried as [`durability`](crate::durability) says; what still fails is
//! kept in the [`Ledger`], reported to callers and tried again later.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use hearth_core::{ChatSummary, ChatUri, ConversationId, HarnessData, SessionSummary, Turn};
use hearth_store::{LeaseGrant, LeaseHolder, Store, StoreError, StoreResult};
use tokio::sync::{mpsc, oneshot};

use crate::durability::{Ledger, Persistence, with_retries};
use crate::lease;

/// Which state of a turn a save writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Save {
    /// What streamed so far; a later save repeats it.
    Checkpoint,
    /// The turn's final state; kept in memory if the store refuses it.
    Final,
}

/// One queued write.
pub(crate) enum WriteJob {
    /// A turn the harness started (spawned chats).
    InsertTurn { chat: ChatUri, turn: Turn },
    /// A checkpoint or the final state of a turn.
    SaveTurn {
        chat: ChatUri,
        turn: Turn,
        save: Save,
    },
    /// A harness replaced its blob. With an epoch, written only while the chat's lease
    /// has not passed to another owner since (an older blob must not replace a newer one
    /// another process wrote).
    HarnessData {
        chat: ChatUri,
        provider_data: HarnessData,
        epoch: Option<i64>,
    },
    /// A chat goes on in another conversation of its provider: mark it as the chat's.
    MarkConversation {
        chat: ChatUri,
        conversation: ConversationId,
    },
    /// A chat's title or model changed.
    UpdateChat(ChatSummary),
    /// A chat's queue of waiting messages changed (the whole queue, in order).
    SetQueue {
        chat: ChatUri,
        queued: Vec<hearth_core::UserMessage>,
    },
    /// A session's title, model or activity time changed.
    UpdateSession(SessionSummary),
    /// Take a chat's lease for a turn and answer with the grant.
    TakeLease {
        chat: ChatUri,
        reply: oneshot::Sender<StoreResult<LeaseGrant>>,
    },
    /// Extend the lease of a running turn.
    RenewLease { chat: ChatUri },
    /// End a chat's lease: its turn's writes are queued before.
    ReleaseLease { chat: ChatUri },
    /// Try once more to store what the store refused before.
    RetryUnsaved,
    /// Answer once everything queued before is written.
    Flush(oneshot::Sender<()>),
}

/// The sending side of the queue.
pub(crate) struct Writer {
    sender: mpsc::UnboundedSender<WriteJob>,
}

impl Writer {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<WriteJob>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (Self { sender }, receiver)
    }

    pub fn push(&self, job: WriteJob) {
        if self.sender.send(job).is_err() {
            tracing::error!("the write queue stopped; a change was not saved");
        }
    }

    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        self.push(WriteJob::Flush(done));
        if wait.await.is_err() {
            tracing::error!("the write queue stopped before flushing");
        }
    }
}

/// What the queue writes with.
pub(crate) struct WriterContext {
    pub store: Arc<dyn Store>,
    /// Where refused work is kept.
    pub ledger: Arc<Ledger>,
    /// This host, as a lease holder.
    pub holder: LeaseHolder,
    /// How long a lease lasts unless renewed.
    pub lease_ttl: Duration,
}

fn supersedes(later: &WriteJob, earlier: &WriteJob) -> bool {
    matches!(
        (later, earlier),
        (WriteJob::SaveTurn { chat: a, turn: x, .. }, WriteJob::SaveTurn { chat: b, turn: y, .. })
            if a == b && x.id == y.id
    )
}

impl WriterContext {
    async fn apply(&self, job: WriteJob) {
        let store = &*self.store;
        match job {
            WriteJob::InsertTurn { chat, turn } => {
                let inserted = with_retries(Persistence::Final, "a turn", || {
                    store.insert_turn(&chat, &turn)
                })
                .await;
                self.settle_turn(&chat, turn, Save::Final, inserted);
            }
            WriteJob::SaveTurn { chat, turn, save } => {
                let persistence = match save {
                    Save::Checkpoint => Persistence::Routine,
                    Save::Final => Persistence::Final,
                };
                let saved = self.save_turn(persistence, &chat, &turn).await;
                self.settle_turn(&chat, turn, save, saved);
            }
            WriteJob::HarnessData {
                chat,
                provider_data,
                epoch,
            } => {
                let written = with_retries(Persistence::Final, "provider data", || {
                    Box::pin(write_provider_data(store, &chat, &provider_data, epoch))
                })
                .await;
                self.settle_provider_data(&chat, provider_data, epoch, written);
            }
            WriteJob::MarkConversation { chat, conversation } => {
                let marked = with_retries(Persistence::Routine, "a chat's conversation", || {
                    store.mark_conversation(chat.harness(), &conversation, &chat)
                })
                .await;
                log_routine("chat conversation", marked);
            }
            WriteJob::UpdateChat(summary) => {
                let updated = with_retries(Persistence::Routine, "a chat", || {
                    store.update_chat(&summary)
                })
                .await;
                log_routine("chat", updated);
            }
            WriteJob::SetQueue { chat, queued } => {
                let updated = with_retries(Persistence::Routine, "a chat's queue", || {
                    store.set_queue(&chat, &queued)
                })
                .await;
                log_routine("chat queue", updated);
            }
            WriteJob::UpdateSession(summary) => {
                let updated = with_retries(Persistence::Routine, "a session", || {
                    store.update_session(&summary)
                })
                .await;
                log_routine("session", updated);
            }
            WriteJob::TakeLease { chat, reply } => {
                let taken = lease::take(store, &chat, &self.holder, self.lease_ttl).await;
                if reply.send(taken).is_err() {
                    tracing::debug!(%chat, "nobody waits for a lease any more");
                    self.release(&chat).await;
                }
            }
            WriteJob::RenewLease { chat } => {
                if let Err(error) = lease::take(store, &chat, &self.holder, self.lease_ttl).await {
                    tracing::warn!(%chat, %error, "could not renew the lease of a running turn");
                }
            }
            WriteJob::ReleaseLease { chat } => self.release(&chat).await,
            WriteJob::RetryUnsaved => self.retry_unsaved().await,
            WriteJob::Flush(done) => {
                if done.send(()).is_err() {
                    tracing::trace!("flush waiter went away");
                }
            }
        }
    }

    /// Saves a turn; a final state whose row is missing because its insert was refused
    /// before is inserted instead.
    async fn save_turn(
        &self,
        persistence: Persistence,
        chat: &ChatUri,
        turn: &Turn,
    ) -> StoreResult<()> {
        let store = &*self.store;
        let saved = with_retries(persistence, "a turn", || store.save_turn(chat, turn)).await;
        match saved {
            Err(StoreError::NotFound { .. }) if self.ledger.holds_turn(chat, &turn.id) => {
                with_retries(persistence, "a turn", || store.insert_turn(chat, turn)).await
            }
            saved => saved,
        }
    }

    fn settle_turn(&self, chat: &ChatUri, turn: Turn, save: Save, saved: StoreResult<()>) {
        match saved {
            Ok(()) => self.ledger.turn_settled(chat, &turn.id),
            // The chat or session was removed while work for it was queued.
            Err(StoreError::NotFound { what, key }) => {
                tracing::debug!(what, key, "skipped a write for a removed record");
                self.ledger.turn_settled(chat, &turn.id);
            }
            Err(error) => match save {
                Save::Checkpoint => {
                    tracing::warn!(%chat, %error, "could not save a checkpoint of a turn; its final save will try again");
                }
                Save::Final => {
                    tracing::error!(%chat, turn = %turn.id, %error, "could not save a turn; it is kept in memory");
                    self.ledger.keep_turn(chat, turn, &error);
                }
            },
        }
    }

    fn settle_provider_data(
        &self,
        chat: &ChatUri,
        provider_data: HarnessData,
        epoch: Option<i64>,
        written: StoreResult<bool>,
    ) {
        match written {
            Ok(true) => self.ledger.provider_data_settled(chat),
            Ok(false) => {
                tracing::info!(%chat, "kept another process's newer record of the chat");
                self.ledger.provider_data_settled(chat);
            }
            Err(StoreError::NotFound { what, key }) => {
                tracing::debug!(what, key, "skipped a write for a removed record");
                self.ledger.provider_data_settled(chat);
            }
            Err(error) => {
                tracing::error!(%chat, %error, "could not save the harness's record of a chat; it is kept in memory");
                self.ledger
                    .keep_provider_data(chat, provider_data, epoch, &error);
            }
        }
    }

    async fn release(&self, chat: &ChatUri) {
        let store = &*self.store;
        let released = with_retries(Persistence::Routine, "a chat lease", || {
            store.release_lease(chat, &self.holder)
        })
        .await;
        if let Err(error) = released {
            tracing::warn!(%chat, %error, "could not release a chat's lease; it ends when it expires");
        }
    }

    /// One more attempt at everything kept, without pauses.
    async fn retry_unsaved(&self) {
        let store = &*self.store;
        for retry in self.ledger.retries() {
            let chat = &retry.chat;
            for turn in retry.turns {
                let saved = match store.save_turn(chat, &turn).await {
                    Err(StoreError::NotFound { .. }) => store.insert_turn(chat, &turn).await,
                    saved => saved,
                };
                if saved.is_ok() {
                    tracing::info!(%chat, turn = %turn.id, "saved a turn kept after an earlier failure");
                }
                self.settle_turn(chat, turn, Save::Final, saved);
            }
            if let Some((provider_data, epoch)) = retry.provider_data {
                let written = write_provider_data(store, chat, &provider_data, epoch).await;
                self.settle_provider_data(chat, provider_data, epoch, written);
            }
        }
    }
}

async fn write_provider_data(
    store: &dyn Store,
    chat: &ChatUri,
    provider_data: &HarnessData,
    epoch: Option<i64>,
) -> StoreResult<bool> {
    match epoch {
        Some(epoch) => store.set_provider_data_at(chat, provider_data, epoch).await,
        None => store
            .set_provider_data(chat, provider_data)
            .await
            .map(|()| true),
    }
}

fn log_routine(what: &str, result: StoreResult<()>) {
    match result {
        Ok(()) => {}
        // The chat or session was removed while work for it was queued.
        Err(StoreError::NotFound { what: record, key }) => {
            tracing::debug!(record, key, "skipped a write for a removed record");
        }
        Err(error) => tracing::error!(%error, "could not save {what}"),
    }
}

/// Applies queued writes in order; a checkpoint immediately followed by a newer save of
/// the same turn is skipped.
pub(crate) async fn run_writer(
    context: WriterContext,
    mut receiver: mpsc::UnboundedReceiver<WriteJob>,
) {
    let mut pending: VecDeque<WriteJob> = VecDeque::new();
    loop {
        if pending.is_empty() {
            match receiver.recv().await {
                Some(job) => pending.push_back(job),
                None => return,
            }
        }
        while let Ok(job) = receiver.try_recv() {
            pending.push_back(job);
        }
        while let Some(job) = pending.pop_front() {
            if pending.front().is_some_and(|next| supersedes(next, &job)) {
                continue;
            }
            context.apply(job).await;
        }
    }
}
