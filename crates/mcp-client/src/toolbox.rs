//! The MCP servers' tools as a toolbox: naming, the approval decision, the call, the
//! audit trail.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use futures::future::join_all;
use hearth_config::McpServerConfig;
use hearth_core::{PermissionOptionKind, ToolCallContext, ToolCallOutcome, ToolDescription};
use hearth_fetch::FetchPolicy;
use hearth_tools::{
    Actor, AuditEntry, AuditKind, AuditLog, AuditOutcome, Decision, PermissionQuestion,
    PermissionReply, canonical_json, permission_asker, sha256_hex, tool_call_options_for_chat,
};
use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use crate::error::McpError;
use crate::render::render_result;
use crate::runtime::McpRuntime;
use crate::server::{Server, ServerReport, ToolReport};
use crate::spec::ServerSpec;

/// Between a server's name and its tool's in the names models see.
pub const SEPARATOR: &str = "__";

/// Why a call ran without asking, or that the user allowed it.
#[derive(Clone, Copy, Debug)]
enum Approval {
    ReadOnly,
    AllowList,
    User,
    /// The user allowed the tool for the rest of the chat earlier.
    Chat,
}

impl Approval {
    fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::AllowList => "allow-list",
            Self::User => "user",
            Self::Chat => "allowed-for-chat",
        }
    }
}

struct Inner {
    servers: Vec<Arc<Server>>,
    /// The tools (chat URI, tool name) the user allowed for the rest of a chat.
    allowed_for_chat: std::sync::Mutex<std::collections::HashSet<(String, String)>>,
    problems: Vec<McpError>,
    runtime: OnceLock<Result<McpRuntime, String>>,
}

/// The configured MCP servers and their tools. Cheap to clone.
#[derive(Clone)]
pub struct McpTools {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self
            .inner
            .servers
            .iter()
            .map(|server| server.spec.name.as_str())
            .collect();
        f.debug_struct("McpTools")
            .field("servers", &names)
            .finish_non_exhaustive()
    }
}

fn error_outcome(content: String) -> ToolCallOutcome {
    ToolCallOutcome {
        content,
        is_error: true,
        proposal: None,
    }
}

impl McpTools {
    /// The servers of `[mcp_servers]`; HTTP servers not marked local are checked against
    /// `policy`. Servers that cannot be used are left out and reported by
    /// [`McpTools::problems`].
    pub fn from_config(config: &BTreeMap<String, McpServerConfig>, policy: FetchPolicy) -> Self {
        let mut servers = Vec::new();
        let mut problems = Vec::new();
        for (name, server) in config {
            match ServerSpec::from_config(name, server) {
                Ok(spec) => servers.push(Arc::new(Server::new(spec, policy.clone()))),
                Err(error) => problems.push(error),
            }
        }
        Self {
            inner: Arc::new(Inner {
                servers,
                allowed_for_chat: std::sync::Mutex::default(),
                problems,
                runtime: OnceLock::new(),
            }),
        }
    }

    /// Configuration problems.
    pub fn problems(&self) -> &[McpError] {
        &self.inner.problems
    }

    /// Whether any server is configured.
    pub fn is_empty(&self) -> bool {
        self.inner.servers.is_empty()
    }

    fn runtime(&self) -> Result<&McpRuntime, McpError> {
        self.inner
            .runtime
            .get_or_init(|| McpRuntime::start().map_err(|error| error.to_string()))
            .as_ref()
            .map_err(|message| McpError::Start {
                server: "(all)".to_owned(),
                message: message.clone(),
            })
    }

    fn server(&self, name: &str) -> Option<&Arc<Server>> {
        self.inner
            .servers
            .iter()
            .find(|server| server.spec.name == name)
    }

    /// Whether `name` is a tool of one of the servers (`<server>__<tool>`).
    pub fn owns(&self, name: &str) -> bool {
        name.split_once(SEPARATOR)
            .is_some_and(|(server, _)| self.server(server).is_some())
    }

