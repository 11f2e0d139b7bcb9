//! The harness seam: the `Harness` trait, the facts it is given, and the events it emits.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::agent_state::AgentChatState;
use crate::chat::{ChatOrigin, DiscoveredChat, HarnessData, Scope};
use crate::error::HarnessResult;
use crate::ids::{ChatUri, ConversationId, HarnessId, ProposalId, SessionUri, TurnId};
use crate::tool_call::ToolCallPatch;
use crate::turn::{
    PermissionOption, PlanEntry, StopReason, Timestamp, ToolCallPart, ToolCallStatus, ToolResult,
    Turn, Usage, UserMessage,
};

/// Multi-chat abilities of a harness. Presence means peer chats are supported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MultipleChats {
    /// Can fork a chat at a turn.
    pub fork: bool,
    /// Can open a side chat that sees a turn's context without copying its history.
    pub side_chat: bool,
}

/// Multi-root abilities of a harness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MultipleWorkingDirectories {
    /// Index 0 stays the fixed process root.
    pub immutable_primary: bool,
}

/// Optional abilities, as flags. The host gates on these, never on a provider id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Peer chats, fork, side chats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiple_chats: Option<MultipleChats>,
    /// Several working directories per session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiple_working_directories: Option<MultipleWorkingDirectories>,
}

impl Capabilities {
    /// Whether peer chats can be added.
    pub fn supports_peer_chats(&self) -> bool {
        self.multiple_chats.is_some()
    }

    /// Whether chats can be forked.
    pub fn supports_fork(&self) -> bool {
        self.multiple_chats.is_some_and(|chats| chats.fork)
    }

    /// Whether side chats can be opened.
    pub fn supports_side_chat(&self) -> bool {
        self.multiple_chats.is_some_and(|chats| chats.side_chat)
    }

    /// Peer chats, forks and side chats, in one working directory.
    pub fn forks_and_side_chats() -> Self {
        Self {
            multiple_chats: Some(MultipleChats {
                fork: true,
                side_chat: true,
            }),
            multiple_working_directories: None,
        }
    }
}

/// Who a harness is and what it can do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HarnessDescriptor {
    /// Provider id; the first segment of every session URI it owns.
    pub id: HarnessId,
    /// Display name.
    pub name: String,
    /// One line about it.
    pub description: String,
    /// Optional abilities.
    pub capabilities: Capabilities,
    /// Whether this harness is a demo that produces scripted answers.
    #[serde(default)]
    pub demo: bool,
}

/// Host-published customizations of a session (instructions, enabled tools).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Customizations {
    /// Extra instructions from the scope (e.g. a project's `project.md` body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Names of tools the user enabled; empty means the harness default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub enabled_tools: Vec<String>,
    /// The `AGENTS.md` in the working directory that holds the same instructions, for
    /// agents that read that file by themselves (a harness need not repeat them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents_file: Option<PathBuf>,
}

/// Host facts for one operation on one chat. Harnesses read these instead of host state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatContext {
    /// The owning session.
    pub session: SessionUri,
    /// The addressed chat.
    pub chat: ChatUri,
    /// How the chat came to exist.
    pub origin: ChatOrigin,
    /// The session's scope.
    pub scope: Scope,
    /// Working directories; index 0 is where the harness runs.
    pub working_directories: Vec<PathBuf>,
    /// The host's last published customizations; `None` means none published yet
    /// (not "no customizations").
    pub customizations: Option<Customizations>,
    /// The chat's model, when chosen.
    pub model: Option<String>,
}

/// How a new chat's conversation is to be provisioned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChatSeed {
    /// An empty conversation.
    Fresh,
    /// A copy of a chat's history up to and including a turn (user or assistant side).
    Fork {
        /// Source chat (materialized by the host before this call).
        source_chat: ChatUri,
        /// The last turn to copy.
        turn_id: TurnId,
    },
    /// A side chat: the source's context up to a turn, as hidden context only.
    SideChat {
        /// Source chat (materialized by the host before this call).
        source_chat: ChatUri,
        /// The turn whose context the side chat sees.
        turn_id: TurnId,
    },
}

impl ChatSeed {
    /// The chat and turn a fork or a side chat starts from; `None` for a fresh chat.
    pub fn source(&self) -> Option<(&ChatUri, &TurnId)> {
        match self {
            Self::Fresh => None,
            Self::Fork {
                source_chat,
                turn_id,
            }
            | Self::SideChat {
                source_chat,
                turn_id,
            } => Some((source_chat, turn_id)),
        }
    }
}

