//! One MCP server: its connection (started on first use, restarted after a failure),
//! its tools, and calls with a time limit.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hearth_fetch::FetchPolicy;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};

use hearth_process::{ChildEnv, Launch, Process, StderrTail, spawn_failure};

use crate::error::{McpError, Result};
use crate::spec::{ServerSpec, Transport};
use hearth_schema::schema_problem;

/// A failed start is not retried for a listing before this long (calls retry at once).
const LISTING_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Where a server stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerStatus {
    /// Turned off in the configuration.
    Disabled,
    /// Not started yet (servers start on first use).
    NotStarted,
    /// Connected.
    Running,
    /// The last start or call failed; the next use starts it again.
    Failed(String),
}

impl ServerStatus {
    /// One word or phrase for listings.
    pub fn label(&self) -> String {
        match self {
            Self::Disabled => "disabled".to_owned(),
            Self::NotStarted => "not started".to_owned(),
            Self::Running => "running".to_owned(),
            Self::Failed(message) => format!("failed: {message}"),
        }
    }
}

/// One tool of a server, as offered.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolReport {
    /// The server's name for it.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its input schema.
    pub schema: Value,
    /// Whether it runs without asking as a read: annotated `readOnlyHint: true` and not
    /// `destructiveHint: true` (a tool that claims both is taken at its worst word).
    pub read_only: bool,
    /// Whether the server's `allow` list names it.
    pub allowed: bool,
    /// Why it is not offered, when it is not.
    pub unavailable: Option<String>,
}

/// A server and its tools, for `hearth mcp list` and `hearth doctor`.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerReport {
    /// Its name.
    pub name: String,
    /// Its command line or URL.
    pub location: String,
    /// Its status.
    pub status: ServerStatus,
    /// Its tools, as last listed.
    pub tools: Vec<ToolReport>,
    /// The last lines a stdio server wrote to stderr (why it crashed, often).
    pub stderr: Vec<String>,
}

pub(crate) struct Connection {
    service: RunningService<RoleClient, ()>,
    peer: Peer<RoleClient>,
    /// A stdio server's process (its group is killed when the connection is dropped).
    process: Option<Process>,
}

#[derive(Default)]
struct State {
    connection: Option<Arc<Connection>>,
    /// The last stderr lines of the stdio server's process (kept after it ended).
    stderr: Option<StderrTail>,
    /// Bumped on every new connection, so a failure only drops the one it happened on.
    generation: u64,
    tools: Vec<ToolReport>,
    failure: Option<(String, Instant)>,
    started_once: bool,
}

/// One configured server.
pub(crate) struct Server {
    pub spec: ServerSpec,
    policy: FetchPolicy,
    state: Mutex<State>,
    /// One start at a time.
    starting: tokio::sync::Mutex<()>,
}

