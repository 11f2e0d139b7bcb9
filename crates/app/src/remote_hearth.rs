//! Hearth as a running server holds it, for `hearth acp --server`: the editor's agent
//! speaks to the server through its protocol as the person whose token it presents. The
//! server's access rules decide what the editor may list, load, prompt and approve, and
//! the sessions are kept there (a team server's user's own, working in their folder on
//! the server).
//!
//! One connection answers the editor's requests (made again after it closed); each
//! prompt follows its turn on a connection of its own, so several sessions' turns stream
//! at once and a turn's notifications are never mixed with another's.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use hearth_acp_server::{AcpServerError, Decided, Fed, Hearth, Refusal, Staged, TurnFeed};
use hearth_core::{
    ChatState, ChatUri, HarnessId, ProposalId, SessionSummary, SessionUri, TurnId, UserMessage,
};
use hearth_protocol::{self as wire, ErrorKind, Method};
use hearth_server::{Client, Notifications, Secret, ServerError, proposal_from_wire};
use hearth_store::SessionPage;
use tokio::sync::{mpsc, oneshot};

use crate::turn::{TurnEvent, TurnStream};

/// The name this client gives the server.
const CLIENT_NAME: &str = "hearth-acp";

/// Proposals read per page while looking for one.
const PROPOSAL_PAGE: u32 = 200;

type Result<T> = std::result::Result<T, AcpServerError>;

/// A running Hearth server, spoken to with one token.
pub struct RemoteHearth {
    url: String,
    token: Secret,
    /// The connection requests go over; `None` after it closed.
    client: tokio::sync::Mutex<Option<Arc<Client>>>,
}

impl std::fmt::Debug for RemoteHearth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteHearth")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl RemoteHearth {
    /// Connects to the server at `url` with `token`; what it offers (its harnesses and
    /// the one new sessions use by default).
    pub async fn connect(
        url: &str,
        token: Secret,
    ) -> anyhow::Result<(Self, wire::InitializeResponse)> {
        let (client, info) = open(url, &token).await?;
        let remote = Self {
            url: url.to_owned(),
            token,
            client: tokio::sync::Mutex::new(Some(Arc::new(client))),
        };
        Ok((remote, info))
    }

    /// The open connection, made again when the last one closed.
    async fn client(&self) -> Result<Arc<Client>> {
        let mut held = self.client.lock().await;
        if let Some(client) = held.as_ref() {
            return Ok(Arc::clone(client));
        }
        let (client, _) = open(&self.url, &self.token)
            .await
            .map_err(|error| failed(format!("{error:#}")))?;
        let client = Arc::new(client);
        *held = Some(Arc::clone(&client));
        Ok(client)
    }

    /// Calls `M` on the server; a closed connection is forgotten, so the next request
    /// connects again (this one fails: it may have reached the server).
    async fn call<M: Method>(&self, params: &M::Params) -> Result<M::Response> {
        let client = self.client().await?;
        match client.call::<M>(params).await {
            Ok(response) => Ok(response),
            Err(ServerError::Closed) => {
                self.client.lock().await.take();
                Err(failed(format!(
                    "the connection to the Hearth server at {} closed; try again",
                    self.url
                )))
            }
            Err(error) => Err(refused(error)),
        }
    }
}

/// A connection to `url`, initialized; the notifications it is sent are read and
/// dropped (requests subscribe to nothing on it).
async fn open(url: &str, token: &Secret) -> anyhow::Result<(Client, wire::InitializeResponse)> {
    let (client, mut notifications) = Client::connect(url, token).await?;
    tokio::spawn(async move { while notifications.recv().await.is_some() {} });
    let info = client.initialize(CLIENT_NAME).await?;
    Ok((client, info))
}

fn failed(message: String) -> AcpServerError {
    AcpServerError::Server {
        refusal: Refusal::Failed,
        message,
    }
}

/// What the server's error means to the editor.
fn refused(error: ServerError) -> AcpServerError {
    let ServerError::Rpc(error) = error else {
        return failed(error.to_string());
    };
    let refusal = match error.data.as_ref().map(|data| data.kind) {
        Some(ErrorKind::NotFound | ErrorKind::Gone) => Refusal::NotFound,
        Some(
            ErrorKind::InvalidParams
            | ErrorKind::Forbidden
            | ErrorKind::Unsupported
            | ErrorKind::Conflict,
        ) => Refusal::Invalid,
        Some(ErrorKind::Busy) => Refusal::Busy,
        _ => Refusal::Failed,
    };
    AcpServerError::Server {
        refusal,
        message: error.message,
    }
}

