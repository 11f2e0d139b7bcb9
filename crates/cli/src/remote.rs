//! Talking to a running `hearth serve` instead of starting a host in this process.
//!
//! A server is used when `--server URL` names one, or when the data directory's
//! `server.json` points at one that answers; `--local` never uses one. The commands
//! speak the same protocol types as every other client and print what the in-process
//! commands print.

use std::io::Write;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::Duration;

use anyhow::{Context, bail};
use hearth_core::{self as core, ResourceUri};
use hearth_protocol::{
    self as wire, ChatParams, ChatResolve, ChatSetModel, ChatSetModelParams, InitializeResponse,
    ScopeFilter, SessionCreate, SessionCreateParams, SessionDispose, SessionDisposeParams,
    SessionFork, SessionForkParams, SessionList, SessionListParams, Subscribe, SubscribeParams,
    SubscribeResponse, Unsubscribe, UnsubscribeParams,
};
use hearth_server::{Client, Notifications, read_record, read_token, server_file};
use hearth_store::{SessionPage, SessionQuery};
use serde_json::json;

use crate::drive::Driven;
use crate::interrupts::Interrupts;
use crate::render;
use crate::run::{Output, follow, leave_now};
use hearth_app::App;
use hearth_app::turn::TurnStream;

/// How long a server recorded in `server.json` may take to answer before the command
/// runs in-process instead.
const PROBE: Duration = Duration::from_secs(2);

/// Whether commands use a running server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ServerChoice {
    /// The one `server.json` names, if it answers.
    #[default]
    Auto,
    /// This one, or fail.
    Url(String),
    /// None: always in-process.
    Local,
}

static CHOICE: OnceLock<ServerChoice> = OnceLock::new();

/// Records the command line's choice (once, at start).
pub fn choose(choice: ServerChoice) {
    if CHOICE.set(choice).is_err() {
        tracing::debug!("the server choice was already made");
    }
}

/// The server `--server` (or `HEARTH_SERVER`) names, if one does.
pub fn named_server() -> Option<String> {
    match CHOICE.get() {
        Some(ServerChoice::Url(url)) => Some(url.clone()),
        _ => None,
    }
}

/// A connection to the server `--server` (or `HEARTH_SERVER`) names, if one does; for
/// commands that otherwise work on the data directory even while a server runs.
pub async fn named(app: &App) -> anyhow::Result<Option<Remote>> {
    if named_server().is_none() {
        return Ok(None);
    }
    connect(app).await
}

/// A connection to a running server.
pub struct Remote {
    client: Client,
    notifications: Notifications,
    info: InitializeResponse,
}

/// The token a client presents: `HEARTH_TOKEN` (a team server user's API token, from
/// `hearth users add` or `hearth users token`), else the data directory's.
pub fn client_token(app: &App) -> anyhow::Result<hearth_server::Secret> {
    match std::env::var("HEARTH_TOKEN") {
        Ok(text) if !text.trim().is_empty() => hearth_server::Secret::parse(&text).ok_or_else(|| {
            anyhow::anyhow!(
                "HEARTH_TOKEN is not a Hearth token (64 hex digits, as `hearth users token` prints)"
            )
        }),
        _ => Ok(read_token(&app.paths.token())?),
    }
}

async fn open(app: &App, url: &str) -> anyhow::Result<Remote> {
    let token = client_token(app)?;
    let (client, notifications) = Client::connect(url, &token).await?;
    let info = client.initialize("hearth-cli").await?;
    Ok(Remote {
        client,
        notifications,
        info,
    })
}

/// The running server to use, if any.
pub async fn connect(app: &App) -> anyhow::Result<Option<Remote>> {
    match CHOICE.get().cloned().unwrap_or_default() {
        ServerChoice::Local => Ok(None),
        ServerChoice::Url(url) => {
            Ok(Some(open(app, &url).await.with_context(|| {
                format!("using the Hearth server at {url}")
            })?))
        }
        ServerChoice::Auto => {
            let Some(record) = read_record(&server_file(&app.paths.home)) else {
                return Ok(None);
            };
            match tokio::time::timeout(PROBE, open(app, &record.url)).await {
                Ok(Ok(remote)) => Ok(Some(remote)),
                Ok(Err(error)) => {
                    tracing::info!(url = %record.url, "the recorded server did not answer ({error:#}); running in-process");
                    Ok(None)
                }
                Err(_) => {
                    tracing::info!(url = %record.url, "the recorded server did not answer in time; running in-process");
                    Ok(None)
                }
            }
        }
    }
}

