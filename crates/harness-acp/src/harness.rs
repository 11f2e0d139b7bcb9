//! `AcpHarness`: one external agent as a Hearth harness. It starts the agent's process
//! lazily, on first need, and keeps it for all of the agent's chats (each chat is one of
//! the agent's sessions); it restarts it, with a growing pause after failed starts, when
//! a chat needs it after it stopped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema as acp;
use hearth_confine::Roots;
use hearth_core::{
    Backoff, Capabilities, ChatContext, ChatUri, ConversationId, DiscoveredChat, HarnessData,
    HarnessDescriptor, HarnessEvent, MultipleWorkingDirectories, Signal, now,
};
use serde_json::Value;
use tokio::sync::Mutex as AsyncMutex;

use crate::connection::{AgentInfo, Connection};
use crate::conversation::AcpConversation;
use crate::error::{Error, Result};
use crate::mapping;
use crate::options::{AcpOptions, StartPhase};
use crate::shared::{Route, Shared};
use crate::spec::AgentSpec;

/// The pause before another start after failed ones: 1 s, doubling to at most 30 s.
const RESTART: Backoff = Backoff::doubling(Duration::from_secs(1), Duration::from_secs(30));
/// Pages of `session/list` read at most when looking for the agent's conversations.
const LIST_PAGES: usize = 20;

/// What is known of an agent once it has started, for `hearth agents list`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentStatus {
    /// The name and version it reports.
    pub version: Option<String>,
    /// It can reopen its sessions (`session/load`), replaying their history.
    pub load: bool,
    /// It lists its sessions (`session/list`).
    pub list: bool,
    /// It resumes sessions without replaying them (`session/resume`).
    pub resume: bool,
    /// It forks sessions (`session/fork`).
    pub fork: bool,
    /// It takes images in prompts.
    pub images: bool,
    /// It takes file contents embedded in prompts.
    pub embedded_context: bool,
    /// Its sign-in methods, as `id (name)`.
    pub auth_methods: Vec<String>,
    /// It signs out when asked (`logout`).
    pub logout: bool,
    /// How the last reopening of a session on it went, as recorded in Hearth's data
    /// directory (when a chat's session is not reopened, the chat goes on in a new
    /// session that gets its transcript).
    pub last_reopen: Option<crate::LastReopen>,
}

/// Starts after failures wait longer each time.
#[derive(Default)]
struct Restarts {
    failures: u32,
    last_failure: Option<Instant>,
}

impl Restarts {
    fn pause(&self) -> Duration {
        self.pause_at(Instant::now())
    }

    /// How much longer the next start waits, at `now`.
    fn pause_at(&self, now: Instant) -> Duration {
        if self.failures == 0 {
            return Duration::ZERO;
        }
        let pause = RESTART.nominal(self.failures - 1);
        let waited = self
            .last_failure
            .map_or(pause, |last| now.saturating_duration_since(last));
        pause.saturating_sub(waited)
    }
}

pub(crate) struct Inner {
    pub shared: Arc<Shared>,
    descriptor: RwLock<HarnessDescriptor>,
    connection: AsyncMutex<Option<Arc<Connection>>>,
    info: RwLock<Option<AgentInfo>>,
    generations: AtomicU64,
    restarts: Mutex<Restarts>,
    /// When chats and the agent were last used (see [`crate::live`]).
    pub(crate) usage: Mutex<crate::live::Usage>,
    /// Held while a session is being closed to keep the agent small.
    pub(crate) releasing: AsyncMutex<()>,
    /// This harness, for the task that releases idle sessions.
    pub(crate) me: std::sync::Weak<Inner>,
}

/// An external agent that speaks the Agent Client Protocol, as a Hearth harness.
#[derive(Clone)]
pub struct AcpHarness {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for AcpHarness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpHarness")
            .field("agent", &self.inner.shared.spec.id)
            .finish_non_exhaustive()
    }
}

