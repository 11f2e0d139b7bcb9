//! The agent's state and its answers to every request except `session/prompt` (see
//! [`crate::turn`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, ClientCapabilities, Implementation, InitializeRequest, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities,
    ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigSelectOption, SessionId, SessionInfo,
    SessionListCapabilities, SessionResumeCapabilities, SessionUpdate,
    SetSessionConfigOptionRequest,
};
use hearth_config::McpServerConfig;
use hearth_core::{ChatUri, HarnessId, SessionUri};
use hearth_mcp_client::SessionMcpServers;
use hearth_projects::ClientFiles;

use crate::error::{AcpServerError, Result};
use crate::files::EditorFiles;
use crate::hearth::Hearth;
use crate::mapping;
use crate::server::AGENT_NAME;

/// The config option id of the model selector.
pub(crate) const MODEL_OPTION: &str = "model";

/// Sessions per `session/list` page.
const LIST_PAGE: u32 = 50;

/// The agent: the Hearth it drives, and what the client declared.
pub(crate) struct HearthAgent {
    pub(crate) hearth: Arc<dyn Hearth>,
    provider: HarnessId,
    models: Vec<String>,
    /// The MCP servers the client passed, per session (none when the turns run on a
    /// server, which cannot reach the editor's machine).
    mcp: Option<SessionMcpServers>,
    /// The sessions whose files `file_read` reads through the client (likewise).
    files: Option<ClientFiles>,
    client: Mutex<ClientCapabilities>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The Hearth session an ACP session id names (its URI).
pub(crate) fn session_uri(id: &SessionId) -> Result<SessionUri> {
    SessionUri::parse(&id.0).map_err(|error| AcpServerError::SessionNotFound {
        id: id.0.to_string(),
        reason: error.to_string(),
    })
}

/// The ACP session id of a Hearth session.
pub(crate) fn session_id(session: &SessionUri) -> SessionId {
    SessionId::new(session.to_string())
}

impl HearthAgent {
    /// An agent over `hearth`, starting sessions with `provider`.
    pub(crate) fn new(
        hearth: Arc<dyn Hearth>,
        provider: HarnessId,
        models: Vec<String>,
        mcp: Option<SessionMcpServers>,
        files: Option<ClientFiles>,
    ) -> Self {
        Self {
            hearth,
            provider,
            models,
            mcp,
            files,
            client: Mutex::new(ClientCapabilities::default()),
        }
    }

    /// What the client declared in `initialize`.
    #[allow(dead_code)]
    pub(crate) fn client(&self) -> ClientCapabilities {
        lock(&self.client).clone()
    }