    /// Starts every enabled server that is not running (those whose start failed
    /// shortly before only when `retry_failed`), all at once.
    async fn start_servers(&self, retry_failed: bool) {
        let wanted: Vec<Arc<Server>> = self
            .inner
            .servers
            .iter()
            .filter(|server| {
                if retry_failed {
                    server.spec.enabled
                } else {
                    server.wants_start_for_listing()
                }
            })
            .cloned()
            .collect();
        if wanted.is_empty() {
            return;
        }
        let Ok(runtime) = self.runtime() else {
            return;
        };
        let started = runtime
            .run(async move {
                join_all(wanted.iter().map(|server| async move {
                    match server.connection().await {
                        // Listings for the agent have nobody to show the status to.
                        Err(error) if !retry_failed => tracing::warn!("{error}"),
                        Err(error) => tracing::debug!("{error}"),
                        Ok(_) => {}
                    }
                }))
                .await;
            })
            .await;
        if let Err(error) = started {
            tracing::warn!("{error}");
        }
    }

    /// Every server with its status and tools, starting those not running.
    pub async fn reports(&self) -> Vec<ServerReport> {
        self.start_servers(true).await;
        self.inner
            .servers
            .iter()
            .map(|server| server.report())
            .collect()
    }

    /// The tools offered to models. The first listing starts the servers (and waits
    /// for them, up to each one's startup time limit).
    pub fn descriptions(&self) -> Vec<ToolDescription> {
        let wants_start = self
            .inner
            .servers
            .iter()
            .any(|server| server.wants_start_for_listing());
        if wants_start && let Ok(runtime) = self.runtime() {
            let this = self.clone();
            if let Err(error) = runtime.block_on(async move { this.start_servers(false).await }) {
                tracing::warn!("{error}");
            }
        }
        let mut descriptions = Vec::new();
        for server in &self.inner.servers {
            if !server.spec.enabled {
                continue;
            }
            for tool in server.tools() {
                if let Some(why) = &tool.unavailable {
                    tracing::warn!(
                        "MCP tool `{}` of server `{}` is not offered: {why}",
                        tool.name,
                        server.spec.name
                    );
                    continue;
                }
                descriptions.push(describe(&server.spec.name, &tool));
            }
        }
        descriptions
    }

    /// Calls `<server>__<tool>` for the agent of `call.chat`: checks the arguments, asks
    /// the user unless the tool is read-only or allowed, runs it, and records the call
    /// (and the answer) in `audit`. Never fails: problems come back as error outcomes.
    pub async fn call(
        &self,
        call: &ToolCallContext,
        name: &str,
        arguments: Value,
        audit: Option<&AuditLog>,
    ) -> ToolCallOutcome {
        let arguments = if arguments.is_null() {
            json!({})
        } else {
            arguments
        };
        let recorder = Recorder {
            audit,
            call,
            name,
            arguments: &arguments,
        };
        let (server, tool, object) = match self.prepare(name, &arguments).await {
            Ok(prepared) => prepared,
            Err(message) => return recorder.denied(message).await,
        };
        let approval = match self.approval(&recorder, &server, &tool).await {
            Ok(approval) => approval,
            Err(message) => return recorder.denied(message).await,
        };
        let result = self.run_tool(&server, &tool, object).await;
        recorder.ran(approval, result).await
    }

    /// Why the call may run: the tool is read-only, allowed, or the user said yes; the
    /// message the model gets when the user did not.
    async fn approval(
        &self,
        recorder: &Recorder<'_>,
        server: &Server,
        tool: &ToolReport,
    ) -> Result<Approval, String> {
        if tool.read_only {
            Ok(Approval::ReadOnly)
        } else if tool.allowed {
            Ok(Approval::AllowList)
        } else {
            self.ask(recorder, &server.spec.name, tool).await
        }
    }

    /// Runs the tool on the MCP runtime.
    async fn run_tool(
        &self,
        server: &Arc<Server>,
        tool: &ToolReport,
        object: Map<String, Value>,
    ) -> Result<CallToolResult, McpError> {
        let runtime = self.runtime()?;
        let server = Arc::clone(server);
        let tool_name = tool.name.clone();
        runtime
            .run(async move { server.call(&tool_name, object).await })
            .await
            .and_then(|result| result)
    }