impl AcpHarness {
    /// A harness for one configured agent. Nothing starts until a chat needs the agent.
    pub fn new(spec: AgentSpec, options: AcpOptions) -> Self {
        let descriptor = HarnessDescriptor {
            id: spec.id.clone(),
            name: spec.name.clone(),
            description: format!(
                "{} over the Agent Client Protocol (`{}`)",
                spec.name,
                spec.command.display()
            ),
            // Forks and side chats hand the copied history to a new session of the
            // agent, so every agent offers them.
            capabilities: Capabilities::forks_and_side_chats(),
            demo: false,
        };
        Self {
            inner: Arc::new_cyclic(|me| Inner {
                shared: Arc::new(Shared::new(spec, options)),
                descriptor: RwLock::new(descriptor),
                connection: AsyncMutex::new(None),
                info: RwLock::new(None),
                generations: AtomicU64::new(0),
                restarts: Mutex::new(Restarts::default()),
                usage: Mutex::new(crate::live::Usage::default()),
                releasing: AsyncMutex::new(()),
                me: me.clone(),
            }),
        }
    }

    /// What the agent said about itself, once it has started.
    pub fn status(&self) -> Option<AgentStatus> {
        let info = self
            .inner
            .info
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        info.as_ref().map(|info| {
            let capabilities = &info.capabilities;
            AgentStatus {
                version: info.implementation.as_ref().map(|implementation| {
                    format!("{} {}", implementation.name, implementation.version)
                }),
                load: capabilities.load_session,
                list: capabilities.session_capabilities.list.is_some(),
                resume: capabilities.session_capabilities.resume.is_some(),
                fork: capabilities.session_capabilities.fork.is_some(),
                images: capabilities.prompt_capabilities.image,
                embedded_context: capabilities.prompt_capabilities.embedded_context,
                auth_methods: info
                    .auth_methods
                    .iter()
                    .filter_map(|method| {
                        let value = serde_json::to_value(method).ok()?;
                        Some(format!(
                            "{} ({})",
                            value.get("id")?.as_str()?,
                            value
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                        ))
                    })
                    .collect(),
                logout: capabilities.auth.logout.is_some(),
                last_reopen: self.inner.last_reopen(),
            }
        })
    }

    /// Starts the agent (when it is not running) to learn what it can do, and says how
    /// long that took.
    pub async fn check(&self) -> Result<(AgentStatus, Duration)> {
        let started = Instant::now();
        let connection = self.inner.connection().await?;
        let elapsed = started.elapsed();
        drop(connection);
        let status = self.status().ok_or_else(|| {
            Error::Invalid(format!(
                "agent `{}` started but said nothing about itself",
                self.inner.shared.agent()
            ))
        })?;
        Ok((status, elapsed))
    }

    /// Opens a session in `directory` and ends it again (deleted where the agent can, else
    /// closed), to learn whether sessions can be started: a sign-in the agent lacks shows
    /// here, not when it starts.
    pub async fn try_session(&self, directory: &Path) -> Result<()> {
        let connection = self.inner.connection().await?;
        let timeout = self.inner.shared.options.timeouts.request;
        let (answer, _): (acp::NewSessionResponse, Value) = connection
            .request_json(
                "session/new",
                acp::NewSessionRequest::new(directory.to_path_buf()),
                timeout,
            )
            .await?;
        self.inner
            .end_session(&connection, &answer.session_id.to_string(), true)
            .await;
        Ok(())
    }

    /// Stops the agent's process, if it runs.
    pub async fn stop(&self) {
        self.inner.stop().await;
    }

    /// The process id of the running agent (or its supervisor), if one runs.
    pub async fn process_id(&self) -> Option<u32> {
        let slot = self.inner.connection.lock().await;
        slot.as_ref()
            .filter(|connection| connection.is_alive())
            .map(|connection| connection.process.pid())
    }

