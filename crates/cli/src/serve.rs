//! `hearth serve` (JSON-RPC over WebSocket, the MCP endpoint), `hearth app-server
//! --stdio` (the same protocol on stdin/stdout for editors) and `hearth mcp --stdio`
//! (Hearth's tools for an MCP client that starts it).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use hearth_host::Host;
use hearth_server::{
    Backend, DEFAULT_PORT, Listener, ServerOptions, ServerRecord, load_or_create_token,
    lock_data_directory, login_key_file, remove_record, serve_mcp_stdio, serve_stdio, server_file,
    write_record,
};

use hearth_app::App;
use hearth_app::tools::Tools;

/// Sessions nobody used (no subscriber, no running turn) for this long are released
/// from memory; they reload on next use.
const IDLE_EVICTION: Duration = Duration::from_secs(30 * 60);

/// Releases idle sessions now and then, for as long as the host lives.
fn evict_idle_sessions(host: &Host) {
    let host = host.clone();
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(Duration::from_secs(60));
        ticker.tick().await;
        loop {
            ticker.tick().await;
            let evicted = host.evict_idle(IDLE_EVICTION).await;
            if evicted > 0 {
                tracing::debug!(evicted, "released idle sessions");
            }
        }
    });
}

/// How often a server looks for answers given beside it.
const OUTSIDE_ANSWERS: Duration = Duration::from_millis(500);

/// How often it looks when the database announces changes (PostgreSQL): only to catch
/// what a lost announcement did not say.
const OUTSIDE_ANSWERS_ANNOUNCED: Duration = Duration::from_secs(5);

/// Waits for the next announced changes (never, without a feed): those that came at once,
/// as one batch; `None` when the feed ended.
async fn announced(
    changes: &mut Option<tokio::sync::mpsc::Receiver<hearth_store::Change>>,
) -> Option<Vec<hearth_store::Change>> {
    match changes {
        Some(feed) => {
            let mut batch = vec![feed.recv().await?];
            while let Ok(change) = feed.try_recv() {
                batch.push(change);
            }
            Some(batch)
        }
        None => std::future::pending().await,
    }
}

/// Follows the turns another node stores in chats this host has loaded, as they go;
/// returns whether a look for answers and sessions is due.
async fn follow_announced(host: &Host, batch: Vec<hearth_store::Change>) -> bool {
    let mut look = false;
    let mut turns = std::collections::BTreeSet::new();
    for change in batch {
        match change {
            hearth_store::Change::Turn(chat) => {
                turns.insert(chat);
            }
            hearth_store::Change::Chat(_) | hearth_store::Change::Session(_) => look = true,
            hearth_store::Change::Summary(session) => match host.store().session(&session).await {
                Ok(Some(summary)) => {
                    if let Err(error) = host.summary_changed(summary) {
                        tracing::debug!(%session, %error, "could not announce a session's new summary");
                    }
                }
                Ok(None) => {}
                Err(error) => {
                    tracing::debug!(%session, %error, "could not read a session another node changed")
                }
            },
            hearth_store::Change::Asked(ask) => {
                if let Err(error) = host.take_ask(&ask).await {
                    tracing::info!(chat = %ask.chat(), %error, "could not do what another node asked of a turn answered here");
                }
            }
        }
    }
    for chat in turns {
        if let Err(error) = host.follow_outside_turn(&chat).await {
            tracing::debug!(%chat, %error, "could not follow a turn answered on another node");
        }
    }
    look
}

/// Picks up what other Hearth processes or nodes answered in the chats this server holds
/// (a `hearth chat` beside it, another node on the same PostgreSQL database) and the
/// sessions they made, so its clients see them without reloading: as soon as the
/// database announces them, and now and then in any case.
fn pick_up_outside_answers(host: &Host, store: std::sync::Arc<dyn hearth_store::Stores>) {
    let host = host.clone();
    tokio::spawn(async move {
        let mut changes = match store.changes().await {
            Ok(changes) => changes,
            Err(error) => {
                tracing::warn!(%error, "cannot listen for changes of other nodes; looking for them now and then");
                None
            }
        };
        let every = if changes.is_some() {
            OUTSIDE_ANSWERS_ANNOUNCED
        } else {
            OUTSIDE_ANSWERS
        };
        let mut ticker = tokio::time::interval(every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticker.tick() => {}
                batch = announced(&mut changes) => match batch {
                    Some(batch) => {
                        if !follow_announced(&host, batch).await {
                            continue;
                        }
                    }
                    None => {
                        tracing::warn!("the change feed ended; looking for changes now and then");
                        changes = None;
                        ticker = tokio::time::interval(OUTSIDE_ANSWERS);
                    }
                },
            }
            match host.pick_up_outside_answers().await {
                Ok(0) => {}
                Ok(read) => tracing::debug!(read, "read again chats answered beside the server"),
                Err(error) => {
                    tracing::debug!(%error, "could not look for answers given beside the server")
                }
            }
            match host.pick_up_outside_sessions().await {
                Ok(0) => {}
                Ok(added) => tracing::debug!(added, "sessions made beside the server"),
                Err(error) => {
                    tracing::debug!(%error, "could not look for sessions made beside the server")
                }
            }
        }
    });
}