    /// The server, the tool and the arguments object of a call, or the message the
    /// model gets instead.
    async fn prepare(
        &self,
        name: &str,
        arguments: &Value,
    ) -> Result<(Arc<Server>, ToolReport, Map<String, Value>), String> {
        let Some((server_name, tool_name)) = name.split_once(SEPARATOR) else {
            return Err(format!("no such tool `{name}`"));
        };
        let Some(server) = self.server(server_name) else {
            return Err(format!("no MCP server `{server_name}` is configured"));
        };
        if !server.spec.enabled {
            return Err(format!(
                "the MCP server `{server_name}` is disabled in the configuration"
            ));
        }
        let runtime = self.runtime().map_err(|error| error.to_string())?;
        let started = {
            let server = Arc::clone(server);
            runtime
                .run(async move { server.connection().await.map(|_| ()) })
                .await
                .and_then(|result| result)
        };
        started.map_err(|error| format!("`{name}` is unavailable: {error}"))?;
        let tools = server.tools();
        let Some(tool) = tools.iter().find(|tool| tool.name == tool_name) else {
            let names: Vec<String> = tools
                .iter()
                .filter(|tool| tool.unavailable.is_none())
                .map(|tool| format!("{server_name}{SEPARATOR}{}", tool.name))
                .collect();
            return Err(format!(
                "the MCP server `{server_name}` has no tool `{tool_name}`; its tools are: {}",
                names.join(", ")
            ));
        };
        if let Some(why) = &tool.unavailable {
            return Err(format!("`{name}` is unavailable: {why}"));
        }
        let Value::Object(object) = arguments else {
            return Err(format!(
                "invalid arguments for `{name}`: they must be a JSON object"
            ));
        };
        let violations = hearth_schema::validate(&tool.schema, arguments);
        if !violations.is_empty() {
            let listed: Vec<String> = violations.iter().map(ToString::to_string).collect();
            return Err(format!(
                "invalid arguments for `{name}`: {}. Call `{name}` again with arguments that match its parameters.",
                listed.join("; ")
            ));
        }
        Ok((Arc::clone(server), tool.clone(), object.clone()))
    }

    fn allowed_for_chat(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashSet<(String, String)>> {
        self.inner
            .allowed_for_chat
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Puts the call to the user through the running turn; `Err` with the model's
    /// message when nobody can answer or the user refused.
    async fn ask(
        &self,
        recorder: &Recorder<'_>,
        server: &str,
        tool: &ToolReport,
    ) -> Result<Approval, String> {
        let name = recorder.name;
        let granted = (recorder.call.chat.to_string(), name.to_owned());
        if self.allowed_for_chat().contains(&granted) {
            return Ok(Approval::Chat);
        }
        let Some(asker) = permission_asker() else {
            return Err(format!(
                "`{name}` was not run: it may change things, so it needs the user's permission, and nobody can answer here. \
                 The user can allow it without asking by adding \"{tool}\" to `allow` in [mcp_servers.{server}] of Hearth's config.toml, \
                 or run the request in `hearth chat` to answer it there",
                tool = tool.name
            ));
        };
        let canonical = canonical_json(recorder.arguments);
        let hash = sha256_hex(canonical.as_bytes());
        let question = PermissionQuestion {
            title: format!(
                "Run MCP tool `{name}` with arguments {canonical} (sha256 {})",
                &hash[..16]
            ),
            options: tool_call_options_for_chat(),
        };
        let reply = asker.ask(recorder.call, question).await;
        // The arguments that run are the ones shown: check the binding before running.
        let unchanged = sha256_hex(canonical_json(recorder.arguments).as_bytes()) == hash;
        match reply {
            Some(reply) => {
                recorder.permission(&reply, &hash).await;
                if reply.allows() && unchanged {
                    if reply.kind == Some(PermissionOptionKind::AllowAlways) {
                        self.allowed_for_chat().insert(granted);
                    }
                    Ok(Approval::User)
                } else if reply.by_policy() {
                    Err(format!(
                        "`{name}` was not run: it may change things, so it needs the user's permission, and nobody could be asked (no terminal, nobody answering). \
                         The user can allow it without asking by adding \"{tool}\" to `allow` in [mcp_servers.{server}] of Hearth's config.toml",
                        tool = tool.name
                    ))
                } else {
                    Err(format!(
                        "The user refused to run `{name}` with these arguments; nothing was run. Do not call it again with the same arguments unless the user asks."
                    ))
                }
            }
            None => Err(format!(
                "`{name}` was not run: the permission request ended without an answer"
            )),
        }
    }

    /// Ends every server's connection (and stdio servers' processes).
    pub async fn shutdown(&self) {
        let Some(Ok(runtime)) = self.inner.runtime.get() else {
            return;
        };
        let servers = self.inner.servers.clone();
        let ended = runtime
            .run(async move {
                for server in &servers {
                    server.shutdown().await;
                }
            })
            .await;
        if let Err(error) = ended {
            tracing::debug!("{error}");
        }
    }
}

impl ServerReport {
    /// The tools of this server offered to models, as the agent sees them (none when
    /// the server is disabled or could not be started).
    pub fn offered_tools(&self) -> Vec<ToolDescription> {
        if matches!(self.status, crate::ServerStatus::Disabled) {
            return Vec::new();
        }
        self.tools
            .iter()
            .filter(|tool| tool.unavailable.is_none())
            .map(|tool| describe(&self.name, tool))
            .collect()
    }
}

fn describe(server: &str, tool: &ToolReport) -> ToolDescription {
    let note = if tool.read_only || tool.allowed {
        ""
    } else {
        " (Hearth asks the user before it runs.)"
    };
    ToolDescription {
        name: format!("{server}{SEPARATOR}{}", tool.name),
        description: format!("[MCP server `{server}`] {}{note}", tool.description),
        parameters: tool.schema.clone(),
        // `mutates` means "only stages a proposal"; an MCP tool runs once allowed.
        mutates: false,
    }
}

/// Writes a call's audit entries.
struct Recorder<'a> {
    audit: Option<&'a AuditLog>,
    call: &'a ToolCallContext,
    name: &'a str,
    arguments: &'a Value,
}

impl Recorder<'_> {
    async fn append(&self, entry: AuditEntry) {
        if let Some(audit) = self.audit
            && let Err(error) = audit.append(entry).await
        {
            tracing::error!("could not write to the audit log: {error}");
        }
    }

