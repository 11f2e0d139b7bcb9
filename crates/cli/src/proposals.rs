//! `hearth proposals list|show|approve|reject|apply`: the user's side of the changes
//! agents staged. What an agent wrote into one (its summary, the event titles in its
//! diff) is shown with control characters escaped.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};
use hearth_core::{ProposalId, escape_controls, escape_controls_inline};
use hearth_store::{Access, Stores};
use hearth_tools::{
    ApplyOutcome, ApprovalGate, Proposal, ProposalList, ProposalQuery, ProposalStatus, UserActor,
};

mod remote;

use crate::render::local_time;
use crate::toolbox::{json_line, write_out};
use hearth_app::App;
use hearth_app::tools::Tools;

/// The shortest hash prefix `approve --hash` accepts. It only confirms which version of
/// the proposal the user reviewed: the approval binds to the full hash of the proposal as
/// it is now, and applying re-checks that hash, so a short prefix cannot smuggle in
/// another payload — at worst it approves the current one, which the prefix matched.
const MIN_HASH_PREFIX: usize = 8;

/// Which proposals to list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatusFilter {
    /// Every proposal.
    All,
    /// Awaiting a decision.
    Pending,
    /// Approved, not applied yet.
    Approved,
    /// Rejected.
    Rejected,
    /// Expired.
    Expired,
    /// Being applied.
    Applying,
    /// Applied.
    Applied,
    /// Failed or refused when applied.
    Failed,
}

impl StatusFilter {
    fn statuses(self) -> Vec<ProposalStatus> {
        match self {
            Self::All => Vec::new(),
            Self::Pending => vec![ProposalStatus::Pending],
            Self::Approved => vec![ProposalStatus::Approved],
            Self::Rejected => vec![ProposalStatus::Rejected],
            Self::Expired => vec![ProposalStatus::Expired],
            Self::Applying => vec![ProposalStatus::Applying],
            Self::Applied => vec![ProposalStatus::Applied],
            Self::Failed => vec![ProposalStatus::Failed],
        }
    }
}

/// `hearth proposals …`.
#[derive(Debug, Subcommand)]
pub enum ProposalsCommand {
    /// List proposals, newest first.
    List {
        /// Only proposals with this status.
        #[arg(long, value_enum, default_value_t = StatusFilter::All)]
        status: StatusFilter,
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Continue after this cursor (printed by a previous page).
        #[arg(long)]
        cursor: Option<String>,
        /// One JSON object per line (keys in camelCase), proposals only: when there is a
        /// next page, `hearth: more: --cursor CURSOR` goes to stderr.
        #[arg(long)]
        json: bool,
    },
    /// Show a proposal: what it changes (before and after) and its payload hash.
    Show {
        /// The proposal's id, or the first 4+ characters of it.
        id: String,
        /// As JSON (with the exact payload).
        #[arg(long)]
        json: bool,
    },
    /// Approve a proposal and apply it. The approval binds to the payload hash shown by
    /// `show`; a proposal changed since then is refused. Without --hash or --yes, the
    /// change is shown and you are asked to confirm (which needs a terminal).
    Approve {
        /// The proposal's id, or the first 4+ characters of it.
        id: String,
        /// The payload hash you reviewed (or its first 8+ characters).
        #[arg(long)]
        hash: Option<String>,
        /// Approve the proposal as it is now without asking.
        #[arg(long, short = 'y')]
        yes: bool,
        /// Only approve; apply later with `hearth proposals apply`.
        #[arg(long)]
        no_apply: bool,
    },
    /// Reject a proposal; nothing is changed.
    Reject {
        /// The proposal's id, or the first 4+ characters of it.
        id: String,
        /// Why (kept with the proposal).
        #[arg(long)]
        reason: Option<String>,
    },
    /// Apply an approved proposal (one approved with `--no-apply`).
    Apply {
        /// The proposal's id, or the first 4+ characters of it.
        id: String,
    },
}

/// What `approve` was told about the proposal the user reviewed.
enum Review<'a> {
    /// `--hash`: the hash (or its start) the user was shown.
    Hash(&'a str),
    /// `--yes`: the proposal as it is now.
    Confirmed,
    /// Neither: show the change and ask.
    Ask,
}

/// What the user reviews of a proposal before deciding: its id, summary, tool, payload
/// hash and diff.
pub(crate) fn review_text(proposal: &Proposal) -> String {
    review_of(
        proposal.id.as_str(),
        &proposal.summary,
        &proposal.tool,
        &proposal.payload_hash,
        &proposal.diff,
    )
}