    /// `initialize`: records the client's capabilities and advertises what Hearth
    /// serves: loading, listing and resuming sessions; text and embedded text
    /// resources in prompts (no images or audio); MCP servers over stdio only (the
    /// baseline every agent accepts; none over HTTP or SSE), whose tools the session's
    /// turns get.
    pub(crate) fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        tracing::debug!(client = ?request.client_info, "initialize");
        *lock(&self.client) = request.client_capabilities;
        let capabilities = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(
                PromptCapabilities::new()
                    .image(false)
                    .audio(false)
                    .embedded_context(true),
            )
            .mcp_capabilities(McpCapabilities::new().http(false).sse(false))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .resume(SessionResumeCapabilities::new()),
            );
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .agent_info(Implementation::new(AGENT_NAME, env!("CARGO_PKG_VERSION")))
    }

    /// `session/new`: a Hearth session of the native agent in the client's directory.
    pub(crate) async fn new_session(
        &self,
        request: NewSessionRequest,
        connection: &ConnectionTo<Client>,
    ) -> Result<NewSessionResponse> {
        let mut directories = vec![request.cwd];
        directories.extend(request.additional_directories);
        let session = self
            .hearth
            .create_session(&self.provider, directories)
            .await?;
        self.connect_mcp_servers(&session, &request.mcp_servers)
            .await;
        self.read_files_through(&session, connection);
        let options = self.config_options(&ChatUri::default_for(&session)).await?;
        Ok(NewSessionResponse::new(session_id(&session)).config_options(options))
    }

    /// `session/load`: the session's history as updates to send before the answer.
    pub(crate) async fn load_session(
        &self,
        request: &LoadSessionRequest,
        connection: &ConnectionTo<Client>,
    ) -> Result<(Vec<SessionUpdate>, LoadSessionResponse)> {
        let session = session_uri(&request.session_id)?;
        let chat = ChatUri::default_for(&session);
        let state = self.hearth.chat(&chat).await?;
        self.connect_mcp_servers(&session, &request.mcp_servers)
            .await;
        self.read_files_through(&session, connection);
        let updates = state.turns.iter().flat_map(mapping::replay).collect();
        let options = self.config_options(&chat).await?;
        Ok((updates, LoadSessionResponse::new().config_options(options)))
    }

    /// `session/resume`: the session, ready for prompts, without its history.
    pub(crate) async fn resume_session(
        &self,
        request: &ResumeSessionRequest,
        connection: &ConnectionTo<Client>,
    ) -> Result<ResumeSessionResponse> {
        let session = session_uri(&request.session_id)?;
        let chat = ChatUri::default_for(&session);
        self.hearth.chat(&chat).await?;
        self.connect_mcp_servers(&session, &request.mcp_servers)
            .await;
        self.read_files_through(&session, connection);
        let options = self.config_options(&chat).await?;
        Ok(ResumeSessionResponse::new().config_options(options))
    }

    /// `session/list`: Hearth's sessions, newest first, optionally only those whose
    /// first working directory is `cwd`.
    pub(crate) async fn list_sessions(
        &self,
        request: &ListSessionsRequest,
    ) -> Result<ListSessionsResponse> {
        let page = self
            .hearth
            .list_sessions(request.cursor.clone(), LIST_PAGE)
            .await?;
        let fallback = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        let sessions = page
            .sessions
            .into_iter()
            .filter(|summary| match &request.cwd {
                Some(cwd) => summary.working_directories.first() == Some(cwd),
                None => true,
            })
            .map(|summary| {
                let mut directories = summary.working_directories.into_iter();
                let cwd = directories.next().unwrap_or_else(|| fallback.clone());
                SessionInfo::new(session_id(&summary.uri), cwd)
                    .additional_directories(directories.collect::<Vec<_>>())
                    .title(summary.title)
                    .updated_at(summary.updated_at.to_rfc3339())
            })
            .collect();
        Ok(ListSessionsResponse::new(sessions).next_cursor(page.next_cursor))
    }

    /// `session/set_config_option`: the model, the one option there is.
    pub(crate) async fn set_config_option(
        &self,
        request: &SetSessionConfigOptionRequest,
    ) -> Result<Vec<SessionConfigOption>> {
        let chat = ChatUri::default_for(&session_uri(&request.session_id)?);
        if request.config_id.0.as_ref() != MODEL_OPTION {
            return Err(AcpServerError::Invalid(format!(
                "unknown config option {:?}; the only option is {MODEL_OPTION:?}",
                request.config_id.0
            )));
        }
        let Some(model) = request.value.as_value_id().map(|value| value.0.to_string()) else {
            return Err(AcpServerError::Invalid(
                "the model option takes one of its choices' ids".to_owned(),
            ));
        };
        let (_, choices) = self.models(&chat).await?;
        if !choices.is_empty() && !choices.iter().any(|(id, _)| id == &model) {
            let known: Vec<&str> = choices.iter().map(|(id, _)| id.as_str()).collect();
            return Err(AcpServerError::Invalid(format!(
                "unknown model {model:?}; choose one of {}",
                known.join(", ")
            )));
        }
        self.hearth.set_model(&chat, model).await?;
        self.config_options(&chat).await
    }

    /// `session/cancel`: aborts the running turn, if any.
    pub(crate) async fn cancel(&self, id: &SessionId) {
        let chat = match session_uri(id) {
            Ok(session) => ChatUri::default_for(&session),
            Err(error) => {
                tracing::debug!(%error, "session/cancel for no session");
                return;
            }
        };
        match self.hearth.abort(&chat).await {
            Ok(true) => tracing::debug!(%chat, "turn aborted"),
            Ok(false) => tracing::debug!(%chat, "session/cancel with no turn running"),
            Err(error) => tracing::warn!(%error, %chat, "aborting the turn failed"),
        }
    }

    /// The chat's current model and the choices (id, name) it offers.
    async fn models(&self, chat: &ChatUri) -> Result<(Option<String>, Vec<(String, String)>)> {
        let state = self.hearth.chat(chat).await?;
        let offered = state.agent.and_then(|agent| agent.models);
        let current = state
            .summary
            .model
            .or_else(|| offered.as_ref().map(|models| models.current.clone()));
        let choices = offered
            .map(|models| {
                models
                    .choices
                    .into_iter()
                    .map(|choice| (choice.id, choice.name))
                    .collect()
            })
            .unwrap_or_else(|| {
                // The configured models, for sessions of the provider they belong to.
                if chat.harness() == &self.provider {
                    self.models
                        .iter()
                        .map(|model| (model.clone(), model.clone()))
                        .collect()
                } else {
                    Vec::new()
                }
            });
        Ok((current, choices))
    }

    /// The session's config options: a model selector when the model is known.
    pub(crate) async fn config_options(&self, chat: &ChatUri) -> Result<Vec<SessionConfigOption>> {
        let (current, mut choices) = self.models(chat).await?;
        let Some(current) = current else {
            return Ok(Vec::new());
        };
        if !choices.iter().any(|(id, _)| id == &current) {
            choices.insert(0, (current.clone(), current.clone()));
        }
        let choices: Vec<SessionConfigSelectOption> = choices
            .into_iter()
            .map(|(id, name)| SessionConfigSelectOption::new(id, name))
            .collect();
        Ok(vec![
            SessionConfigOption::select(MODEL_OPTION, "Model", current, choices)
                .category(SessionConfigOptionCategory::Model)
                .description("The model that answers in this session".to_owned()),
        ])
    }
}

