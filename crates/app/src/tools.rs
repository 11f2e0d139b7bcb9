//! The tools Hearth's agents call, assembled once: the registry and its approval gate
//! over the store, `web_fetch` (its pages read in isolated children), `file_read`, the
//! calendars (local files, subscriptions and CalDAV through the guarded fetcher), the
//! `[mcp_servers]`, and the data-flow guard around all of it; the toolbox lent to other
//! agents over MCP.

use std::sync::Arc;

use chrono::Duration;
use chrono_tz::Tz;
use futures::future::BoxFuture;
use hearth_calendar::{
    CalendarError, CalendarOptions, Calendars, DavRequest, DavResponse, DavTransport, LocalSource,
    Subscription, SubscriptionSource, calendar_tools, parse_time_zone,
};
use hearth_core::{
    SessionUri, ToolCallContext, ToolCallOutcome, ToolDescription, ToolHandler, ToolReach, Toolbox,
};
use hearth_fetch::{
    ContentTypes, FetchObserver, FetchOutcome, FetchPolicy, FetchRecord, FetchRequest, Fetcher,
    PrivateNetworks, WEB_FETCH_TOOL, WebFetchTool,
};
use hearth_harness_native::UserTimeZone;
use hearth_mcp_client::{McpTools, SessionMcpServers};
use hearth_projects::ClientFiles;
use hearth_server::{DEFAULT_PORT, read_record, server_file};
use hearth_store::Stores;
use hearth_tools::{
    Actor, ApprovalGate, AuditEntry, AuditKind, AuditLog, AuditOutcome, ChatHistory,
    DEFAULT_PROPOSAL_EXPIRY_DAYS, DataFlowGuard, Decision, FlowFacts, Taint, ToolRegistry, Trusted,
};
use serde_json::Value;
use tokio::sync::OnceCell;

use crate::app::App;

/// The MCP servers of `[mcp_servers]`, with the data directory's fetch policy.
pub fn mcp_tools(app: &App) -> McpTools {
    McpTools::from_config(&app.config.mcp_servers, fetch_policy(app))
}

/// The user's time zone: `[defaults] time_zone`, else the system's, else UTC.
pub fn user_zone(app: &App) -> Tz {
    if let Some(name) = app.config.defaults.time_zone.as_deref()
        && let Ok(zone) = parse_time_zone(name)
    {
        return zone;
    }
    match UserTimeZone::from_config(&app.config) {
        UserTimeZone::Named(zone) => zone,
        UserTimeZone::SystemLocal => Tz::UTC,
    }
}

/// Fetches `http(s)`/`webcal` subscriptions through the guarded fetcher (private
/// networks only when the subscription allows them); reads local ones from disk.
struct GuardedSource {
    public: Arc<Fetcher>,
    private: Arc<Fetcher>,
}

impl SubscriptionSource for GuardedSource {
    fn fetch<'a>(
        &'a self,
        subscription: &'a Subscription,
    ) -> BoxFuture<'a, hearth_calendar::Result<Vec<u8>>> {
        Box::pin(async move {
            let url = match (&subscription.path, subscription.url.as_deref()) {
                (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
                    url.to_owned()
                }
                (None, Some(url)) if url.starts_with("webcal://") => {
                    format!("https://{}", &url["webcal://".len()..])
                }
                _ => return LocalSource.fetch(subscription).await,
            };
            let fetcher = if subscription.allow_private_network {
                &self.private
            } else {
                &self.public
            };
            let request = FetchRequest::new(url.clone(), ContentTypes::any())
                .with_max_bytes(subscription.max_bytes);
            let response = fetcher
                .fetch(&request)
                .await
                .map_err(|error| CalendarError::Fetch {
                    id: subscription.calendar.clone(),
                    url,
                    message: error.to_string(),
                })?;
            Ok(response.body.to_vec())
        })
    }
}

/// Reaches CalDAV servers through the guarded fetcher: private networks only for a
/// calendar that allows them (cloud metadata and link-local addresses never), every
/// redirect re-checked, the password sent to the configured origin only.
pub struct GuardedDav {
    pub(crate) public: Arc<Fetcher>,
    pub(crate) private: Arc<Fetcher>,
}

