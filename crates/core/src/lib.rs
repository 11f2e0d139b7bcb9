//! Hearth's domain: identities, chats and sessions, the turn model, the state clients
//! see (snapshots, actions, envelopes and the one reducer), and the two seams the rest
//! of Hearth plugs into — the [`Harness`] trait and the [`ToolHandler`] tool trait
//! (with [`TypedTool`] for tools whose arguments are a Rust type).
//! It also holds the one way every crate shows text it did not write: control
//! characters escaped ([`escape_controls`]) and credentials in URLs redacted
//! ([`redact_userinfo`]); and how much of an agent's output a turn keeps
//! ([`OutputLimits`], applied to a running turn by a [`TurnBudget`]); and the one
//! retry policy every retrying loop uses ([`Backoff`]).
//!
//! This crate does no I/O: no files, no network, no database, no runtime.

mod agent_state;
mod backoff;
mod budget;
mod chat;
mod error;
mod harness;
mod ids;
mod output;
mod parts;
mod scope;
mod state;
mod tool;
mod tool_call;
mod turn;
mod typed_tool;
mod untrusted;

pub use agent_state::{AgentChatState, AvailableCommand, Choice, ChoiceState};
pub use backoff::Backoff;
pub use budget::{Admitted, TurnBudget};
pub use chat::{
    ChatOrigin, ChatSummary, DiscoveredChat, HarnessData, Owner, Provenance, Scope, SessionSummary,
};
pub use error::{HarnessError, HarnessErrorKind, HarnessResult, ToolError, UriError};
pub use harness::{
    Capabilities, ChatContext, ChatMetadata, ChatSeed, Compacted, CreateChatRequest, CreatedChat,
    Customizations, EventSink, Harness, HarnessDescriptor, HarnessEvent, MultipleChats,
    MultipleWorkingDirectories, PermissionAnswer, PermissionGrant, Signal, TurnOutcome,
};
pub use ids::{
    CHAT_SCHEME, ChatId, ChatUri, ConversationId, DEFAULT_CHAT_ID, HarnessId, ProjectId,
    ProposalId, SESSION_SCHEME, SessionId, SessionUri, TurnId, new_id,
};
pub use output::{
    DEFAULT_ANSWER_BYTES, DEFAULT_TOOL_CALL_UPDATES, DEFAULT_TOOL_CALLS, DEFAULT_TOOL_OUTPUT_BYTES,
    DEFAULT_TOOL_RESULT_BYTES, Dropped, OutputLimit, OutputLimits, TOOL_TITLE_BYTES,
    TRUNCATED_MARK, append_bounded, clip_text, cut_mark, size as readable_size,
};
pub use parts::PartIndex;
pub use scope::{ScopeTurn, ScopeUnavailable, Scopes};
pub use state::{
    Action, ChatListing, ChatState, Envelope, Mirror, ROOT_URI, ResourceState, ResourceUri,
    SequenceGap, SessionState, Snapshot, reduce, reduce_chat, reduce_chat_indexed, reduce_session,
};
pub use tool::{
    ApplyOutput, LENT_CHAT_VARIABLE, ProposalDraft, StagedProposal, ToolCallContext,
    ToolCallOutcome, ToolDescription, ToolHandler, ToolOutput, ToolReach, Toolbox,
};
pub use tool_call::{ToolCallContent, ToolCallPatch, ToolKind, ToolLocation};
pub use turn::{
    Attachment, ContextReference, Cost, PERMISSION_BY_POLICY, PERMISSION_CANCELLED,
    PERMISSION_EXPIRED, PermissionOption, PermissionOptionKind, PlanEntry, PlanStatus,
    ResponsePart, StopReason, Timestamp, ToolCallPart, ToolCallStatus, ToolResult, Turn, Usage,
    UserMessage, now,
};
pub use typed_tool::{TypedTool, arguments_schema, parse_arguments};
pub use untrusted::{REDACTED, escape_controls, escape_controls_inline, redact_userinfo};