/// What `hearth run` asks of a server.
pub struct RunRequest<'a> {
    /// The prompt and its attachments.
    pub message: hearth_core::UserMessage,
    /// Provider of a new session.
    pub provider: Option<&'a str>,
    /// Project of a new session.
    pub project: Option<String>,
    /// Model to use.
    pub model: Option<&'a str>,
    /// Session or chat to continue.
    pub session: Option<&'a str>,
    /// Every envelope as a JSON line.
    pub json: bool,
    /// Reasoning to stderr.
    pub show_reasoning: bool,
}

impl RunRequest<'_> {
    /// How the turn is printed.
    pub(crate) fn output(&self) -> Output {
        Output {
            json: self.json,
            show_reasoning: self.show_reasoning,
        }
    }
}

fn is_demo(info: &InitializeResponse, provider: &str) -> bool {
    info.harnesses
        .iter()
        .any(|harness| harness.id == provider && harness.demo)
}

async fn target_chat(remote: &Remote, request: &RunRequest<'_>) -> anyhow::Result<String> {
    if let Some(uri) = request.session {
        let chat = match ResourceUri::parse(uri)? {
            ResourceUri::Session(session) => core::ChatUri::default_for(&session),
            ResourceUri::Chat(chat) => chat,
            ResourceUri::Root => bail!("`{uri}` is not a session or chat URI"),
        };
        let chat = chat.to_string();
        if let Some(model) = request.model {
            remote
                .client
                .call::<ChatSetModel>(&ChatSetModelParams {
                    chat: chat.clone(),
                    model: model.to_owned(),
                })
                .await?;
        }
        return Ok(chat);
    }
    let created = remote
        .client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: request.provider.map(str::to_owned),
            model: request.model.map(str::to_owned),
            project_id: request.project.clone(),
            ..SessionCreateParams::default()
        })
        .await?;
    created
        .session
        .chats
        .first()
        .map(|chat| chat.summary.uri.clone())
        .context("the server created a session without a chat")
}

/// `hearth run` through a server: the same output as in-process.
#[allow(clippy::print_stderr)]
pub async fn run(remote: Remote, request: RunRequest<'_>) -> anyhow::Result<ExitCode> {
    let chat = core::ChatUri::parse(&target_chat(&remote, &request).await?)?;
    if is_demo(&remote.info, chat.harness().as_str()) {
        if request.provider.is_some() || request.session.is_some() {
            eprintln!("hearth: this is the built-in demo (scripted answers, no model).");
        } else {
            eprintln!(
                "hearth: no model provider in use — this is the built-in demo (scripted answers, no model)."
            );
        }
    }
    let Remote {
        client,
        mut notifications,
        ..
    } = remote;
    let mut interrupts = Interrupts::new()?;
    let message = request.message.clone();
    let mut stream = TurnStream::remote(&client, &mut notifications, &chat, message).await?;
    let output = request.output();
    let Driven::Ended {
        stop_reason,
        broken_output,
    } = follow(&mut stream, &output, &mut interrupts).await?
    else {
        return Ok(leave_now());
    };
    let turn = stream.turn_id().to_string();
    drop(stream);
    if broken_output.is_none() && stop_reason != core::StopReason::Aborted && !request.json {
        review_staged(&client, &chat, &turn).await?;
    }
    client.close().await;
    if let Some(error) = broken_output {
        return Err(error.context(
            "writing the answer failed; the turn was aborted and its partial answer saved",
        ));
    }
    Ok(output.finish(&chat, &stop_reason))
}

/// On a terminal, asks about each change the turn staged on the server: approved (bound
/// to the payload shown), rejected, or left for later.
#[allow(clippy::print_stderr)]
async fn review_staged(client: &Client, chat: &core::ChatUri, turn: &str) -> anyhow::Result<()> {
    let Some(mut keyboard) = crate::permissions::terminal_keyboard() else {
        return Ok(());
    };
    let pending = client
        .call::<hearth_protocol::ProposalList>(&hearth_protocol::ProposalListParams {
            statuses: vec![hearth_protocol::ProposalStatus::Pending],
            session: Some(chat.session().to_string()),
            cursor: None,
            limit: Some(100),
        })
        .await?;
    for proposal in pending
        .proposals
        .iter()
        .filter(|proposal| proposal.chat == chat.to_string() && proposal.turn_id == turn)
    {
        crate::toolbox::write_out(&format!(
            "\n{}",
            crate::proposals::review_of(
                &proposal.id,
                &proposal.summary,
                &proposal.tool,
                &proposal.payload_hash,
                &proposal.diff
            )
        ))?;
        let answer = crate::decisions::ask(&mut keyboard).await;
        match answer {
            crate::decisions::Decision::Approve => {
                let decided = client
                    .call::<hearth_protocol::ProposalApprove>(
                        &hearth_protocol::ProposalApproveParams {
                            proposal_id: proposal.id.clone(),
                            payload_hash: proposal.payload_hash.clone(),
                        },
                    )
                    .await?;
                let status = serde_json::to_value(decided.proposal.status)?;
                crate::toolbox::write_out(&format!(
                    "Proposal {} is {}: {}\n",
                    proposal.id,
                    status.as_str().unwrap_or("decided"),
                    core::escape_controls_inline(&proposal.summary)
                ))?;
            }
            crate::decisions::Decision::Reject => {
                client
                    .call::<hearth_protocol::ProposalReject>(
                        &hearth_protocol::ProposalRejectParams {
                            proposal_id: proposal.id.clone(),
                            reason: None,
                        },
                    )
                    .await?;
                crate::toolbox::write_out(&format!(
                    "Rejected proposal {}; nothing was changed.\n",
                    proposal.id
                ))?;
            }
            crate::decisions::Decision::Later => eprintln!(
                "hearth: proposal {} waits: `hearth proposals approve {}`",
                proposal.id, proposal.id
            ),
        }
    }
    Ok(())
}

