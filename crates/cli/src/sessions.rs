//! `hearth sessions …` and `hearth chats …`. Listings read the store directly (no harness
//! needed to look at history); delete and fork go through the host and the harness.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Subcommand;
use hearth_core::{ChatUri, HarnessId, Turn, TurnId};
use hearth_store::{ChatRecord, ScopeFilter, SessionQuery, Store};
use serde_json::json;

use crate::render;
use hearth_app::App;
use hearth_app::harnesses::{self, HarnessOptions};

/// `hearth sessions` subcommands.
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions, newest first.
    List(ListArgs),
    /// Show a session: its chats and their turns.
    Show {
        /// Session URI, id, or the first 4+ characters of its id (`sessions list` shows them).
        session: String,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete a session: to the trash (`hearth trash restore` brings it back), or erased
    /// at once when it was never used. Discovery never lists it again.
    Delete {
        /// Session URI, id, or the first 4+ characters of its id (`sessions list` shows them).
        session: String,
    },
    /// Fork a session at a turn into a new session.
    Fork {
        /// Session URI, id, or the first 4+ characters of its id (`sessions list` shows them).
        session: String,
        /// The last turn to copy: its index (1 is the first, -1 the last), its id, or
        /// the first 4+ characters of its id, as `sessions show` lists them (default:
        /// the latest).
        #[arg(long, allow_hyphen_values = true)]
        turn: Option<String>,
    },
}

/// `hearth sessions list` arguments.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only this provider.
    #[arg(long, conflicts_with = "agent")]
    provider: Option<String>,
    /// Only this external agent's sessions.
    #[arg(long)]
    agent: Option<String>,
    /// Only conversations the agents had outside Hearth (each installed agent, or the
    /// one of --agent, is asked for its own list first).
    #[arg(long)]
    external: bool,
    /// Only this project.
    #[arg(long, conflicts_with = "global")]
    project: Option<String>,
    /// Only the global scope.
    #[arg(long)]
    global: bool,
    /// Page size.
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// Continue after a cursor printed by a previous page.
    #[arg(long)]
    cursor: Option<String>,
    /// One JSON object per line (keys in camelCase), sessions only: when there is a next
    /// page, `hearth: more: --cursor CURSOR` goes to stderr.
    #[arg(long)]
    json: bool,
}

