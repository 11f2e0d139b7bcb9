//! Hearth's wire protocol: JSON-RPC 2.0 between `hearth serve` (or `hearth app-server
//! --stdio`) and its clients — the web UI, the CLI, editors.
//!
//! Owns the wire types and nothing else: the JSON-RPC framing ([`Incoming`],
//! [`Request`], [`Response`], [`Notification`]), every method's `*Params` and
//! `*Response` ([`Method`], [`ClientMethod`]), the notifications that carry action
//! envelopes ([`EnvelopeNotified`], [`Resynced`], [`SubscriptionEnded`]), the error
//! object with its structured data ([`RpcError`], [`ErrorData`], [`ErrorKind`]), and the
//! JSON Schema generated from all of them ([`schema`]).
//!
//! Conventions: methods are `<resource>/<method>`, fields camelCase, tagged unions
//! carry their variant in `type`, list methods page with an opaque `cursor` and return
//! `nextCursor`, timestamps end in `At` and are RFC 3339.
//!
//! Wire types are separate from the domain types of `hearth-core`; they meet only in
//! explicit conversions (`From` domain → wire, `TryFrom` wire → domain, the latter
//! parsing every URI and id). Mapping host failures to error codes is the server's
//! job, not this crate's. No I/O, no runtime.

mod approvals;
mod attachments;
mod calendar;
mod chat_methods;
mod convert;
mod convert_state;
mod convert_tool;
mod convert_turn;
mod error;
mod export;
mod jsonrpc;
mod methods;
mod model;
mod projects;
mod providers;
mod schema;
mod search;
mod session_methods;
mod state;
mod subscription;
mod trash;
mod turn;