impl DavTransport for GuardedDav {
    fn send(&self, request: DavRequest) -> BoxFuture<'_, Result<DavResponse, String>> {
        Box::pin(async move {
            let fetcher = if request.allow_private_network {
                &self.private
            } else {
                &self.public
            };
            let mut fetch = FetchRequest::new(request.url.clone(), ContentTypes::any())
                .with_max_bytes(request.max_bytes)
                .with_method(request.method, request.body.unwrap_or_default())
                .with_any_status();
            for (name, value) in request.headers {
                fetch = fetch.with_header(name, value);
            }
            if let Some(authorization) = request.authorization {
                fetch = fetch.with_credential("Authorization", authorization);
            }
            let response = fetcher.fetch(&fetch).await.map_err(|error| {
                let mut message = error.to_string();
                if error.rule().is_some() && !request.allow_private_network {
                    message.push_str(
                        " (if the server is on your own network, set `allow_private_network = true` for this calendar)",
                    );
                }
                message
            })?;
            Ok(DavResponse {
                status: response.status,
                etag: response.etag,
                body: response.body.to_vec(),
            })
        })
    }
}

/// Two guarded fetchers under `policy`: public addresses only, and private networks
/// allowed too (for sources the user marked as theirs).
pub fn public_and_private(policy: FetchPolicy) -> anyhow::Result<(Arc<Fetcher>, Arc<Fetcher>)> {
    let public = Arc::new(Fetcher::new(policy.clone())?);
    let private = Arc::new(Fetcher::new(
        policy.with_private_networks(PrivateNetworks::Allow),
    )?);
    Ok((public, private))
}

/// How long one CalDAV request may take: a first sync of a large calendar is one long
/// listing (a server such as Radicale indexes thousands of events for it).
const CALDAV_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(180);

/// The CalDAV transport of this app.
pub fn dav_transport(app: &App) -> anyhow::Result<GuardedDav> {
    // Each request carries the calendar size limit as its own cap.
    let (public, private) = public_and_private(
        fetch_policy(app)
            .with_total_timeout(CALDAV_TIMEOUT)
            .with_max_response_bytes(hearth_calendar::DEFAULT_MAX_CALENDAR_BYTES),
    )?;
    Ok(GuardedDav { public, private })
}

/// The fetch policy: Hearth's own ports denied — the configured one, the one this
/// process serves on, and the one a running server recorded in the data directory.
pub fn fetch_policy(app: &App) -> FetchPolicy {
    let recorded = read_record(&server_file(&app.paths.home)).map(|record| record.port);
    [app.serving_port, recorded].into_iter().flatten().fold(
        FetchPolicy::default().deny_own_port(app.config.server.port.unwrap_or(DEFAULT_PORT)),
        FetchPolicy::deny_own_port,
    )
}

/// The configured calendars (`[calendars.*]`), with a default local calendar under
/// `<data dir>/calendars` created on first write when none is a writable default.
/// Problems with the configuration are not reported here (the tools' build does).
pub fn build_calendars(app: &App) -> anyhow::Result<Calendars> {
    let (public, private) = public_and_private(fetch_policy(app))?;
    let options = CalendarOptions::new(app.paths.calendars(), user_zone(app))
        .with_subscription_source(Arc::new(GuardedSource { public, private }))
        .with_dav_transport(Arc::new(dav_transport(app)?));
    Ok(Calendars::from_config(&app.config.calendars, options))
}

/// The configured calendars, warning about those that cannot be used.
pub fn calendars(app: &App) -> anyhow::Result<Calendars> {
    let calendars = build_calendars(app)?;
    for problem in calendars.problems() {
        tracing::warn!(
            "calendar `{}` in {}: {}",
            problem.calendar,
            app.paths.config_file.display(),
            problem.message
        );
    }
    Ok(calendars)
}

/// How long proposals wait for the user: `[agent] proposal_expiry_days` (default 7).
pub fn proposal_expiry(app: &App) -> anyhow::Result<Duration> {
    match app.config.agent.proposal_expiry_days {
        Some(0) => anyhow::bail!(
            "[agent] proposal_expiry_days in {} is 0; set it to at least 1 (days a proposal waits for approval)",
            app.paths.config_file.display()
        ),
        days => Ok(Duration::days(i64::from(
            days.unwrap_or(DEFAULT_PROPOSAL_EXPIRY_DAYS),
        ))),
    }
}

