//! `hearth --server URL proposals …`: the same listing, review and decisions through a
//! running server, as whoever its token is (a team server's user sees and decides only
//! what the server lets them). A server applies what it approves, so `--no-apply` and
//! `apply` are for proposals of this data directory.

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use hearth_protocol as wire;
use hearth_server::{Client, proposal_from_wire, proposal_status_to_wire};
use hearth_tools::{Proposal, ProposalList, ProposalStatus};

use super::{ProposalsCommand, print_one, print_page, rejected_text, review_given, reviewed};
use crate::remote::Remote;
use crate::toolbox::write_out;

/// The shortest start of an id that names a proposal.
const MIN_PREFIX: usize = 4;

/// Runs `hearth proposals …` through `remote`.
pub(super) async fn proposals(
    remote: &Remote,
    command: ProposalsCommand,
) -> anyhow::Result<ExitCode> {
    let client = remote.client();
    match command {
        ProposalsCommand::List {
            status,
            limit,
            cursor,
            json,
        } => {
            let page = client
                .call::<wire::ProposalList>(&wire::ProposalListParams {
                    statuses: status
                        .statuses()
                        .into_iter()
                        .map(proposal_status_to_wire)
                        .collect(),
                    session: None,
                    cursor,
                    limit: Some(limit),
                })
                .await?;
            let page = ProposalList {
                proposals: read(page.proposals)?,
                next_cursor: page.next_cursor,
            };
            let ids: Vec<String> = page.proposals.iter().map(|p| p.id.to_string()).collect();
            print_page(&page, &ids, json)?;
        }
        ProposalsCommand::Show { id, json } => print_one(&find(client, &id).await?, json)?,
        ProposalsCommand::Approve {
            id,
            hash,
            yes,
            no_apply,
        } => {
            if no_apply {
                bail!(
                    "the server applies what it approves: approve without --no-apply when the change should be made"
                );
            }
            let proposal = find(client, &id).await?;
            let Some(hash) = reviewed(&proposal, review_given(hash.as_deref(), yes))? else {
                write_out(&format!(
                    "Proposal {} was not approved; nothing was changed.\n",
                    proposal.id
                ))?;
                return Ok(ExitCode::FAILURE);
            };
            let decided = client
                .call::<wire::ProposalApprove>(&wire::ProposalApproveParams {
                    proposal_id: proposal.id.to_string(),
                    payload_hash: hash,
                })
                .await?;
            let decided = proposal_from_wire(decided.proposal).map_err(anyhow::Error::msg)?;
            report(&decided)?;
        }
        ProposalsCommand::Reject { id, reason } => {
            let proposal = find(client, &id).await?;
            let decided = client
                .call::<wire::ProposalReject>(&wire::ProposalRejectParams {
                    proposal_id: proposal.id.to_string(),
                    reason,
                })
                .await?;
            write_out(&rejected_text(
                &proposal.id,
                &proposal.summary,
                decided.changed,
            ))?;
        }
        ProposalsCommand::Apply { .. } => bail!(
            "the server applied its proposals when they were approved; `hearth proposals apply` is for proposals approved with --no-apply in this data directory"
        ),
    }
    Ok(ExitCode::SUCCESS)
}

fn read(proposals: Vec<wire::Proposal>) -> anyhow::Result<Vec<Proposal>> {
    proposals
        .into_iter()
        .map(|proposal| proposal_from_wire(proposal).map_err(anyhow::Error::msg))
        .collect()
}

/// What became of an approved proposal, as the in-process command says it.
fn report(proposal: &Proposal) -> anyhow::Result<()> {
    let summary = hearth_core::escape_controls_inline(&proposal.summary);
    match proposal.status {
        ProposalStatus::Applied => {
            write_out(&format!("Applied proposal {}: {summary}\n", proposal.id))
        }
        ProposalStatus::Failed => bail!(
            "proposal {} was approved, but applying it failed: {}",
            proposal.id,
            proposal
                .error
                .as_deref()
                .unwrap_or("the server did not say why")
        ),
        status => write_out(&format!(
            "Proposal {} is {}; nothing more was done.\n",
            proposal.id,
            status.as_str()
        )),
    }
}

/// The proposal whose id is `text` or starts with it (4+ characters), among those the
/// server shows.
async fn find(client: &Client, text: &str) -> anyhow::Result<Proposal> {
    let text = text.trim();
    if text.len() < MIN_PREFIX {
        bail!(
            "`{text}` is too short to name a proposal: give at least {MIN_PREFIX} characters of its id (`hearth proposals list`)"
        );
    }
    let mut found = Vec::new();
    let listed = hearth_app::remote_hearth::all_proposals(client, None)
        .await
        .context("listing the server's proposals")?;
    for proposal in listed {
        if proposal.id == text {
            return proposal_from_wire(proposal).map_err(anyhow::Error::msg);
        }
        if proposal.id.starts_with(text) {
            found.push(proposal);
        }
    }
    match found.len() {
        1 => proposal_from_wire(found.remove(0)).map_err(anyhow::Error::msg),
        0 => bail!("no proposal `{text}` on the server (see `hearth proposals list`)"),
        _ => bail!(
            "`{text}` starts the ids of {} proposals: give more of it ({})",
            found.len(),
            found
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
