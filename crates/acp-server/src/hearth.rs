//! What the agent drives: Hearth in this process (its host and approval gate, see
//! [`LocalHearth`]) or a running Hearth server spoken to through its protocol as the
//! person whose token the client presents (implemented where that client lives). The
//! agent's answers are the same either way; only who keeps the sessions differs.

use std::path::PathBuf;

use futures::future::BoxFuture;
use hearth_core::{
    Action, ChatState, ChatUri, HarnessId, PermissionAnswer, ProposalId, Scope, SessionUri,
    StopReason, TurnId, UserMessage,
};
use hearth_host::{EnvelopeReceiver, Host, NewSessionRequest};
use hearth_store::{SessionPage, SessionQuery};
use hearth_tools::{ApplyOutcome, ApprovalGate, Proposal, ProposalStatus, ToolsError, UserActor};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use crate::error::Result;
use crate::proposals::VIA;

/// Hearth as the agent sees it: sessions, their chats' turns, permission answers and
/// decisions on staged proposals.
pub trait Hearth: Send + Sync {
    /// A new session of `harness` in `directories` (its first is where the editor is).
    fn create_session<'a>(
        &'a self,
        harness: &'a HarnessId,
        directories: Vec<PathBuf>,
    ) -> BoxFuture<'a, Result<SessionUri>>;

    /// A chat as it stands, with its turns.
    fn chat<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, Result<ChatState>>;

    /// A page of sessions, newest first.
    fn list_sessions(
        &self,
        cursor: Option<String>,
        limit: u32,
    ) -> BoxFuture<'_, Result<SessionPage>>;

    /// Sets the model the chat's next turns use.
    fn set_model<'a>(&'a self, chat: &'a ChatUri, model: String) -> BoxFuture<'a, Result<()>>;

    /// Stops the chat's running turn; whether one ran.
    fn abort<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, Result<bool>>;

    /// Sends `message` to the chat and follows the turn it starts.
    fn send<'a>(
        &'a self,
        chat: &'a ChatUri,
        message: UserMessage,
    ) -> BoxFuture<'a, Result<(TurnId, TurnFeed)>>;

    /// Answers a permission request of the chat with the editor's user's choice.
    fn respond_permission<'a>(
        &'a self,
        chat: &'a ChatUri,
        request_id: &'a str,
        option_id: String,
    ) -> BoxFuture<'a, Result<()>>;

    /// A proposal a turn of `chat` staged.
    fn proposal<'a>(
        &'a self,
        chat: &'a ChatUri,
        id: &'a ProposalId,
    ) -> BoxFuture<'a, Result<Staged>>;

    /// Approves (and applies) or rejects a proposal, bound to the payload hash shown.
    fn decide<'a>(
        &'a self,
        id: &'a ProposalId,
        payload_hash: &'a str,
        approve: bool,
    ) -> BoxFuture<'a, Result<Decided>>;
}

/// A staged proposal as the editor is asked about it.
#[derive(Debug, Clone)]
pub struct Staged {
    /// Its id.
    pub id: ProposalId,
    /// The model's call that staged it.
    pub call_id: String,
    /// One line for humans.
    pub summary: String,
    /// Before/after, for humans.
    pub diff: String,
    /// What applying does.
    pub payload: Value,
    /// The hash the decision binds to.
    pub payload_hash: String,
    /// `None` while it waits for a decision, else where it is in its life (`applied`, …).
    pub decided: Option<String>,
}

impl From<Proposal> for Staged {
    fn from(proposal: Proposal) -> Self {
        Self {
            decided: (proposal.status != ProposalStatus::Pending)
                .then(|| proposal.status.as_str().to_owned()),
            id: proposal.id,
            call_id: proposal.call_id,
            summary: proposal.summary,
            diff: proposal.diff,
            payload: proposal.payload,
            payload_hash: proposal.payload_hash,
        }
    }
}

/// What a decision did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decided {
    /// Approved and applied (or applying).
    Applied,
    /// Approved, but applying failed: why.
    ApplyFailed(String),
    /// Rejected.
    Rejected,
}

/// What a followed turn does next.
#[derive(Debug)]
pub enum Fed {
    /// An action of the chat, in order.
    Action(Box<Action>),
    /// The turn ended (its completion may not have been seen as an action).
    Ended(StopReason),
    /// The turn can no longer be followed: why.
    Lost(String),
}

/// A turn being followed: the host's own stream, or one a connection to a server feeds.
#[derive(Debug)]
pub enum TurnFeed {
    /// The envelopes of this process's host.
    Host(EnvelopeReceiver),
    /// What a task following the turn elsewhere hands on.
    Channel(mpsc::UnboundedReceiver<Fed>),
}

