//! What a server, an editor's ACP session and the app-server are built from: one store,
//! the tools and their gate, the harnesses, the projects as scopes, and the host over
//! them; and the context materializer of the data directory.

use std::path::PathBuf;
use std::sync::Arc;

use hearth_fetch::Fetcher;
use hearth_host::Host;
use hearth_projects::context::{ContextCache, Materializer};
use hearth_server::{Backend, GateApprovals};
use hearth_store::Stores;

use crate::app::App;
use crate::harnesses::{self, HarnessOptions};
use crate::tools::Tools;

/// The materializer of this data directory: its cache, through the guarded fetcher,
/// over a team server's shared context cache when one is configured (which needs
/// `store` on PostgreSQL, for its advisory locks).
pub fn materializer(app: &App, store: &Arc<dyn Stores>) -> anyhow::Result<Materializer> {
    let fetcher = Arc::new(Fetcher::new(crate::tools::fetch_policy(app))?);
    let (isolator, memory_bytes) = app.isolator()?;
    let materializer = Materializer::new(
        ContextCache::new(app.paths.context_cache()),
        fetcher,
        hearth_projects::convert::ConvertLimits {
            isolation: hearth_projects::convert::Isolation::Child {
                isolator,
                memory_bytes,
            },
            ..hearth_projects::convert::ConvertLimits::default()
        },
    )
    .protecting(vec![app.paths.home.clone()]);
    Ok(match crate::shared_context::shared_cache(app, store)? {
        Some(shared) => materializer.sharing(shared),
        None => materializer,
    })
}

/// A backend, and the approval gate its approvals decide through (for a surface that
/// records decisions under its own name, like `hearth acp`); the native agent offers
/// the MCP servers of `session_mcp` in their sessions, and reads the files of the
/// sessions in `client_files` through their client.
pub async fn backend_and_gate(
    app: &App,
    scenario: Option<PathBuf>,
    source: &str,
    session_mcp: Option<hearth_mcp_client::SessionMcpServers>,
    client_files: Option<hearth_projects::ClientFiles>,
) -> anyhow::Result<(Backend, hearth_tools::ApprovalGate)> {
    let store = app.open_store().await?;
    // A shared context cache named wrongly stops a server from starting, saying why.
    crate::shared_context::shared_cache(app, &store)?;
    let tools = Tools::over(app, store.clone())?;
    let discovery = harnesses::discover(app, harnesses::ollama_may_matter(app, None)).await;
    for problem in &discovery.problems {
        tracing::warn!("{problem}");
    }
    let default_provider = harnesses::default_provider(app, &discovery)?;
    let (agents, natives) = harnesses::build_for_server(
        app,
        &HarnessOptions {
            scenario,
            discovery: Some(discovery),
            store: Some(store.clone()),
            session_mcp,
            client_files,
            ..HarnessOptions::default()
        },
    )?;
    let scopes = app.scopes(&store);
    let projects = hearth_projects::Projects::new(store.clone());
    // A team server's users: their agents reach only the calendars granted to them.
    let accounts = (app.config.server.users == Some(true)).then(|| store.clone());
    if let Some(accounts) = &accounts {
        let calendars = app.config.calendars.keys().cloned().collect();
        tools
            .registry
            .admit_with(Arc::new(crate::team::CalendarGrants::new(
                accounts.clone(),
                calendars,
            )));
    }
    let host = Host::start(store.clone(), agents, app.host_config(source, scopes));
    let approvals = GateApprovals::new(tools.gate.clone(), tools.registry.audit().clone());
    let gate = tools.gate.clone();
    let backend = Backend {
        host,
        config: app.config.clone(),
        default_provider: Some(default_provider),
        toolbox: Some(crate::tools::lent_toolbox(app, &tools)),
        approvals: Some(Arc::new(approvals)),
        projects: Some(projects),
        calendars: Some(crate::tools::build_calendars(app)?),
        attachments: Some(app.paths.home.join("attachments")),
        materializer: match materializer(app, &store) {
            Ok(materializer) => Some(materializer),
            Err(error) => {
                tracing::warn!("project context cannot be prepared from a client: {error:#}");
                None
            }
        },
        paths: Some(app.paths.clone()),
        audit: Some(tools.registry.audit().clone()),
        provider_harnesses: Some(Arc::new(natives)),
        accounts,
    };
    Ok((backend, gate))
}