/// Records every `web_fetch` fetch in the audit log.
pub fn fetch_observer(audit: AuditLog) -> impl FetchObserver {
    move |call: &ToolCallContext, record: &FetchRecord| {
        let outcome = match &record.outcome {
            FetchOutcome::Fetched => AuditOutcome::ok_with(
                record
                    .status
                    .map_or_else(|| "fetched".to_owned(), |status| format!("HTTP {status}")),
            ),
            FetchOutcome::Refused { message, .. } | FetchOutcome::Failed { message } => {
                AuditOutcome::error(message)
            }
        };
        let detail = serde_json::to_value(record).unwrap_or(Value::Null);
        audit.record_detached(
            AuditEntry::new(
                Actor::Agent(call.chat.clone()),
                AuditKind::Fetch,
                Decision::Fetched,
                outcome,
            )
            .tool(WEB_FETCH_TOOL)
            .detail(detail),
        );
    }
}

/// Every tool: `web_fetch` (deny-private policy; fetches recorded in `audit` when given)
/// and the calendar tools.
pub fn handlers(app: &App, audit: Option<&AuditLog>) -> anyhow::Result<Vec<Arc<dyn ToolHandler>>> {
    handlers_reading(app, audit, ClientFiles::default())
}

/// [`handlers`], with `file_read` reading the files of the sessions in `client_files`
/// through their client.
pub fn handlers_reading(
    app: &App,
    audit: Option<&AuditLog>,
    client_files: ClientFiles,
) -> anyhow::Result<Vec<Arc<dyn ToolHandler>>> {
    let fetcher = Arc::new(Fetcher::new(fetch_policy(app))?);
    let (isolator, memory_bytes) = app.isolator()?;
    let mut web = WebFetchTool::new(fetcher)?.with_isolation(
        isolator,
        hearth_process::JobLimits {
            memory_bytes,
            ..hearth_process::JobLimits::default()
        },
    );
    if let Some(audit) = audit {
        web = web.with_observer(Arc::new(fetch_observer(audit.clone())));
    }
    let files =
        hearth_projects::FileReadTool::new(app.paths.home.clone(), app.paths.context_cache())
            .with_client_files(client_files);
    let mut tools: Vec<Arc<dyn ToolHandler>> = vec![Arc::new(web), Arc::new(files)];
    // Problems with the calendar configuration are reported once, by the registry's build.
    let calendars = if audit.is_some() {
        calendars(app)?
    } else {
        build_calendars(app)?
    };
    tools.extend(calendar_tools(calendars));
    Ok(tools)
}

/// The registry and its gate, over the app's store.
pub struct Tools {
    /// What agents call.
    pub registry: ToolRegistry,
    /// The user's side of proposals.
    pub gate: ApprovalGate,
    /// The store they work on.
    pub store: Arc<dyn Stores>,
}

impl Tools {
    /// Builds the tools over `store`.
    pub fn over(app: &App, store: Arc<dyn Stores>) -> anyhow::Result<Self> {
        Self::over_reading(app, store, ClientFiles::default())
    }

    /// [`Tools::over`], with `file_read` reading the files of the sessions in
    /// `client_files` through their client.
    fn over_reading(
        app: &App,
        store: Arc<dyn Stores>,
        client_files: ClientFiles,
    ) -> anyhow::Result<Self> {
        let audit = app.audit_log(store.clone());
        let mut builder = ToolRegistry::builder(store.clone(), audit.clone());
        builder.register_all(handlers_reading(app, Some(&audit), client_files)?)?;
        builder.proposal_expiry(proposal_expiry(app)?);
        let registry = builder.build();
        Ok(Self {
            gate: registry.gate(),
            registry,
            store,
        })
    }

    /// Opens the store and builds the tools.
    pub async fn open(app: &App) -> anyhow::Result<Self> {
        let store = app.open_store().await?;
        Self::over(app, store)
    }
}

/// A toolbox that opens the database on the first call, so harnesses can be built
/// without waiting for it. Lists its tools at once.
struct LazyToolbox {
    descriptions: Vec<ToolDescription>,
    /// Where each of the registry's tools reaches.
    reaches: std::collections::HashMap<String, ToolReach>,
    /// The registry, built on the first call (shared with the data-flow guard).
    registry: Arc<LazyRegistry>,
    /// The `[mcp_servers]` tools (their servers start on the first listing).
    mcp: McpTools,
    /// The MCP servers of single sessions (`hearth acp`'s editor-passed servers).
    session_mcp: Option<SessionMcpServers>,
}

