//! Emptying the trash, audited: what the user asks for (`hearth trash empty`,
//! `trash/empty`) and what `[history] trash_days` erases by itself. Each emptying that
//! erases something leaves one audit entry naming what it erased (kinds and ids only:
//! titles were the user's words, and go with the rest).

use chrono::Duration;
use hearth_core::Timestamp;
use hearth_store::{Store, TrashItem};
use serde_json::json;

use crate::actor::Actor;
use crate::audit::{AuditEntry, AuditKind, AuditLog, AuditOutcome, Decision};
use crate::error::Result;

/// Why the trash is emptied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emptying {
    /// The user asked; `older_than_days` narrows it to items deleted that long ago.
    Asked {
        /// Only items deleted at least this many days ago.
        older_than_days: Option<u32>,
    },
    /// `[history] trash_days` passed for these items.
    Expired {
        /// The configured days.
        trash_days: u32,
    },
}

impl Emptying {
    /// Items deleted at or before this time are erased (every item when `None`).
    pub fn cutoff(self, now: Timestamp) -> Option<Timestamp> {
        let days = match self {
            Self::Asked { older_than_days } => older_than_days?,
            Self::Expired { trash_days } => trash_days,
        };
        Some(now - Duration::days(i64::from(days)))
    }
}

/// When an item deleted at `deleted_at` is erased by itself (`None`: never, as
/// `trash_days` is `None`).
pub fn purge_at(deleted_at: Timestamp, trash_days: Option<u32>) -> Option<Timestamp> {
    trash_days.map(|days| deleted_at + Duration::days(i64::from(days)))
}

/// Erases what `emptying` selects from the trash, then records it in the audit log (an
/// automatic emptying that found nothing leaves no entry). Returns the items erased.
pub async fn empty_trash(
    store: &dyn Store,
    audit: &AuditLog,
    actor: Actor,
    emptying: Emptying,
) -> Result<Vec<TrashItem>> {
    let erased = store
        .empty_trash(emptying.cutoff(hearth_core::now()))
        .await?;
    if erased.is_empty() && matches!(emptying, Emptying::Expired { .. }) {
        return Ok(erased);
    }
    let items: Vec<_> = erased
        .iter()
        .map(|item| json!({ "kind": item.kind.as_str(), "id": item.id }))
        .collect();
    let (why, days) = match emptying {
        Emptying::Asked { older_than_days } => ("asked", older_than_days),
        Emptying::Expired { trash_days } => ("trash_days", Some(trash_days)),
    };
    let entry = AuditEntry::new(
        actor,
        AuditKind::Trash,
        Decision::Erased,
        AuditOutcome::ok_with(format!("{} erased", erased.len())),
    )
    .detail(json!({ "why": why, "days": days, "items": items }));
    audit.append(entry).await?;
    Ok(erased)
}