    /// Resident memory of the running agent's process tree, in KiB.
    pub async fn agent_memory_kib(&self) -> Option<u64> {
        let slot = self.inner.connection.lock().await;
        slot.as_ref()
            .filter(|connection| connection.is_alive())
            .map(|connection| connection.process.tree_rss_kib())
    }
}

impl Inner {
    pub fn descriptor(&self) -> HarnessDescriptor {
        self.descriptor
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The running connection, starting the agent when none runs.
    pub async fn connection(&self) -> Result<Arc<Connection>> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref()
            && connection.is_alive()
        {
            return Ok(Arc::clone(connection));
        }
        if let Some(dead) = slot.take() {
            tracing::info!(agent = %self.shared.agent(), "restarting the agent, which stopped");
            dead.close();
        }
        let pause = self
            .restarts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pause();
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let generation = self.generations.fetch_add(1, Ordering::Relaxed) + 1;
        self.shared.progress(StartPhase::Starting);
        match Connection::open(&self.shared, generation).await {
            Ok(connection) => {
                self.shared.progress(StartPhase::Started);
                *self.restarts.lock().unwrap_or_else(PoisonError::into_inner) = Restarts::default();
                self.learned(&connection.info);
                let connection = Arc::new(connection);
                *slot = Some(Arc::clone(&connection));
                self.watch();
                Ok(connection)
            }
            Err(error) => {
                self.shared.progress(StartPhase::Failed);
                let mut restarts = self.restarts.lock().unwrap_or_else(PoisonError::into_inner);
                restarts.failures = restarts.failures.saturating_add(1);
                restarts.last_failure = Some(Instant::now());
                Err(error)
            }
        }
    }

    /// What the agent said about itself shapes the harness's capabilities.
    fn learned(&self, info: &AgentInfo) {
        *self.info.write().unwrap_or_else(PoisonError::into_inner) = Some(info.clone());
        let mut descriptor = self
            .descriptor
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        descriptor.capabilities.multiple_working_directories = info
            .capabilities
            .session_capabilities
            .additional_directories
            .is_some()
            .then_some(MultipleWorkingDirectories {
                immutable_primary: true,
            });
        if let Some(implementation) = &info.implementation {
            descriptor.description = format!(
                "{} {} over the Agent Client Protocol (`{}`)",
                implementation
                    .title
                    .clone()
                    .unwrap_or_else(|| implementation.name.clone()),
                implementation.version,
                self.shared.spec.command.display()
            );
        }
    }

    /// The running connection, without starting one.
    pub async fn current(&self) -> Option<Arc<Connection>> {
        self.connection
            .lock()
            .await
            .as_ref()
            .filter(|connection| connection.is_alive())
            .cloned()
    }

    /// Stops the agent and everything it runs, giving them time to save what they keep.
    pub async fn stop(&self) {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.take() {
            connection.stop().await;
        }
    }

    /// The MCP servers lent to a chat's session: Hearth's own tools, unless opted out,
    /// knowing which chat they work for. An agent that takes MCP over HTTP gets the
    /// process's one lent-tools endpoint with the chat's token; any other gets a
    /// `hearth mcp --stdio` of its own.
    pub fn lent_servers(&self, connection: &Connection, chat: &ChatUri) -> Vec<acp::McpServer> {
        let Some(tools) = &self.shared.spec.lent_tools else {
            return Vec::new();
        };
        let over_http = connection.info.capabilities.mcp_capabilities.http;
        if over_http
            && let Some(endpoint) = &self.shared.options.lent_http
            && let Some((url, token)) = endpoint.lend(chat)
        {
            return vec![acp::McpServer::Http(
                acp::McpServerHttp::new("hearth", url).headers(vec![acp::HttpHeader::new(
                    "Authorization",
                    format!("Bearer {token}"),
                )]),
            )];
        }
        vec![acp::McpServer::Stdio(
            acp::McpServerStdio::new("hearth", tools.command.clone())
                .args(tools.args.clone())
                .env(
                    tools
                        .env
                        .iter()
                        .map(|(name, value)| acp::EnvVariable::new(name.clone(), value.clone()))
                        .chain([acp::EnvVariable::new(
                            hearth_core::LENT_CHAT_VARIABLE.to_owned(),
                            chat.to_string(),
                        )])
                        .collect(),
                ),
        )]
    }

