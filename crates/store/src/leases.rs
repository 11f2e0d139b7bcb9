//! Chat leases: a chat has at most one writer at a time across processes. A process takes
//! a chat's lease before it answers in the chat, renews it while the answer runs, and
//! releases it once the turn is stored. A process that stopped without releasing leaves a
//! lease that ends when it expires — or at once, when another process on the same machine
//! has seen that its holder no longer runs ([`Takeover::Stopped`]).
//!
//! Each lease has an epoch that grows whenever the lease passes to another owner. A
//! process that remembers the epoch at which it read a chat can tell, when it takes the
//! lease again, whether another process wrote the chat meanwhile.

use std::time::Duration;

use hearth_core::{ChatUri, Timestamp, now};
use sqlx::Connection;

use crate::codec::{from_millis, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::sqlite::SqliteStore;

/// Who holds a lease.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseHolder {
    /// One running host, minted at random when it starts: leases are compared by it, so
    /// two hosts in one process exclude each other too.
    pub instance: String,
    /// The holder's process id.
    pub pid: u32,
    /// The name of the machine the holder runs on.
    pub host: String,
}

/// Which lease of another owner a take may replace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Takeover {
    /// Only one that ended (released or expired).
    Ended,
    /// Also a live one held by this instance, whose process the caller saw had stopped.
    /// A compare-and-set: when another owner took the lease meanwhile, the take fails.
    Stopped(String),
}

/// A lease taken or renewed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseGrant {
    /// The lease's epoch now.
    pub epoch: i64,
    /// Its epoch before this take: the last owner's (0 for a chat never leased). Equal to
    /// `epoch` when the lease was already the taker's.
    pub previous_epoch: i64,
}

/// A chat's lease as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatLease {
    /// The chat.
    pub chat: ChatUri,
    /// Its current or last owner.
    pub holder: LeaseHolder,
    /// Grows each time the lease passes to another owner.
    pub epoch: i64,
    /// When it ends (or ended: a released lease ended when it was released).
    pub expires_at: Timestamp,
}

impl ChatLease {
    /// Whether the lease is held at `at`.
    pub fn is_live(&self, at: Timestamp) -> bool {
        self.expires_at > at
    }
}

/// A stored lease row: owner, pid, host, epoch, expires_at.
pub(crate) type LeaseRow = (String, i64, String, i64, i64);

pub(crate) fn holder_from(owner: String, pid: i64, host: String) -> LeaseHolder {
    LeaseHolder {
        instance: owner,
        pid: u32::try_from(pid).unwrap_or(0),
        host,
    }
}

pub(crate) fn expiry(at: i64, ttl: Duration) -> i64 {
    at.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
}

/// One attempt to take a chat's lease: for whom, when, and until when.
struct Taking<'a> {
    chat: &'a ChatUri,
    holder: &'a LeaseHolder,
    /// Now, in milliseconds.
    at: i64,
    /// When the lease taken would end, in milliseconds.
    expires_at: i64,
}

impl SqliteStore {
    /// Takes `chat`'s lease for `holder` in one immediate transaction: a first lease, a
    /// renewal of the holder's own, or a takeover of one that ended (or whose holder
    /// `takeover` says stopped); a lease another holder still holds is refused.
    pub(crate) async fn take_lease_impl(
        &self,
        chat: &ChatUri,
        holder: &LeaseHolder,
        ttl: Duration,
        takeover: &Takeover,
    ) -> StoreResult<LeaseGrant> {
        let at = to_millis(&now());
        let taking = Taking {
            chat,
            holder,
            at,
            expires_at: expiry(at, ttl),
        };
        let mut connection = self.pool.acquire().await.map_err(|e| self.error(e))?;
        let mut transaction = connection
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(|e| self.error(e))?;
        let row: Option<LeaseRow> = sqlx::query_as(
            "SELECT owner, pid, host, epoch, expires_at FROM chat_leases WHERE chat_uri = ?",
        )
        .bind(chat.to_string())
        .fetch_optional(&mut *transaction)
        .await
        .map_err(|e| self.error(e))?;
        let grant = match row {
            None => self.first_lease(&mut transaction, &taking).await?,
            Some((owner, _, _, epoch, _)) if owner == holder.instance => {
                self.renew_lease(&mut transaction, &taking, epoch).await?
            }
            Some((owner, _, _, epoch, ends))
                if ends <= at || *takeover == Takeover::Stopped(owner.clone()) =>
            {
                self.take_over_lease(&mut transaction, &taking, &owner, epoch)
                    .await?
            }
            Some((owner, pid, host, _, ends)) => {
                return Err(StoreError::Leased {
                    chat: chat.to_string(),
                    holder: holder_from(owner, pid, host),
                    expires_at: from_millis(ends)?,
                });
            }
        };
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(grant)
    }