/// The stdio servers a client passed, as `[mcp_servers]` would configure them (allowed
/// nothing: a tool that is not read-only asks the user); others are left out, logged.
fn server_configs(servers: &[McpServer]) -> BTreeMap<String, McpServerConfig> {
    let mut configs = BTreeMap::new();
    for server in servers {
        match server {
            McpServer::Stdio(stdio) => {
                let config = McpServerConfig {
                    command: Some(stdio.command.display().to_string()),
                    args: stdio.args.clone(),
                    env: stdio
                        .env
                        .iter()
                        .map(|variable| (variable.name.clone(), variable.value.clone()))
                        .collect(),
                    ..McpServerConfig::default()
                };
                if configs.insert(stdio.name.clone(), config).is_some() {
                    tracing::warn!(
                        server = %stdio.name,
                        "the client passed two MCP servers of one name; the last is used"
                    );
                }
            }
            other => {
                let name = match other {
                    McpServer::Http(http) => http.name.as_str(),
                    McpServer::Sse(sse) => sse.name.as_str(),
                    _ => "(unnamed)",
                };
                tracing::warn!(
                    server = name,
                    "the client passed an MCP server over a transport Hearth's ACP agent does not speak (stdio only); its tools are not offered"
                );
            }
        }
    }
    configs
}

impl HearthAgent {
    /// Gives `session` the MCP servers the client passed (in place of those it passed
    /// before): their tools are offered in that session's turns only.
    async fn connect_mcp_servers(&self, session: &SessionUri, servers: &[McpServer]) {
        let Some(mcp) = &self.mcp else {
            if !servers.is_empty() {
                tracing::warn!(%session, "the client passed MCP servers, but this session's turns run on a Hearth server, which cannot start programs on the editor's machine; their tools are not offered");
            }
            return;
        };
        let problems = mcp.set(session, &server_configs(servers)).await;
        for problem in problems {
            tracing::warn!(%session, "an MCP server the client passed cannot be used: {problem}");
        }
    }

    /// When the client declared `fs.readTextFile`, the native agent's `file_read` reads
    /// `session`'s files through it (the editor's buffers, unsaved edits included).
    fn read_files_through(&self, session: &SessionUri, connection: &ConnectionTo<Client>) {
        if let Some(files) = &self.files
            && lock(&self.client).fs.read_text_file
        {
            files.set(
                session,
                Arc::new(EditorFiles {
                    connection: connection.clone(),
                    session: session_id(session),
                }),
            );
        }
    }
}
