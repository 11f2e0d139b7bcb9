//! The method table: every request a client may send, with its params and response
//! types, and every notification the server sends.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::approvals::{
    AuditListParams, AuditListResponse, AuditVerifyParams, AuditVerifyResponse,
    ProposalApproveParams, ProposalDecisionResponse, ProposalListParams, ProposalListResponse,
    ProposalRejectParams,
};
use crate::attachments::{AttachmentUploadParams, AttachmentUploadResponse};
use crate::calendar::{
    CalendarEventsParams, CalendarEventsResponse, CalendarListParams, CalendarListResponse,
};
use crate::chat_methods::{
    ChatAbortResponse, ChatCompactResponse, ChatCreateParams, ChatCreateResponse,
    ChatDisposeResponse, ChatParams, ChatQueueParams, ChatQueueResponse, ChatResolveResponse,
    ChatSendParams, ChatSendResponse, ChatSetDraftParams, ChatSetDraftResponse, ChatSetModeParams,
    ChatSetModeResponse, ChatSetModelParams, ChatSetModelResponse, ChatSetQueueParams,
    ChatSetQueueResponse, ChatTurnsParams, ChatTurnsResponse, HarnessStartParams,
    HarnessStartResponse, PermissionGrantsParams, PermissionGrantsResponse, PermissionListParams,
    PermissionListResponse, PermissionRespondParams, PermissionRespondResponse,
    PermissionRevokeGrantParams, PermissionRevokeGrantResponse,
};
use crate::export::{SessionExportParams, SessionExportResponse};
use crate::projects::{
    ProjectAddSourceParams, ProjectContextParams, ProjectContextResponse, ProjectCreateParams,
    ProjectCreateResponse, ProjectDeleteResponse, ProjectListParams, ProjectListResponse,
    ProjectParams, ProjectRelinkParams, ProjectRemoveSourceParams, ProjectRenameParams,
    ProjectResponse, ProjectRetrySourceParams, ProjectTrustParams, ProjectUpdateParams,
};
use crate::providers::{
    AgentConnectParams, AgentConnectResponse, AgentDisconnectParams, AgentDisconnectResponse,
    ProviderAddParams, ProviderAddResponse, ProviderListParams, ProviderListResponse,
    ProviderRemoveParams, ProviderRemoveResponse, ProviderTestParams, ProviderTestResponse,
};
use crate::search::{SearchQueryParams, SearchQueryResponse};
use crate::session_methods::{
    InitializeParams, InitializeResponse, SessionCreateParams, SessionCreateResponse,
    SessionDisposeParams, SessionDisposeResponse, SessionForkParams, SessionListParams,
    SessionListResponse, SessionMarkParams, SessionMarkResponse, SessionRenameParams,
    SessionRenameResponse, SessionShareParams, SessionShareResponse,
};
use crate::state::Envelope;
use crate::subscription::{
    ResyncNotification, SubscribeParams, SubscribeResponse, SubscriptionEndedNotification,
    UnsubscribeParams, UnsubscribeResponse,
};
use crate::trash::{
    TrashEmptyParams, TrashEmptyResponse, TrashListParams, TrashListResponse, TrashRestoreParams,
    TrashRestoreResponse,
};

/// A request method: its name on the wire and the types of its params and response.
pub trait Method {
    /// `<resource>/<method>`.
    const NAME: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
    /// The `result` member.
    type Response: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
}

/// A notification the server sends: its name on the wire and the type of its params.
pub trait NotificationMethod {
    /// `<resource>/<event>`.
    const NAME: &'static str;
    /// The `params` member.
    type Params: Serialize + DeserializeOwned + JsonSchema + Send + 'static;
}

