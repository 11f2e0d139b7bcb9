//! `/mcp` on a team server with users: a user's MCP clients reach Hearth's tools as that
//! user, with their API token.
//!
//! Their calls are recorded in one session of theirs, `hearth://mcp/<user id>`, made in
//! the store on their first request: owned by them, working in their own folder on the
//! server (never the server's working directory). So a calendar tool must name a
//! calendar granted to them (the toolbox admits calls by their session's owner), and
//! what a call stages is a proposal of theirs, which they see and decide and nobody
//! else's view shows. The install token's clients keep the operator's endpoint as it
//! was. Each user has an rmcp service of their own: MCP sessions never cross users.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hearth_core::{
    ChatOrigin, ChatSummary, ChatUri, HarnessId, Owner, Provenance, Scope, SessionId,
    SessionSummary, SessionUri, Toolbox,
};
use hearth_store::{ChatRecord, NewSession, StoreError, Stores};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tower::ServiceExt as _;

use crate::access::Principal;
use crate::mcp::{MCP_PROVIDER, McpTools};

type McpService = StreamableHttpService<McpTools, LocalSessionManager>;

/// Where a team server's users are kept, and their folders.
pub(crate) struct McpUsers {
    /// The team's store.
    pub stores: Arc<dyn Stores>,
    /// The data directory (users' folders are `users/<id>` in it).
    pub home: PathBuf,
}

/// The operator's service and each user's.
struct Routing {
    operator: McpService,
    toolbox: Arc<dyn Toolbox>,
    config: StreamableHttpServerConfig,
    users: McpUsers,
    services: Mutex<HashMap<String, McpService>>,
}

/// An rmcp service whose MCP sessions are made by `tools`.
pub(crate) fn service(
    config: StreamableHttpServerConfig,
    tools: impl Fn() -> std::io::Result<McpTools> + Send + Sync + 'static,
) -> McpService {
    let mut sessions = LocalSessionManager::default();
    // No SSE priming events: Gemini CLI's MCP client drops a connection that sends one
    // (see `LentEndpoint::start`).
    sessions.session_config.sse_retry = None;
    StreamableHttpService::new(tools, Arc::new(sessions), config)
}

/// `/mcp` routing the operator's requests to `operator` and each user's to theirs.
pub(crate) fn router(
    operator: McpService,
    toolbox: Arc<dyn Toolbox>,
    config: StreamableHttpServerConfig,
    users: McpUsers,
) -> Router {
    let routing = Arc::new(Routing {
        operator,
        toolbox,
        config,
        users,
        services: Mutex::new(HashMap::new()),
    });
    Router::new().fallback(route).with_state(routing)
}

async fn route(State(routing): State<Arc<Routing>>, request: Request) -> Response {
    let user = request
        .extensions()
        .get::<Principal>()
        .and_then(Principal::viewer)
        .map(|user| user.id.clone());
    let service = match user {
        None => routing.operator.clone(),
        Some(user) => match routing.for_user(&user).await {
            Ok(service) => service,
            Err(message) => {
                tracing::warn!(user, message, "a user's MCP request could not be served");
                return (StatusCode::SERVICE_UNAVAILABLE, message).into_response();
            }
        },
    };
    match service.oneshot(request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}

/// The session a user's MCP clients' calls are recorded in.
pub(crate) fn user_session(user: &str) -> Result<SessionUri, String> {
    let harness = HarnessId::parse(MCP_PROVIDER).map_err(|error| error.to_string())?;
    let id = SessionId::parse(user).map_err(|error| error.to_string())?;
    Ok(SessionUri::new(harness, id))
}

impl Routing {
    /// The user's service, made (with their session) on their first request.
    async fn for_user(&self, user: &str) -> Result<McpService, String> {
        if let Some(service) = self.lock().get(user) {
            return Ok(service.clone());
        }
        let folder = crate::sessions::user_folder_in(&self.users.home, user)?;
        let session = user_session(user)?;
        self.ensure_session(&session, user, &folder).await?;
        let toolbox = Arc::clone(&self.toolbox);
        let made = service(self.config.clone(), move || {
            Ok(McpTools::for_session(
                Arc::clone(&toolbox),
                session.clone(),
                vec![folder.clone()],
            ))
        });
        Ok(self.lock().entry(user.to_owned()).or_insert(made).clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, McpService>> {
        self.services.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes the user's MCP session in the store unless it is there (another node may
    /// be making it at the same moment).
    async fn ensure_session(
        &self,
        session: &SessionUri,
        user: &str,
        folder: &std::path::Path,
    ) -> Result<(), String> {
        let stores = &self.users.stores;
        let known = stores
            .session(session)
            .await
            .map_err(|error| format!("cannot read the session of your MCP clients: {error}"))?;
        if known.is_some() {
            return Ok(());
        }
        let now = hearth_core::now();
        let new = NewSession {
            summary: SessionSummary {
                uri: session.clone(),
                harness: session.harness().clone(),
                title: Some("Tools used by your MCP clients".to_owned()),
                provenance: Provenance::Hearth,
                source: MCP_PROVIDER.to_owned(),
                scope: Scope::Global,
                model: None,
                working_directories: vec![folder.to_path_buf()],
                started_at: now,
                updated_at: now,
                pinned: false,
                archived: false,
                owner: Some(Owner::user(user)),
            },
            default_chat: ChatRecord {
                summary: ChatSummary::new(ChatUri::default_for(session), ChatOrigin::User, now),
                provider_data: None,
                conversation: None,
                draft: None,
                queued: Vec::new(),
            },
        };
        match stores.create_session(&new).await {
            Ok(()) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(error) => Err(format!(
                "cannot make the session of your MCP clients: {error}"
            )),
        }
    }
}
