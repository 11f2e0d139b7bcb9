//! Keeping an agent's footprint bounded. An open session can cost a process of its own
//! (Claude runs one Claude Code process per session, a few hundred MB each), so:
//! - at most [`LiveLimits::max_sessions`] of an agent's sessions stay open: after a
//!   turn, the least recently used idle ones beyond that are closed (`session/close`)
//!   and reopened on their next use, as after a restart;
//! - a session unused for [`LiveLimits::idle_release`] is closed the same way;
//! - an agent with no open session and no turn for that long is stopped, and started
//!   again when a chat needs it.
//!
//! Closing a session needs the agent to offer `session/close`; for an agent without it
//! only the idle stop applies. A chat is never released while its turn runs.

use std::collections::HashMap;
use std::sync::PoisonError;
use std::time::{Duration, Instant};

use hearth_core::ChatUri;

use crate::connection::Connection;
use crate::harness::Inner;

/// How many of an agent's sessions stay open, and how long an unused one does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveLimits {
    /// Sessions kept open at most (at least 1).
    pub max_sessions: usize,
    /// An open session unused this long is closed; an agent with none open and no turn
    /// this long is stopped.
    pub idle_release: Duration,
}

impl Default for LiveLimits {
    fn default() -> Self {
        Self {
            max_sessions: 4,
            idle_release: Duration::from_secs(10 * 60),
        }
    }
}

/// When each chat's session and the agent were last used, and whether a sweeper watches.
#[derive(Default)]
pub(crate) struct Usage {
    chats: HashMap<ChatUri, Instant>,
    agent: Option<Instant>,
    sweeping: bool,
}

/// How a chat held by the harness stands on the running agent.
struct Held {
    chat: ChatUri,
    open: bool,
    running: bool,
    used: Option<Instant>,
}

impl Inner {
    fn usage(&self) -> std::sync::MutexGuard<'_, Usage> {
        self.usage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes that a chat's session was used now.
    pub(crate) fn touched(&self, chat: &ChatUri) {
        let now = Instant::now();
        let mut usage = self.usage();
        usage.chats.insert(chat.clone(), now);
        usage.agent = Some(now);
    }

    /// Forgets a chat the harness no longer holds.
    pub(crate) fn untouched(&self, chat: &ChatUri) {
        self.usage().chats.remove(chat);
    }

    /// Every chat the harness holds, how it stands on the connection `generation`.
    fn held(&self, generation: u64) -> Vec<Held> {
        let used = self.usage().chats.clone();
        self.shared
            .chats
            .chats()
            .into_iter()
            .filter_map(|chat| {
                let (open, running) = self
                    .shared
                    .chats
                    .with(&chat, |entry| {
                        (
                            entry.conversation.attached == Some(generation),
                            entry.run.is_some(),
                        )
                    })
                    .ok()?;
                let used = used.get(&chat).copied();
                Some(Held {
                    chat,
                    open,
                    running,
                    used,
                })
            })
            .collect()
    }

    /// Closes the least recently used idle sessions beyond the limit.
    pub(crate) async fn enforce_limit(&self) {
        self.keep_within_limit(None).await;
    }

    /// Makes room for `chat`'s session before it is used: when it is not open (or
    /// `chat` is `None`, a new chat), one more than the limit's others is closed, so the
    /// limit holds while its turn runs too.
    pub(crate) async fn make_room(&self, chat: Option<&ChatUri>) {
        self.keep_within_limit(Some(chat)).await;
    }