/// What the host asks of `create_chat`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CreateChatRequest {
    /// How to provision it.
    pub seed: ChatSeed,
    /// The chat's title when it starts with one (a session created with a title gives
    /// it to its default chat): the harness keeps it and makes none of its own.
    pub title: Option<String>,
}

/// What a harness returns from `create_chat` and `materialize_chat`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreatedChat {
    /// The blob the host stores and hands back on restore.
    pub provider_data: HarnessData,
    /// A separately enumerable conversation of the harness behind the chat, kept out of
    /// the top-level session list.
    pub conversation: Option<ConversationId>,
    /// The model the chat will use.
    pub model: Option<String>,
    /// What the agent offers in the chat from the start (commands, modes, models).
    pub agent: Option<AgentChatState>,
}

/// How a turn the host started ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnOutcome {
    /// Why it ended.
    pub stop_reason: StopReason,
    /// Token usage of the whole turn.
    pub usage: Option<Usage>,
}

/// What an on-demand compaction did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Compacted {
    /// How many turns the chat's summary stands for now (0: the chat has none).
    pub turns: u32,
    /// How many of them this compaction summarised (0: there was nothing new to
    /// summarise).
    pub summarised: u32,
    /// The summary the agent reads instead of them.
    pub summary: String,
}

/// Metadata of a chat's conversation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChatMetadata {
    /// Title, if the harness has one.
    pub title: Option<String>,
    /// Current model.
    pub model: Option<String>,
    /// When the conversation last changed.
    pub updated_at: Option<Timestamp>,
    /// Number of turns in the conversation's history.
    pub turn_count: usize,
}

/// One progress signal of a chat.
#[derive(Clone, Debug, PartialEq)]
pub enum Signal {
    /// A turn the harness itself started (spawned chats; host-started turns are not
    /// announced again).
    TurnStarted {
        /// The new turn.
        turn_id: TurnId,
        /// Its prompt.
        user: UserMessage,
    },
    /// Answer text.
    TextDelta {
        /// The turn.
        turn_id: TurnId,
        /// The new text.
        text: String,
    },
    /// Reasoning text.
    ReasoningDelta {
        /// The turn.
        turn_id: TurnId,
        /// The new text.
        text: String,
    },
    /// A tool call was announced.
    ToolCallStarted {
        /// The turn.
        turn_id: TurnId,
        /// The call as announced (its status, usually pending or running).
        call: ToolCallPart,
    },
    /// A tool call changed status, possibly with a result and new details.
    ToolCallUpdated {
        /// The turn.
        turn_id: TurnId,
        /// Call id.
        call_id: String,
        /// New status.
        status: ToolCallStatus,
        /// Result, when finished.
        result: Option<ToolResult>,
        /// Changed details (title, kind, locations, content, arguments).
        patch: ToolCallPatch,
    },
    /// The plan was replaced.
    Plan {
        /// The turn.
        turn_id: TurnId,
        /// The whole plan.
        entries: Vec<PlanEntry>,
    },
    /// A mutating tool staged a proposal.
    ProposalStaged {
        /// The turn.
        turn_id: TurnId,
        /// The proposal.
        proposal_id: ProposalId,
        /// What it would do.
        summary: String,
    },
    /// The agent asks the user for permission.
    PermissionRequested {
        /// The turn.
        turn_id: TurnId,
        /// Request id.
        request_id: String,
        /// What is asked.
        title: String,
        /// Choices.
        options: Vec<PermissionOption>,
        /// The tool call it is about.
        tool_call_id: Option<String>,
    },
    /// A permission request was answered without the user: by the configured policy, or
    /// because its turn ended (the user's own answers go through the host).
    PermissionResolved {
        /// The turn.
        turn_id: TurnId,
        /// The request.
        request_id: String,
        /// The chosen option's id, or [`PERMISSION_CANCELLED`](crate::PERMISSION_CANCELLED).
        outcome: String,
    },
    /// An error inside the response (the turn may continue or end).
    Error {
        /// The turn.
        turn_id: TurnId,
        /// What failed and what to do.
        message: String,
    },
    /// Something the user should know about the chat that is not the agent's answer
    /// (its agent session could not be reopened and a new one took over, say).
    Notice {
        /// The turn.
        turn_id: TurnId,
        /// What happened.
        message: String,
    },
    /// Earlier turns were summarised into what the agent reads instead of them.
    Compacted {
        /// The turn it happened in.
        turn_id: TurnId,
        /// How many turns the summary stands for, when known.
        turns: Option<u32>,
        /// The summary, when the agent gives it.
        summary: String,
    },
    /// Usage so far.
    Usage {
        /// The turn.
        turn_id: TurnId,
        /// Usage of the turn so far.
        usage: Usage,
    },
    /// A harness-started turn ended (host-started turns end with `send`'s result).
    TurnCompleted {
        /// The turn.
        turn_id: TurnId,
        /// Why.
        stop_reason: StopReason,
        /// Final usage.
        usage: Option<Usage>,
    },
    /// The chat got a title.
    TitleChanged {
        /// The title.
        title: String,
    },
    /// The chat's conversation blob changed; the host stores it verbatim.
    ProviderDataChanged {
        /// The new blob.
        provider_data: HarnessData,
    },
    /// The chat goes on in another of the provider's conversations (a new agent session
    /// took over one that could not be reopened): the host marks it as the chat's, so
    /// that neither discovery nor an import of the agent's own store takes it for a
    /// conversation Hearth does not know.
    ConversationChanged {
        /// The conversation the chat now goes on in.
        conversation: ConversationId,
    },
    /// What the agent offers in the chat (commands, modes, models) changed.
    AgentStateChanged {
        /// The whole new state.
        state: AgentChatState,
    },
}

