//! Emptying what `[history] trash_days` passed for: whenever a command opens the store
//! (one indexed read when nothing is due), and once a day in a server. Each emptying that
//! erases something is audited (see [`hearth_tools::empty_trash`]).

use std::sync::Arc;
use std::time::Duration;

use hearth_store::{Access, Stores};
use hearth_tools::{Actor, AuditLog, Emptying};

use crate::App;

/// How often a server looks for trash to empty.
const DAILY: Duration = Duration::from_secs(24 * 60 * 60);

impl App {
    /// Erases the trash items older than `[history] trash_days` (none when it is 0),
    /// audited. Returns how many were erased.
    pub async fn empty_expired_trash(
        &self,
        store: &Arc<dyn Stores>,
        audit: &AuditLog,
    ) -> anyhow::Result<usize> {
        let Some(trash_days) = self.config.history.trash_days() else {
            return Ok(0);
        };
        if !matches!(store.access(), Access::ReadWrite) {
            return Ok(0);
        }
        let erased = hearth_tools::empty_trash(
            store.as_ref(),
            audit,
            Actor::Hearth,
            Emptying::Expired { trash_days },
        )
        .await?;
        if !erased.is_empty() {
            tracing::info!(
                erased = erased.len(),
                trash_days,
                "erased what stayed in the trash longer than [history] trash_days"
            );
        }
        Ok(erased.len())
    }

    /// Empties expired trash now and once a day, for as long as the runtime lives.
    pub fn empty_expired_trash_daily(&self, store: Arc<dyn Stores>, audit: AuditLog) {
        let app = self.clone();
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(DAILY);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticker.tick().await;
                if let Err(error) = app.empty_expired_trash(&store, &audit).await {
                    tracing::warn!("could not empty the trash of expired items: {error:#}");
                }
            }
        });
    }
}