    async fn tool_call(
        &self,
        decision: Decision,
        approval: Option<Approval>,
        outcome: AuditOutcome,
    ) {
        let entry = AuditEntry::new(
            Actor::Agent(self.call.chat.clone()),
            AuditKind::ToolCall,
            decision,
            outcome,
        )
        .tool(self.name)
        .arguments(self.arguments)
        .detail(json!({
            "mcp": true,
            "approval": approval.map(Approval::as_str),
            "session": self.call.session.to_string(),
            "turn_id": self.call.turn_id.as_str(),
            "call_id": self.call.call_id,
            "arguments": self.arguments,
        }));
        self.append(entry).await;
    }

    /// Records a call that was not run and returns the model's error outcome.
    async fn denied(&self, message: String) -> ToolCallOutcome {
        self.tool_call(Decision::Denied, None, AuditOutcome::error(&message))
            .await;
        error_outcome(message)
    }

    /// Records how a call that was approved ended and returns what the model gets.
    async fn ran(
        &self,
        approval: Approval,
        result: Result<CallToolResult, McpError>,
    ) -> ToolCallOutcome {
        match result {
            Ok(result) => {
                let (content, is_error) = render_result(&result);
                let outcome = if is_error {
                    AuditOutcome::error(content.chars().take(500).collect::<String>())
                } else {
                    AuditOutcome::ok()
                };
                self.tool_call(Decision::Ran, Some(approval), outcome).await;
                ToolCallOutcome {
                    content,
                    is_error,
                    proposal: None,
                }
            }
            Err(error) => {
                let message = format!("`{}`: {error}", self.name);
                self.tool_call(
                    Decision::Failed,
                    Some(approval),
                    AuditOutcome::error(&message),
                )
                .await;
                error_outcome(message)
            }
        }
    }

    async fn permission(&self, reply: &PermissionReply, hash: &str) {
        let via = reply.via.as_str();
        let entry = AuditEntry::new(
            reply.actor(),
            AuditKind::Permission,
            if reply.by_policy() {
                Decision::Policy
            } else {
                Decision::Answered
            },
            AuditOutcome::ok_with(&reply.option_id),
        )
        .tool(self.name)
        .argument_hash(hash)
        .detail(json!({
            "chat": self.call.chat.to_string(),
            "call_id": self.call.call_id,
            "via": via,
        }));
        self.append(entry).await;
    }
}