/// Events a harness pushes to the host, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum HarnessEvent {
    /// Progress of a chat.
    Progress {
        /// The chat.
        chat: ChatUri,
        /// What happened.
        signal: Signal,
    },
    /// The harness spawned a chat (a subagent). The host adds it to the catalog before
    /// publishing any later event of it.
    SpawnChat {
        /// The new chat (a peer of the parent's session).
        chat: ChatUri,
        /// Its origin, normally `Tool`.
        origin: ChatOrigin,
        /// Title.
        title: Option<String>,
        /// What the harness made for it.
        created: CreatedChat,
    },
    /// A spawned chat finished and will not run again.
    EndChat {
        /// The chat.
        chat: ChatUri,
    },
    /// Conversations found in the provider's own catalog.
    DiscoverChats {
        /// The provider.
        provider: HarnessId,
        /// What was found.
        chats: Vec<DiscoveredChat>,
        /// Other harnesses that read the same catalog (two adapters of one agent): a
        /// conversation one of them already has is not listed again.
        peers: Vec<HarnessId>,
    },
}

type Deliver = dyn Fn(HarnessEvent) -> BoxFuture<'static, ()> + Send + Sync;

/// Where a harness sends its events. Cheap to clone. Sending waits while the host's
/// queue is full, so a harness that produces faster than the host applies is slowed down
/// instead of growing memory without bound; events are never dropped.
#[derive(Clone)]
pub struct EventSink(Arc<Deliver>);

impl EventSink {
    /// A sink whose `deliver` future completes once the event is accepted.
    pub fn new(
        deliver: impl Fn(HarnessEvent) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(deliver))
    }

    /// A sink that hands every event to a synchronous `deliver` (tests, tools).
    pub fn from_fn(deliver: impl Fn(HarnessEvent) + Send + Sync + 'static) -> Self {
        Self::new(move |event| {
            deliver(event);
            futures::future::ready(()).boxed()
        })
    }

    /// A sink that drops every event (for harnesses used without a host).
    pub fn discard() -> Self {
        Self::from_fn(|_event| {})
    }

    /// Delivers one event, waiting while the receiver is full.
    pub async fn send(&self, event: HarnessEvent) {
        (self.0)(event).await;
    }

    /// Delivers a progress signal of a chat.
    pub async fn progress(&self, chat: &ChatUri, signal: Signal) {
        self.send(HarnessEvent::Progress {
            chat: chat.clone(),
            signal,
        })
        .await;
    }
}

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventSink")
    }
}

/// Who answered a permission request, for the harness to act on and record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermissionAnswer {
    /// The chosen option.
    pub option_id: String,
    /// Through what the user answered (`cli`, `server`, `web`, `acp`).
    pub via: String,
}

/// A standing answer the user gave for the rest of a chat ("allow for this chat"),
/// covering exactly the call it was given for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermissionGrant {
    /// Its id (unique in the process that holds it).
    pub id: String,
    /// The chat it holds in.
    pub chat: ChatUri,
    /// What it covers, in words (`edit of /work/a.md`, `` execute of `make test` ``).
    pub scope: String,
    /// Allowed (`true`) or refused (`false`).
    pub allowed: bool,
}

