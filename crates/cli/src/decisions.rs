//! Staged changes decided at the terminal, where the chat happens: after a turn of
//! `hearth chat` or `hearth run` on a terminal, each change the turn staged is shown with
//! its diff and approved, rejected or left for later; `/proposals`, `/approve [ID]` and
//! `/reject [ID] [REASON]` in the chat do the same for the session's pending ones.

use std::sync::Arc;

use anyhow::bail;
use hearth_core::{ChatUri, SessionUri, TurnId, escape_controls_inline};
use hearth_store::Stores;
use hearth_tools::{ApprovalGate, Proposal, ProposalQuery, ProposalStatus, UserActor};

use crate::keyboard::{Keyboard, Typed};
use crate::proposals::{report_outcome, review_text};
use crate::toolbox::write_out;
use hearth_app::App;

/// What the user decided about one staged change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Approve,
    Reject,
    Later,
}

/// The decision a typed answer means: `a`/`approve`/`y`, `r`/`reject`/`n`, and anything
/// else (an empty line too) leaves it for later.
fn decision(answer: &str) -> Decision {
    match answer.trim().to_ascii_lowercase().as_str() {
        "a" | "approve" | "y" | "yes" => Decision::Approve,
        "r" | "reject" | "n" | "no" => Decision::Reject,
        _ => Decision::Later,
    }
}

/// Asks what to do with the change just shown.
#[allow(clippy::print_stderr)]
pub(crate) async fn ask(keyboard: &mut Keyboard) -> Decision {
    eprint!("  approve, reject, or later? [a/r/L] ");
    match keyboard.answer().await {
        Typed::Line(line) => decision(&line),
        Typed::Interrupted | Typed::Ended => Decision::Later,
    }
}

/// The user's side of the session's proposals.
pub(crate) struct Decisions {
    gate: ApprovalGate,
    user: UserActor,
}

impl Decisions {
    /// Decisions over the proposals in `store`.
    pub(crate) fn new(app: &App, store: Arc<dyn Stores>) -> anyhow::Result<Self> {
        Ok(Self {
            gate: hearth_app::tools::Tools::over(app, store)?.gate,
            user: UserActor::cli(),
        })
    }

    /// The session's pending proposals, oldest first.
    async fn pending(&self, session: &SessionUri) -> anyhow::Result<Vec<Proposal>> {
        let query = ProposalQuery {
            statuses: vec![ProposalStatus::Pending],
            session: Some(session.clone()),
            cursor: None,
            limit: 500,
        };
        let mut pending = self.gate.list(&query).await?.proposals;
        pending.reverse();
        Ok(pending)
    }

    /// Shows each change `turn` of `chat` staged and asks what to do with it.
    #[allow(clippy::print_stderr)]
    pub(crate) async fn review_turn(
        &self,
        chat: &ChatUri,
        turn: &TurnId,
        keyboard: &mut Keyboard,
    ) -> anyhow::Result<()> {
        let staged: Vec<Proposal> = self
            .pending(&chat.session())
            .await?
            .into_iter()
            .filter(|proposal| &proposal.chat == chat && &proposal.turn_id == turn)
            .collect();
        for proposal in &staged {
            write_out(&format!("\n{}", review_text(proposal)))?;
            let answer = ask(keyboard).await;
            self.decide(proposal, answer, None).await?;
        }
        Ok(())
    }

    /// Carries out a decision and says what became of the proposal.
    #[allow(clippy::print_stderr)]
    async fn decide(
        &self,
        proposal: &Proposal,
        decision: Decision,
        reason: Option<&str>,
    ) -> anyhow::Result<()> {
        match decision {
            Decision::Approve => {
                let outcome = self
                    .gate
                    .approve_and_apply(&proposal.id, &proposal.payload_hash, &self.user)
                    .await?;
                report_outcome(&outcome)?;
            }
            Decision::Reject => {
                let decided = self.gate.reject(&proposal.id, &self.user, reason).await?;
                if decided.changed {
                    write_out(&format!(
                        "Rejected proposal {}: {}; nothing was changed.\n",
                        proposal.id,
                        escape_controls_inline(&proposal.summary)
                    ))?;
                } else {
                    write_out(&format!(
                        "Proposal {} was already {}; nothing was done.\n",
                        proposal.id, decided.proposal.status
                    ))?;
                }
            }
            Decision::Later => eprintln!(
                "hearth: proposal {} waits: /approve {} here, or `hearth proposals approve {}`",
                proposal.id, proposal.id, proposal.id
            ),
        }
        Ok(())
    }

    /// `/proposals`: the session's pending changes.
    pub(crate) async fn list(&self, session: &SessionUri) -> anyhow::Result<()> {
        let pending = self.pending(session).await?;
        if pending.is_empty() {
            return write_out("No pending proposals in this session.\n");
        }
        for proposal in &pending {
            write_out(&format!(
                "{}  {}\n",
                proposal.id,
                escape_controls_inline(&proposal.summary)
            ))?;
        }
        Ok(())
    }

    /// `/approve [ID]` and `/reject [ID] [REASON]`: the pending proposal of the session
    /// the id (or its start) names, or its only one; shown, then decided.
    pub(crate) async fn decide_named(
        &self,
        session: &SessionUri,
        key: Option<&str>,
        decision: Decision,
        reason: Option<&str>,
    ) -> anyhow::Result<()> {
        let proposal = self.named(session, key).await?;
        write_out(&review_text(&proposal))?;
        self.decide(&proposal, decision, reason).await
    }

    async fn named(&self, session: &SessionUri, key: Option<&str>) -> anyhow::Result<Proposal> {
        let pending = self.pending(session).await?;
        let mut matching: Vec<Proposal> = match key {
            Some(key) => pending
                .into_iter()
                .filter(|proposal| proposal.id.as_str().starts_with(key))
                .collect(),
            None => pending,
        };
        match (matching.len(), key) {
            (1, _) => Ok(matching.remove(0)),
            (0, None) => bail!("no pending proposals in this session"),
            (0, Some(key)) => bail!(
                "no pending proposal of this session starts with `{}` (see /proposals)",
                escape_controls_inline(key)
            ),
            (count, _) => bail!("{count} pending proposals match; give its id (see /proposals)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_mean_approve_reject_or_later() {
        assert_eq!(decision(" A "), Decision::Approve);
        assert_eq!(decision("yes"), Decision::Approve);
        assert_eq!(decision("reject"), Decision::Reject);
        assert_eq!(decision("n"), Decision::Reject);
        assert_eq!(decision(""), Decision::Later);
        assert_eq!(decision("maybe"), Decision::Later);
    }
}