    /// Closes the least recently used idle sessions beyond the limit, counting the
    /// session `opening` is about to open (`Some(None)`: a new chat's).
    async fn keep_within_limit(&self, opening: Option<Option<&ChatUri>>) {
        let Some(connection) = self.current().await else {
            return;
        };
        if !closes(&connection) {
            return;
        }
        let held = self.held(connection.generation);
        let opens_one = match opening {
            None => false,
            Some(None) => true,
            Some(Some(chat)) => !held.iter().any(|held| &held.chat == chat && held.open),
        };
        let open = held.iter().filter(|held| held.open).count() + usize::from(opens_one);
        let excess = open.saturating_sub(self.shared.options.live.max_sessions.max(1));
        if excess == 0 {
            return;
        }
        let spared = opening.flatten();
        let mut idle: Vec<Held> = held
            .into_iter()
            .filter(|held| held.open && !held.running && Some(&held.chat) != spared)
            .collect();
        idle.sort_by_key(|held| held.used);
        for held in idle.into_iter().take(excess) {
            self.release_session(
                &connection,
                &held.chat,
                "to stay within its limit of open sessions",
            )
            .await;
        }
    }

    /// Closes sessions unused for the idle time; stops the agent when none is open and
    /// nothing ran for that long. Returns whether the agent was stopped.
    async fn release_idle(&self) -> bool {
        let Some(connection) = self.current().await else {
            return true;
        };
        let idle_release = self.shared.options.live.idle_release;
        let now = Instant::now();
        let unused = |used: Option<Instant>| {
            used.is_none_or(|used| now.saturating_duration_since(used) >= idle_release)
        };
        let held = self.held(connection.generation);
        if closes(&connection) {
            for held in held
                .iter()
                .filter(|held| held.open && !held.running && unused(held.used))
            {
                self.release_session(&connection, &held.chat, "after it was not used for a while")
                    .await;
            }
        }
        let held = self.held(connection.generation);
        let busy = held
            .iter()
            .any(|held| held.running || (held.open && !unused(held.used)));
        let agent_used = self.usage().agent;
        if busy || !unused(agent_used) || !self.shared.waiting().is_empty() {
            return false;
        }
        tracing::info!(agent = %self.shared.agent(), "stopping the agent: no session of it was used for a while (it starts again when a chat needs it)");
        drop(connection);
        self.stop().await;
        true
    }

    /// Closes one chat's session on the agent; its next use reopens it. A chat whose turn
    /// runs is left alone.
    async fn release_session(&self, connection: &Connection, chat: &ChatUri, why: &str) {
        let _releasing = self.releasing.lock().await;
        let session = self
            .shared
            .chats
            .with(chat, |entry| {
                if entry.run.is_some() || entry.conversation.attached != Some(connection.generation)
                {
                    return None;
                }
                entry.conversation.attached = None;
                entry.conversation.session_id.clone()
            })
            .ok()
            .flatten();
        let Some(session_id) = session else {
            return;
        };
        tracing::info!(agent = %self.shared.agent(), %chat, session = %session_id, "closing the chat's session {why}; it reopens when the chat is used");
        self.end_session(connection, &session_id, false).await;
    }

    /// Waits until no session is being closed (a turn must not reopen a session whose
    /// closing is still on its way).
    pub(crate) async fn settled_releases(&self) {
        drop(self.releasing.lock().await);
    }

    /// Starts the task that releases idle sessions and stops an unused agent, unless one
    /// runs. It ends when the agent is stopped (the next start begins another).
    pub(crate) fn watch(&self) {
        {
            let mut usage = self.usage();
            if usage.sweeping {
                return;
            }
            usage.sweeping = true;
            usage.agent.get_or_insert_with(Instant::now);
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            self.usage().sweeping = false;
            return;
        };
        let me = self.me.clone();
        let every = (self.shared.options.live.idle_release / 4)
            .clamp(Duration::from_secs(1), Duration::from_secs(60));
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(inner) = me.upgrade() else { return };
                if inner.release_idle().await {
                    inner.usage().sweeping = false;
                    return;
                }
            }
        });
    }
}

/// Whether the agent closes sessions.
fn closes(connection: &Connection) -> bool {
    connection
        .info
        .capabilities
        .session_capabilities
        .close
        .is_some()
}