/// A harness: something that runs chats (Hearth's own agent loop, an external ACP agent,
/// the replay harness). It owns each chat's conversation; the host owns URIs, membership and
/// persistence. Every operation addresses exactly one chat and gets its facts in a
/// [`ChatContext`]; optional abilities are declared in [`Capabilities`].
pub trait Harness: Send + Sync + 'static {
    /// Identity and capabilities. Capabilities may grow once the harness has started
    /// (an external agent says what it can do when it starts).
    fn descriptor(&self) -> HarnessDescriptor;

    /// Called once by the host before any other call: where to send events.
    fn attach(&self, sink: EventSink);

    /// Starts what the harness runs on (an agent process, a connection), if it is not
    /// running yet, and reports conversations found in the provider's own catalog.
    /// Harnesses start lazily on first use too; this lets the host start one on purpose
    /// (to list its external sessions, to check it works).
    fn start(&self) -> BoxFuture<'_, HarnessResult<()>> {
        futures::future::ready(Ok(())).boxed()
    }

    /// Stops everything the harness started (agent processes and their children). The
    /// host calls it once, at shutdown, after the running turns ended.
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        futures::future::ready(()).boxed()
    }

    /// Provisions the conversation of a new chat (`context.chat`): fresh, fork or side chat.
    fn create_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        request: CreateChatRequest,
    ) -> BoxFuture<'a, HarnessResult<CreatedChat>>;

    /// Re-attaches a chat's conversation after a restart or eviction, from the blob the host
    /// stored. Returns a replacement blob only when the harness recovered a canonical one.
    fn materialize_chat<'a>(
        &'a self,
        context: &'a ChatContext,
        provider_data: Option<HarnessData>,
    ) -> BoxFuture<'a, HarnessResult<Option<HarnessData>>>;

    /// Runs one turn the host started. Progress goes to the sink; the future resolves
    /// when the turn ends (aborted turns resolve with [`StopReason::Aborted`]).
    fn send<'a>(
        &'a self,
        context: &'a ChatContext,
        turn_id: TurnId,
        message: UserMessage,
    ) -> BoxFuture<'a, HarnessResult<TurnOutcome>>;

    /// Aborts the chat's running turn, if any. Idempotent.
    fn abort<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>>;

    /// Switches the chat's model for later turns.
    fn set_model<'a>(
        &'a self,
        context: &'a ChatContext,
        model: String,
    ) -> BoxFuture<'a, HarnessResult<()>>;

    /// Switches the chat's mode (how the agent works: asks first, edits freely, only
    /// plans; the agent's own set) for later turns. Harnesses without modes keep the
    /// default, which refuses.
    fn set_mode<'a>(
        &'a self,
        context: &'a ChatContext,
        mode: String,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        let message = format!(
            "chat `{}` has no modes to switch (asked for `{mode}`): its harness offers none",
            context.chat
        );
        Box::pin(async move { Err(crate::error::HarnessError::unsupported(message)) })
    }

    /// The chat's history as the harness knows it.
    fn messages<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<Vec<Turn>>>;

    /// Metadata of the chat's conversation.
    fn metadata<'a>(
        &'a self,
        context: &'a ChatContext,
    ) -> BoxFuture<'a, HarnessResult<ChatMetadata>>;

    /// Destroys the chat's conversation (the user removed the chat or its session).
    fn dispose_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>>;

    /// Frees the chat's live resources without destroying its conversation (idle eviction).
    fn release_chat<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<()>>;

    /// Summarises the chat's earlier turns now (`/compact`), so later turns send the
    /// summary instead of them; the turns themselves stay. Harnesses whose agents manage
    /// their own context keep the default, which refuses.
    fn compact<'a>(&'a self, context: &'a ChatContext) -> BoxFuture<'a, HarnessResult<Compacted>> {
        let message = format!(
            "chat `{}` cannot be compacted by Hearth: its agent manages its own context \
             (send `//compact` to use the agent's own command, if it offers one)",
            context.chat
        );
        Box::pin(async move { Err(crate::error::HarnessError::unsupported(message)) })
    }

    /// Delivers the user's answer to a permission request the harness raised with
    /// [`Signal::PermissionRequested`]. Harnesses that never ask keep the default.
    fn respond_permission<'a>(
        &'a self,
        _context: &'a ChatContext,
        request_id: &'a str,
        _answer: &'a PermissionAnswer,
    ) -> BoxFuture<'a, HarnessResult<()>> {
        let message = format!("no permission request `{request_id}` is pending");
        Box::pin(async move { Err(crate::error::HarnessError::not_found(message)) })
    }

    /// The standing answers the user gave in this harness's chats. Harnesses that keep
    /// none keep the default.
    fn permission_grants(&self) -> Vec<PermissionGrant> {
        Vec::new()
    }

    /// Revokes a standing answer: the next such call asks again. `false` when the
    /// harness holds no grant of that id.
    fn revoke_permission_grant(&self, _grant: &str) -> bool {
        false
    }
}
