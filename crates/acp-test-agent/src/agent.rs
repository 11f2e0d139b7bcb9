//! The agent's state and its answers to every request except `session/prompt`
//! (see [`crate::turn`]).
//!
//! Checks run in this order, and each refusal names its rule:
//! 1. the capability behind the method is advertised (`-32601` otherwise);
//! 2. authentication is done, when required (`-32000`);
//! 3. the session exists (`-32002`, with the id in the message and `data.sessionId`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::schema::{
    AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse, ClientCapabilities,
    CloseSessionRequest, CloseSessionResponse, ForkSessionRequest, ForkSessionResponse,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, LogoutRequest, LogoutResponse,
    McpServer, NewSessionRequest, NewSessionResponse, ResumeSessionRequest, ResumeSessionResponse,
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionId,
    SessionInfo, SessionMode, SessionModeState, SetSessionConfigOptionRequest,
    SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::{Error, ErrorCode, schema::ProtocolVersion};
use serde_json::json;

use crate::config::{Capability, ClientCapabilityChecks, ReopenSettings, Settings, TOKEN_VAR};
use crate::output::Output;
use crate::sessions::{LiveSession, lock};
use crate::store::{DEFAULT_MODE, DEFAULT_MODEL, SessionRecord, Store};

/// The agent's name in `agentInfo`.
pub(crate) const AGENT_NAME: &str = "hearth-acp-test-agent";
/// The agent's version in `agentInfo`.
pub(crate) const AGENT_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The one authentication method offered when authentication is required.
pub(crate) const AUTH_METHOD: &str = "test-login";
/// The models `session/set_config_option` accepts.
pub(crate) const MODELS: &[(&str, &str)] =
    &[("test-small", "Test small"), ("test-large", "Test large")];
/// The config option id of the model selector.
pub(crate) const MODEL_OPTION: &str = "model";

/// A client method the agent may call, gated by what the client declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientMethod {
    /// `fs/read_text_file` (`fs.readTextFile`).
    ReadTextFile,
    /// `fs/write_text_file` (`fs.writeTextFile`).
    WriteTextFile,
    /// `terminal/*` (`terminal`).
    Terminal,
    /// `elicitation/create` in form mode (`elicitation.form`).
    Elicitation,
}

impl ClientMethod {
    /// The capability's name in `clientCapabilities`, for messages.
    pub(crate) fn capability_name(self) -> &'static str {
        match self {
            Self::ReadTextFile => "fs.readTextFile",
            Self::WriteTextFile => "fs.writeTextFile",
            Self::Terminal => "terminal",
            Self::Elicitation => "elicitation.form",
        }
    }
}

/// The agent: settings, sessions on disk and live, and what the client declared.
pub(crate) struct TestAgent {
    pub(crate) settings: Settings,
    pub(crate) store: Store,
    pub(crate) output: Output,
    authenticated: AtomicBool,
    client: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<String, Arc<LiveSession>>>,
}

/// `-32002` naming the session.
pub(crate) fn session_not_found(id: &SessionId) -> Error {
    Error::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!("session {id} not found"),
    )
    .data(json!({ "sessionId": id }))
}

/// `-32603` carrying an internal failure's whole chain.
pub(crate) fn internal(error: &anyhow::Error) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, format!("{error:#}"))
}

