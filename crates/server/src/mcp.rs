//! The MCP endpoint: Hearth's tools lent to other agents over the Model Context
//! Protocol, as streamable HTTP at `/mcp` (behind the same token, Host and Origin checks
//! as everything else, plus rmcp's own `allowed_hosts`/`allowed_origins`) and over stdio
//! (`hearth mcp --stdio`).
//!
//! Calls go through the [`Toolbox`], which is the approval gate: read tools run, and
//! mutating tools only stage proposals that the user approves in Hearth. Each MCP
//! session is recorded as its own Hearth session id under the `mcp` provider, so its
//! proposals and audit entries say where they came from.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

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
    /// On the lent-tools endpoint: the chats by their tokens; each call is the chat of
    /// the token it carries.
    lent: Option<LentChats>,
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
            lent: None,
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
            lent: None,
        }
    }

    /// An MCP session whose calls are `session`'s (a team server user's), working in
    /// `working_directories`.
    pub(crate) fn for_session(
        toolbox: Arc<dyn Toolbox>,
        session: SessionUri,
        working_directories: Vec<PathBuf>,
    ) -> Self {
        Self {
            toolbox,
            chat: ChatUri::default_for(&session),
            session,
            working_directories,
            lent: None,
        }
    }

    /// The context of a call: on the lent-tools endpoint, the chat whose token the
    /// request carries (`None` when it carries none that is known).
    fn call_context_for(&self, context: &RequestContext<RoleServer>) -> Option<ToolCallContext> {
        let Some(lent) = &self.lent else {
            return Some(self.call_context());
        };
        let parts = context.extensions.get::<axum::http::request::Parts>()?;
        let token = bearer(&parts.headers)?;
        let chat = lent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(token)
            .cloned()?;
        Some(ToolCallContext {
            session: chat.session(),
            chat,
            turn_id: TurnId::generate(),
            call_id: new_id(),
            scope: Scope::Global,
            working_directories: self.working_directories.clone(),
        })
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
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let Some(context) = self.call_context_for(&context) else {
            return Err(ErrorData::invalid_request(
                "this request carries no token of a Hearth chat",
                None,
            ));
        };
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
    users: Option<crate::mcp_users::McpUsers>,
) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.iter().cloned())
        .with_allowed_origins(origins.iter().cloned())
        .enforce_origin_validation()
        .with_max_request_body_bytes(max_request_bytes)
        // No SSE priming events: Gemini CLI's MCP client drops a connection that
        // sends one (see `LentEndpoint::start`).
        .with_sse_retry(None)
        .with_cancellation_token(cancel);
    let operator_tools = Arc::clone(&toolbox);
    let operator = crate::mcp_users::service(config.clone(), move || {
        McpTools::new(Arc::clone(&operator_tools)).map_err(std::io::Error::other)
    });
    match users {
        Some(users) => crate::mcp_users::router(operator, toolbox, config, users),
        None => Router::new().fallback_service(operator),
    }
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

/// The chats of the lent-tools endpoint, by their tokens.
type LentChats = Arc<Mutex<HashMap<String, ChatUri>>>;

/// The token of a `Bearer` authorization header.
fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// Hearth's tools lent to external agents' sessions over one loopback HTTP endpoint for
/// the whole process, instead of a `hearth mcp --stdio` process per session. Each chat
/// gets a token of its own ([`LentEndpoint::token_for`]); a request without a known
/// token is refused before it reaches the tools, and what a call stages or records is
/// the chat of its token.
#[derive(Clone)]
pub struct LentEndpoint {
    url: String,
    chats: LentChats,
}

impl std::fmt::Debug for LentEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LentEndpoint")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl LentEndpoint {
    /// Starts the endpoint on 127.0.0.1 (a port of the system's choosing) on the current
    /// runtime; it serves until `cancel`.
    pub fn start(toolbox: Arc<dyn Toolbox>, cancel: CancellationToken) -> Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
            .map_err(|error| ServerError::Mcp(format!("lending Hearth's tools: {error}")))?;
        let port = listener
            .local_addr()
            .map_err(|error| ServerError::Mcp(error.to_string()))?
            .port();
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|error| ServerError::Mcp(format!("lending Hearth's tools: {error}")))?;
        let chats: LentChats = Arc::default();
        // No SSE priming events (an event with an empty `data:` and a `retry:`, for
        // reconnecting), here or in the sessions' streams: Gemini CLI's MCP client
        // (0.61.0) parses every event's data as JSON, fails on the empty one and drops
        // the connection, so the agent never sees the tools.
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts([format!("127.0.0.1:{port}"), "127.0.0.1".to_owned()])
            .with_sse_retry(None)
            .with_cancellation_token(cancel.clone());
        let tools = {
            let chats = Arc::clone(&chats);
            move || {
                let mut tools =
                    McpTools::new(Arc::clone(&toolbox)).map_err(std::io::Error::other)?;
                tools.lent = Some(Arc::clone(&chats));
                Ok(tools)
            }
        };
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.sse_retry = None;
        let service: StreamableHttpService<McpTools, LocalSessionManager> =
            StreamableHttpService::new(tools, Arc::new(sessions), config);
        let known = Arc::clone(&chats);
        let router = Router::new()
            .fallback_service(service)
            .layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    let known = Arc::clone(&known);
                    async move {
                        let allowed = bearer(request.headers()).is_some_and(|token| {
                            known
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .contains_key(token)
                        });
                        if allowed {
                            next.run(request).await
                        } else {
                            axum::response::IntoResponse::into_response(
                                axum::http::StatusCode::UNAUTHORIZED,
                            )
                        }
                    }
                },
            ));
        tokio::spawn(async move {
            let served = axum::serve(listener, router)
                .with_graceful_shutdown(async move { cancel.cancelled().await })
                .await;
            if let Err(error) = served {
                tracing::warn!(%error, "the lent-tools endpoint stopped");
            }
        });
        Ok(Self {
            url: format!("http://127.0.0.1:{port}/mcp"),
            chats,
        })
    }

    /// Its URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The token of `chat` (made on first use): the header value
    /// `Authorization: Bearer <token>` a session of that chat sends.
    pub fn token_for(&self, chat: &ChatUri) -> Result<String> {
        let mut chats = self.chats.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((token, _)) = chats.iter().find(|(_, known)| *known == chat) {
            return Ok(token.clone());
        }
        let token = crate::token::Secret::generate()?.expose().to_owned();
        chats.insert(token.clone(), chat.clone());
        Ok(token)
    }

    /// Forgets a chat's token: its sessions can no longer call the tools.
    pub fn revoke(&self, chat: &ChatUri) {
        self.chats
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|_, known| known != chat);
    }
}