/// The store and the registry over it, made on first use.
struct LazyRegistry {
    app: App,
    /// The sessions whose files `file_read` reads through their client.
    client_files: ClientFiles,
    store: OnceCell<Arc<dyn Stores>>,
    registry: OnceCell<ToolRegistry>,
}

impl LazyRegistry {
    fn new(app: &App, client_files: ClientFiles) -> Self {
        Self {
            app: app.clone(),
            client_files,
            store: OnceCell::new(),
            registry: OnceCell::new(),
        }
    }

    /// A registry over an open store.
    fn over(app: &App, tools: &Tools) -> Self {
        Self {
            app: app.clone(),
            client_files: ClientFiles::default(),
            store: OnceCell::new_with(Some(tools.store.clone())),
            registry: OnceCell::new_with(Some(tools.registry.clone())),
        }
    }

    async fn store(&self) -> anyhow::Result<&Arc<dyn Stores>> {
        self.store.get_or_try_init(|| self.app.open_store()).await
    }

    async fn registry(&self) -> anyhow::Result<&ToolRegistry> {
        self.registry
            .get_or_try_init(|| async {
                let store = self.store().await?.clone();
                Tools::over_reading(&self.app, store, self.client_files.clone())
                    .map(|tools| tools.registry)
            })
            .await
    }
}

impl LazyToolbox {
    /// The MCP servers of the session `call` is made in that own the tool `name`.
    fn session_mcp(&self, call: &ToolCallContext, name: &str) -> Option<McpTools> {
        self.session_mcp
            .as_ref()
            .and_then(|sessions| sessions.get(&call.session))
            .filter(|tools| tools.owns(name))
    }
}

impl Toolbox for LazyToolbox {
    fn tools(&self) -> Vec<ToolDescription> {
        let mut tools = self.descriptions.clone();
        tools.extend(self.mcp.descriptions());
        tools
    }

    /// The tools, then the session's own MCP servers' (a name already taken by a
    /// configured server's tool stays that tool's).
    fn tools_in(&self, session: &SessionUri) -> Vec<ToolDescription> {
        let mut tools = self.tools();
        if let Some(own) = self
            .session_mcp
            .as_ref()
            .and_then(|sessions| sessions.get(session))
        {
            tools.extend(own.descriptions());
        }
        tools
    }

    /// What an MCP server answers is private; the registry's tools say for themselves.
    fn reach(&self, name: &str) -> ToolReach {
        if self.mcp.owns(name)
            || self
                .session_mcp
                .as_ref()
                .is_some_and(|sessions| sessions.any_owns(name))
        {
            return ToolReach::Private;
        }
        self.reaches.get(name).copied().unwrap_or_default()
    }

    fn call<'a>(
        &'a self,
        call: &'a ToolCallContext,
        name: &'a str,
        arguments: Value,
    ) -> BoxFuture<'a, ToolCallOutcome> {
        Box::pin(async move {
            let registry = self.registry.registry().await;
            match registry {
                Ok(registry) if self.mcp.owns(name) => {
                    self.mcp
                        .call(call, name, arguments, Some(registry.audit()))
                        .await
                }
                Ok(registry) => match self.session_mcp(call, name) {
                    Some(own) => {
                        own.call(call, name, arguments, Some(registry.audit()))
                            .await
                    }
                    None => registry.call(call, name, arguments).await,
                },
                Err(error) => ToolCallOutcome {
                    content: format!(
                        "tools are unavailable: {error:#}; nothing was run — tell the user"
                    ),
                    is_error: true,
                    proposal: None,
                },
            }
        })
    }
}