impl Server {
    pub fn new(spec: ServerSpec, policy: FetchPolicy) -> Self {
        Self {
            spec,
            policy,
            state: Mutex::new(State::default()),
            starting: tokio::sync::Mutex::new(()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn report(&self) -> ServerReport {
        let state = self.lock();
        let status = if !self.spec.enabled {
            ServerStatus::Disabled
        } else if let Some((message, _)) = &state.failure {
            ServerStatus::Failed(message.clone())
        } else if state.connection.is_some() {
            ServerStatus::Running
        } else {
            ServerStatus::NotStarted
        };
        ServerReport {
            name: self.spec.name.clone(),
            location: self.spec.location(),
            status,
            tools: state.tools.clone(),
            stderr: state
                .stderr
                .as_ref()
                .map(StderrTail::last_lines)
                .unwrap_or_default(),
        }
    }

    pub fn tools(&self) -> Vec<ToolReport> {
        self.lock().tools.clone()
    }

    /// Whether a listing should start the server now.
    pub fn wants_start_for_listing(&self) -> bool {
        let state = self.lock();
        self.spec.enabled
            && state.connection.is_none()
            && state
                .failure
                .as_ref()
                .is_none_or(|(_, at)| at.elapsed() >= LISTING_RETRY_AFTER || !state.started_once)
    }

    /// The live connection, starting the server when there is none. Runs on the MCP
    /// runtime.
    pub async fn connection(self: &Arc<Self>) -> Result<(Arc<Connection>, u64)> {
        if let Some(connection) = self.live() {
            return Ok(connection);
        }
        let _one = self.starting.lock().await;
        if let Some(connection) = self.live() {
            return Ok(connection);
        }
        let started = tokio::time::timeout(self.spec.startup_timeout, self.start()).await;
        let result = match started {
            Ok(result) => result,
            Err(_) => Err(McpError::Start {
                server: self.spec.name.clone(),
                message: format!(
                    "no answer within {} s (startup_timeout_seconds)",
                    self.spec.startup_timeout.as_secs()
                ),
            }),
        };
        let mut state = self.lock();
        state.started_once = true;
        match result {
            Ok((connection, tools)) => {
                let connection = Arc::new(connection);
                state.generation += 1;
                state.connection = Some(Arc::clone(&connection));
                state.tools = tools;
                state.failure = None;
                Ok((connection, state.generation))
            }
            Err(error) => {
                state.failure = Some((error.to_string(), Instant::now()));
                Err(error)
            }
        }
    }

    fn live(&self) -> Option<(Arc<Connection>, u64)> {
        let state = self.lock();
        let connection = state.connection.as_ref()?;
        (!connection.service.is_closed()).then(|| (Arc::clone(connection), state.generation))
    }

    /// Drops a connection that failed, so the next use starts the server again.
    fn drop_connection(&self, generation: u64, why: &str) {
        let dropped = {
            let mut state = self.lock();
            if state.generation != generation {
                return;
            }
            state.failure = Some((why.to_owned(), Instant::now()));
            state.connection.take()
        };
        if let Some(connection) = dropped {
            // Cancelling the service closes the transport, which ends a stdio server.
            connection.service.cancellation_token().cancel();
        }
    }

    /// Starts the server over its transport, shakes hands and lists its tools.
    async fn start(&self) -> Result<(Connection, Vec<ToolReport>)> {
        let (service, process) = match &self.spec.transport {
            Transport::Stdio {
                command,
                args,
                env,
                pass_env,
            } => {
                let (service, process) = self.start_stdio(command, args, env, pass_env).await?;
                (service, Some(process))
            }
            Transport::Http {
                url,
                bearer_token_env,
                headers,
                local,
            } => (
                self.start_http(url, bearer_token_env.as_deref(), headers, *local)
                    .await?,
                None,
            ),
        };
        let peer = service.peer().clone();
        let listed = peer
            .list_all_tools()
            .await
            .map_err(|error| self.start_failure(format!("listing its tools failed: {error}")))?;
        let tools = listed.iter().map(|tool| self.tool_report(tool)).collect();
        Ok((
            Connection {
                service,
                peer,
                process,
            },
            tools,
        ))
    }

    /// The error for a start that failed, naming this server.
    fn start_failure(&self, message: String) -> McpError {
        McpError::Start {
            server: self.spec.name.clone(),
            message,
        }
    }

    /// Runs a stdio server's program and shakes hands with it.
    ///
    /// The program gets a process group of its own, a minimal environment, and its stderr
    /// kept (bounded): a server that crashes on start says why.
    async fn start_stdio(
        &self,
        command: &str,
        args: &[String],
        env: &BTreeMap<String, String>,
        pass_env: &[String],
    ) -> Result<(RunningService<RoleClient, ()>, Process)> {
        let launch = Launch::new(format!("mcp server {}", self.spec.name), command)
            .args(args.iter().cloned())
            .env(
                ChildEnv::minimal()
                    .pass(pass_env.iter().cloned())
                    .set(env.clone()),
            );
        let (process, pipes) = Process::spawn(&launch).map_err(|error| {
            self.start_failure(format!("cannot run `{command}`: {}", spawn_failure(&error)))
        })?;
        self.lock().stderr = Some(process.stderr().clone());
        let Some(stdin) = pipes.stdin else {
            return Err(self.start_failure("its stdin could not be opened".to_owned()));
        };
        match ().serve((pipes.stdout, stdin)).await {
            Ok(service) => Ok((service, process)),
            Err(error) => {
                // Let the process end and its last words arrive before quoting them.
                let ended =
                    tokio::time::timeout(std::time::Duration::from_secs(2), process.exited()).await;
                if ended.is_err() {
                    process.kill();
                }
                settle_stderr(process.stderr()).await;
                Err(self.start_failure(format!(
                    "the MCP handshake failed: {error}{}",
                    process.stderr().quoted()
                )))
            }
        }
    }

    /// Connects to a streamable-HTTP server (checked by the fetcher's rules unless it is
    /// marked local) and shakes hands with it.
    async fn start_http(
        &self,
        url: &str,
        bearer_token_env: Option<&str>,
        headers: &BTreeMap<String, String>,
        local: bool,
    ) -> Result<RunningService<RoleClient, ()>> {
        if !local {
            self.check_url(url)
                .await
                .map_err(|message| self.start_failure(message))?;
        }
        let mut config = StreamableHttpClientTransportConfig::with_uri(url);
        if let Some(variable) = bearer_token_env {
            let token = std::env::var(variable).map_err(|_| {
                self.start_failure(format!(
                    "the environment variable `{variable}` (bearer_token_env) is not set"
                ))
            })?;
            config = config.auth_header(token);
        }
        if !headers.is_empty() {
            let mut custom = std::collections::HashMap::new();
            for (name, value) in headers {
                // Checked when the configuration was read (`ServerSpec::from_config`).
                let parsed = http::HeaderName::from_bytes(name.as_bytes())
                    .ok()
                    .zip(http::HeaderValue::from_str(value).ok());
                let Some((name, value)) = parsed else {
                    return Err(self.start_failure(format!(
                        "the header `{name}` cannot be sent: {}",
                        crate::spec::header_problem(name, value).unwrap_or_default()
                    )));
                };
                custom.insert(name, value);
            }
            config = config.custom_headers(custom);
        }
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .map_err(|error| self.start_failure(format!("the MCP handshake failed: {error}")))
    }

    /// The guarded fetcher's rules for the URL and every address its host resolves to.
    async fn check_url(&self, url: &str) -> std::result::Result<(), String> {
        let parsed = self.policy.check_url(url).map_err(|error| {
            format!("{error} (mark the server `local = true` if it is your own)")
        })?;
        let host = parsed.host_str().unwrap_or_default().to_owned();
        let port = parsed.port_or_known_default().unwrap_or(443);
        if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
            return Ok(());
        }
        let addresses = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|error| format!("cannot resolve `{host}`: {error}"))?;
        for address in addresses {
            if let Err(rule) = self.policy.check_address(address.ip()) {
                return Err(format!(
                    "`{host}` resolves to {}: {rule} (mark the server `local = true` if it is your own)",
                    address.ip()
                ));
            }
        }
        Ok(())
    }

    fn tool_report(&self, tool: &Tool) -> ToolReport {
        let name = tool.name.to_string();
        let schema = Value::Object((*tool.input_schema).clone());
        let qualified = format!("{}{}{name}", self.spec.name, crate::toolbox::SEPARATOR);
        let unavailable = if !valid_tool_name(&qualified) {
            Some(format!(
                "`{qualified}` is not a name models accept (1 to 64 letters, digits, `-` or `_`)"
            ))
        } else {
            schema_problem(&schema).map(|problem| format!("invalid input schema: {problem}"))
        };
        ToolReport {
            allowed: self.spec.allow.iter().any(|allowed| allowed == &name),
            read_only: tool.annotations.as_ref().is_some_and(|annotations| {
                annotations.read_only_hint == Some(true)
                    && annotations.destructive_hint != Some(true)
            }),
            description: tool
                .description
                .as_deref()
                .or(tool.title.as_deref())
                .unwrap_or("")
                .to_owned(),
            name,
            schema,
            unavailable,
        }
    }

    /// Calls `tool` with a time limit. A timeout or a broken connection drops the
    /// connection, so the next use restarts the server. Runs on the MCP runtime.
    pub async fn call(
        self: &Arc<Self>,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallToolResult> {
        let (connection, generation) = self.connection().await?;
        let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let limit = self.spec.call_timeout;
        match tokio::time::timeout(limit, connection.peer.call_tool(request)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(ServiceError::McpError(error))) => Err(McpError::Refused {
                server: self.spec.name.clone(),
                message: error.message.to_string(),
            }),
            Ok(Err(error)) => {
                let message = format!("{error}{}", connection.stderr_after_exit().await);
                self.drop_connection(generation, &message);
                Err(McpError::Connection {
                    server: self.spec.name.clone(),
                    message,
                })
            }
            Err(_) => {
                self.drop_connection(
                    generation,
                    &format!("a call took longer than {} s", limit.as_secs_f64()),
                );
                Err(McpError::Timeout {
                    server: self.spec.name.clone(),
                    limit,
                })
            }
        }
    }

    /// Ends the connection (and a stdio server's process).
    pub async fn shutdown(&self) {
        let connection = self.lock().connection.take();
        if let Some(connection) = connection {
            connection.service.cancellation_token().cancel();
        }
    }
}

impl Connection {
    /// A stdio server's last stderr lines once its process ended (waited for briefly:
    /// a broken connection usually means it crashed), for the error message.
    async fn stderr_after_exit(&self) -> String {
        let Some(process) = &self.process else {
            return String::new();
        };
        if tokio::time::timeout(std::time::Duration::from_secs(2), process.exited())
            .await
            .is_ok()
        {
            settle_stderr(process.stderr()).await;
        }
        process.stderr().quoted()
    }
}

/// Waits (briefly) until the process's stderr was read to its end, so its last lines
/// are in the tail.
async fn settle_stderr(tail: &StderrTail) {
    tail.finished(std::time::Duration::from_secs(1)).await;
}

fn valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}