macro_rules! methods {
    ($( $(#[$doc:meta])* $marker:ident = $name:literal ($params:ty) -> $response:ty; )*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug)]
            pub struct $marker;

            impl Method for $marker {
                const NAME: &'static str = $name;
                type Params = $params;
                type Response = $response;
            }
        )*

        /// Every request method, for dispatch by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ClientMethod {
            $( $(#[$doc])* $marker, )*
        }

        impl ClientMethod {
            /// All methods, in protocol order.
            pub const ALL: &'static [ClientMethod] = &[$(ClientMethod::$marker),*];

            /// The method with this wire name.
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( $name => Some(Self::$marker), )*
                    _ => None,
                }
            }

            /// The wire name.
            pub fn name(self) -> &'static str {
                match self {
                    $( Self::$marker => $name, )*
                }
            }

            pub(crate) fn schemas(self, generator: &mut SchemaGenerator) -> (Schema, Schema) {
                match self {
                    $( Self::$marker => (
                        generator.subschema_for::<$params>(),
                        generator.subschema_for::<$response>(),
                    ), )*
                }
            }
        }
    };
}

methods! {
    /// `initialize`: server info, protocol version, harnesses and their capabilities.
    Initialize = "initialize" (InitializeParams) -> InitializeResponse;
    /// `session/list`: a page of sessions.
    SessionList = "session/list" (SessionListParams) -> SessionListResponse;
    /// `session/create`: a new session.
    SessionCreate = "session/create" (SessionCreateParams) -> SessionCreateResponse;
    /// `session/dispose`: deletes a session.
    SessionDispose = "session/dispose" (SessionDisposeParams) -> SessionDisposeResponse;
    /// `session/fork`: a new session from another's default chat at a turn.
    SessionFork = "session/fork" (SessionForkParams) -> SessionCreateResponse;
    /// `session/rename`: gives a session a title of the user's.
    SessionRename = "session/rename" (SessionRenameParams) -> SessionRenameResponse;
    /// `chat/create`: a peer chat.
    ChatCreate = "chat/create" (ChatCreateParams) -> ChatCreateResponse;
    /// `chat/dispose`: removes a peer chat.
    ChatDispose = "chat/dispose" (ChatParams) -> ChatDisposeResponse;
    /// `chat/send`: starts a turn.
    ChatSend = "chat/send" (ChatSendParams) -> ChatSendResponse;
    /// `chat/abort`: stops the running turn.
    ChatAbort = "chat/abort" (ChatParams) -> ChatAbortResponse;
    /// `chat/compact`: summarises the chat's earlier turns now.
    ChatCompact = "chat/compact" (ChatParams) -> ChatCompactResponse;
    /// `chat/setModel`: the model of later turns.
    ChatSetModel = "chat/setModel" (ChatSetModelParams) -> ChatSetModelResponse;
    /// `chat/setMode`: the agent's mode for later turns.
    ChatSetMode = "chat/setMode" (ChatSetModeParams) -> ChatSetModeResponse;
    /// `chat/setDraft`: the unsent draft.
    ChatSetDraft = "chat/setDraft" (ChatSetDraftParams) -> ChatSetDraftResponse;
    /// `chat/queue`: sends now, or queues behind the running turn.
    ChatQueue = "chat/queue" (ChatQueueParams) -> ChatQueueResponse;
    /// `chat/setQueue`: replaces the queue of waiting messages.
    ChatSetQueue = "chat/setQueue" (ChatSetQueueParams) -> ChatSetQueueResponse;
    /// `chat/resolve`: a chat with its turns.
    ChatResolve = "chat/resolve" (ChatParams) -> ChatResolveResponse;
    /// `chat/turns`: a page of a chat's turns, newest page first.
    ChatTurns = "chat/turns" (ChatTurnsParams) -> ChatTurnsResponse;
    /// `subscribe`: a resource's state, then its envelopes.
    Subscribe = "subscribe" (SubscribeParams) -> SubscribeResponse;
    /// `unsubscribe`: no more envelopes of a resource.
    Unsubscribe = "unsubscribe" (UnsubscribeParams) -> UnsubscribeResponse;
    /// `proposal/list`: staged changes.
    ProposalList = "proposal/list" (ProposalListParams) -> ProposalListResponse;
    /// `proposal/approve`: approves and applies a staged change.
    ProposalApprove = "proposal/approve" (ProposalApproveParams) -> ProposalDecisionResponse;
    /// `proposal/reject`: rejects a staged change.
    ProposalReject = "proposal/reject" (ProposalRejectParams) -> ProposalDecisionResponse;
    /// `permission/respond`: answers an agent's permission request.
    PermissionRespond = "permission/respond" (PermissionRespondParams) -> PermissionRespondResponse;
    /// `permission/list`: the agents' permission requests nobody answered yet.
    PermissionList = "permission/list" (PermissionListParams) -> PermissionListResponse;
    /// `permission/grants`: the standing answers the user gave for the rest of chats.
    PermissionGrants = "permission/grants" (PermissionGrantsParams) -> PermissionGrantsResponse;
    /// `permission/revokeGrant`: ends a standing answer.
    PermissionRevokeGrant = "permission/revokeGrant" (PermissionRevokeGrantParams) -> PermissionRevokeGrantResponse;
    /// `harness/start`: starts a harness now and lists its external sessions.
    HarnessStart = "harness/start" (HarnessStartParams) -> HarnessStartResponse;
    /// `provider/list`: the model providers found.
    ProviderList = "provider/list" (ProviderListParams) -> ProviderListResponse;
    /// `provider/test`: checks model providers.
    ProviderTest = "provider/test" (ProviderTestParams) -> ProviderTestResponse;
    /// `provider/add`: tests a provider and, if it answers, adds it to `config.toml`.
    ProviderAdd = "provider/add" (ProviderAddParams) -> ProviderAddResponse;
    /// `provider/remove`: removes a provider `config.toml` declares.
    ProviderRemove = "provider/remove" (ProviderRemoveParams) -> ProviderRemoveResponse;
    /// `agent/connect`: a team server user's own variables for an external agent.
    AgentConnect = "agent/connect" (AgentConnectParams) -> AgentConnectResponse;
    /// `agent/disconnect`: forgets a user's own variables for an external agent.
    AgentDisconnect = "agent/disconnect" (AgentDisconnectParams) -> AgentDisconnectResponse;
    /// `audit/list`: the audit log.
    AuditList = "audit/list" (AuditListParams) -> AuditListResponse;
    /// `audit/verify`: checks the audit log's chain, key, head file and proposals.
    AuditVerify = "audit/verify" (AuditVerifyParams) -> AuditVerifyResponse;
    /// `project/list`: every project.
    ProjectList = "project/list" (ProjectListParams) -> ProjectListResponse;
    /// `project/get`: one project, with its sources and instructions.
    ProjectGet = "project/get" (ProjectParams) -> ProjectResponse;
    /// `project/create`: makes a folder a project, or adopts the project it holds once
    /// the user trusts what its `project.md` gives its agents.
    ProjectCreate = "project/create" (ProjectCreateParams) -> ProjectCreateResponse;
    /// `project/trust`: the user accepts a project's changed (or never trusted)
    /// `project.md`; until then it takes no new turns.
    ProjectTrust = "project/trust" (ProjectTrustParams) -> ProjectResponse;
    /// `project/rename`: renames a project.
    ProjectRename = "project/rename" (ProjectRenameParams) -> ProjectResponse;
    /// `project/delete`: deletes a project from Hearth (its folder and sessions stay).
    ProjectDelete = "project/delete" (ProjectParams) -> ProjectDeleteResponse;
    /// `project/addSource`: adds a context source.
    ProjectAddSource = "project/addSource" (ProjectAddSourceParams) -> ProjectResponse;
    /// `project/removeSource`: removes a context source.
    ProjectRemoveSource = "project/removeSource" (ProjectRemoveSourceParams) -> ProjectResponse;
    /// `project/relink`: points a project whose folder moved at its new folder.
    ProjectRelink = "project/relink" (ProjectRelinkParams) -> ProjectResponse;
    /// `project/update`: changes a project's description, instructions, default agent
    /// or model.
    ProjectUpdate = "project/update" (ProjectUpdateParams) -> ProjectResponse;
    /// `project/context`: where a project's context sources stand (preparing those not
    /// prepared yet).
    ProjectContext = "project/context" (ProjectContextParams) -> ProjectContextResponse;
    /// `project/retrySource`: prepares a source again, even one that failed.
    ProjectRetrySource = "project/retrySource" (ProjectRetrySourceParams) -> ProjectContextResponse;
    /// `calendar/list`: the calendars, the zone times are shown in and the clock.
    CalendarList = "calendar/list" (CalendarListParams) -> CalendarListResponse;
    /// `calendar/events`: a window's events, repeats expanded, and pending changes.
    CalendarEvents = "calendar/events" (CalendarEventsParams) -> CalendarEventsResponse;
    /// `search/query`: full-text search over every turn of every live session.
    SearchQuery = "search/query" (SearchQueryParams) -> SearchQueryResponse;
    /// `session/mark`: pins or archives a session (or undoes either).
    SessionMark = "session/mark" (SessionMarkParams) -> SessionMarkResponse;
    /// `attachment/upload`: keeps a file for a message or a project source.
    AttachmentUpload = "attachment/upload" (AttachmentUploadParams) -> AttachmentUploadResponse;
    /// `trash/list`: the sessions and projects in the trash, newest deletion first.
    TrashList = "trash/list" (TrashListParams) -> TrashListResponse;
    /// `trash/restore`: takes a session or project out of the trash.
    TrashRestore = "trash/restore" (TrashRestoreParams) -> TrashRestoreResponse;
    /// `trash/empty`: erases everything in the trash, as securely as deleting did.
    TrashEmpty = "trash/empty" (TrashEmptyParams) -> TrashEmptyResponse;
    /// `session/export`: a session as Markdown (to read) or JSON Lines (lossless).
    SessionExport = "session/export" (SessionExportParams) -> SessionExportResponse;
    /// `session/share`: shares a session with a team (a team server with users).
    SessionShare = "session/share" (SessionShareParams) -> SessionShareResponse;
}