    /// Writes the first lease of a chat that never had one (epoch 1); fails if the chat
    /// does not exist.
    async fn first_lease(
        &self,
        connection: &mut sqlx::SqliteConnection,
        taking: &Taking<'_>,
    ) -> StoreResult<LeaseGrant> {
        let chat = taking.chat.to_string();
        let exists: Option<i64> = sqlx::query_scalar("SELECT 1 FROM chats WHERE uri = ?")
            .bind(&chat)
            .fetch_optional(&mut *connection)
            .await
            .map_err(|e| self.error(e))?;
        if exists.is_none() {
            return Err(StoreError::NotFound {
                what: "chat",
                key: chat,
            });
        }
        sqlx::query(
            "INSERT INTO chat_leases (chat_uri, owner, pid, host, epoch, taken_at, expires_at)
             VALUES (?, ?, ?, ?, 1, ?, ?)",
        )
        .bind(&chat)
        .bind(&taking.holder.instance)
        .bind(i64::from(taking.holder.pid))
        .bind(&taking.holder.host)
        .bind(taking.at)
        .bind(taking.expires_at)
        .execute(&mut *connection)
        .await
        .map_err(|e| self.error(e))?;
        Ok(LeaseGrant {
            epoch: 1,
            previous_epoch: 0,
        })
    }

    /// Extends the holder's own lease (same epoch); a lease that had ended counts as
    /// taken again now.
    async fn renew_lease(
        &self,
        connection: &mut sqlx::SqliteConnection,
        taking: &Taking<'_>,
        epoch: i64,
    ) -> StoreResult<LeaseGrant> {
        sqlx::query(
            "UPDATE chat_leases SET expires_at = ?, taken_at = CASE WHEN expires_at <= ? THEN ? ELSE taken_at END
             WHERE chat_uri = ?",
        )
        .bind(taking.expires_at)
        .bind(taking.at)
        .bind(taking.at)
        .bind(taking.chat.to_string())
        .execute(&mut *connection)
        .await
        .map_err(|e| self.error(e))?;
        Ok(LeaseGrant {
            epoch,
            previous_epoch: epoch,
        })
    }

    /// Moves the lease from `owner` to the new holder under the next epoch.
    async fn take_over_lease(
        &self,
        connection: &mut sqlx::SqliteConnection,
        taking: &Taking<'_>,
        owner: &str,
        epoch: i64,
    ) -> StoreResult<LeaseGrant> {
        sqlx::query(
            "UPDATE chat_leases SET owner = ?, pid = ?, host = ?, epoch = ?, taken_at = ?, expires_at = ?
             WHERE chat_uri = ? AND owner = ?",
        )
        .bind(&taking.holder.instance)
        .bind(i64::from(taking.holder.pid))
        .bind(&taking.holder.host)
        .bind(epoch + 1)
        .bind(taking.at)
        .bind(taking.expires_at)
        .bind(taking.chat.to_string())
        .bind(owner)
        .execute(&mut *connection)
        .await
        .map_err(|e| self.error(e))?;
        Ok(LeaseGrant {
            epoch: epoch + 1,
            previous_epoch: epoch,
        })
    }

    pub(crate) async fn release_lease_impl(
        &self,
        chat: &ChatUri,
        holder: &LeaseHolder,
    ) -> StoreResult<()> {
        let at = to_millis(&now());
        sqlx::query(
            "UPDATE chat_leases SET expires_at = MIN(expires_at, ?) WHERE chat_uri = ? AND owner = ?",
        )
        .bind(at)
        .bind(chat.to_string())
        .bind(&holder.instance)
        .execute(&self.pool)
        .await
        .map_err(|e| self.error(e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_is_live_until_it_expires() {
        let lease = ChatLease {
            chat: ChatUri::parse("hearth-chat:replay/s/c").unwrap(),
            holder: holder_from("a".into(), 7, "h".into()),
            epoch: 1,
            expires_at: from_millis(1_000).unwrap(),
        };
        assert!(lease.is_live(from_millis(999).unwrap()));
        assert!(!lease.is_live(from_millis(1_000).unwrap()));
        assert_eq!(lease.holder.pid, 7);
        assert_eq!(holder_from("b".into(), -1, "h".into()).pid, 0);
        assert_eq!(expiry(5, Duration::from_millis(10)), 15);
        assert_eq!(expiry(5, Duration::MAX), i64::MAX);
    }
}