/// What the server sent does not read as Hearth's types.
fn unreadable(what: &str, error: impl std::fmt::Display) -> AcpServerError {
    failed(format!(
        "the Hearth server sent {what} this agent cannot read: {error}"
    ))
}

impl Hearth for RemoteHearth {
    fn create_session<'a>(
        &'a self,
        harness: &'a HarnessId,
        directories: Vec<PathBuf>,
    ) -> BoxFuture<'a, Result<SessionUri>> {
        Box::pin(async move {
            let mut params = wire::SessionCreateParams {
                harness: Some(harness.to_string()),
                working_directories: directories
                    .iter()
                    .map(|directory| directory.display().to_string())
                    .collect(),
                ..wire::SessionCreateParams::default()
            };
            let created = match self.call::<wire::SessionCreate>(&params).await {
                // A team server's user names no folders of the server: their session
                // works in their own folder there.
                Err(AcpServerError::Server {
                    refusal: Refusal::Invalid,
                    message,
                }) if !params.working_directories.is_empty() => {
                    tracing::info!(
                        "the server keeps its folders to its operator ({message}); the session works in your folder on the server"
                    );
                    params.working_directories.clear();
                    self.call::<wire::SessionCreate>(&params).await?
                }
                other => other?,
            };
            SessionUri::parse(&created.session.summary.uri)
                .map_err(|error| unreadable("a session id", error))
        })
    }

    fn chat<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, Result<ChatState>> {
        Box::pin(async move {
            let resolved = self
                .call::<wire::ChatResolve>(&wire::ChatParams {
                    chat: chat.to_string(),
                })
                .await?;
            ChatState::try_from(resolved.chat).map_err(|error| unreadable("a chat", error))
        })
    }

    fn list_sessions(
        &self,
        cursor: Option<String>,
        limit: u32,
    ) -> BoxFuture<'_, Result<SessionPage>> {
        Box::pin(async move {
            let page = self
                .call::<wire::SessionList>(&wire::SessionListParams {
                    cursor,
                    limit: Some(limit),
                    ..wire::SessionListParams::default()
                })
                .await?;
            let sessions = page
                .sessions
                .into_iter()
                .map(SessionSummary::try_from)
                .collect::<std::result::Result<_, _>>()
                .map_err(|error| unreadable("a session", error))?;
            Ok(SessionPage {
                sessions,
                next_cursor: page.next_cursor,
            })
        })
    }

    fn set_model<'a>(&'a self, chat: &'a ChatUri, model: String) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.call::<wire::ChatSetModel>(&wire::ChatSetModelParams {
                chat: chat.to_string(),
                model,
            })
            .await?;
            Ok(())
        })
    }

    fn abort<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let answer = self
                .call::<wire::ChatAbort>(&wire::ChatParams {
                    chat: chat.to_string(),
                })
                .await?;
            Ok(answer.aborted)
        })
    }

    fn send<'a>(
        &'a self,
        chat: &'a ChatUri,
        message: UserMessage,
    ) -> BoxFuture<'a, Result<(TurnId, TurnFeed)>> {
        Box::pin(async move {
            let (client, notifications) = Client::connect(&self.url, &self.token)
                .await
                .map_err(|error| failed(error.to_string()))?;
            client.initialize(CLIENT_NAME).await.map_err(refused)?;
            let (started, start) = oneshot::channel();
            let (feed, fed) = mpsc::unbounded_channel();
            tokio::spawn(follow(
                client,
                notifications,
                (chat.clone(), message),
                started,
                feed,
            ));
            let turn_id = start
                .await
                .map_err(|_| failed("following the turn stopped before it started".to_owned()))??;
            Ok((turn_id, TurnFeed::Channel(fed)))
        })
    }

    fn respond_permission<'a>(
        &'a self,
        chat: &'a ChatUri,
        request_id: &'a str,
        option_id: String,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.call::<wire::PermissionRespond>(&wire::PermissionRespondParams {
                chat: chat.to_string(),
                request_id: request_id.to_owned(),
                option_id,
                by_policy: false,
            })
            .await?;
            Ok(())
        })
    }

    fn proposal<'a>(
        &'a self,
        chat: &'a ChatUri,
        id: &'a ProposalId,
    ) -> BoxFuture<'a, Result<Staged>> {
        Box::pin(async move {
            let wanted = id.to_string();
            let session = chat.session().to_string();
            let found = all_proposals(&*self.client().await?, Some(session))
                .await
                .map_err(refused)?
                .into_iter()
                .find(|proposal| proposal.id == wanted)
                .ok_or_else(|| AcpServerError::Server {
                    refusal: Refusal::NotFound,
                    message: format!("no proposal {wanted} in {}", chat.session()),
                })?;
            let proposal = proposal_from_wire(found).map_err(failed)?;
            Ok(Staged::from(proposal))
        })
    }

    fn decide<'a>(
        &'a self,
        id: &'a ProposalId,
        payload_hash: &'a str,
        approve: bool,
    ) -> BoxFuture<'a, Result<Decided>> {
        Box::pin(async move {
            let proposal_id = id.to_string();
            if !approve {
                self.call::<wire::ProposalReject>(&wire::ProposalRejectParams {
                    proposal_id,
                    reason: None,
                })
                .await?;
                return Ok(Decided::Rejected);
            }
            let decided = self
                .call::<wire::ProposalApprove>(&wire::ProposalApproveParams {
                    proposal_id,
                    payload_hash: payload_hash.to_owned(),
                })
                .await?;
            Ok(match decided.proposal.status {
                wire::ProposalStatus::Failed => Decided::ApplyFailed(
                    decided
                        .proposal
                        .error
                        .unwrap_or_else(|| "unknown".to_owned()),
                ),
                _ => Decided::Applied,
            })
        })
    }
}