/// `hearth chats` subcommands.
#[derive(Debug, Subcommand)]
pub enum ChatsCommand {
    /// List the chats of a session.
    List {
        /// Session URI, id, or the first 4+ characters of its id (`sessions list` shows them).
        session: String,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Show one chat's turns.
    Show {
        /// Chat URI, id, or the first 4+ characters of its id (`chats list` shows them;
        /// a session's id names its default chat).
        chat: String,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
}

#[allow(clippy::print_stderr)]
fn eprintln_warning(message: &str) {
    eprintln!("hearth: warning: {message}");
}

fn write_out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    Ok(stdout.flush()?)
}

fn json_line(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut line = crate::shown::json(value)?;
    line.push('\n');
    write_out(&line)
}

/// Turns as stored, with ones whose writer stopped marked incomplete.
async fn stored_turns(store: &dyn Store, chat: &ChatUri) -> anyhow::Result<Vec<Turn>> {
    let mut turns = store.turns(chat).await?;
    for turn in &mut turns {
        turn.settle_if_stale();
    }
    Ok(turns)
}

async fn existing_session(
    store: &dyn Store,
    text: &str,
) -> anyhow::Result<hearth_core::SessionSummary> {
    let uri = crate::names::session(store, text).await?;
    match store.session(&uri).await? {
        Some(summary) => Ok(summary),
        None if store.is_tombstoned(&uri).await? => bail!("session `{uri}` was deleted"),
        None => bail!("session `{uri}` does not exist (see `hearth sessions list`)"),
    }
}

/// The providers whose sessions are the offline demo.
fn demo_providers(app: &App) -> Vec<HarnessId> {
    harnesses::build(app, &HarnessOptions::default())
        .map(|agents| {
            agents
                .iter()
                .map(|agent| agent.descriptor())
                .filter(|descriptor| descriptor.demo)
                .map(|descriptor| descriptor.id)
                .collect()
        })
        .unwrap_or_default()
}

fn is_demo(app: &App, provider: &HarnessId) -> bool {
    demo_providers(app).contains(provider)
}

/// Runs `hearth sessions …`.
pub async fn sessions(app: &App, command: SessionsCommand) -> anyhow::Result<ExitCode> {
    match command {
        SessionsCommand::List(args) => list(app, args).await,
        SessionsCommand::Show { session, json } => show(app, &session, json).await,
        SessionsCommand::Delete { session } => delete(app, &session).await,
        SessionsCommand::Fork { session, turn } => fork(app, &session, turn).await,
    }
}

/// A host of this process over the data directory's store, with every harness, for a
/// command that acts on sessions without a server.
async fn local_host(app: &App) -> anyhow::Result<hearth_host::Host> {
    let store = app.open_store().await?;
    let agents = harnesses::build(
        app,
        &HarnessOptions {
            store: Some(store.clone()),
            ..HarnessOptions::default()
        },
    )?;
    Ok(app.start_host(store, agents, "cli"))
}

/// `hearth sessions list`.
async fn list(app: &App, args: ListArgs) -> anyhow::Result<ExitCode> {
    let query = query_of(app, &args).await?;
    let asked = asked_agents(app, &args, query.provider.as_ref());
    let page = match crate::remote::connect(app).await? {
        Some(remote) => {
            for provider in &asked {
                if let Err(error) = crate::remote::start_harness(&remote, provider).await {
                    eprintln_warning(&format!("{provider}: {}", crate::shown::error(&error)));
                }
            }
            crate::remote::list_sessions(&remote, &query).await?
        }
        None => {
            if !asked.is_empty() {
                start_agents(app, &asked).await?;
            }
            app.open_store().await?.list_sessions(&query).await?
        }
    };
    if args.json {
        for session in &page.sessions {
            json_line(session)?;
        }
        if let Some(cursor) = &page.next_cursor {
            crate::shown::more(cursor);
        }
    } else {
        let store = app.open_store().await?;
        write_out(&render_page(app, store.as_ref(), &page).await?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The store's query for `list`'s arguments.
async fn query_of(app: &App, args: &ListArgs) -> anyhow::Result<SessionQuery> {
    let scope = match (&args.project, args.global) {
        (Some(project), _) => crate::projects::scope_filter(app, project).await?,
        (None, true) => ScopeFilter::Global,
        (None, false) => ScopeFilter::Any,
    };
    let provider = match &args.agent {
        Some(agent) => Some(crate::run::agent_provider(app, agent)?),
        None => args.provider.clone(),
    };
    Ok(SessionQuery {
        scope,
        provider: provider.as_deref().map(HarnessId::parse).transpose()?,
        provenance: args.external.then_some(hearth_core::Provenance::External),
        title_contains: None,
        pinned: None,
        archived: None,
        viewer: None,
        cursor: args.cursor.clone(),
        limit: args.limit,
    })
}

/// The agents asked for their own lists first (`--external`): the one named, or every
/// installed one.
fn asked_agents(app: &App, args: &ListArgs, provider: Option<&HarnessId>) -> Vec<HarnessId> {
    if !args.external {
        return Vec::new();
    }
    match provider {
        Some(provider) => vec![provider.clone()],
        None => harnesses::external_agents(app)
            .0
            .into_iter()
            .filter(|agent| agent.installed.is_ok())
            .map(|agent| agent.spec.id)
            .collect(),
    }
}

/// Starts these agents in this process, so the conversations they list join the store.
async fn start_agents(app: &App, asked: &[HarnessId]) -> anyhow::Result<()> {
    let host = local_host(app).await?;
    let started =
        futures::future::join_all(asked.iter().map(|provider| host.start_harness(provider))).await;
    for (provider, result) in asked.iter().zip(started) {
        if let Err(error) = result {
            eprintln_warning(&format!(
                "{provider}: {}",
                crate::shown::message(&error.to_string())
            ));
        }
    }
    host.shutdown().await;
    Ok(())
}

/// A page of sessions as a table, each with the shortest start of its id that names it.
async fn render_page(
    app: &App,
    store: &dyn Store,
    page: &hearth_store::SessionPage,
) -> anyhow::Result<String> {
    if page.sessions.is_empty() {
        return Ok("no sessions yet — start one with `hearth run \"hello\"`\n".to_owned());
    }
    let mut short = Vec::with_capacity(page.sessions.len());
    for session in &page.sessions {
        short.push(crate::names::short_session(store, &session.uri).await?);
    }
    let width = short.iter().map(String::len).max().unwrap_or(0);
    let mut out = format!(
        "{:<width$}  {:<16}  {:<14}  {:<40}  {}\n",
        "ID", "UPDATED", "PROVIDER", "TITLE", "SESSION"
    );
    let demo = demo_providers(app);
    for (session, short) in page.sessions.iter().zip(&short) {
        // A title an agent gave: escaped, then cut to its column.
        let mut title: String = session.title.as_deref().map_or_else(
            || "(untitled)".to_owned(),
            |title| hearth_core::escape_controls_inline(title).into_owned(),
        );
        if title.chars().count() > 40 {
            title = title.chars().take(39).collect::<String>() + "…";
        }
        out.push_str(&format!(
            "{short:<width$}  {:<16}  {:<14}  {:<40}  {}\n",
            render::local_time(&session.updated_at),
            if demo.contains(&session.harness) {
                format!("{} (demo)", session.harness)
            } else {
                session.harness.to_string()
            },
            title,
            session.uri
        ));
    }
    if let Some(cursor) = &page.next_cursor {
        out.push_str(&format!("more: hearth sessions list --cursor {cursor}\n"));
    }
    Ok(out)
}

/// `hearth sessions show`.
async fn show(app: &App, session: &str, json: bool) -> anyhow::Result<ExitCode> {
    if let Some(remote) = crate::remote::connect(app).await? {
        let uri = crate::names::session_in(app, session).await?;
        crate::remote::show_session(&remote, &uri.to_string(), json).await?;
        return Ok(ExitCode::SUCCESS);
    }
    let store = app.open_store().await?;
    let summary = existing_session(store.as_ref(), session).await?;
    let default = ChatUri::default_for(&summary.uri);
    if summary.provenance == hearth_core::Provenance::External
        && store.turns(&default).await?.is_empty()
    {
        // A conversation an agent had outside Hearth: its history comes from the agent
        // (which replays it) the first time it is opened, and stays.
        let host = local_host(app).await?;
        let opened = host.chat(&default).await;
        host.shutdown().await;
        opened.with_context(|| format!("opening {} with its agent", summary.uri))?;
    }
    let chats = store.chats(&summary.uri).await?;
    show_session(app, store.as_ref(), &summary, &chats, json).await?;
    Ok(ExitCode::SUCCESS)
}

/// `hearth sessions delete`: to the trash, or erased when it was never used.
#[allow(clippy::print_stderr)]
async fn delete(app: &App, session: &str) -> anyhow::Result<ExitCode> {
    let uri = crate::names::session_in(app, session).await?;
    let trashed = if let Some(remote) = crate::remote::connect(app).await? {
        crate::remote::delete_session(&remote, &uri.to_string()).await?
    } else {
        let host = local_host(app).await?;
        let deleted = host.delete_session(&uri).await?;
        host.shutdown().await;
        if let Some(reason) = deleted.without_harness {
            eprintln!(
                "hearth: its agent could not open it ({}), so only Hearth's record was deleted; a conversation the agent keeps itself is left as it is",
                crate::shown::message(&reason)
            );
        }
        deleted.removal == hearth_store::Removal::Trashed
    };
    write_out(&format!("deleted {uri}\n"))?;
    if trashed {
        eprintln!(
            "hearth: it is in the trash until it is emptied; `hearth trash restore {}` brings it back",
            uri.id()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `hearth sessions fork`.
async fn fork(app: &App, session: &str, turn: Option<String>) -> anyhow::Result<ExitCode> {
    let uri = crate::names::session_in(app, session).await?;
    if let Some(remote) = crate::remote::connect(app).await? {
        let forked = crate::remote::fork_session(&remote, &uri, turn).await?;
        write_out(&format!("{forked}\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let host = local_host(app).await?;
    // From the store (a fork copies stored turns, so its agent need not be here); a
    // conversation an agent had outside Hearth comes from the agent.
    let chat = ChatUri::default_for(&uri);
    let stored = app.open_store().await?.turns(&chat).await?;
    let turns = if stored.is_empty() {
        host.chat(&chat).await?.turns
    } else {
        stored
    };
    let ids: Vec<&str> = turns.iter().map(|turn| turn.id.as_str()).collect();
    let turn_id: TurnId = match turn {
        Some(turn) => turns[crate::names::turn_index(&ids, &turn)?].id.clone(),
        None => turns
            .last()
            .map(|turn| turn.id.clone())
            .context("the session has no turns to fork at")?,
    };
    let forked = host.fork_session(&uri, &turn_id).await?;
    host.shutdown().await;
    write_out(&format!("{forked}\n"))?;
    Ok(ExitCode::SUCCESS)
}

async fn show_session(
    app: &App,
    store: &dyn Store,
    summary: &hearth_core::SessionSummary,
    chats: &[ChatRecord],
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let mut rendered = Vec::new();
        for chat in chats {
            let turns = stored_turns(store, &chat.summary.uri).await?;
            rendered.push(json!({ "summary": chat.summary, "draft": chat.draft, "turns": turns }));
        }
        return json_line(&json!({ "session": summary, "chats": rendered }));
    }
    let mut out = String::new();
    render::session_header(summary, is_demo(app, &summary.harness), &mut out);
    for chat in chats {
        out.push('\n');
        out.push_str(&render::chat_heading(&chat.summary));
        out.push('\n');
        render_turns(&stored_turns(store, &chat.summary.uri).await?, &mut out);
        if let Some(draft) = &chat.draft {
            out.push_str(&format!(
                "(draft) {}\n",
                hearth_core::escape_controls(draft)
            ));
        }
    }
    write_out(&out)
}

/// A chat's turns, each under a line with its index and the shortest start of its id
/// that names it (what `sessions fork --turn` takes).
fn render_turns(turns: &[Turn], out: &mut String) {
    let ids: Vec<&str> = turns.iter().map(|turn| turn.id.as_str()).collect();
    for ((index, turn), short) in turns
        .iter()
        .enumerate()
        .zip(crate::names::short_among(&ids))
    {
        out.push_str(&format!("turn {}  {short}\n", index + 1));
        render::turn(turn, out);
    }
}

/// Runs `hearth chats …`.
pub async fn chats(app: &App, command: ChatsCommand) -> anyhow::Result<ExitCode> {
    let store = app.open_store().await?;
    match command {
        ChatsCommand::List { session, json } => {
            let summary = existing_session(store.as_ref(), &session).await?;
            let chats = store.chats(&summary.uri).await?;
            if json {
                for chat in &chats {
                    json_line(&chat.summary)?;
                }
            } else {
                let mut short = Vec::with_capacity(chats.len());
                for chat in &chats {
                    short.push(crate::names::short_chat(store.as_ref(), &chat.summary.uri).await?);
                }
                let width = short.iter().map(String::len).max().unwrap_or(0);
                let mut out = String::new();
                for (chat, short) in chats.iter().zip(&short) {
                    out.push_str(&format!(
                        "{short:<width$}  {}\n",
                        render::chat_heading(&chat.summary)
                    ));
                }
                write_out(&out)?;
            }
        }
        ChatsCommand::Show { chat, json } => {
            let uri = crate::names::chat(store.as_ref(), &chat).await?;
            let session = existing_session(store.as_ref(), &uri.session().to_string()).await?;
            let chats = store.chats(&session.uri).await?;
            let Some(record) = chats.iter().find(|record| record.summary.uri == uri) else {
                bail!(
                    "chat `{uri}` does not exist (see `hearth chats list {}`)",
                    session.uri
                );
            };
            let turns = stored_turns(store.as_ref(), &uri).await?;
            if json {
                json_line(
                    &json!({ "summary": record.summary, "draft": record.draft, "turns": turns }),
                )?;
            } else {
                let mut out = render::chat_heading(&record.summary);
                out.push('\n');
                render_turns(&turns, &mut out);
                write_out(&out)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
