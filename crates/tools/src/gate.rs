//! The approval gate: the user's side of proposals. Listing, approving (bound to the
//! payload hash the user saw), rejecting, applying (one compare-and-set on id, status
//! and hash, so a replayed or concurrent apply does nothing) and expiring. Every
//! decision, refusal and apply is recorded in the audit log.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use chrono::Duration;
use futures::FutureExt;
use hearth_core::{ApplyOutput, ProposalId, Timestamp, ToolError, ToolHandler};
use hearth_store::{ProposalQuery, ProposalRecord, ProposalStatus, StoreError};
use serde_json::{Value, json};

use crate::actor::{Actor, UserActor};
use crate::audit::{AuditEntry, AuditKind, AuditOutcome, Decision};
use crate::canonical::sha256_hex;
use crate::error::{Result, ToolsError};
use crate::proposal::{ApplyOutcome, Decided, Proposal, ProposalList};
use crate::registry::Shared;

/// An apply still running after this long was interrupted (its process stopped).
const INTERRUPTED_AFTER: Duration = Duration::minutes(15);

/// Attempts before giving up on a proposal that keeps changing under us.
const ATTEMPTS: usize = 5;

/// How `decided_by` names the user.
/// How a proposal records who decided it: `user`, or `user:<id>` on a team server.
fn decider(by: &UserActor) -> String {
    Actor::User(by.clone()).audit_name()
}

/// The user's side of proposals. Only user-facing code holds one (the CLI, the server's
/// authenticated API); agents get a [`Toolbox`](hearth_core::Toolbox), which cannot
/// reach it.
#[derive(Clone)]
pub struct ApprovalGate {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ApprovalGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalGate").finish_non_exhaustive()
    }
}

fn entry(
    actor: Actor,
    record: &ProposalRecord,
    decision: Decision,
    outcome: AuditOutcome,
) -> AuditEntry {
    AuditEntry::new(actor, AuditKind::Proposal, decision, outcome)
        .tool(&record.tool)
        .argument_hash(&record.payload_hash)
        .proposal(record.id.clone())
}

fn user_detail(by: &UserActor, record: &ProposalRecord) -> Value {
    json!({ "via": by.via(), "summary": record.summary })
}

impl ApprovalGate {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    async fn load(&self, id: &ProposalId) -> Result<ProposalRecord> {
        self.shared
            .proposals
            .proposal(id)
            .await?
            .ok_or_else(|| ToolsError::ProposalNotFound { id: id.to_string() })
    }

    /// Records a refused user action and returns the error.
    async fn refuse<T>(
        &self,
        by: &UserActor,
        record: &ProposalRecord,
        error: ToolsError,
    ) -> Result<T> {
        self.shared
            .record(
                entry(
                    Actor::User(by.clone()),
                    record,
                    Decision::Refused,
                    AuditOutcome::error(error.to_string()),
                )
                .detail(user_detail(by, record)),
            )
            .await;
        Err(error)
    }

    /// A page of proposals, newest first (expiring overdue ones first).
    pub async fn list(&self, query: &ProposalQuery) -> Result<ProposalList> {
        self.expire().await?;
        let page = self.shared.proposals.list_proposals(query).await?;
        Ok(ProposalList {
            proposals: page.proposals.into_iter().map(Proposal::from).collect(),
            next_cursor: page.next_cursor,
        })
    }

    /// One proposal (expiring overdue ones first).
    pub async fn get(&self, id: &ProposalId) -> Result<Proposal> {
        self.expire().await?;
        Ok(self.load(id).await?.into())
    }

