//! Pages of a chat's turns: for clients that show a long chat from its end and fetch
//! earlier turns as the reader scrolls back. A page costs its own length, never the
//! chat's: a loaded chat is sliced in memory, one that is not is read from the store
//! by its key, without restoring it.

use hearth_core::{ChatState, ChatUri, ResourceState, ResourceUri, Snapshot, Turn, TurnId};
use hearth_store::StoreError;

use crate::error::{HostError, HostResult};
use crate::host::{Host, Resumed, Subscription};
use crate::sessions::settle_stale_turns;
use crate::state::{HostState, Resolution};

/// How many of a chat's turns a subscription's snapshot holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TurnWindow {
    /// Every turn (the chat is loaded for it).
    #[default]
    All,
    /// The newest this many; a chat that is not loaded stays unloaded.
    Latest(u32),
}

/// Times the store page is read again when the chat changed while it was read.
const PAGE_ATTEMPTS: usize = 3;

/// A page of a chat's turns.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnPage {
    /// The turns, oldest first.
    pub turns: Vec<Turn>,
    /// Whether the chat has turns before the first of these.
    pub has_more: bool,
}

/// Where a page ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageEnd<'a> {
    /// At the chat's newest turn (included).
    Latest,
    /// Just before this turn (excluded).
    Before(&'a TurnId),
}

/// The `limit` turns of `turns` that end where `end` says, and whether earlier ones
/// exist; `None` when the `end` turn is not among them.
pub(crate) fn slice_page(turns: &[Turn], end: PageEnd<'_>, limit: usize) -> Option<TurnPage> {
    let stop = match end {
        PageEnd::Latest => turns.len(),
        PageEnd::Before(turn) => turns.iter().rposition(|candidate| &candidate.id == turn)?,
    };
    let start = stop.saturating_sub(limit);
    Some(TurnPage {
        turns: turns[start..stop].to_vec(),
        has_more: start > 0,
    })
}

fn unknown_turn(chat: &ChatUri, turn: &TurnId) -> HostError {
    HostError::InvalidInput(format!(
        "turn `{turn}` is not in chat `{chat}`; pass the id of one of its turns (the first of the page you have) or leave `before` out for the newest turns"
    ))
}

/// A snapshot of a loaded chat holding its newest `limit` turns; `None` when the chat's
/// turns are not loaded.
fn loaded_window(state: &mut HostState, chat: &ChatUri, limit: u32) -> Option<Subscription> {
    let entry = state.chats.get(chat)?;
    if !matches!(entry.resolution, Resolution::Resolved) {
        return None;
    }
    let turns = &entry.state.turns;
    let start = turns.len().saturating_sub(limit as usize);
    let chat_state = ChatState {
        summary: entry.state.summary.clone(),
        turns: turns[start..].to_vec(),
        draft: entry.state.draft.clone(),
        queued: entry.state.queued.clone(),
        agent: entry.state.agent.clone(),
    };
    Some(window_subscription(state, chat, chat_state, start > 0))
}

fn window_subscription(
    state: &mut HostState,
    chat: &ChatUri,
    chat_state: ChatState,
    older_turns: bool,
) -> Subscription {
    let resource = ResourceUri::Chat(chat.clone());
    state.touch(chat.session_ref());
    let snapshot = Snapshot {
        seq: state.seq(&resource),
        state: ResourceState::Chat(chat_state),
        resource: resource.clone(),
    };
    let receiver = state.receiver(&resource);
    Subscription {
        snapshot,
        receiver,
        older_turns,
    }
}

impl Host {
    /// Subscribes to a resource; a chat's snapshot holds the turns `window` says. With
    /// [`TurnWindow::Latest`], a chat that is not loaded is not restored: its newest turns
    /// are read from the store, and it is loaded when first used.
    pub async fn subscribe_window(
        &self,
        resource: &ResourceUri,
        window: TurnWindow,
    ) -> HostResult<Subscription> {
        match (resource, window) {
            (ResourceUri::Chat(chat), TurnWindow::Latest(limit)) => {
                self.subscribe_latest(chat, limit).await
            }
            _ => self.subscribe(resource).await,
        }
    }

    /// Resumes a subscription from the last seq a client saw; a fresh snapshot holds the
    /// turns `window` says.
    pub async fn resume_window(
        &self,
        resource: &ResourceUri,
        last_seq: u64,
        window: TurnWindow,
    ) -> HostResult<Resumed> {
        let (ResourceUri::Chat(chat), TurnWindow::Latest(limit)) = (resource, window) else {
            return self.resume(resource, last_seq).await;
        };
        self.ensure_session(chat.session_ref()).await?;
        {
            let mut state = self.inner.lock();
            if !state.chats.contains_key(chat) {
                return Err(HostError::NotFound {
                    what: "chat",
                    key: chat.to_string(),
                });
            }
            if let Some(missed) = state.replay_since(resource, last_seq) {
                let receiver = state.receiver(resource);
                return Ok(Resumed::Replay { missed, receiver });
            }
        }
        self.subscribe_latest(chat, limit)
            .await
            .map(|subscription| Resumed::Snapshot(Box::new(subscription)))
    }

