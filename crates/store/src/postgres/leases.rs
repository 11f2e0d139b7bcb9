//! Chat leases on PostgreSQL: one writer per chat across processes and nodes, timed by
//! the database's clock. The chat's row lock orders takers of one lease.

use std::time::Duration;

use hearth_core::ChatUri;

use super::PgStore;
use crate::codec::from_millis;
use crate::error::{StoreError, StoreResult};
use crate::leases::{LeaseGrant, LeaseHolder, LeaseRow, Takeover, expiry, holder_from};
use crate::stores::Change;

impl PgStore {
    pub(crate) async fn take_lease_impl(
        &self,
        chat: &ChatUri,
        holder: &LeaseHolder,
        ttl: Duration,
        takeover: &Takeover,
    ) -> StoreResult<LeaseGrant> {
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        let uri = chat.to_string();
        let exists: Option<i32> =
            sqlx::query_scalar("SELECT 1 FROM chats WHERE uri = $1 FOR UPDATE")
                .bind(&uri)
                .fetch_optional(&mut *transaction)
                .await
                .map_err(|e| self.error(e))?;
        if exists.is_none() {
            return Err(StoreError::NotFound {
                what: "chat",
                key: uri,
            });
        }
        let at = self.clock(&mut transaction).await?;
        let expires_at = expiry(at, ttl);
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
            .bind(expires_at)
            .execute(&mut *transaction)
            .await
            .map_err(|e| self.error(e))?;
        transaction.commit().await.map_err(|e| self.error(e))?;
        Ok(grant)
    }

    pub(crate) async fn release_lease_impl(
        &self,
        chat: &ChatUri,
        holder: &LeaseHolder,
    ) -> StoreResult<()> {
        let mut transaction = self.pool.begin().await.map_err(|e| self.error(e))?;
        let released = sqlx::query(
            "UPDATE chat_leases
             SET expires_at = LEAST(expires_at, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
             WHERE chat_uri = $1 AND owner = $2",
        )
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
        None => (
            "INSERT INTO chat_leases (chat_uri, owner, pid, host, epoch, taken_at, expires_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            LeaseGrant {
                epoch: 1,
                previous_epoch: 0,
            },
        ),
        Some((owner, _, _, epoch, _)) if owner == holder.instance => (
            "UPDATE chat_leases SET expires_at = $7,
                    taken_at = CASE WHEN expires_at <= $6 THEN $6 ELSE taken_at END
             WHERE chat_uri = $1 AND owner = $2 AND pid = $3 AND host = $4 AND epoch = $5",
            LeaseGrant {
                epoch,
                previous_epoch: epoch,
            },
        ),
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