    /// A route for a session: the chat, confined to the context's directories.
    pub fn route(&self, context: &ChatContext) -> Route {
        let denied: Vec<_> = self.shared.options.data_directory.iter().cloned().collect();
        let (open, protected): (Vec<PathBuf>, Vec<PathBuf>) = context
            .working_directories
            .iter()
            .cloned()
            .partition(|directory| !inside_any(directory, &denied));
        // Of the directories inside the data directory, only the readable ones (the
        // context cache) are kept, for reading.
        let (readable, refused): (Vec<PathBuf>, Vec<PathBuf>) = protected
            .into_iter()
            .partition(|directory| inside_any(directory, &self.shared.options.readable));
        for directory in &refused {
            tracing::warn!(
                agent = %self.shared.agent(),
                directory = %directory.display(),
                "a session directory inside Hearth's data directory is off limits"
            );
        }
        let read_only = if readable.is_empty() {
            None
        } else {
            Roots::new(&readable, &[])
                .inspect_err(|error| {
                    tracing::warn!(%error, "the readable session directories cannot be opened");
                })
                .ok()
        };
        let roots = match Roots::new(&open, &denied) {
            Ok(roots) => Some(roots),
            Err(error) => {
                tracing::warn!(
                    agent = %self.shared.agent(),
                    chat = %context.chat,
                    %error,
                    "the session's working directories cannot be used; its file and terminal requests will be refused"
                );
                None
            }
        };
        let mut route = Route::new(context.chat.clone(), roots);
        route.read_only = read_only;
        route
    }

    /// Takes what a session answer says of modes and models into the chat's route.
    pub fn take_settings(
        route: &mut Route,
        modes: Option<&acp::SessionModeState>,
        options: Option<&[acp::SessionConfigOption]>,
        raw: &Value,
    ) -> Option<String> {
        if let Some(modes) = modes {
            route.agent_state.modes = Some(mapping::modes(modes));
        }
        if let Some(options) = options {
            if let Some((id, models)) = mapping::config_choice(options, mapping::Setting::Model) {
                route.model_option = Some(id);
                route.agent_state.models = Some(models);
            }
            if let Some((id, modes)) = mapping::config_choice(options, mapping::Setting::Mode) {
                route.mode_option = Some(id);
                route.agent_state.modes = Some(modes);
            }
        }
        if route.agent_state.models.is_none() {
            route.agent_state.models = mapping::legacy_models(raw);
        }
        route
            .agent_state
            .models
            .as_ref()
            .map(|models| models.current.clone())
    }