    async fn subscribe_latest(&self, chat: &ChatUri, limit: u32) -> HostResult<Subscription> {
        self.ensure_session(chat.session_ref()).await?;
        let resource = ResourceUri::Chat(chat.clone());
        for _ in 0..PAGE_ATTEMPTS {
            let seen = {
                let mut state = self.inner.lock();
                if !state.chats.contains_key(chat) {
                    return Err(HostError::NotFound {
                        what: "chat",
                        key: chat.to_string(),
                    });
                }
                if let Some(subscription) = loaded_window(&mut state, chat, limit) {
                    return Ok(subscription);
                }
                state.seq(&resource)
            };
            let page = self.stored_page(chat, None, limit).await?;
            let mut state = self.inner.lock();
            if let Some(subscription) = loaded_window(&mut state, chat, limit) {
                return Ok(subscription);
            }
            // Something happened in the chat while the page was read: read it again.
            if state.seq(&resource) != seen {
                continue;
            }
            let entry = state.chat(chat)?;
            let chat_state = ChatState {
                summary: entry.state.summary.clone(),
                turns: page.turns,
                draft: entry.state.draft.clone(),
                queued: entry.state.queued.clone(),
                agent: entry.state.agent.clone(),
            };
            return Ok(window_subscription(
                &mut state,
                chat,
                chat_state,
                page.has_more,
            ));
        }
        // A busy chat: load it and slice it.
        self.resolve_chat(chat).await?;
        let mut state = self.inner.lock();
        loaded_window(&mut state, chat, limit).ok_or_else(|| HostError::NotFound {
            what: "chat",
            key: chat.to_string(),
        })
    }

    /// At most `limit` of a chat's turns ending where `end` says, oldest first, and
    /// whether earlier turns exist. A chat that is not loaded stays unloaded: the page is
    /// read from the store.
    pub async fn turn_page(
        &self,
        chat: &ChatUri,
        end: PageEnd<'_>,
        limit: u32,
    ) -> HostResult<TurnPage> {
        self.ensure_session(chat.session_ref()).await?;
        if let Some(page) = self.loaded_page(chat, end, limit)? {
            return Ok(page);
        }
        let before = match end {
            PageEnd::Latest => None,
            PageEnd::Before(turn) => Some(turn),
        };
        self.stored_page(chat, before, limit).await
    }

    /// A page read from the store, stale running turns settled and turns the store
    /// refused taken from memory.
    async fn stored_page(
        &self,
        chat: &ChatUri,
        before: Option<&TurnId>,
        limit: u32,
    ) -> HostResult<TurnPage> {
        // Saves queued before an eviction must land before the page is read.
        self.inner.writer.flush().await;
        let page = self
            .inner
            .store
            .turn_page(chat, before, limit)
            .await
            .map_err(|error| match (error, before) {
                (StoreError::NotFound { what: "turn", .. }, Some(turn)) => unknown_turn(chat, turn),
                (error, _) => error.into(),
            })?;
        let mut turns = page.turns;
        settle_stale_turns(&mut turns);
        for kept in self.inner.ledger.kept_turns(chat) {
            if let Some(turn) = turns.iter_mut().find(|turn| turn.id == kept.id) {
                *turn = kept;
            }
        }
        Ok(TurnPage {
            turns,
            has_more: page.has_more,
        })
    }

    /// The page sliced from memory when the chat's turns are loaded; `None` when they
    /// are not.
    fn loaded_page(
        &self,
        chat: &ChatUri,
        end: PageEnd<'_>,
        limit: u32,
    ) -> HostResult<Option<TurnPage>> {
        let state = self.inner.lock();
        let entry = state.chat(chat)?;
        if !matches!(entry.resolution, Resolution::Resolved) {
            return Ok(None);
        }
        match slice_page(&entry.state.turns, end, limit as usize) {
            Some(page) => Ok(Some(page)),
            None => match end {
                PageEnd::Before(turn) => Err(unknown_turn(chat, turn)),
                PageEnd::Latest => Ok(None),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{UserMessage, now};

    fn turns(count: usize) -> Vec<Turn> {
        (0..count)
            .map(|index| {
                Turn::started(
                    TurnId::parse(&format!("turn-{index}")).unwrap(),
                    UserMessage::text(format!("question {index}")),
                    now(),
                )
            })
            .collect()
    }

    fn ids(page: &TurnPage) -> Vec<String> {
        page.turns.iter().map(|turn| turn.id.to_string()).collect()
    }

    #[test]
    fn pages_end_at_the_newest_turn_or_before_a_turn() {
        let all = turns(5);
        let latest = slice_page(&all, PageEnd::Latest, 2).unwrap();
        assert_eq!(ids(&latest), ["turn-3", "turn-4"]);
        assert!(latest.has_more);
        let before = TurnId::parse("turn-3").unwrap();
        let earlier = slice_page(&all, PageEnd::Before(&before), 2).unwrap();
        assert_eq!(ids(&earlier), ["turn-1", "turn-2"]);
        assert!(earlier.has_more);
        let first = TurnId::parse("turn-1").unwrap();
        let last = slice_page(&all, PageEnd::Before(&first), 2).unwrap();
        assert_eq!(ids(&last), ["turn-0"]);
        assert!(!last.has_more);
        let whole = slice_page(&all, PageEnd::Latest, 50).unwrap();
        assert_eq!(whole.turns.len(), 5);
        assert!(!whole.has_more);
        let nowhere = TurnId::parse("turn-9").unwrap();
        assert_eq!(slice_page(&all, PageEnd::Before(&nowhere), 2), None);
    }
}