/// [`review_text`] from the proposal's parts (a server's proposal on the wire, too).
pub(crate) fn review_of(
    id: &str,
    summary: &str,
    tool: &str,
    payload_hash: &str,
    diff: &str,
) -> String {
    format!(
        "Proposal {id}\nSummary:  {}\nTool:     {}\nPayload:  sha256 {payload_hash}\n\n{}\n\n",
        escape_controls_inline(summary),
        escape_controls_inline(tool),
        shown_diff(diff)
    )
}

/// Shows the proposal and asks whether to apply it; `None` when the user declined.
#[allow(clippy::print_stderr)]
fn ask(proposal: &Proposal) -> anyhow::Result<Option<String>> {
    write_out(&review_text(proposal))?;
    eprint!("Apply this change? [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(Some(proposal.payload_hash.clone()))
    } else {
        Ok(None)
    }
}

/// A proposal's diff as printed: escaped, and coloured (+green, -red) on a terminal.
pub(crate) fn shown_diff(diff: &str) -> String {
    let escaped = escape_controls(diff.trim_end());
    if crate::style::on_stdout() {
        crate::style::diff(&escaped)
    } else {
        escaped.into_owned()
    }
}

fn status_line(proposal: &Proposal) -> String {
    match proposal.status {
        ProposalStatus::Pending | ProposalStatus::Approved => format!(
            "{} (expires {})",
            proposal.status,
            local_time(&proposal.expires_at)
        ),
        ProposalStatus::Applied => match &proposal.outcome {
            Some(outcome) => format!("applied: {}", escape_controls_inline(outcome)),
            None => "applied".to_owned(),
        },
        ProposalStatus::Failed => format!(
            "failed: {}",
            crate::shown::message(proposal.error.as_deref().unwrap_or("no reason recorded"))
        ),
        ProposalStatus::Rejected => match &proposal.reason {
            Some(reason) => format!("rejected: {}", escape_controls_inline(reason)),
            None => "rejected".to_owned(),
        },
        ProposalStatus::Expired | ProposalStatus::Applying => proposal.status.to_string(),
    }
}

fn render(proposal: &Proposal) -> String {
    let mut out = format!("Proposal {}\n", proposal.id);
    out.push_str(&format!(
        "Summary:  {}\n",
        escape_controls_inline(&proposal.summary)
    ));
    out.push_str(&format!("Status:   {}\n", status_line(proposal)));
    out.push_str(&format!(
        "Tool:     {}\n",
        escape_controls_inline(&proposal.tool)
    ));
    out.push_str(&format!(
        "Staged:   {} by {}\n",
        local_time(&proposal.created_at),
        proposal.chat
    ));
    out.push_str(&format!("Payload:  sha256 {}\n", proposal.payload_hash));
    out.push('\n');
    out.push_str(&shown_diff(&proposal.diff));
    out.push('\n');
    if proposal.status == ProposalStatus::Pending {
        out.push_str(&format!(
            "\nApprove: hearth proposals approve {} --hash {}\nReject:  hearth proposals reject {}\n",
            proposal.id,
            &proposal.payload_hash[..proposal.payload_hash.len().min(16)],
            proposal.id
        ));
    }
    out
}

/// The full hash the user means: the proposal's current hash when `given` is absent or a
/// prefix of it; otherwise `given` itself, which the gate will refuse.
fn approved_hash(proposal: &Proposal, given: Option<&str>) -> anyhow::Result<String> {
    let Some(given) = given.map(str::trim) else {
        return Ok(proposal.payload_hash.clone());
    };
    let given = given
        .strip_prefix("sha256:")
        .unwrap_or(given)
        .to_ascii_lowercase();
    if !given.chars().all(|c| c.is_ascii_hexdigit()) {
        anyhow::bail!(
            "--hash {given} is not a hash: give the hex digits of the payload hash `hearth proposals show` prints"
        );
    }
    if given.len() < MIN_HASH_PREFIX {
        anyhow::bail!(
            "--hash {given} is too short; give at least {MIN_HASH_PREFIX} characters of the hash `hearth proposals show` prints"
        );
    }
    if proposal.payload_hash.starts_with(&given) {
        Ok(proposal.payload_hash.clone())
    } else {
        Ok(given)
    }
}

