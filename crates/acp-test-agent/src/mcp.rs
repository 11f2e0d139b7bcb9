//! MCP: the client side used by `/mcp-call`, and a tiny stdio MCP server
//! (`hearth-acp-test-agent mcp-server`) that tests can hand to the agent.
//!
//! A connection spawns the server's command with the arguments and environment from
//! `session/new`; the agent owns the child and kills it when the session closes or
//! the process ends.

use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::v1::schema::{McpServerHttp, McpServerStdio};
use anyhow::Context;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};

/// How long the MCP handshake may take.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);

/// An open connection to one MCP server: a stdio one (the agent owns its process) or
/// one over streamable HTTP.
pub(crate) struct McpConnection {
    service: RunningService<RoleClient, ()>,
    child: Option<tokio::process::Child>,
}

impl McpConnection {
    /// Spawns `server` and completes the MCP handshake.
    pub(crate) async fn open(server: &McpServerStdio) -> anyhow::Result<Self> {
        let mut command = tokio::process::Command::new(&server.command);
        command
            .args(&server.args)
            .envs(
                server
                    .env
                    .iter()
                    .map(|variable| (&variable.name, &variable.value)),
            )
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {}", server.command.display()))?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            anyhow::bail!("the MCP server's stdio was not captured");
        };
        let service = tokio::time::timeout(HANDSHAKE_LIMIT, ().serve((stdout, stdin)))
            .await
            .context("the MCP handshake timed out")?
            .context("the MCP handshake failed")?;
        Ok(Self {
            service,
            child: Some(child),
        })
    }

    /// Connects to a streamable HTTP server, sending its `Authorization: Bearer` header
    /// when `session/new` gave one.
    pub(crate) async fn open_http(server: &McpServerHttp) -> anyhow::Result<Self> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(server.url.clone());
        if let Some(token) = server
            .headers
            .iter()
            .find(|header| header.name.eq_ignore_ascii_case("authorization"))
            .and_then(|header| header.value.strip_prefix("Bearer "))
        {
            config = config.auth_header(token.to_owned());
        }
        let service = tokio::time::timeout(
            HANDSHAKE_LIMIT,
            ().serve(StreamableHttpClientTransport::from_config(config)),
        )
        .await
        .context("the MCP handshake timed out")?
        .context("the MCP handshake failed")?;
        Ok(Self {
            service,
            child: None,
        })
    }

    /// Calls `tool` and renders the result as text: the text contents joined by
    /// newlines, prefixed with `tool error: ` when the server flags an error.
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> anyhow::Result<String> {
        let result = self
            .service
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await
            .with_context(|| format!("calling tool {tool}"))?;
        let text: Vec<String> = result
            .content
            .iter()
            .map(|block| match block.as_text() {
                Some(text) => text.text.clone(),
                None => serde_json::to_string(block).unwrap_or_default(),
            })
            .collect();
        let text = text.join("\n");
        Ok(if result.is_error == Some(true) {
            format!("tool error: {text}")
        } else {
            text
        })
    }

    /// Ends the connection and kills the server process.
    pub(crate) async fn shutdown(mut self) {
        if let Err(error) = self.service.cancel().await {
            tracing::debug!(%error, "the MCP client task ended badly");
        }
        if let Some(mut child) = self.child.take()
            && let Err(error) = child.kill().await
        {
            tracing::debug!(%error, "killing the MCP server failed (it may have exited)");
        }
    }
}

/// The tools of the test MCP server.
#[derive(Clone)]
struct TestTools;

impl TestTools {
    fn tools() -> Vec<Tool> {
        let echo = json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        });
        let env = json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        });
        [
            ("echo", "Returns `text` unchanged.", echo),
            (
                "env",
                "Returns the value of environment variable `name`.",
                env,
            ),
        ]
        .into_iter()
        .map(|(name, description, schema)| {
            let schema = match schema {
                Value::Object(schema) => schema,
                _ => Map::new(),
            };
            Tool::new(name, description, Arc::new(schema))
        })
        .collect()
    }
}

impl ServerHandler for TestTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(
            Implementation::new("hearth-acp-test-agent-mcp", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(Self::tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let argument = |name: &str| {
            arguments
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ErrorData::invalid_params(format!("`{name}` is required"), None))
        };
        let text = match request.name.as_ref() {
            "echo" => argument("text")?,
            "env" => std::env::var(argument("name")?).unwrap_or_else(|_| "(unset)".to_owned()),
            other => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "no tool {other}"
                ))])
                .into());
            }
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// Serves the test MCP server on stdin/stdout until the client leaves.
pub(crate) async fn serve_test_server() -> anyhow::Result<()> {
    let running = TestTools
        .serve(rmcp::transport::io::stdio())
        .await
        .context("starting the test MCP server")?;
    running.waiting().await.context("serving MCP")?;
    Ok(())
}