impl TurnFeed {
    /// What happens next; [`Fed::Ended`] with [`StopReason::Incomplete`] when the stream
    /// closed without an end.
    pub async fn next(&mut self) -> Fed {
        match self {
            Self::Host(receiver) => loop {
                match receiver.recv().await {
                    Ok(envelope) => return Fed::Action(Box::new(envelope.action)),
                    Err(RecvError::Lagged(missed)) => {
                        tracing::warn!(
                            missed,
                            "the editor's stream fell behind; updates were lost"
                        );
                    }
                    Err(RecvError::Closed) => return Fed::Ended(StopReason::Incomplete),
                }
            },
            Self::Channel(receiver) => receiver
                .recv()
                .await
                .unwrap_or(Fed::Ended(StopReason::Incomplete)),
        }
    }
}

/// Hearth in this process: the host over the data directory's store, and its gate;
/// decisions are recorded as the user's, through `acp`.
#[derive(Clone)]
pub struct LocalHearth {
    /// The orchestrator.
    pub host: Host,
    /// Decides proposals.
    pub gate: ApprovalGate,
}

impl std::fmt::Debug for LocalHearth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalHearth").finish_non_exhaustive()
    }
}

impl Hearth for LocalHearth {
    fn create_session<'a>(
        &'a self,
        harness: &'a HarnessId,
        directories: Vec<PathBuf>,
    ) -> BoxFuture<'a, Result<SessionUri>> {
        Box::pin(async move {
            Ok(self
                .host
                .create_session(NewSessionRequest {
                    provider: harness.clone(),
                    scope: Scope::Global,
                    title: None,
                    model: None,
                    working_directories: directories,
                    owner: None,
                })
                .await?)
        })
    }

    fn chat<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, Result<ChatState>> {
        Box::pin(async move { Ok(self.host.chat(chat).await?) })
    }

    fn list_sessions(
        &self,
        cursor: Option<String>,
        limit: u32,
    ) -> BoxFuture<'_, Result<SessionPage>> {
        Box::pin(async move {
            Ok(self
                .host
                .list_sessions(&SessionQuery {
                    cursor,
                    limit,
                    ..SessionQuery::default()
                })
                .await?)
        })
    }

    fn set_model<'a>(&'a self, chat: &'a ChatUri, model: String) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move { Ok(self.host.set_model(chat, model).await?) })
    }

    fn abort<'a>(&'a self, chat: &'a ChatUri) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move { Ok(self.host.abort(chat).await?) })
    }

    fn send<'a>(
        &'a self,
        chat: &'a ChatUri,
        message: UserMessage,
    ) -> BoxFuture<'a, Result<(TurnId, TurnFeed)>> {
        Box::pin(async move {
            let (turn_id, subscription) = self.host.send_streaming(chat, message).await?;
            Ok((turn_id, TurnFeed::Host(subscription.receiver)))
        })
    }

    fn respond_permission<'a>(
        &'a self,
        chat: &'a ChatUri,
        request_id: &'a str,
        option_id: String,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let answer = PermissionAnswer {
                option_id,
                via: VIA.to_owned(),
            };
            Ok(self
                .host
                .respond_permission(chat, request_id, &answer)
                .await?)
        })
    }

    fn proposal<'a>(
        &'a self,
        _chat: &'a ChatUri,
        id: &'a ProposalId,
    ) -> BoxFuture<'a, Result<Staged>> {
        Box::pin(async move { Ok(Staged::from(self.gate.get(id).await?)) })
    }

    fn decide<'a>(
        &'a self,
        id: &'a ProposalId,
        payload_hash: &'a str,
        approve: bool,
    ) -> BoxFuture<'a, Result<Decided>> {
        Box::pin(async move {
            let by = UserActor::new(VIA);
            if !approve {
                self.gate.reject(id, &by, None).await?;
                return Ok(Decided::Rejected);
            }
            match self.gate.approve_and_apply(id, payload_hash, &by).await {
                Ok(
                    ApplyOutcome::Applied { .. }
                    | ApplyOutcome::AlreadyApplied { .. }
                    | ApplyOutcome::InProgress { .. },
                ) => Ok(Decided::Applied),
                Err(ToolsError::ApplyFailed { .. }) => {
                    let proposal = self.gate.get(id).await?;
                    Ok(Decided::ApplyFailed(
                        proposal.error.unwrap_or_else(|| "unknown".into()),
                    ))
                }
                Err(error) => Err(error.into()),
            }
        })
    }
}