/// Sends the message on its own connection and hands on what its turn does until it
/// ended or nobody follows it any more; then the connection closes (the turn goes on
/// on the server).
async fn follow(
    client: Client,
    mut notifications: Notifications,
    (chat, message): (ChatUri, UserMessage),
    started: oneshot::Sender<Result<TurnId>>,
    feed: mpsc::UnboundedSender<Fed>,
) {
    match TurnStream::remote(&client, &mut notifications, &chat, message).await {
        Err(error) => {
            let error = match error.downcast::<ServerError>() {
                Ok(error) => refused(error),
                Err(error) => failed(format!("{error:#}")),
            };
            // The prompt that waited for this has gone: nothing to tell.
            let _gone = started.send(Err(error));
        }
        Ok(mut stream) => {
            if started.send(Ok(stream.turn_id().clone())).is_ok() {
                hand_on(&mut stream, &feed).await;
            }
        }
    }
    client.close().await;
}

/// Hands the turn's actions on, then how it ended.
async fn hand_on(stream: &mut TurnStream<'_>, feed: &mpsc::UnboundedSender<Fed>) {
    loop {
        let fed = match stream.next().await {
            Ok(TurnEvent::Envelope(envelope)) => Fed::Action(Box::new(envelope.action)),
            // The editor is asked when the request's action arrives.
            Ok(TurnEvent::Question(_)) => continue,
            Ok(TurnEvent::Ended(stop)) => Fed::Ended(stop),
            Err(error) => Fed::Lost(format!("{error:#}")),
        };
        let last = !matches!(fed, Fed::Action(_));
        if feed.send(fed).is_err() || last {
            return;
        }
    }
}

/// Every proposal the server shows the caller (of `session`, when one is named), page
/// after page.
pub async fn all_proposals(
    client: &Client,
    session: Option<String>,
) -> std::result::Result<Vec<wire::Proposal>, ServerError> {
    let mut proposals = Vec::new();
    let mut cursor = None;
    loop {
        let page = client
            .call::<wire::ProposalList>(&wire::ProposalListParams {
                statuses: Vec::new(),
                session: session.clone(),
                cursor,
                limit: Some(PROPOSAL_PAGE),
            })
            .await?;
        proposals.extend(page.proposals);
        cursor = page.next_cursor;
        if cursor.is_none() {
            return Ok(proposals);
        }
    }
}