    /// Approves the proposal holding the payload whose hash the user was shown. Approving
    /// what is already approved with that hash (or applied) changes nothing.
    pub async fn approve(
        &self,
        id: &ProposalId,
        payload_hash: &str,
        by: &UserActor,
    ) -> Result<Decided> {
        for _ in 0..ATTEMPTS {
            let record = self.load(id).await?;
            let now = self.shared.now();
            let refusal = match record.status {
                ProposalStatus::Pending if record.expires_at <= now => {
                    self.expire().await?;
                    ToolsError::Expired {
                        id: id.to_string(),
                        expired_at: record.expires_at,
                    }
                }
                ProposalStatus::Pending if record.payload_hash != payload_hash => {
                    ToolsError::HashMismatch {
                        id: id.to_string(),
                        expected: payload_hash.to_owned(),
                        actual: record.payload_hash.clone(),
                    }
                }
                ProposalStatus::Pending => {
                    match self.approve_pending(&record, payload_hash, by, now).await? {
                        Some(decided) => return Ok(decided),
                        // It changed since it was read: look again.
                        None => continue,
                    }
                }
                ProposalStatus::Approved | ProposalStatus::Applying | ProposalStatus::Applied
                    if record.approved_hash.as_deref() == Some(payload_hash) =>
                {
                    return Ok(Decided {
                        proposal: record.into(),
                        changed: false,
                    });
                }
                ProposalStatus::Approved | ProposalStatus::Applying | ProposalStatus::Applied => {
                    ToolsError::HashMismatch {
                        id: id.to_string(),
                        expected: payload_hash.to_owned(),
                        actual: record.approved_hash.clone().unwrap_or_default(),
                    }
                }
                ProposalStatus::Expired => ToolsError::Expired {
                    id: id.to_string(),
                    expired_at: record.expires_at,
                },
                ProposalStatus::Rejected | ProposalStatus::Failed => ToolsError::WrongStatus {
                    id: id.to_string(),
                    status: record.status,
                    action: "approved",
                },
            };
            return self.refuse(by, &record, refusal).await;
        }
        Err(busy(id))
    }

    /// Approves a pending record with one compare-and-set; `None` when it changed since
    /// it was read.
    async fn approve_pending(
        &self,
        record: &ProposalRecord,
        payload_hash: &str,
        by: &UserActor,
        now: Timestamp,
    ) -> Result<Option<Decided>> {
        let approved = self
            .shared
            .proposals
            .approve_proposal(&record.id, payload_hash, &decider(by), now)
            .await?;
        if !approved {
            return Ok(None);
        }
        self.shared
            .record(
                entry(
                    Actor::User(by.clone()),
                    record,
                    Decision::Approved,
                    AuditOutcome::ok(),
                )
                .detail(user_detail(by, record)),
            )
            .await;
        Ok(Some(Decided {
            proposal: self.load(&record.id).await?.into(),
            changed: true,
        }))
    }

    /// Rejects a pending (or approved, not yet applied) proposal. Rejecting a rejected
    /// proposal changes nothing.
    pub async fn reject(
        &self,
        id: &ProposalId,
        by: &UserActor,
        reason: Option<&str>,
    ) -> Result<Decided> {
        for _ in 0..ATTEMPTS {
            let record = self.load(id).await?;
            match record.status {
                ProposalStatus::Pending | ProposalStatus::Approved => {
                    let now = self.shared.now();
                    if self
                        .shared
                        .proposals
                        .reject_proposal(id, &decider(by), reason, now)
                        .await?
                    {
                        let mut detail = user_detail(by, &record);
                        if let (Some(reason), Value::Object(map)) = (reason, &mut detail) {
                            map.insert("reason".to_owned(), Value::String(reason.to_owned()));
                        }
                        self.shared
                            .record(
                                entry(
                                    Actor::User(by.clone()),
                                    &record,
                                    Decision::Rejected,
                                    AuditOutcome::ok(),
                                )
                                .detail(detail),
                            )
                            .await;
                        return Ok(Decided {
                            proposal: self.load(id).await?.into(),
                            changed: true,
                        });
                    }
                }
                ProposalStatus::Rejected => {
                    return Ok(Decided {
                        proposal: record.into(),
                        changed: false,
                    });
                }
                ProposalStatus::Expired
                | ProposalStatus::Applying
                | ProposalStatus::Applied
                | ProposalStatus::Failed => {
                    let error = ToolsError::WrongStatus {
                        id: id.to_string(),
                        status: record.status,
                        action: "rejected",
                    };
                    return self.refuse(by, &record, error).await;
                }
            }
        }
        Err(busy(id))
    }

