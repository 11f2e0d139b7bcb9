//! Live sessions: the sessions this process serves right now.
//!
//! A live session holds its record (kept equal to its file), the turn running in it,
//! if any, and its open MCP connections. A session becomes live through `session/new`,
//! `session/load`, `session/resume` or `session/fork`, and stops being live through
//! `session/close` or the end of the process.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use agent_client_protocol::v1::schema::SessionId;
use tokio_util::sync::CancellationToken;

use crate::mcp::McpConnection;
use crate::store::{SessionRecord, Store};

/// Numbers turns across the process, so a finished turn never clears a newer one.
static TURN_NUMBERS: AtomicU64 = AtomicU64::new(1);

/// Locks `mutex`, recovering the data if another thread panicked while holding it.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The turn running in a session.
struct ActiveTurn {
    number: u64,
    cancel: CancellationToken,
}

/// Permission to run one turn; hand it back with [`LiveSession::end_turn`].
pub(crate) struct TurnTicket {
    number: u64,
    /// Cancelled by `session/cancel` (or by closing the session).
    pub(crate) cancel: CancellationToken,
}

/// Why a turn could not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Busy {
    /// Another turn runs and has not been cancelled.
    TurnRunning,
}

/// A session served by this process.
pub(crate) struct LiveSession {
    id: SessionId,
    record: Mutex<SessionRecord>,
    turn: Mutex<Option<ActiveTurn>>,
    /// Open MCP connections, by server name; opened on first use by `/mcp-call`.
    pub(crate) mcp: tokio::sync::Mutex<HashMap<String, McpConnection>>,
}

impl LiveSession {
    /// A live session over `record`.
    pub(crate) fn new(record: SessionRecord) -> Self {
        Self {
            id: SessionId::new(record.id.as_str()),
            record: Mutex::new(record),
            turn: Mutex::new(None),
            mcp: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The session id.
    pub(crate) fn id(&self) -> &SessionId {
        &self.id
    }

    /// A copy of the current record.
    pub(crate) fn record(&self) -> SessionRecord {
        lock(&self.record).clone()
    }

    /// Changes the record and writes it to disk, under one lock.
    pub(crate) fn update<T>(
        &self,
        store: &Store,
        change: impl FnOnce(&mut SessionRecord) -> T,
    ) -> anyhow::Result<T> {
        let mut record = lock(&self.record);
        let result = change(&mut record);
        store.save(&record)?;
        Ok(result)
    }

    /// Starts a turn, unless one is running and not cancelled. A cancelled turn that is
    /// still winding down does not block the next one.
    pub(crate) fn begin_turn(&self) -> Result<TurnTicket, Busy> {
        let mut turn = lock(&self.turn);
        if turn
            .as_ref()
            .is_some_and(|active| !active.cancel.is_cancelled())
        {
            return Err(Busy::TurnRunning);
        }
        let number = TURN_NUMBERS.fetch_add(1, Ordering::Relaxed);
        let cancel = CancellationToken::new();
        *turn = Some(ActiveTurn {
            number,
            cancel: cancel.clone(),
        });
        Ok(TurnTicket { number, cancel })
    }

    /// Ends the turn of `ticket`, if it is still the session's current turn.
    pub(crate) fn end_turn(&self, ticket: &TurnTicket) {
        let mut turn = lock(&self.turn);
        if turn
            .as_ref()
            .is_some_and(|active| active.number == ticket.number)
        {
            *turn = None;
        }
    }

    /// Cancels the running turn; returns whether there was one.
    pub(crate) fn cancel_turn(&self) -> bool {
        match lock(&self.turn).as_ref() {
            Some(active) => {
                active.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Closes every MCP connection of the session (their processes are killed).
    pub(crate) async fn close_mcp(&self) {
        let connections: Vec<(String, McpConnection)> = self.mcp.lock().await.drain().collect();
        for (name, connection) in connections {
            tracing::debug!(session = %self.id, server = %name, "closing MCP connection");
            connection.shutdown().await;
        }
    }
}