/// OpenID Connect login for a team server's users: an identity the provider verified
/// logs in as the user it logged in as before, or as a new user named after it.
fn oidc_login(
    config: &hearth_config::OidcConfig,
    accounts: std::sync::Arc<dyn hearth_store::Stores>,
) -> hearth_server::OidcOptions {
    let resolver: hearth_server::IdentityResolver = std::sync::Arc::new(move |identity| {
        let accounts = accounts.clone();
        Box::pin(async move {
            let name = identity
                .name
                .clone()
                .or_else(|| {
                    identity
                        .email
                        .as_deref()
                        .and_then(|email| email.split('@').next())
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| identity.subject.clone());
            accounts
                .user_for_identity(&identity.issuer, &identity.subject, &name)
                .await
                .map(|user| user.id)
                .map_err(|error| {
                    tracing::warn!(%error, "cannot record a user logging in");
                    "Hearth cannot record your login now; try again in a moment".to_owned()
                })
        })
    });
    hearth_server::OidcOptions {
        issuer_url: config.issuer.clone(),
        client_id: config.client_id.clone(),
        client_secret: std::env::var("HEARTH_OIDC_CLIENT_SECRET")
            .ok()
            .filter(|secret| !secret.is_empty())
            .or_else(|| config.client_secret.clone()),
        resolver,
    }
}

/// `hearth serve` arguments.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Port to listen on (default: `[server] port`, else 8421; 0 picks a free one).
    #[arg(long)]
    port: Option<u16>,
    /// Address to listen on (default: `[server] bind`, else 127.0.0.1).
    #[arg(long, value_name = "ADDRESS")]
    bind: Option<String>,
    /// Allow a non-loopback address. Other machines can then reach Hearth (they still
    /// need the token).
    #[arg(long)]
    allow_remote: bool,
    /// Also accept requests from this browser origin (`http://host:port`), e.g. a web UI
    /// served elsewhere. Repeatable.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Also accept this host name in the Host header (with --allow-remote). Repeatable.
    #[arg(long = "allow-host", value_name = "NAME")]
    allow_hosts: Vec<String>,
    /// Replay scenario file for the `replay` provider (default: the built-in demo).
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
    /// Keep everything in this PostgreSQL database (`postgres://user:password@host/db`)
    /// instead of the data directory's SQLite file, so that several `hearth serve` nodes
    /// share it (default: `HEARTH_STORE_URL`, else `[store] url`).
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// A team server with users: accept the API tokens `hearth users add` and
    /// `hearth users token` print (and web logins), each user reaching only what is
    /// theirs or their teams' (default: `[server] users`). The install token stays the
    /// operator's.
    #[arg(long)]
    users: bool,
}

/// `hearth app-server` arguments.
#[derive(Debug, clap::Args)]
pub struct AppServerArgs {
    /// Speak the protocol on stdin/stdout, one JSON message per line (required).
    #[arg(long, required = true)]
    stdio: bool,
    /// Replay scenario file for the `replay` provider (default: the built-in demo).
    #[arg(long, value_name = "FILE")]
    scenario: Option<PathBuf>,
}

/// `hearth mcp` arguments.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct McpArgs {
    /// Speak MCP on stdin/stdout.
    #[arg(long)]
    stdio: bool,
    /// The MCP servers Hearth's agent uses.
    #[command(subcommand)]
    command: Option<crate::mcp_servers::McpCommand>,
}