    /// Applies an approved proposal: checks that the stored payload is exactly what was
    /// approved, claims the proposal with one compare-and-set on (id, `approved`, hash,
    /// payload) — so of any number of concurrent or replayed applies exactly one runs
    /// the tool — and records whether it was applied or failed. Applying an applied
    /// proposal changes nothing.
    pub async fn apply(&self, id: &ProposalId, by: &UserActor) -> Result<ApplyOutcome> {
        for _ in 0..ATTEMPTS {
            let record = self.load(id).await?;
            let now = self.shared.now();
            match record.status {
                ProposalStatus::Applied => {
                    return Ok(ApplyOutcome::AlreadyApplied {
                        proposal: record.into(),
                    });
                }
                ProposalStatus::Applying => {
                    return Ok(ApplyOutcome::InProgress {
                        proposal: record.into(),
                    });
                }
                ProposalStatus::Expired => {
                    let error = ToolsError::Expired {
                        id: id.to_string(),
                        expired_at: record.expires_at,
                    };
                    return self.refuse(by, &record, error).await;
                }
                ProposalStatus::Pending | ProposalStatus::Rejected | ProposalStatus::Failed => {
                    let error = ToolsError::WrongStatus {
                        id: id.to_string(),
                        status: record.status,
                        action: "applied",
                    };
                    return self.refuse(by, &record, error).await;
                }
                ProposalStatus::Approved if record.expires_at <= now => {
                    self.expire().await?;
                    let error = ToolsError::Expired {
                        id: id.to_string(),
                        expired_at: record.expires_at,
                    };
                    return self.refuse(by, &record, error).await;
                }
                ProposalStatus::Approved => {
                    if let Some(outcome) = self.apply_approved(&record, by).await? {
                        return Ok(outcome);
                    }
                    // Lost the compare-and-set: look again.
                }
            }
        }
        Err(busy(id))
    }

    /// Approves and, when that succeeds, applies (the CLI's `approve`). Approving an
    /// applied proposal again is a no-op.
    pub async fn approve_and_apply(
        &self,
        id: &ProposalId,
        payload_hash: &str,
        by: &UserActor,
    ) -> Result<ApplyOutcome> {
        self.approve(id, payload_hash, by).await?;
        self.apply(id, by).await
    }