/// `-32602` with a message.
pub(crate) fn invalid_params(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

/// The modes `session/set_mode` accepts.
pub(crate) const MODES: &[(&str, &str)] = &[("ask", "Ask"), ("code", "Code")];

/// The session modes for a session in `mode`.
pub(crate) fn modes(mode: &str) -> SessionModeState {
    SessionModeState::new(
        mode.to_owned(),
        MODES
            .iter()
            .map(|(id, name)| SessionMode::new(*id, *name))
            .collect(),
    )
}

impl TestAgent {
    /// An agent with no sessions live yet.
    pub(crate) fn new(settings: Settings, output: Output) -> Self {
        let store = Store::new(settings.state_dir.path());
        Self {
            settings,
            store,
            output,
            authenticated: AtomicBool::new(false),
            client: Mutex::new(ClientCapabilities::default()),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// The session config options for a session using `model` (of the models offered).
    pub(crate) fn config_options(&self, model: &str) -> Vec<SessionConfigOption> {
        let choices: Vec<SessionConfigSelectOption> = self
            .settings
            .models
            .iter()
            .map(|(value, name)| SessionConfigSelectOption::new(*value, *name))
            .collect();
        vec![
            SessionConfigOption::select(MODEL_OPTION, "Model", model.to_owned(), choices)
                .category(SessionConfigOptionCategory::Model)
                .description("The model that answers in this session".to_owned()),
        ]
    }

    /// Check 1: the capability behind `method` is advertised.
    fn offered(&self, capability: Capability, method: &str) -> Result<(), Error> {
        if self.settings.has(capability) {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("{method} is not offered: its capability is not in HEARTH_TEST_AGENT_CAPS"),
        ))
    }

    /// Check 2: authentication is done (by `authenticate`, or by a sign-in stored in the
    /// state directory), or not required.
    fn authorised(&self) -> Result<(), Error> {
        if self.settings.auth == crate::config::AuthMode::Open
            || self.authenticated.load(Ordering::Acquire)
            || crate::sign_in::signed_in(&self.settings.state_dir.path())
        {
            return Ok(());
        }
        Err(Error::new(
            ErrorCode::AUTH_REQUIRED,
            format!("Authentication required: call authenticate with methodId \"{AUTH_METHOD}\""),
        ))
    }

    /// Check 3: session `id` is live in this process.
    pub(crate) fn live(&self, id: &SessionId) -> Result<Arc<LiveSession>, Error> {
        lock(&self.sessions)
            .get(id.0.as_ref())
            .cloned()
            .ok_or_else(|| session_not_found(id))
    }

    /// Whether the agent may call `method` on the client.
    pub(crate) fn client_can(&self, method: ClientMethod) -> bool {
        if self.settings.client_checks == ClientCapabilityChecks::Ignore {
            return true;
        }
        let client = lock(&self.client);
        match method {
            ClientMethod::ReadTextFile => client.fs.read_text_file,
            ClientMethod::WriteTextFile => client.fs.write_text_file,
            ClientMethod::Terminal => client.terminal,
            ClientMethod::Elicitation => client
                .elicitation
                .as_ref()
                .is_some_and(|elicitation| elicitation.form.is_some()),
        }
    }

    /// Whether the client takes compaction updates (`session.compaction`).
    pub(crate) fn client_takes_compaction(&self) -> bool {
        lock(&self.client)
            .session
            .as_ref()
            .is_some_and(|session| session.compaction.is_some())
    }

    /// `initialize`: records the client's capabilities and answers protocol v1.
    pub(crate) fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        tracing::debug!(client = ?request.client_info, "initialize");
        let mut methods = match self.settings.auth {
            crate::config::AuthMode::Open => Vec::new(),
            crate::config::AuthMode::Required => vec![AuthMethod::Agent(
                AuthMethodAgent::new(AUTH_METHOD, "Test login")
                    .description(format!("set {TOKEN_VAR}")),
            )],
        };
        methods.extend(
            self.settings
                .terminal_auth
                .method(&request.client_capabilities),
        );
        *lock(&self.client) = request.client_capabilities;
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(self.settings.agent_capabilities())
            .auth_methods(methods)
            .agent_info(Implementation::new(AGENT_NAME, AGENT_VERSION))
    }

    /// `authenticate`: succeeds for `test-login` when the token variable is set.
    pub(crate) fn authenticate(
        &self,
        request: &AuthenticateRequest,
    ) -> Result<AuthenticateResponse, Error> {
        if request.method_id.0.as_ref() != AUTH_METHOD {
            return Err(invalid_params(format!(
                "unknown authentication method {:?}; the only method is {AUTH_METHOD:?}",
                request.method_id.0
            )));
        }
        let token = std::env::var(TOKEN_VAR).unwrap_or_default();
        if token.is_empty() {
            return Err(Error::new(
                ErrorCode::AUTH_REQUIRED,
                format!("authentication failed: {TOKEN_VAR} is not set; set it and try again"),
            ));
        }
        self.authenticated.store(true, Ordering::Release);
        Ok(AuthenticateResponse::new())
    }

    /// `logout`: forgets `authenticate` and removes the stored sign-in.
    pub(crate) fn logout(&self, _request: &LogoutRequest) -> Result<LogoutResponse, Error> {
        self.offered(Capability::Logout, "logout")?;
        self.authenticated.store(false, Ordering::Release);
        crate::sign_in::sign_out(&self.settings.state_dir.path()).map_err(|error| {
            Error::new(
                ErrorCode::INTERNAL_ERROR,
                format!("removing the stored sign-in: {error}"),
            )
        })?;
        Ok(LogoutResponse::new())
    }

    fn make_live(&self, record: SessionRecord) -> Arc<LiveSession> {
        let live = Arc::new(LiveSession::new(record));
        let replaced = lock(&self.sessions).insert(live.id().0.to_string(), live.clone());
        if let Some(old) = replaced {
            retire(old);
        }
        live
    }

    /// The record of session `id`: the live one, else the one on disk.
    fn find(&self, id: &SessionId) -> Result<SessionRecord, Error> {
        if let Some(live) = lock(&self.sessions).get(id.0.as_ref()) {
            return Ok(live.record());
        }
        self.store
            .load(id.0.as_ref())
            .map_err(|error| internal(&error))?
            .ok_or_else(|| session_not_found(id))
    }

    /// Writes a session just created, unless it waits for its first turn.
    fn save_new(&self, record: &SessionRecord) -> Result<(), Error> {
        match self.settings.saving {
            crate::config::Saving::AtOnce => {
                self.store.save(record).map_err(|error| internal(&error))
            }
            crate::config::Saving::WithFirstTurn => Ok(()),
        }
    }

    /// `session/new`.
    pub(crate) fn new_session(
        &self,
        request: NewSessionRequest,
    ) -> Result<NewSessionResponse, Error> {
        self.authorised()?;
        let record = SessionRecord::new(
            request.cwd,
            request.additional_directories,
            request.mcp_servers,
        );
        self.save_new(&record)?;
        let options = self.config_options(&record.model);
        let live = self.make_live(record);
        tracing::info!(session = %live.id(), "session created");
        Ok(NewSessionResponse::new(live.id().clone())
            .config_options(options)
            .modes(modes(DEFAULT_MODE)))
    }

    /// Shared by `session/load` and `session/resume`: makes the session live with the
    /// directories and MCP servers of this request, and returns its record.
    fn revive(
        &self,
        id: &SessionId,
        cwd: &Path,
        additional_directories: &[std::path::PathBuf],
        mcp_servers: &[McpServer],
    ) -> Result<SessionRecord, Error> {
        let mut record = self.find(id)?;
        let offered = |model: &str| self.settings.models.iter().any(|(id, _)| *id == model);
        if self.settings.reopen == ReopenSettings::Defaults || !offered(&record.model) {
            record.model = self
                .settings
                .models
                .iter()
                .map(|(id, _)| *id)
                .find(|id| *id == DEFAULT_MODEL)
                .or_else(|| self.settings.models.first().map(|(id, _)| *id))
                .unwrap_or(DEFAULT_MODEL)
                .to_owned();
        }
        if self.settings.reopen == ReopenSettings::Defaults {
            record.mode = DEFAULT_MODE.to_owned();
        }
        record.cwd = cwd.to_path_buf();
        record.additional_directories = additional_directories.to_vec();
        record.mcp_servers = mcp_servers.to_vec();
        self.store.save(&record).map_err(|error| internal(&error))?;
        self.make_live(record.clone());
        Ok(record)
    }

    /// `session/load`: returns the record whose history the caller replays before
    /// answering.
    pub(crate) fn load_session(
        &self,
        request: &LoadSessionRequest,
    ) -> Result<(LoadSessionResponse, SessionRecord), Error> {
        self.offered(Capability::Load, "session/load")?;
        self.authorised()?;
        let record = self.revive(
            &request.session_id,
            &request.cwd,
            &request.additional_directories,
            &request.mcp_servers,
        )?;
        let response = LoadSessionResponse::new()
            .config_options(self.config_options(&record.model))
            .modes(modes(&record.mode));
        Ok((response, record))
    }

    /// `session/resume`: like load, without replay.
    pub(crate) fn resume_session(
        &self,
        request: &ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, Error> {
        self.offered(Capability::Resume, "session/resume")?;
        self.authorised()?;
        let record = self.revive(
            &request.session_id,
            &request.cwd,
            &request.additional_directories,
            &request.mcp_servers,
        )?;
        Ok(ResumeSessionResponse::new()
            .config_options(self.config_options(&record.model))
            .modes(modes(&record.mode)))
    }

    /// `session/fork`: a new session with a copy of the history.
    pub(crate) fn fork_session(
        &self,
        request: ForkSessionRequest,
    ) -> Result<ForkSessionResponse, Error> {
        self.offered(Capability::Fork, "session/fork")?;
        self.authorised()?;
        let source = self.find(&request.session_id)?;
        let mut record = SessionRecord::new(
            request.cwd,
            request.additional_directories,
            request.mcp_servers,
        );
        record.title = source.title;
        record.model = source.model;
        record.mode = source.mode;
        record.history = source.history;
        self.save_new(&record)?;
        let options = self.config_options(&record.model);
        let session_modes = modes(&record.mode);
        let live = self.make_live(record);
        tracing::info!(session = %live.id(), from = %request.session_id, "session forked");
        Ok(ForkSessionResponse::new(live.id().clone())
            .config_options(options)
            .modes(session_modes))
    }

    /// `session/list`: every session on disk, newest first, filtered by `cwd`, paged
    /// by an opaque cursor (the offset of the next page).
    pub(crate) fn list_sessions(
        &self,
        request: &ListSessionsRequest,
    ) -> Result<ListSessionsResponse, Error> {
        self.offered(Capability::List, "session/list")?;
        self.authorised()?;
        let start = match &request.cursor {
            None => 0,
            Some(cursor) => cursor.parse::<usize>().map_err(|_| {
                invalid_params(format!("cursor {cursor:?} was not made by this agent"))
            })?,
        };
        let records = self.store.list().map_err(|error| internal(&error))?;
        let matching: Vec<SessionRecord> = records
            .into_iter()
            .filter(|record| request.cwd.as_ref().is_none_or(|cwd| &record.cwd == cwd))
            .collect();
        let end = matching
            .len()
            .min(start.saturating_add(self.settings.page_size));
        let sessions = matching
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .map(|record| {
                SessionInfo::new(record.id.clone(), record.cwd.clone())
                    .additional_directories(record.additional_directories.clone())
                    .title(record.title.clone())
                    .updated_at(record.updated_at_text())
            })
            .collect();
        let next = (end < matching.len()).then(|| end.to_string());
        Ok(ListSessionsResponse::new(sessions).next_cursor(next))
    }

    /// How many sessions are live in this process (open and not closed).
    pub(crate) fn live_sessions(&self) -> usize {
        lock(&self.sessions).len()
    }

    /// `session/close`: the session stops being live; its file stays.
    pub(crate) fn close_session(
        &self,
        request: &CloseSessionRequest,
    ) -> Result<CloseSessionResponse, Error> {
        self.offered(Capability::Close, "session/close")?;
        self.authorised()?;
        let removed = lock(&self.sessions).remove(request.session_id.0.as_ref());
        match removed {
            Some(live) => retire(live),
            None => {
                self.find(&request.session_id)?;
            }
        }
        Ok(CloseSessionResponse::new())
    }

    /// `session/set_config_option`: changes the model; returns the new options.
    pub(crate) fn set_config_option(
        &self,
        request: &SetSessionConfigOptionRequest,
    ) -> Result<Vec<SessionConfigOption>, Error> {
        let live = self.live(&request.session_id)?;
        if request.config_id.0.as_ref() != MODEL_OPTION {
            return Err(invalid_params(format!(
                "unknown config option {:?}; the only option is {MODEL_OPTION:?}",
                request.config_id.0
            )));
        }
        let known: Vec<&str> = self
            .settings
            .models
            .iter()
            .map(|(value, _)| *value)
            .collect();
        let model = request
            .value
            .as_value_id()
            .map(|value| value.0.to_string())
            .filter(|value| known.contains(&value.as_str()))
            .ok_or_else(|| {
                invalid_params(format!(
                    "unknown model {:?}; choose one of {}",
                    request.value,
                    known.join(", ")
                ))
            })?;
        live.update(&self.store, |record| {
            record.model = model.clone();
            record.updated_at = chrono::Utc::now();
        })
        .map_err(|error| internal(&error))?;
        Ok(self.config_options(&model))
    }

    /// `session/set_mode`: changes the mode.
    pub(crate) fn set_mode(
        &self,
        request: &SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, Error> {
        let live = self.live(&request.session_id)?;
        let mode = request.mode_id.0.to_string();
        if !MODES.iter().any(|(id, _)| *id == mode) {
            let known: Vec<&str> = MODES.iter().map(|(id, _)| *id).collect();
            return Err(invalid_params(format!(
                "unknown mode {mode:?}; choose one of {}",
                known.join(", ")
            )));
        }
        live.update(&self.store, |record| {
            record.mode = mode;
            record.updated_at = chrono::Utc::now();
        })
        .map_err(|error| internal(&error))?;
        Ok(SetSessionModeResponse::new())
    }

    /// `session/cancel`: cancels the session's running turn, if any.
    pub(crate) fn cancel(&self, id: &SessionId) {
        match self.live(id) {
            Ok(live) => {
                let cancelled = live.cancel_turn();
                tracing::debug!(session = %id, cancelled, "session/cancel");
            }
            Err(_) => {
                tracing::warn!(session = %id, "session/cancel for a session that is not live")
            }
        }
    }

    /// Ends every live session: turns are cancelled and MCP servers killed.
    pub(crate) async fn shutdown(&self) {
        let sessions: Vec<Arc<LiveSession>> =
            lock(&self.sessions).drain().map(|(_, live)| live).collect();
        for live in sessions {
            live.cancel_turn();
            live.close_mcp().await;
        }
    }
}

/// A session that stops being live: its turn is cancelled, and its MCP servers are
/// killed in the background (a turn may still hold them briefly).
fn retire(live: Arc<LiveSession>) {
    live.cancel_turn();
    tokio::spawn(async move { live.close_mcp().await });
}