pub(crate) fn report_outcome(outcome: &ApplyOutcome) -> anyhow::Result<()> {
    let text = match outcome {
        ApplyOutcome::Applied { proposal, summary } => {
            format!(
                "Applied proposal {}: {}\n",
                proposal.id,
                escape_controls_inline(summary)
            )
        }
        ApplyOutcome::AlreadyApplied { proposal } => format!(
            "Proposal {} was already applied; nothing was done.\n",
            proposal.id
        ),
        ApplyOutcome::InProgress { proposal } => format!(
            "Proposal {} is being applied by another Hearth process; nothing was done.\n",
            proposal.id
        ),
    };
    write_out(&text)
}

/// How proposals are read: through the gate, which first expires overdue ones; or, from
/// a database open for reading only (where nothing can be expired), as stored with the
/// overdue ones shown as the gate would have left them.
enum Reader<'a> {
    Gate(&'a ApprovalGate),
    Stored(&'a dyn Stores),
}

impl Reader<'_> {
    async fn list(&self, query: &ProposalQuery) -> anyhow::Result<ProposalList> {
        match self {
            Self::Gate(gate) => Ok(gate.list(query).await?),
            Self::Stored(store) => {
                let page = store.list_proposals(query).await?;
                let now = hearth_core::now();
                Ok(ProposalList {
                    proposals: page
                        .proposals
                        .into_iter()
                        .map(|record| as_of(Proposal::from(record), now))
                        .filter(|proposal| {
                            query.statuses.is_empty() || query.statuses.contains(&proposal.status)
                        })
                        .collect(),
                    next_cursor: page.next_cursor,
                })
            }
        }
    }

    async fn get(&self, id: &ProposalId) -> anyhow::Result<Proposal> {
        match self {
            Self::Gate(gate) => Ok(gate.get(id).await?),
            Self::Stored(store) => match store.proposal(id).await? {
                Some(record) => Ok(as_of(Proposal::from(record), hearth_core::now())),
                None => {
                    anyhow::bail!("proposal `{id}` does not exist (see `hearth proposals list`)")
                }
            },
        }
    }
}

/// A proposal as it stands at `now`: one undecided or unapplied past its expiry is
/// expired.
fn as_of(mut proposal: Proposal, now: hearth_core::Timestamp) -> Proposal {
    if matches!(
        proposal.status,
        ProposalStatus::Pending | ProposalStatus::Approved
    ) && proposal.expires_at <= now
    {
        proposal.status = ProposalStatus::Expired;
    }
    proposal
}