    /// Applies an approved record; `None` when another caller claimed it first.
    async fn apply_approved(
        &self,
        record: &ProposalRecord,
        by: &UserActor,
    ) -> Result<Option<ApplyOutcome>> {
        let id = &record.id;
        let hash = sha256_hex(record.payload.as_bytes());
        let (tool, payload) = self.checked_apply(record, &hash, by).await?;
        let claimed = self
            .shared
            .proposals
            .claim_proposal(id, &hash, &record.payload, self.shared.now())
            .await?;
        if !claimed {
            return Ok(None);
        }
        let result = AssertUnwindSafe(tool.apply(&payload))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| {
                Err(ToolError::Failed(format!(
                    "the tool `{}` stopped unexpectedly while applying; check whether the change was made",
                    record.tool
                )))
            });
        self.finish_apply(record, &result, by).await?;
        match result {
            Ok(output) => Ok(Some(ApplyOutcome::Applied {
                proposal: self.load(id).await?.into(),
                summary: output.summary,
            })),
            Err(error) => Err(ToolsError::ApplyFailed {
                id: id.to_string(),
                error,
            }),
        }
    }

    /// The tool and payload of an approved record whose payload hashes to `hash`,
    /// checked: the payload is exactly what was approved and parses, and its tool
    /// exists. A refusal is recorded; a changed or unreadable payload also fails the
    /// proposal.
    async fn checked_apply(
        &self,
        record: &ProposalRecord,
        hash: &str,
        by: &UserActor,
    ) -> Result<(Arc<dyn ToolHandler>, Value)> {
        let id = &record.id;
        if record.approved_hash.as_deref() != Some(hash) || record.payload_hash != hash {
            let error = ToolsError::PayloadChanged { id: id.to_string() };
            self.fail_approved(id, &error).await?;
            return self.refuse(by, record, error).await;
        }
        let Some(tool) = self.shared.tool(&record.tool).cloned() else {
            let error = ToolsError::UnknownTool {
                id: id.to_string(),
                tool: record.tool.clone(),
            };
            return self.refuse(by, record, error).await;
        };
        match serde_json::from_str(&record.payload) {
            Ok(payload) => Ok((tool, payload)),
            Err(parse) => {
                let error = ToolsError::InvalidPayload {
                    id: id.to_string(),
                    detail: parse.to_string(),
                };
                self.fail_approved(id, &error).await?;
                self.refuse(by, record, error).await
            }
        }
    }

    /// Fails an approved proposal that cannot be applied.
    async fn fail_approved(&self, id: &ProposalId, error: &ToolsError) -> Result<()> {
        self.shared
            .proposals
            .fail_proposal(
                id,
                ProposalStatus::Approved,
                &error.to_string(),
                self.shared.now(),
            )
            .await?;
        Ok(())
    }

    /// Stores how a claimed apply ended and records it in the audit log.
    async fn finish_apply(
        &self,
        record: &ProposalRecord,
        result: &std::result::Result<ApplyOutput, ToolError>,
        by: &UserActor,
    ) -> Result<()> {
        let finished = match result {
            Ok(output) => Ok(output.summary.as_str()),
            Err(error) => Err(error.to_string()),
        };
        let stored = self
            .shared
            .proposals
            .finish_proposal(
                &record.id,
                finished.as_ref().map_err(String::as_str).copied(),
                self.shared.now(),
            )
            .await?;
        if !stored {
            tracing::warn!(proposal = %record.id, "the proposal left `applying` while it was applied");
        }
        let outcome = match result {
            Ok(output) => AuditOutcome::ok_with(&output.summary),
            Err(error) => AuditOutcome::error(error.to_string()),
        };
        self.shared
            .record(
                entry(Actor::User(by.clone()), record, Decision::Applied, outcome)
                    .detail(user_detail(by, record)),
            )
            .await;
        Ok(())
    }

    /// Expires every pending or approved proposal past its expiry, and marks applies
    /// interrupted long ago as failed. Returns the proposals it changed. Listing and
    /// reading proposals do this first; a server may also call it on a timer.
    pub async fn expire(&self) -> Result<Vec<Proposal>> {
        let now = self.shared.now();
        let mut changed = Vec::new();
        for record in self.shared.proposals.expire_proposals(now).await? {
            self.shared
                .record(entry(
                    Actor::Hearth,
                    &record,
                    Decision::Expired,
                    AuditOutcome::ok(),
                ))
                .await;
            changed.push(record);
        }
        for record in self
            .shared
            .proposals
            .stale_applying(now - INTERRUPTED_AFTER)
            .await?
        {
            let message = "applying was interrupted (Hearth stopped); check whether the change was made, and ask for it again if not";
            if self
                .shared
                .proposals
                .fail_proposal(&record.id, ProposalStatus::Applying, message, now)
                .await?
            {
                self.shared
                    .record(entry(
                        Actor::Hearth,
                        &record,
                        Decision::Applied,
                        AuditOutcome::error(message),
                    ))
                    .await;
                changed.push(self.load(&record.id).await?);
            }
        }
        Ok(changed.into_iter().map(Proposal::from).collect())
    }
}

fn busy(id: &ProposalId) -> ToolsError {
    ToolsError::Store(StoreError::Conflict(format!(
        "proposal `{id}` kept changing while it was being decided; try again"
    )))
}