/// `subscription/envelope`: one action of a subscribed resource.
#[derive(Clone, Copy, Debug)]
pub struct EnvelopeNotified;

impl NotificationMethod for EnvelopeNotified {
    const NAME: &'static str = "subscription/envelope";
    type Params = Envelope;
}

/// `subscription/resync`: a fresh snapshot for a client that fell behind.
#[derive(Clone, Copy, Debug)]
pub struct Resynced;

impl NotificationMethod for Resynced {
    const NAME: &'static str = "subscription/resync";
    type Params = ResyncNotification;
}

/// `subscription/ended`: a subscribed resource is gone.
#[derive(Clone, Copy, Debug)]
pub struct SubscriptionEnded;

impl NotificationMethod for SubscriptionEnded {
    const NAME: &'static str = "subscription/ended";
    type Params = SubscriptionEndedNotification;
}

/// The notifications' names, for the schema.
pub(crate) fn notification_schemas(generator: &mut SchemaGenerator) -> Vec<(&'static str, Schema)> {
    vec![
        (
            EnvelopeNotified::NAME,
            generator.subschema_for::<<EnvelopeNotified as NotificationMethod>::Params>(),
        ),
        (
            Resynced::NAME,
            generator.subschema_for::<<Resynced as NotificationMethod>::Params>(),
        ),
        (
            SubscriptionEnded::NAME,
            generator.subschema_for::<<SubscriptionEnded as NotificationMethod>::Params>(),
        ),
    ]
}
