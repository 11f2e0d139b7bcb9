//! The MCP endpoint: Hearth's tools lent to other agents over the Model Context
//! Protocol, as streamable HTTP at `/mcp` (behind the same token, Host and Origin checks
//! as everything else, plus rmcp's own `allowed_hosts`/`allowed_origins`) and over stdio
//! (`hearth mcp --stdio`).
//!
//! Calls go through the [`Toolbox`], which is the approval gate: read tools run, and
//! mutating tools only stage proposals that the user approves in Hearth. Each MCP
//! session is recorded as its own Hearth session id under the `mcp` provider, so its
//! proposals and audit entries say where they came from.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use hearth_core::{
    ChatUri, HarnessId, Scope, SessionId, SessionUri, ToolCallContext, ToolDescription, Toolbox,
    TurnId, new_id,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::error::{Result, ServerError};

/// The provider id MCP sessions are recorded under.
pub const MCP_PROVIDER: &str = "mcp";

/// One MCP session's view of Hearth's tools.
#[derive(Clone)]
pub struct McpTools {
    toolbox: Arc<dyn Toolbox>,
    session: SessionUri,
    chat: ChatUri,
    working_directories: Vec<PathBuf>,
}

impl McpTools {
    /// A fresh MCP session over a toolbox.
    pub fn new(toolbox: Arc<dyn Toolbox>) -> Result<Self> {
        let provider =
            HarnessId::parse(MCP_PROVIDER).map_err(|error| ServerError::Mcp(error.to_string()))?;
        let session = SessionUri::new(provider, SessionId::generate());
        Ok(Self {
            toolbox,
            chat: ChatUri::default_for(&session),
            session,
            working_directories: std::env::current_dir().into_iter().collect(),
        })
    }

    /// An MCP session that works for a Hearth chat (an external agent's, whose session
    /// Hearth lent its tools to): its calls are that chat's.
    pub fn for_chat(toolbox: Arc<dyn Toolbox>, chat: ChatUri) -> Self {
        Self {
            toolbox,
            session: chat.session(),
            chat,
            working_directories: std::env::current_dir().into_iter().collect(),
        }
    }

    fn call_context(&self) -> ToolCallContext {
        ToolCallContext {
            session: self.session.clone(),
            chat: self.chat.clone(),
            turn_id: TurnId::generate(),
            call_id: new_id(),
            scope: Scope::Global,
            working_directories: self.working_directories.clone(),
        }
    }
}

fn mcp_tool(description: ToolDescription) -> Tool {
    let schema = match description.parameters {
        Value::Object(schema) => schema,
        _ => {
            let mut schema = Map::new();
            schema.insert("type".into(), json!("object"));
            schema
        }
    };
    let text = if description.mutates {
        format!(
            "{} (Staging only: the change waits for the user's approval in Hearth.)",
            description.description
        )
    } else {
        description.description
    };
    Tool::new(description.name, text, Arc::new(schema)).with_annotations(
        ToolAnnotations::new()
            .read_only(!description.mutates)
            .destructive(false)
            .open_world(false),
    )
}

impl ServerHandler for McpTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("hearth", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Hearth's tools. Read tools answer at once; tools that change anything only \
                 stage a proposal, which the user approves or rejects in Hearth.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        let tools = self.toolbox.tools().into_iter().map(mcp_tool).collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let context = self.call_context();
        let outcome = self.toolbox.call(&context, &request.name, arguments).await;
        let mut result = if outcome.is_error {
            CallToolResult::error(vec![ContentBlock::text(outcome.content)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(outcome.content)])
        };
        if let Some(proposal) = outcome.proposal {
            result.structured_content = Some(json!({
                "proposalId": proposal.id.to_string(),
                "summary": proposal.summary,
                "status": "pending",
            }));
        }
        Ok(result.into())
    }
}

/// The streamable HTTP service for `/mcp`, with rmcp's DNS-rebinding and Origin checks
/// set to the server's exact allowlists.
pub(crate) fn http_service(
    toolbox: Arc<dyn Toolbox>,
    hosts: &[String],
    origins: &[String],
    max_request_bytes: usize,
    cancel: CancellationToken,
) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.iter().cloned())
        .with_allowed_origins(origins.iter().cloned())
        .enforce_origin_validation()
        .with_max_request_body_bytes(max_request_bytes)
        .with_cancellation_token(cancel);
    let service: StreamableHttpService<McpTools, LocalSessionManager> = StreamableHttpService::new(
        move || McpTools::new(Arc::clone(&toolbox)).map_err(std::io::Error::other),
        Arc::default(),
        config,
    );
    Router::new().fallback_service(service)
}

/// Serves MCP on this process's stdin and stdout until the client leaves.
pub async fn serve_mcp_stdio(toolbox: Arc<dyn Toolbox>, chat: Option<ChatUri>) -> Result<()> {
    let tools = match chat {
        Some(chat) => McpTools::for_chat(toolbox, chat),
        None => McpTools::new(toolbox)?,
    };
    let running = match tools.serve(rmcp::transport::io::stdio()).await {
        Ok(running) => running,
        // The client closed stdin before it asked anything: nothing to serve, nothing
        // failed (`hearth mcp --stdio < /dev/null`).
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(error) => return Err(ServerError::Mcp(error.to_string())),
    };
    running
        .waiting()
        .await
        .map_err(|error| ServerError::Mcp(error.to_string()))?;
    Ok(())
}