    /// Lists the agent's own sessions and offers them to the host.
    pub async fn discover(&self, connection: &Connection) -> Result<()> {
        if connection
            .info
            .capabilities
            .session_capabilities
            .list
            .is_none()
        {
            return Ok(());
        }
        let mut found = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..LIST_PAGES {
            let request = acp::ListSessionsRequest::new().cursor(cursor.clone());
            let answer = connection
                .request(
                    "session/list",
                    request,
                    Some(self.shared.options.timeouts.request),
                )
                .await?;
            for session in answer.sessions {
                let id = session.session_id.to_string();
                let Ok(conversation_id) = ConversationId::parse(&id) else {
                    tracing::debug!(agent = %self.shared.agent(), session = %id, "skipping a session whose id Hearth cannot use");
                    continue;
                };
                let updated_at = session
                    .updated_at
                    .as_deref()
                    .and_then(|text| chrono::DateTime::parse_from_rfc3339(text).ok())
                    .map_or_else(now, |time| time.with_timezone(&chrono::Utc));
                let mut directories = vec![session.cwd.clone()];
                directories.extend(session.additional_directories.iter().cloned());
                let mut conversation = AcpConversation::new(self.shared.agent(), directories);
                conversation.session_id = Some(id);
                conversation.title.clone_from(&session.title);
                conversation.external = true;
                let chat = external_chat(&self.shared.spec.id, &conversation_id);
                let provider_data = match hearth_harness::encode(&chat, &conversation) {
                    Ok(data) => data,
                    Err(error) => {
                        tracing::warn!(%error, "could not record a discovered session");
                        continue;
                    }
                };
                found.push(DiscoveredChat {
                    conversation: conversation_id,
                    title: session.title,
                    started_at: updated_at,
                    updated_at,
                    provider_data,
                    working_directory: Some(session.cwd),
                });
            }
            cursor = answer.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
        if !found.is_empty() {
            self.shared
                .sink
                .get()
                .send(HarnessEvent::DiscoverChats {
                    provider: self.shared.spec.id.clone(),
                    chats: found,
                    peers: crate::presets::catalog_peers(&self.shared.spec.id),
                })
                .await;
        }
        Ok(())
    }

    /// Hands a changed conversation to the host.
    pub async fn publish_conversation(&self, chat: &ChatUri, data: HarnessData) {
        self.shared
            .sink
            .get()
            .progress(
                chat,
                Signal::ProviderDataChanged {
                    provider_data: data,
                },
            )
            .await;
    }

    /// Tells the host that a chat goes on in a new session of the agent, so that the
    /// session is known as the chat's (never listed or imported as someone else's).
    pub async fn publish_session(&self, chat: &ChatUri, session_id: &str) {
        let Ok(conversation) = ConversationId::parse(session_id) else {
            tracing::debug!(agent = %self.shared.agent(), session = %session_id, "a session id Hearth cannot mark");
            return;
        };
        self.shared
            .sink
            .get()
            .progress(chat, Signal::ConversationChanged { conversation })
            .await;
    }
}

/// The URI of the default chat a discovered session becomes (for error messages only).
fn external_chat(provider: &hearth_core::HarnessId, conversation: &ConversationId) -> ChatUri {
    match hearth_core::SessionId::parse(conversation.as_str()) {
        Ok(id) => ChatUri::default_for(&hearth_core::SessionUri::new(provider.clone(), id)),
        Err(_) => ChatUri::default_for(&hearth_core::SessionUri::new(
            provider.clone(),
            hearth_core::SessionId::generate(),
        )),
    }
}

impl From<hearth_harness::ConversationError> for Error {
    fn from(error: hearth_harness::ConversationError) -> Self {
        Self::Conversation(error.to_string())
    }
}

/// Whether `path` is one of `directories` or inside one, compared in canonical form
/// where the paths exist.
fn inside_any(path: &Path, directories: &[PathBuf]) -> bool {
    let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let path = canonical(path);
    directories
        .iter()
        .any(|directory| path.starts_with(canonical(directory)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn restarts_after_failed_starts_wait_longer_each_time_up_to_a_bound() {
        let mut restarts = Restarts::default();
        assert_eq!(
            restarts.pause(),
            Duration::ZERO,
            "the first start never waits"
        );
        let failed = Instant::now();
        for (failures, expected) in [(1, 1), (2, 2), (3, 4), (4, 8), (6, 30), (40, 30)] {
            restarts.failures = failures;
            restarts.last_failure = Some(failed);
            let expected = Duration::from_secs(expected);
            assert_eq!(restarts.pause_at(failed), expected, "{failures} failures");
            // Time already passed since the failure counts.
            let later = failed + Duration::from_millis(700);
            assert_eq!(
                restarts.pause_at(later),
                expected - Duration::from_millis(700),
                "{failures} failures"
            );
            assert_eq!(
                restarts.pause_at(failed + Duration::from_secs(3600)),
                Duration::ZERO
            );
        }
    }
}