fn server_options(app: &App, args: &ServeArgs) -> anyhow::Result<ServerOptions> {
    let bind = args
        .bind
        .clone()
        .or_else(|| app.config.server.bind.clone())
        .unwrap_or_else(|| "127.0.0.1".to_owned());
    let port = args.port.or(app.config.server.port).unwrap_or(DEFAULT_PORT);
    let mut options = ServerOptions::at(&bind, port)?;
    let server = &app.config.server;
    let at_least_one = |key: &str, value: u64| {
        if value == 0 {
            bail!("[server] {key} in the config file must be at least 1");
        }
        Ok(value)
    };
    if let Some(days) = server.login_days {
        let days = at_least_one("login_days", u64::from(days))?;
        options.login_lifetime = Duration::from_secs(days.saturating_mul(24 * 60 * 60));
    }
    if let Some(seconds) = server.header_read_timeout_seconds {
        let seconds = at_least_one("header_read_timeout_seconds", seconds)?;
        options.header_read_timeout = Duration::from_secs(seconds);
    }
    if let Some(seconds) = server.idle_timeout_seconds {
        let seconds = at_least_one("idle_timeout_seconds", seconds)?;
        options.idle_timeout = Duration::from_secs(seconds);
    }
    if let Some(connections) = server.max_connections {
        if connections == 0 {
            bail!("[server] max_connections in the config file must be at least 1");
        }
        options.max_connections = connections;
    }
    options.login_key_file = Some(login_key_file(&app.paths.home));
    options.allow_remote = args.allow_remote;
    options.extra_origins.clone_from(&args.allow_origins);
    options.extra_hosts.clone_from(&args.allow_hosts);
    // A prompt as large as the limits allow still fits one message, so a client that
    // sends one too large gets Hearth's error, not a closed connection.
    options.max_request_bytes = options.max_request_bytes.max(
        app.limits()
            .prompt_bytes
            .saturating_mul(2)
            .saturating_add(1024 * 1024),
    );
    options.check()?;
    Ok(options)
}

/// A host and everything around it, over one store.
async fn backend(app: &App, scenario: Option<PathBuf>, source: &str) -> anyhow::Result<Backend> {
    Ok(
        hearth_app::backend::backend_and_gate(app, scenario, source, None, None)
            .await?
            .0,
    )
}

/// Resolves on Ctrl-C or SIGTERM.
fn shutdown_signal() -> impl Future<Output = ()> {
    // Listening starts now, not when the future is first polled: a SIGTERM that comes
    // while the server is being announced still stops it cleanly.
    #[cfg(unix)]
    let listeners = {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(interrupt), Ok(terminate)) => Some((interrupt, terminate)),
            (Err(error), _) | (_, Err(error)) => {
                tracing::warn!(%error, "cannot listen for Ctrl-C and SIGTERM");
                None
            }
        }
    };
    async move {
        #[cfg(unix)]
        if let Some((mut interrupt, mut terminate)) = listeners {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            return;
        }
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    }
}

/// Runs `hearth serve` until Ctrl-C or SIGTERM.
#[allow(clippy::print_stderr)]
pub async fn serve(app: &App, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let options = server_options(app, &args)?;
    // One server per data directory, for as long as this process lives.
    let _lock = lock_data_directory(&app.paths.home)?;
    let token_path = app.paths.token();
    let token = load_or_create_token(&token_path)?;
    // Bound first, so the tools know the real port to deny (`--port 0` picks one).
    let listener = Listener::bind(options).await?;
    let app = app
        .with_store_url(args.store.clone())
        .serving_on(listener.local_addr().port());
    let mut app = app;
    if args.users {
        app.config.server.users = Some(true);
    }
    let backend = backend(&app, args.scenario, "server").await?;
    let listener = match (&app.config.server.oidc, &backend.accounts) {
        (Some(oidc), Some(accounts)) => listener.with_oidc(oidc_login(oidc, accounts.clone())),
        (Some(_), None) => bail!(
            "[server.oidc] logs a team server's users in: start it with `--users` (or `[server] users = true`)"
        ),
        (None, _) => listener,
    };
    let host = backend.host.clone();
    evict_idle_sessions(&host);
    // Opening the store emptied what `[history] trash_days` passed for; so does each day.
    if let Some(audit) = backend.audit.clone() {
        app.empty_expired_trash_daily(app.open_store().await?, audit);
    }
    // Where things stand when the server starts: sessions made beside it from now on are
    // announced to its clients.
    if let Err(error) = host.pick_up_outside_sessions().await {
        tracing::debug!(%error, "could not note the sessions there are");
    }
    pick_up_outside_answers(&host, app.open_store().await?);
    // The agents' own stores, read in the background: start-up never waits for them.
    let importing = tokio::spawn(hearth_app::history::import_in_background(app.clone()));
    let server = listener.into_server(backend, token)?;
    let url = server.url();
    let stop = shutdown_signal();
    eprintln!(
        "hearth: serving on {url} (WebSocket {url}/rpc, MCP {url}/mcp); clients authenticate with the token in {}",
        token_path.display()
    );
    match server.login_url() {
        Ok(login) => eprintln!(
            "hearth: Agent Home: open {login}\n        (the link works once; `hearth login` prints another)"
        ),
        Err(error) => tracing::warn!(%error, "cannot make a login link"),
    }
    // Written last: clients that find it find a server that said where it is.
    let record_path = server_file(&app.paths.home);
    write_record(
        &record_path,
        &ServerRecord {
            url: url.clone(),
            port: server.local_addr().port(),
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        },
    )?;
    let served = server.serve(stop).await;
    importing.abort();
    remove_record(&record_path);
    host.shutdown().await;
    served.context("serving")?;
    eprintln!("hearth: stopped");
    Ok(ExitCode::SUCCESS)
}