/// `hearth sessions list` through a server.
pub async fn list_sessions(remote: &Remote, query: &SessionQuery) -> anyhow::Result<SessionPage> {
    let scope = match &query.scope {
        hearth_store::ScopeFilter::Any => ScopeFilter::Any,
        hearth_store::ScopeFilter::Global => ScopeFilter::Global,
        hearth_store::ScopeFilter::Project(project) => ScopeFilter::Project {
            project_id: project.to_string(),
        },
    };
    let page = remote
        .client
        .call::<SessionList>(&SessionListParams {
            cursor: query.cursor.clone(),
            limit: Some(query.limit),
            harness: query.provider.as_ref().map(ToString::to_string),
            scope: Some(scope),
            provenance: query.provenance.map(Into::into),
            title_contains: query.title_contains.clone(),
            pinned: query.pinned,
            archived: query.archived,
        })
        .await?;
    Ok(SessionPage {
        sessions: page
            .sessions
            .into_iter()
            .map(core::SessionSummary::try_from)
            .collect::<Result<_, _>>()?,
        next_cursor: page.next_cursor,
    })
}

/// `hearth sessions show` through a server: the session's catalog from a subscription
/// snapshot, each chat's turns from `chat/resolve`.
pub async fn show_session(remote: &Remote, session: &str, json: bool) -> anyhow::Result<()> {
    let uri = core::SessionUri::parse(session)?;
    let subscribed = remote
        .client
        .call::<Subscribe>(&SubscribeParams {
            resource: uri.to_string(),
            last_seq: None,
            turn_limit: None,
        })
        .await?;
    remote
        .client
        .call::<Unsubscribe>(&UnsubscribeParams {
            resource: uri.to_string(),
        })
        .await?;
    let SubscribeResponse::Snapshot { snapshot } = subscribed else {
        bail!("the server answered a fresh subscription with a replay");
    };
    let core::ResourceState::Session(state) = core::Snapshot::try_from(snapshot)?.state else {
        bail!("`{uri}` is not a session");
    };
    let mut chats = Vec::new();
    for listing in &state.chats {
        let resolved = remote
            .client
            .call::<ChatResolve>(&ChatParams {
                chat: listing.summary.uri.to_string(),
            })
            .await?;
        chats.push(core::ChatState::try_from(resolved.chat)?);
    }
    let mut out = String::new();
    if json {
        let rendered: Vec<_> = chats
            .iter()
            .map(
                |chat| json!({ "summary": chat.summary, "draft": chat.draft, "turns": chat.turns }),
            )
            .collect();
        out = crate::shown::json(&json!({ "session": state.summary, "chats": rendered }))?;
        out.push('\n');
    } else {
        let demo = is_demo(&remote.info, state.summary.harness.as_str());
        render::session_header(&state.summary, demo, &mut out);
        for chat in &chats {
            out.push('\n');
            out.push_str(&render::chat_heading(&chat.summary));
            out.push('\n');
            for turn in &chat.turns {
                render::turn(turn, &mut out);
            }
            if let Some(draft) = &chat.draft {
                out.push_str(&format!(
                    "(draft) {}\n",
                    hearth_core::escape_controls(draft)
                ));
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    Ok(stdout.flush()?)
}

/// `hearth sessions delete` through a server, so the server forgets it too. Returns
/// whether the session went to the trash (else it was never used, and was erased).
pub async fn delete_session(remote: &Remote, session: &str) -> anyhow::Result<bool> {
    let response = remote
        .client
        .call::<SessionDispose>(&SessionDisposeParams {
            session: session.to_owned(),
        })
        .await
        .with_context(|| format!("deleting {session}"))?;
    Ok(response.trashed)
}

/// `hearth trash restore` through a server, so its clients list what came back.
pub async fn restore_from_trash(
    remote: &Remote,
    kind: hearth_protocol::TrashKind,
    id: &str,
) -> anyhow::Result<()> {
    remote
        .client
        .call::<hearth_protocol::TrashRestore>(&hearth_protocol::TrashRestoreParams {
            kind,
            id: id.to_owned(),
        })
        .await
        .with_context(|| format!("restoring {id}"))?;
    Ok(())
}

/// `hearth sessions fork` through a server: at `turn` (an index or a start of an id), else
/// at the default chat's last turn. Returns the new session's URI.
pub async fn fork_session(
    remote: &Remote,
    session: &core::SessionUri,
    turn: Option<String>,
) -> anyhow::Result<String> {
    let turns = remote
        .client
        .call::<ChatResolve>(&ChatParams {
            chat: core::ChatUri::default_for(session).to_string(),
        })
        .await?
        .chat
        .turns;
    let ids: Vec<&str> = turns.iter().map(|turn| turn.id.as_str()).collect();
    let turn_id = match turn {
        Some(turn) => turns[crate::names::turn_index(&ids, &turn)?].id.clone(),
        None => turns
            .last()
            .map(|turn| turn.id.clone())
            .context("the session has no turns to fork at")?,
    };
    let forked = remote
        .client
        .call::<SessionFork>(&SessionForkParams {
            session: session.to_string(),
            turn_id,
        })
        .await
        .with_context(|| format!("forking {session}"))?;
    Ok(forked.session.summary.uri)
}

/// The permission requests waiting in the server, as the command line shows them.
pub async fn pending_permissions(
    remote: &Remote,
) -> anyhow::Result<Vec<crate::permissions::Question>> {
    hearth_app::turn::pending_questions(&remote.client).await
}

/// The standing answers the server's harnesses hold.
pub async fn permission_grants(remote: &Remote) -> anyhow::Result<Vec<wire::PermissionGrant>> {
    Ok(remote
        .client
        .call::<wire::PermissionGrants>(&wire::PermissionGrantsParams {})
        .await?
        .grants)
}

/// Revokes a standing answer through the server; whether it was held.
pub async fn revoke_permission_grant(remote: &Remote, grant: &str) -> anyhow::Result<bool> {
    Ok(remote
        .client
        .call::<wire::PermissionRevokeGrant>(&wire::PermissionRevokeGrantParams {
            grant: grant.to_owned(),
        })
        .await?
        .revoked)
}

/// Answers a permission request through the server, as the user at the command line.
pub async fn respond_permission(
    remote: &Remote,
    chat: &str,
    request_id: &str,
    option_id: &str,
) -> anyhow::Result<()> {
    remote
        .client
        .call::<wire::PermissionRespond>(&wire::PermissionRespondParams {
            chat: chat.to_owned(),
            request_id: request_id.to_owned(),
            option_id: option_id.to_owned(),
            by_policy: false,
        })
        .await?;
    Ok(())
}

/// Starts a harness in the server (an external agent's process) so its own sessions
/// are listed.
pub async fn start_harness(remote: &Remote, provider: &core::HarnessId) -> anyhow::Result<()> {
    remote
        .client
        .call::<wire::HarnessStart>(&wire::HarnessStartParams {
            harness: provider.to_string(),
        })
        .await?;
    Ok(())
}

/// Keeps the caller's own variables for the server's `agent` (`agent/connect`); the
/// harness it runs as for them.
pub async fn connect_agent(
    remote: &Remote,
    agent: &str,
    env: std::collections::BTreeMap<String, String>,
) -> anyhow::Result<String> {
    let connected = remote
        .client
        .call::<wire::AgentConnect>(&wire::AgentConnectParams {
            agent: agent.to_owned(),
            env,
        })
        .await?;
    Ok(connected.harness)
}

/// Forgets the caller's own variables for the server's `agent`; the harness that went.
pub async fn disconnect_agent(remote: &Remote, agent: &str) -> anyhow::Result<String> {
    let gone = remote
        .client
        .call::<wire::AgentDisconnect>(&wire::AgentDisconnectParams {
            agent: agent.to_owned(),
        })
        .await?;
    Ok(gone.harness)
}

impl Remote {
    /// The connection, for a request of its own.
    pub fn client(&self) -> &Client {
        &self.client
    }
}
