//! The tool seam: what every tool an agent can call looks like.
//!
//! A read tool runs when called. A mutating tool never writes when an agent calls it:
//! [`ToolHandler::execute`] only returns a [`ToolOutput::Staged`] draft, which the
//! approval gate records as a proposal; [`ToolHandler::apply`] is called by the gate,
//! and only after the user approved the exact payload.

use std::path::PathBuf;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::Scope;
use crate::error::ToolError;
use crate::ids::{ChatUri, ProposalId, SessionUri, TurnId};

/// The variable that names the Hearth chat an external agent's lent tools (`hearth mcp
/// --stdio`) work for: set for each session Hearth lends its tools to, so what those
/// tools stage and audit names the chat that asked.
pub const LENT_CHAT_VARIABLE: &str = "HEARTH_LENT_CHAT";

/// Who is calling a tool, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCallContext {
    /// The session.
    pub session: SessionUri,
    /// The calling chat.
    pub chat: ChatUri,
    /// The turn.
    pub turn_id: TurnId,
    /// The model's call id.
    pub call_id: String,
    /// The session's scope.
    pub scope: Scope,
    /// The session's working directories.
    pub working_directories: Vec<PathBuf>,
}

/// A change a mutating tool wants to make, awaiting the user's approval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProposalDraft {
    /// One line a human reads ("Create event 'Dentist' on 2026-12-03 09:00").
    pub summary: String,
    /// Before/after of what changes, human-readable.
    pub diff: String,
    /// Everything `apply` needs, as JSON; the approval binds to its canonical hash.
    pub payload: Value,
}

/// What a tool call returns to the agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolOutput {
    /// A read tool's answer.
    Content {
        /// Text for the model.
        text: String,
        /// Structured data for UIs, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// A mutating tool's staged change.
    Staged(ProposalDraft),
}

impl ToolOutput {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Content {
            text: text.into(),
            data: None,
        }
    }
}

/// What applying an approved change did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyOutput {
    /// One line about what was written.
    pub summary: String,
}

/// Where a tool's call reaches, for the data-flow guard: once a chat has read the
/// user's private data, a call that sends a request to the network goes only where the
/// user named, or asks first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolReach {
    /// Neither reads the user's private data nor sends anything out (the calendar's
    /// staging tools: what they do waits for the user's approval anyway).
    #[default]
    Local,
    /// Reads the user's private data into the conversation: files, calendars, what an
    /// MCP server answers.
    Private,
    /// Sends a request to the URL in the named argument.
    Network {
        /// The argument holding the URL.
        url_argument: &'static str,
    },
}

/// A tool an agent can call.
pub trait ToolHandler: Send + Sync + 'static {
    /// Unique name (`snake_case`), as the model sees it.
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// JSON Schema of the arguments object.
    fn parameters(&self) -> Value;

    /// Whether calling the tool changes anything outside Hearth. Mutating tools only
    /// stage proposals.
    fn mutates(&self) -> bool;

    /// Where its calls reach (see [`ToolReach`]).
    fn reach(&self) -> ToolReach {
        ToolReach::Local
    }

    /// Runs a read tool, or stages a mutating tool's change (returning
    /// [`ToolOutput::Staged`]). Must not write anything for a mutating tool.
    fn execute<'a>(
        &'a self,
        call: &'a ToolCallContext,
        arguments: Value,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

    /// Applies an approved payload. Called only by the approval gate.
    fn apply<'a>(&'a self, _payload: &'a Value) -> BoxFuture<'a, Result<ApplyOutput, ToolError>> {
        let name = self.name().to_owned();
        Box::pin(async move {
            Err(ToolError::Unsupported(format!(
                "`{name}` does not apply changes"
            )))
        })
    }
}

/// What an agent sees of a tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDescription {
    /// Name, as the model calls it.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// Whether calling it only stages a proposal.
    pub mutates: bool,
}

impl ToolDescription {
    /// The description of a tool handler.
    pub fn of(handler: &dyn ToolHandler) -> Self {
        Self {
            name: handler.name().to_owned(),
            description: handler.description().to_owned(),
            parameters: handler.parameters(),
            mutates: handler.mutates(),
        }
    }
}

/// A change a tool call staged for the user's approval.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StagedProposal {
    /// The proposal.
    pub id: ProposalId,
    /// What it would do.
    pub summary: String,
}

/// What a tool call gave back, ready for the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallOutcome {
    /// Text for the model (a result, an error it can act on, or the staged proposal).
    pub content: String,
    /// Whether `content` describes an error.
    pub is_error: bool,
    /// The proposal the call staged, if it was a mutating tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<StagedProposal>,
}

/// The tools an agent may call and the gate between them and the world: read tools run,
/// mutating tools only stage proposals, every call is recorded. Agents get one of these
/// and never a tool handler directly.
pub trait Toolbox: Send + Sync + 'static {
    /// The tools on offer.
    fn tools(&self) -> Vec<ToolDescription>;

    /// The tools on offer in `session`: [`Toolbox::tools`] plus any that belong to that
    /// session alone (the MCP servers an editor passed with an ACP session). Agents list
    /// a chat's tools through this.
    fn tools_in(&self, _session: &SessionUri) -> Vec<ToolDescription> {
        self.tools()
    }

    /// Where the tool called `name` reaches (see [`ToolReach`]).
    fn reach(&self, _name: &str) -> ToolReach {
        ToolReach::Local
    }

    /// Calls a tool by name. Never fails: unknown tools, invalid arguments and tool
    /// failures come back as an error outcome the model can act on.
    fn call<'a>(
        &'a self,
        call: &'a ToolCallContext,
        name: &'a str,
        arguments: Value,
    ) -> BoxFuture<'a, ToolCallOutcome>;
}