/// The toolbox Hearth's own agents get: every tool behind the approval gate, recorded
/// in the audit log, the `[mcp_servers]` tools, and in a session with MCP servers of its
/// own (`session_mcp`), theirs; `file_read` reads the files of the sessions in
/// `client_files` through their client; all of it behind the data-flow guard. The
/// database opens on the first call.
pub fn agent_toolbox(
    app: &App,
    session_mcp: Option<SessionMcpServers>,
    client_files: Option<ClientFiles>,
) -> anyhow::Result<Arc<dyn Toolbox>> {
    let handlers = handlers(app, None)?;
    let descriptions = handlers
        .iter()
        .map(|tool| ToolDescription::of(tool.as_ref()))
        .collect();
    let reaches = handlers
        .iter()
        .map(|tool| (tool.name().to_owned(), tool.reach()))
        .collect();
    proposal_expiry(app)?;
    let registry = Arc::new(LazyRegistry::new(app, client_files.unwrap_or_default()));
    let inner = Arc::new(LazyToolbox {
        descriptions,
        reaches,
        registry: Arc::clone(&registry),
        mcp: mcp_tools(app),
        session_mcp,
    });
    let facts = Arc::new(StoredFlowFacts { registry });
    Ok(Arc::new(DataFlowGuard::new(inner, facts, Taint::Tracked)))
}

/// A toolbox lent to another agent or MCP client (`hearth mcp --stdio`, `/mcp`): the
/// registry behind the data-flow guard, every chat taken to hold private data (such
/// an agent reads files on its own, where Hearth cannot see), so its requests go only
/// to the sites `[fetch] allow` names.
pub fn lent_toolbox(app: &App, tools: &Tools) -> Arc<dyn Toolbox> {
    let facts = Arc::new(StoredFlowFacts {
        registry: Arc::new(LazyRegistry::over(app, tools)),
    });
    Arc::new(DataFlowGuard::new(
        Arc::new(tools.registry.clone()),
        facts,
        Taint::Assumed,
    ))
}

/// What the data-flow guard learns from the store (a chat's prompts and tool calls, a
/// project's sources) and the configuration (`[fetch] allow`).
struct StoredFlowFacts {
    registry: Arc<LazyRegistry>,
}

impl StoredFlowFacts {
    async fn store(&self) -> Option<&Arc<dyn Stores>> {
        match self.registry.store().await {
            Ok(store) => Some(store),
            Err(error) => {
                tracing::warn!(%error, "the data-flow guard cannot read the store");
                None
            }
        }
    }
}

impl FlowFacts for StoredFlowFacts {
    fn history<'a>(&'a self, call: &'a ToolCallContext) -> BoxFuture<'a, ChatHistory> {
        Box::pin(async move {
            let Some(store) = self.store().await else {
                return ChatHistory::default();
            };
            let turns = match hearth_store::Store::turns(store.as_ref(), &call.chat).await {
                Ok(turns) => turns,
                Err(error) => {
                    tracing::warn!(%error, chat = %call.chat, "the data-flow guard cannot read the chat");
                    return ChatHistory::default();
                }
            };
            let mut history = ChatHistory::default();
            for turn in turns {
                history.prompts.push(turn.user.text);
                history
                    .tool_calls
                    .extend(turn.parts.into_iter().filter_map(|part| match part {
                        hearth_core::ResponsePart::ToolCall(call) => {
                            Some((call.name, call.arguments))
                        }
                        _ => None,
                    }));
            }
            history
        })
    }

    fn named_elsewhere<'a>(&'a self, call: &'a ToolCallContext) -> BoxFuture<'a, Trusted> {
        Box::pin(async move {
            let mut trusted = Trusted::default();
            for entry in &self.registry.app.config.fetch.allow {
                trusted.add_entry(entry);
            }
            if let Some(project) = call.scope.project_id()
                && let Some(store) = self.store().await
                && let Ok(project) = hearth_projects::Projects::new(store.clone())
                    .get(project)
                    .await
                // Sites a project.md names count as the user's only while the user
                // trusts that file as it is (one changed mid-turn names nothing).
                && project.review.is_none()
                && let Ok(file) = project.file
            {
                for source in &file.sources {
                    if let hearth_projects::context::ContextSource::Web { url }
                    | hearth_projects::context::ContextSource::Youtube { url } = source
                    {
                        trusted.add_entry(url);
                    }
                }
            }
            trusted
        })
    }

    fn audit(&self) -> BoxFuture<'_, Option<AuditLog>> {
        Box::pin(async move {
            match self.registry.registry().await {
                Ok(registry) => Some(registry.audit().clone()),
                Err(error) => {
                    tracing::warn!(%error, "the data-flow guard cannot record its decisions");
                    None
                }
            }
        })
    }
}