/// Runs `hearth app-server --stdio` until stdin closes.
pub async fn app_server(app: &App, args: AppServerArgs) -> anyhow::Result<ExitCode> {
    if !args.stdio {
        bail!("`hearth app-server` speaks only over stdio: pass --stdio");
    }
    let backend = backend(app, args.scenario, "app-server").await?;
    let host = backend.host.clone();
    pick_up_outside_answers(&host, app.open_store().await?);
    let served = serve_stdio(backend).await;
    host.shutdown().await;
    served?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `hearth mcp --stdio` until the client leaves.
pub async fn mcp(app: &App, args: McpArgs) -> anyhow::Result<ExitCode> {
    if let Some(command) = args.command {
        return crate::mcp_servers::run(app, command).await;
    }
    if !args.stdio {
        bail!(
            "`hearth mcp` speaks only over stdio here (pass --stdio; `hearth serve` offers MCP at /mcp), or use `hearth mcp list`"
        );
    }
    let tools = Tools::open(app).await?;
    serve_mcp_stdio(hearth_app::tools::lent_toolbox(app, &tools), lent_chat()).await?;
    Ok(ExitCode::SUCCESS)
}

/// The chat an agent's lent tools work for, as Hearth named it when it lent them; a
/// value that is no chat URI is said and left out (the calls are then the MCP
/// session's own).
#[allow(clippy::print_stderr)]
fn lent_chat() -> Option<hearth_core::ChatUri> {
    let value = std::env::var(hearth_core::LENT_CHAT_VARIABLE).ok()?;
    match hearth_core::ChatUri::parse(&value) {
        Ok(chat) => Some(chat),
        Err(error) => {
            eprintln!(
                "hearth: ignoring {}: {error}",
                hearth_core::LENT_CHAT_VARIABLE
            );
            None
        }
    }
}

/// `hearth login` arguments.
#[derive(Debug, clap::Args)]
pub struct LoginArgs {
    /// Log every browser out instead: the login key is replaced, and a running server
    /// ends the sessions at once.
    #[arg(long)]
    revoke: bool,
}

/// `hearth login`: a one-time link that logs a browser into the running server's Harness
/// Home; `--revoke` logs every browser out.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub async fn login(app: &App, args: LoginArgs) -> anyhow::Result<ExitCode> {
    let record = hearth_server::read_record(&server_file(&app.paths.home));
    if args.revoke {
        return revoke_logins(app, record).await;
    }
    let Some(record) = record else {
        bail!(
            "no Hearth server is running for {}; start one with `hearth serve` (it prints a login link)",
            app.paths.home.display()
        );
    };
    let token = hearth_server::read_token(&app.paths.token())?;
    let link = hearth_server::login_link(&record.url, &token)
        .await
        .context("asking the running server for a login link")?;
    println!("{link}");
    eprintln!("hearth: open it in a browser on this machine; it works once");
    Ok(ExitCode::SUCCESS)
}

/// `hearth login --revoke`: the running server replaces the login key (and closes the
/// sessions' sockets); without one, the key file is replaced here.
#[allow(clippy::print_stderr)]
async fn revoke_logins(
    app: &App,
    record: Option<hearth_server::ServerRecord>,
) -> anyhow::Result<ExitCode> {
    let key_file = login_key_file(&app.paths.home);
    let Some(record) = record else {
        hearth_server::rotate_login_key(&key_file)?;
        eprintln!(
            "hearth: every browser is logged out (a new login key is in {}); `hearth login` logs one in again",
            key_file.display()
        );
        return Ok(ExitCode::SUCCESS);
    };
    let token = hearth_server::read_token(&app.paths.token())?;
    if let Err(error) = hearth_server::revoke_browser_sessions(&record.url, &token).await {
        // The key file is replaced anyway, so the sessions end when that server restarts.
        hearth_server::rotate_login_key(&key_file)?;
        bail!(
            "the server at {} did not end the browser sessions ({error}); a new login key is in {}, so they end when it restarts: stop it and start it again",
            record.url,
            key_file.display()
        );
    }
    eprintln!(
        "hearth: every browser is logged out (the server at {} ended their sessions); `hearth login` logs one in again",
        record.url
    );
    Ok(ExitCode::SUCCESS)
}