pub use approvals::{
    AuditEntry, AuditListParams, AuditListResponse, AuditVerifyParams, AuditVerifyResponse,
    Proposal, ProposalApproveParams, ProposalDecisionResponse, ProposalListParams,
    ProposalListResponse, ProposalRejectParams, ProposalStatus,
};
pub use attachments::{AttachmentUploadParams, AttachmentUploadResponse};
pub use calendar::{
    CalendarEntry, CalendarEvent, CalendarEventsParams, CalendarEventsResponse, CalendarKind,
    CalendarListParams, CalendarListResponse, ProposedAction, ProposedEvent,
};
pub use chat_methods::{
    ChatAbortParams, ChatAbortResponse, ChatCompactParams, ChatCompactResponse, ChatCreateParams,
    ChatCreateResponse, ChatDisposeParams, ChatDisposeResponse, ChatParams, ChatQueueParams,
    ChatQueueResponse, ChatResolveParams, ChatResolveResponse, ChatSeed, ChatSendParams,
    ChatSendResponse, ChatSetDraftParams, ChatSetDraftResponse, ChatSetModeParams,
    ChatSetModeResponse, ChatSetModelParams, ChatSetModelResponse, ChatSetQueueParams,
    ChatSetQueueResponse, ChatTurnsParams, ChatTurnsResponse, HarnessStartParams,
    HarnessStartResponse, PendingPermission, PermissionGrant, PermissionGrantsParams,
    PermissionGrantsResponse, PermissionListParams, PermissionListResponse,
    PermissionRespondParams, PermissionRespondResponse, PermissionRevokeGrantParams,
    PermissionRevokeGrantResponse,
};
pub use error::{ErrorData, ErrorKind, ProtocolError, Result, RpcError};
pub use export::{ExportFormat, SessionExportParams, SessionExportResponse};
pub use jsonrpc::{
    ErrorResponse, Incoming, Notification, Request, RequestId, Response, Version, error_text,
    notification_text, request_text, response_text,
};
pub use methods::{
    AgentConnect, AgentDisconnect, AttachmentUpload, AuditList, AuditVerify, CalendarEvents,
    CalendarList, ChatAbort, ChatCompact, ChatCreate, ChatDispose, ChatQueue, ChatResolve,
    ChatSend, ChatSetDraft, ChatSetMode, ChatSetModel, ChatSetQueue, ChatTurns, ClientMethod,
    EnvelopeNotified, HarnessStart, Initialize, Method, NotificationMethod, PermissionGrants,
    PermissionList, PermissionRespond, PermissionRevokeGrant, ProjectAddSource, ProjectContext,
    ProjectCreate, ProjectDelete, ProjectGet, ProjectList, ProjectRelink, ProjectRemoveSource,
    ProjectRename, ProjectRetrySource, ProjectTrust, ProjectUpdate, ProposalApprove, ProposalList,
    ProposalReject, ProviderAdd, ProviderList, ProviderRemove, ProviderTest, Resynced, SearchQuery,
    SessionCreate, SessionDispose, SessionExport, SessionFork, SessionList, SessionMark,
    SessionRename, SessionShare, Subscribe, SubscriptionEnded, TrashEmpty, TrashList, TrashRestore,
    Unsubscribe,
};
pub use model::{
    AgentChatState, AvailableCommand, Capabilities, ChatListing, ChatOrigin, ChatState,
    ChatSummary, Choice, ChoiceState, HarnessInfo, MultipleChats, MultipleWorkingDirectories,
    Provenance, Scope, SessionState, SessionSummary, Timestamp,
};
pub use projects::{
    Project, ProjectAddSourceParams, ProjectContextParams, ProjectContextResponse,
    ProjectCreateParams, ProjectCreateResponse, ProjectDeleteResponse, ProjectListParams,
    ProjectListResponse, ProjectOutsideSource, ProjectParams, ProjectRelinkParams,
    ProjectRemoveSourceParams, ProjectRenameParams, ProjectResponse, ProjectRetrySourceParams,
    ProjectReview, ProjectReviewReason, ProjectSource, ProjectSourceState, ProjectSourceStatus,
    ProjectState, ProjectTrustParams, ProjectUpdateParams,
};
pub use providers::{
    AgentConnectParams, AgentConnectResponse, AgentDisconnectParams, AgentDisconnectResponse,
    KeyState, ProviderAddParams, ProviderAddResponse, ProviderInfo, ProviderKeyParam,
    ProviderKindParam, ProviderListParams, ProviderListResponse, ProviderRemoveParams,
    ProviderRemoveResponse, ProviderTestOutcome, ProviderTestParams, ProviderTestResponse,
    ProviderTestResult,
};
pub use schema::{REGENERATE_COMMAND, SCHEMA_FILE, schema, schema_text};
pub use search::{SearchHit, SearchQueryParams, SearchQueryResponse, SnippetPiece};
pub use session_methods::{
    ClientInfo, InitializeParams, InitializeResponse, ScopeFilter, ServerFeatures, ServerInfo,
    SessionCreateParams, SessionCreateResponse, SessionDisposeParams, SessionDisposeResponse,
    SessionForkParams, SessionForkResponse, SessionListParams, SessionListResponse,
    SessionMarkParams, SessionMarkResponse, SessionRenameParams, SessionRenameResponse,
    SessionShareParams, SessionShareResponse,
};
pub use state::{Action, Envelope, ResourceState, Snapshot};
pub use subscription::{
    EnvelopeNotification, ResyncNotification, ResyncReason, SubscribeParams, SubscribeResponse,
    SubscriptionEndedNotification, UnsubscribeParams, UnsubscribeResponse,
};
pub use trash::{
    TrashEmptyParams, TrashEmptyResponse, TrashItem, TrashKind, TrashListParams, TrashListResponse,
    TrashRestoreParams, TrashRestoreResponse,
};
pub use turn::{
    Attachment, ContextReference, Cost, PermissionOption, PermissionOptionKind, PlanEntry,
    PlanStatus, ResponsePart, StopReason, ToolCallContent, ToolCallPart, ToolCallPatch,
    ToolCallStatus, ToolKind, ToolLocation, ToolResult, Turn, Usage, UserMessage,
};

/// The protocol version this build speaks. Bumped when a change breaks old clients.
pub const PROTOCOL_VERSION: &str = "1";

/// The URI of the root resource (the session list), as `hearth-core` spells it.
pub const ROOT_RESOURCE: &str = hearth_core::ROOT_URI;