/// Runs `hearth proposals …`: through the server `--server` names (as the user whose
/// token it presents), else on this data directory.
pub async fn proposals(app: &App, command: ProposalsCommand) -> anyhow::Result<ExitCode> {
    if let Some(remote) = crate::remote::named(app).await? {
        return remote::proposals(&remote, command).await;
    }
    let store = app.open_store().await?;
    let tools = Tools::over(app, store.clone())?;
    let gate = &tools.gate;
    let reader = match store.access() {
        Access::ReadWrite => Reader::Gate(gate),
        Access::ReadOnly { .. } => Reader::Stored(store.as_ref()),
    };
    let user = UserActor::cli();
    match command {
        ProposalsCommand::List {
            status,
            limit,
            cursor,
            json,
        } => {
            let query = ProposalQuery {
                statuses: status.statuses(),
                session: None,
                cursor,
                limit,
            };
            list(&reader, store.as_ref(), &query, json).await?;
        }
        ProposalsCommand::Show { id, json } => {
            let id = crate::names::proposal(store.as_ref(), &id).await?;
            print_one(&reader.get(&id).await?, json)?;
        }
        ProposalsCommand::Approve {
            id,
            hash,
            yes,
            no_apply,
        } => {
            let id = crate::names::proposal(store.as_ref(), &id).await?;
            let review = review_given(hash.as_deref(), yes);
            return approve(gate, &id, review, no_apply, &user).await;
        }
        ProposalsCommand::Reject { id, reason } => {
            let id = crate::names::proposal(store.as_ref(), &id).await?;
            let decided = gate.reject(&id, &user, reason.as_deref()).await?;
            write_out(&rejected_text(
                &id,
                &decided.proposal.summary,
                decided.changed,
            ))?;
        }
        ProposalsCommand::Apply { id } => {
            let id = crate::names::proposal(store.as_ref(), &id).await?;
            let outcome = gate.apply(&id, &user).await?;
            report_outcome(&outcome)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `hearth proposals list`: a page of proposals, one line (or JSON record) each.
async fn list(
    reader: &Reader<'_>,
    store: &dyn Stores,
    query: &ProposalQuery,
    json: bool,
) -> anyhow::Result<()> {
    let page = reader.list(query).await?;
    let mut short = Vec::with_capacity(page.proposals.len());
    if !json {
        for proposal in &page.proposals {
            short.push(crate::names::short_proposal(store, &proposal.id).await?);
        }
    }
    print_page(&page, &short, json)
}

/// Prints a page of proposals, each named by its `short` id (unused for JSON).
fn print_page(page: &ProposalList, short: &[String], json: bool) -> anyhow::Result<()> {
    if json {
        for proposal in &page.proposals {
            json_line(proposal)?;
        }
        if let Some(cursor) = &page.next_cursor {
            crate::shown::more(cursor);
        }
        return Ok(());
    }
    if page.proposals.is_empty() {
        write_out("No proposals.\n")?;
    }
    let width = short.iter().map(String::len).max().unwrap_or(0);
    for (proposal, short) in page.proposals.iter().zip(short) {
        write_out(&format!(
            "{short:<width$}  {:<8}  {}  {}\n",
            proposal.status.as_str(),
            local_time(&proposal.created_at),
            escape_controls_inline(&proposal.summary)
        ))?;
    }
    if let Some(cursor) = &page.next_cursor {
        write_out(&format!("More: --cursor {cursor}\n"))?;
    }
    Ok(())
}

/// Prints one proposal, as `show` does.
fn print_one(proposal: &Proposal, json: bool) -> anyhow::Result<()> {
    if json {
        json_line(proposal)
    } else {
        write_out(&render(proposal))
    }
}

/// The payload hash the user approves `proposal` by, as reviewed; `None` when they
/// declined at the terminal.
fn reviewed(proposal: &Proposal, review: Review<'_>) -> anyhow::Result<Option<String>> {
    let id = &proposal.id;
    Ok(Some(match review {
        Review::Hash(given) => approved_hash(proposal, Some(given))?,
        Review::Confirmed => proposal.payload_hash.clone(),
        // Nothing new to approve: the gate says what became of it.
        Review::Ask if proposal.status != ProposalStatus::Pending => proposal.payload_hash.clone(),
        Review::Ask if !std::io::stdin().is_terminal() => anyhow::bail!(
            "not approving proposal {id} unseen: there is no terminal to ask in; review it with `hearth proposals show {id}`, then give --hash HASH (its first {MIN_HASH_PREFIX}+ characters) or --yes"
        ),
        Review::Ask => match ask(proposal)? {
            Some(hash) => hash,
            None => return Ok(None),
        },
    }))
}

/// What `hearth proposals reject` says of a rejection.
fn rejected_text(id: &ProposalId, summary: &str, changed: bool) -> String {
    if changed {
        format!(
            "Rejected proposal {id}: {}; nothing was changed.\n",
            escape_controls_inline(summary)
        )
    } else {
        format!("Proposal {id} was already rejected; nothing was done.\n")
    }
}

/// What `review` says the user reviewed.
fn review_given(hash: Option<&str>, yes: bool) -> Review<'_> {
    match (hash, yes) {
        (Some(hash), _) => Review::Hash(hash),
        (None, true) => Review::Confirmed,
        (None, false) => Review::Ask,
    }
}

/// `hearth proposals approve`: approves the proposal as reviewed (by its hash, by
/// `--yes`, or by asking at the terminal), then applies it unless `no_apply`.
async fn approve(
    gate: &ApprovalGate,
    id: &ProposalId,
    review: Review<'_>,
    no_apply: bool,
    user: &UserActor,
) -> anyhow::Result<ExitCode> {
    let proposal = gate.get(id).await?;
    let Some(hash) = reviewed(&proposal, review)? else {
        write_out(&format!(
            "Proposal {id} was not approved; nothing was changed.\n"
        ))?;
        return Ok(ExitCode::FAILURE);
    };
    if no_apply {
        let decided = gate.approve(id, &hash, user).await?;
        let text = if decided.changed {
            format!(
                "Approved proposal {id}: {}\nApply it with: hearth proposals apply {id}\n",
                escape_controls_inline(&proposal.summary)
            )
        } else {
            format!("Proposal {id} was already approved; nothing was done.\n")
        };
        write_out(&text)?;
    } else {
        let outcome = gate.approve_and_apply(id, &hash, user).await?;
        report_outcome(&outcome)?;
    }
    Ok(ExitCode::SUCCESS)
}
