//! What other nodes change, as PostgreSQL announces it: each write another node must not
//! wait for a poll to see — a turn stored (sent, checkpointed, ended), a lease released
//! (its chat was answered), a session made —
//! sends a notification on the `hearth_changes` channel when it commits, and every node
//! listens. A notification only says where to look: what changed is read from the
//! tables, so one that is lost (a connection dropped meanwhile) costs the next periodic
//! look, never a change.

use std::time::Duration;

use hearth_core::{ChatUri, SessionUri};
use sqlx::postgres::PgListener;
use tokio::sync::mpsc;

use super::PgStore;
use crate::error::StoreResult;
use crate::stores::Change;

/// The channel the notifications travel on.
pub(crate) const CHANNEL: &str = "hearth_changes";

/// How long a listener whose connection failed waits before it connects again.
const RECONNECT: Duration = Duration::from_secs(1);

/// Notifications waiting for their reader before the oldest are dropped (a slow reader
/// then reads the tables, as after a lost notification).
const BACKLOG: usize = 1024;

/// The payload of a change: `chat <uri>`, `turn <uri>`, `session <uri>`, or
/// `ask <json>`.
pub(crate) fn payload(change: &Change) -> String {
    match change {
        Change::Chat(chat) => format!("chat {chat}"),
        Change::Turn(chat) => format!("turn {chat}"),
        Change::Session(session) => format!("session {session}"),
        Change::Summary(session) => format!("summary {session}"),
        Change::Asked(ask) => format!(
            "ask {}",
            serde_json::to_string(ask).unwrap_or_else(|_| "{}".to_owned())
        ),
    }
}

fn parse(payload: &str) -> Option<Change> {
    match payload.split_once(' ')? {
        ("chat", uri) => ChatUri::parse(uri).ok().map(Change::Chat),
        ("turn", uri) => ChatUri::parse(uri).ok().map(Change::Turn),
        ("session", uri) => SessionUri::parse(uri).ok().map(Change::Session),
        ("summary", uri) => SessionUri::parse(uri).ok().map(Change::Summary),
        ("ask", json) => serde_json::from_str(json).ok().map(Change::Asked),
        _ => None,
    }
}

/// The most a notification may carry (PostgreSQL refuses longer payloads).
const MAX_PAYLOAD: usize = 7900;

impl PgStore {
    /// Announces `change` to every node when the transaction on `connection` commits.
    pub(crate) async fn announce(
        connection: &mut sqlx::PgConnection,
        change: &Change,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(payload(change))
            .execute(&mut *connection)
            .await
            .map(|_| ())
    }

    /// `update` (a statement `RETURNING 1`) that also announces `change` to every node
    /// when it commits, in one round trip; the parameters it adds, from `$next` on.
    pub(crate) fn announcing(update: &str, next: usize, change: &Change) -> (String, Vec<String>) {
        (
            format!(
                "WITH changed AS ({update}) SELECT 1 FROM changed, pg_notify(${next}, ${})",
                next + 1
            ),
            vec![CHANNEL.to_owned(), payload(change)],
        )
    }

    /// Sends an ask to every node; the one answering the chat acts on it. Not part of
    /// any write: it goes at once.
    pub(crate) async fn ask_holder_impl(&self, ask: &crate::HolderAsk) -> StoreResult<bool> {
        let change = Change::Asked(ask.clone());
        let text = payload(&change);
        if text.len() > MAX_PAYLOAD {
            return Err(crate::StoreError::InvalidQuery(format!(
                "an ask of {} bytes is too long to send to the node answering {}",
                text.len(),
                ask.chat()
            )));
        }
        self.announce_now(&change).await?;
        Ok(true)
    }

    /// Tells every node that a session's summary changed (it was shared).
    pub(crate) async fn announce_summary(&self, session: &SessionUri) -> StoreResult<()> {
        self.announce_now(&Change::Summary(session.clone())).await
    }

    /// Announces `change` at once, outside any write.
    async fn announce_now(&self, change: &Change) -> StoreResult<()> {
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        Self::announce(&mut connection, change)
            .await
            .map_err(|e| self.error(e))
    }

    /// Starts listening: the receiver gets every change other nodes (and this one)
    /// commit from now on, for as long as it is kept. A connection that fails is made
    /// again; what was announced meanwhile is lost (see the module's note).
    pub async fn changes(&self) -> StoreResult<mpsc::Receiver<Change>> {
        let mut listener = PgListener::connect_with(&self.pool)
            .await
            .map_err(|e| self.error(e))?;
        listener.listen(CHANNEL).await.map_err(|e| self.error(e))?;
        let (sender, receiver) = mpsc::channel(BACKLOG);
        let name = self.name();
        tokio::spawn(async move {
            loop {
                let notification = tokio::select! {
                    () = sender.closed() => return,
                    notification = listener.try_recv() => notification,
                };
                match notification {
                    Ok(Some(notification)) => {
                        let Some(change) = parse(notification.payload()) else {
                            tracing::debug!(
                                payload = notification.payload(),
                                "an unknown change notification was ignored"
                            );
                            continue;
                        };
                        if sender.try_send(change).is_err() && sender.is_closed() {
                            return;
                        }
                    }
                    // The connection was lost; the listener connects again on the next
                    // call.
                    Ok(None) => {
                        tracing::debug!(store = %name, "the change listener lost its connection; connecting again");
                    }
                    Err(error) => {
                        tracing::warn!(store = %name, %error, "listening for changes failed; trying again");
                        tokio::time::sleep(RECONNECT).await;
                    }
                }
            }
        });
        Ok(receiver)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_round_trip_and_junk_is_ignored() {
        let chat = ChatUri::parse("hearth-chat:codex/s1/c2").unwrap();
        let session = SessionUri::parse("hearth-session:codex/s1").unwrap();
        for change in [
            Change::Chat(chat.clone()),
            Change::Turn(chat.clone()),
            Change::Session(session.clone()),
            Change::Summary(session),
            Change::Asked(crate::HolderAsk::Abort { chat: chat.clone() }),
            Change::Asked(crate::HolderAsk::Answer {
                chat,
                request_id: "req 1".into(),
                option_id: "allow-once".into(),
                by_policy: false,
            }),
        ] {
            assert_eq!(parse(&payload(&change)), Some(change));
        }
        assert_eq!(parse("chat not-a-uri"), None);
        assert_eq!(parse("weather sunny"), None);
        assert_eq!(parse(""), None);
    }
}
