//! The write-behind queue: streaming checkpoints and other writes that do not
//! acknowledge user input are applied in order by one task, so the event loop never
//! waits on the disk.

use std::collections::VecDeque;
use std::sync::Arc;

use hearth_core::{ChatSummary, ChatUri, ProviderData, SessionSummary, Turn};
use hearth_store::{Store, StoreError};
use tokio::sync::{mpsc, oneshot};

/// One queued write.
pub(crate) enum WriteJob {
    /// A turn the harness started (spawned chats).
    InsertTurn { chat: ChatUri, turn: Turn },
    /// A checkpoint or the final state of a turn.
    SaveTurn { chat: ChatUri, turn: Turn },
    /// A harness replaced its blob.
    ProviderData {
        chat: ChatUri,
        provider_data: ProviderData,
    },
    /// A chat's title or model changed.
    UpdateChat(ChatSummary),
    /// A session's title, model or activity time changed.
    UpdateSession(SessionSummary),
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

fn supersedes(later: &WriteJob, earlier: &WriteJob) -> bool {
    matches!(
        (later, earlier),
        (WriteJob::SaveTurn { chat: a, turn: x }, WriteJob::SaveTurn { chat: b, turn: y })
            if a == b && x.id == y.id
    )
}

async fn apply(store: &Arc<dyn Store>, job: WriteJob) {
    let (what, result) = match job {
        WriteJob::InsertTurn { chat, turn } => ("turn", store.insert_turn(&chat, &turn).await),
        WriteJob::SaveTurn { chat, turn } => {
            ("turn checkpoint", store.save_turn(&chat, &turn).await)
        }
        WriteJob::ProviderData {
            chat,
            provider_data,
        } => (
            "provider data",
            store.set_provider_data(&chat, &provider_data).await,
        ),
        WriteJob::UpdateChat(summary) => ("chat", store.update_chat(&summary).await),
        WriteJob::UpdateSession(summary) => ("session", store.update_session(&summary).await),
        WriteJob::Flush(done) => {
            if done.send(()).is_err() {
                tracing::trace!("flush waiter went away");
            }
            return;
        }
    };
    match result {
        Ok(()) => {}
        // The chat or session was removed while work for it was queued.
        Err(StoreError::NotFound { what: record, key }) => {
            tracing::debug!(record, key, "skipped a write for a removed record");
        }
        Err(error) => tracing::error!(%error, "could not save {what}"),
    }
}

/// Applies queued writes in order; a checkpoint immediately followed by a newer one of
/// the same turn is skipped.
pub(crate) async fn run_writer(
    store: Arc<dyn Store>,
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
            apply(&store, job).await;
        }
    }
}
