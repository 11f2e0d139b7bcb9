//! Deleting a session the user's way — to the trash, or erased at once when it was never
//! used (the store decides: [`hearth_store::Store::trash_session`]) — and restoring one.

use hearth_core::{Action, ChatUri, ResourceUri, SessionSummary, SessionUri};
use hearth_store::{Removal, TrashKind};

use crate::error::{HostError, HostResult};
use crate::host::Host;

/// How a session was deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deleted {
    /// Whether it went to the trash or was erased at once.
    pub removal: Removal,
    /// Why its harness could not load it, when it could not: then only Hearth's record
    /// changed, and the harness's own conversations (if any) are left as they are.
    pub without_harness: Option<String>,
}

impl Host {
    /// Deletes a session: aborts its turns, then moves it to the trash — its chats are
    /// released (peers first, the default chat last), so it can be restored — or, when
    /// it was never used, erases it and has its harness dispose its chats. Either way it
    /// keeps a row that stops discovery from bringing it back. A session its harness
    /// cannot load (not configured now, say) is deleted from Hearth all the same, and
    /// [`Deleted::without_harness`] says why its harness did not clean up.
    pub async fn delete_session(&self, session: &SessionUri) -> HostResult<Deleted> {
        if let Err(error) = self.ensure_session(session).await {
            // Stored but not loadable (its harness is gone or cannot attach it): the user
            // can still delete it; only the harness's own clean-up is skipped.
            if self.inner.store.session(session).await?.is_none() {
                return Err(error);
            }
            tracing::debug!(%session, %error, "deleting a session its harness cannot load");
            let removal = self.inner.store.trash_session(session).await?;
            self.inner.lock().publish(
                ResourceUri::Root,
                Action::SessionRemoved {
                    session: session.clone(),
                },
            );
            return Ok(Deleted {
                removal,
                without_harness: Some(error.to_string()),
            });
        }
        let chats = self.chats_in_disposal_order(session)?;
        for chat in &chats {
            if let Err(error) = self.abort(chat).await {
                tracing::warn!(%chat, %error, "could not abort a turn of a deleted session");
            }
        }
        let removal = self.inner.store.trash_session(session).await?;
        self.let_go_of_chats(session, &chats, removal).await?;
        self.forget_session(session, &chats);
        Ok(Deleted {
            removal,
            without_harness: None,
        })
    }

    /// A loaded session's chats: peers first (newest first), the default chat last.
    fn chats_in_disposal_order(&self, session: &SessionUri) -> HostResult<Vec<ChatUri>> {
        let state = self.inner.lock();
        let entry = state.session(session)?;
        let (peers, default): (Vec<ChatUri>, Vec<ChatUri>) = entry
            .state
            .chats
            .iter()
            .map(|chat| chat.summary.uri.clone())
            .partition(|chat| !chat.is_default());
        Ok(peers.into_iter().rev().chain(default).collect())
    }

    /// Has the harness dispose the chats of an erased session, or release those of a
    /// trashed one (which it may be asked to open again).
    async fn let_go_of_chats(
        &self,
        session: &SessionUri,
        chats: &[ChatUri],
        removal: Removal,
    ) -> HostResult<()> {
        let agent = self.inner.agent_for(session)?;
        for chat in chats {
            let context = self.inner.context_for(chat)?;
            let result = match removal {
                Removal::Erased => agent.dispose_chat(&context).await,
                Removal::Trashed | Removal::Missing => agent.release_chat(&context).await,
            };
            if let Err(error) = result {
                tracing::warn!(%chat, %error, "the harness could not let go of a chat of a deleted session");
            }
        }
        Ok(())
    }

    /// Drops a deleted session from the host's state and tells its subscribers.
    fn forget_session(&self, session: &SessionUri, chats: &[ChatUri]) {
        let mut state = self.inner.lock();
        for chat in chats {
            state.publish(
                ResourceUri::Chat(chat.clone()),
                Action::ChatRemoved { chat: chat.clone() },
            );
            state.chats.remove(chat);
            state.retire(&ResourceUri::Chat(chat.clone()));
        }
        let resource = ResourceUri::Session(session.clone());
        state.publish(
            resource.clone(),
            Action::SessionRemoved {
                session: session.clone(),
            },
        );
        state.sessions.remove(session);
        state.retire(&resource);
        state.publish(
            ResourceUri::Root,
            Action::SessionRemoved {
                session: session.clone(),
            },
        );
    }

    /// Takes a session out of the trash and lists it again. Fails with `NotFound` when it
    /// is not in the trash.
    pub async fn restore_session(&self, session: &SessionUri) -> HostResult<SessionSummary> {
        let store = &self.inner.store;
        store
            .restore_from_trash(TrashKind::Session, &session.to_string())
            .await?;
        let summary = store
            .session(session)
            .await?
            .ok_or_else(|| HostError::NotFound {
                what: "session",
                key: session.to_string(),
            })?;
        self.inner.lock().publish(
            ResourceUri::Root,
            Action::SessionAdded {
                summary: summary.clone(),
            },
        );
        Ok(summary)
    }
}
