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

use hearth_core::{ChatUri, Timestamp};

use crate::codec::from_millis;
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;
use crate::stores::Change;

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

/// The lease's statements, written once for both databases (numbered `$N` parameters),
/// timed by the store's `clock`. A take holds the chat's row (`FOR_UPDATE`) inside the
/// store's `write_transaction`, so takers of one lease go one at a time; a release is
/// announced to other nodes where the database announces changes.
macro_rules! lease_statements {
    ($store:ty) => {
        impl $store {
            /// Takes `chat`'s lease for `holder`: a first lease, a renewal of the holder's
            /// own, or a takeover of one that ended (or whose holder `takeover` says
            /// stopped); a lease another holder still holds is refused.
            pub(crate) async fn take_lease_impl(
                &self,
                chat: &ChatUri,
                holder: &LeaseHolder,
                ttl: Duration,
                takeover: &Takeover,
            ) -> StoreResult<LeaseGrant> {
                let mut transaction = self.write_transaction().await?;
                // The chat's row, held: takers of one lease go one at a time.
                self.chat_id(&mut transaction, chat, true).await?;
                let uri = chat.to_string();
                let at = self.clock(&mut transaction).await?;
                let row: Option<LeaseRow> = sqlx::query_as(
                    "SELECT owner, pid, host, epoch, expires_at FROM chat_leases WHERE chat_uri = $1",
                )
                .bind(&uri)
                .fetch_optional(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?;
                let (sql, grant) = lease_step(&uri, row, holder, at, takeover)?;
                sqlx::query(sql)
                    .bind(&uri)
                    .bind(&holder.instance)
                    .bind(i64::from(holder.pid))
                    .bind(&holder.host)
                    .bind(grant.epoch)
                    .bind(at)
                    .bind(expiry(at, ttl))
                    .execute(&mut *transaction)
                    .await
                    .map_err(|e| self.error(e))?;
                transaction.commit().await.map_err(|e| self.error(e))?;
                Ok(grant)
            }

            /// Ends `holder`'s lease of `chat` now (nothing when another holds it).
            pub(crate) async fn release_lease_impl(
                &self,
                chat: &ChatUri,
                holder: &LeaseHolder,
            ) -> StoreResult<()> {
                let mut transaction = self.write_transaction().await?;
                let at = self.clock(&mut transaction).await?;
                let released = sqlx::query(
                    "UPDATE chat_leases
                     SET expires_at = CASE WHEN expires_at < $1 THEN expires_at ELSE $1 END
                     WHERE chat_uri = $2 AND owner = $3",
                )
                .bind(at)
                .bind(chat.to_string())
                .bind(&holder.instance)
                .execute(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?
                .rows_affected();
                if released > 0 {
                    Self::announce(&mut transaction, &Change::Chat(chat.clone()))
                        .await
                        .map_err(|e| self.error(e))?;
                }
                transaction.commit().await.map_err(|e| self.error(e))
            }
        }
    };
}

lease_statements!(SqliteStore);
lease_statements!(PgStore);

/// What taking a lease does, given its row: the statement (binding chat, owner, pid,
/// host, epoch, now, expiry as `$1`…`$7`) and the grant; a lease another holder still
/// holds is refused.
fn lease_step(
    uri: &str,
    row: Option<LeaseRow>,
    holder: &LeaseHolder,
    at: i64,
    takeover: &Takeover,
) -> StoreResult<(&'static str, LeaseGrant)> {
    Ok(match row {
        // The first lease of a chat that never had one.
        None => (
            "INSERT INTO chat_leases (chat_uri, owner, pid, host, epoch, taken_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            LeaseGrant {
                epoch: 1,
                previous_epoch: 0,
            },
        ),
        // The holder's own, extended (same epoch); one that had ended counts as taken
        // again now.
        Some((owner, _, _, epoch, _)) if owner == holder.instance => (
            "UPDATE chat_leases SET expires_at = $7,
                    taken_at = CASE WHEN expires_at <= $6 THEN $6 ELSE taken_at END
             WHERE chat_uri = $1 AND owner = $2 AND pid = $3 AND host = $4 AND epoch = $5",
            LeaseGrant {
                epoch,
                previous_epoch: epoch,
            },
        ),
        // Another owner's, moved to the new holder under the next epoch.
        Some((owner, _, _, epoch, ends))
            if ends <= at || *takeover == Takeover::Stopped(owner.clone()) =>
        {
            (
                "UPDATE chat_leases SET owner = $2, pid = $3, host = $4, epoch = $5,
                        taken_at = $6, expires_at = $7
                 WHERE chat_uri = $1",
                LeaseGrant {
                    epoch: epoch + 1,
                    previous_epoch: epoch,
                },
            )
        }
        Some((owner, pid, host, _, ends)) => {
            return Err(StoreError::Leased {
                chat: uri.to_owned(),
                holder: holder_from(owner, pid, host),
                expires_at: from_millis(ends)?,
            });
        }
    })
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
