//! `hearth trash`: the sessions and projects deleted, restorable until the trash is
//! emptied — by `hearth trash empty`, or by itself after `[history] trash_days`.

use std::process::ExitCode;

use anyhow::bail;
use clap::Subcommand;
use hearth_core::{SessionUri, Timestamp, escape_controls_inline};
use hearth_store::{Store, TrashItem, TrashKind};
use hearth_tools::{Actor, Emptying, UserActor};
use serde_json::json;

use crate::toolbox::{json_line, write_out};
use hearth_app::App;

/// `hearth trash` subcommands.
#[derive(Debug, Subcommand)]
pub enum TrashCommand {
    /// List what was deleted, newest first, with when each is erased by itself.
    List {
        /// One JSON object per item.
        #[arg(long)]
        json: bool,
    },
    /// Bring a session or project back from the trash.
    Restore {
        /// A session's URI or id, a project's id, or the first 4+ characters of one (as
        /// `trash list` shows them).
        id: String,
    },
    /// Erase what is in the trash, as securely as deleting did (audited).
    Empty {
        /// Only what was deleted at least this many days ago.
        #[arg(long, value_name = "DAYS")]
        older_than: Option<u32>,
    },
}

/// Runs `hearth trash …`.
pub async fn trash(app: &App, command: TrashCommand) -> anyhow::Result<ExitCode> {
    let store = app.open_store().await?;
    match command {
        TrashCommand::List { json } => list(app, store.as_ref(), json).await?,
        TrashCommand::Restore { id } => restore(app, store.as_ref(), &id).await?,
        TrashCommand::Empty { older_than } => {
            let audit = app.audit_log(store.clone());
            let erased = hearth_tools::empty_trash(
                store.as_ref(),
                &audit,
                Actor::User(UserActor::cli()),
                Emptying::Asked {
                    older_than_days: older_than,
                },
            )
            .await?;
            write_out(&format!(
                "Erased {} from the trash.\n",
                plural(erased.len(), "item")
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// The id `trash list` shows: a session's id (its URI's part after `<provider>/`), or a
/// project's id.
fn short_id(item: &TrashItem) -> String {
    match item.kind {
        TrashKind::Session => SessionUri::parse(&item.id)
            .map(|uri| uri.id().to_string())
            .unwrap_or_else(|_| item.id.clone()),
        TrashKind::Project => item.id.clone(),
    }
}

/// `hearth trash list`.
async fn list(app: &App, store: &dyn Store, json: bool) -> anyhow::Result<()> {
    let items = store.trash_items().await?;
    let days = app.config.history.trash_days();
    let purge = |item: &TrashItem| hearth_tools::purge_at(item.deleted_at, days);
    if json {
        for item in &items {
            json_line(&json!({
                "kind": item.kind.as_str(),
                "id": item.id,
                "title": item.title,
                "deletedAt": item.deleted_at.to_rfc3339(),
                "purgeAt": purge(item).map(|at| at.to_rfc3339()),
            }))?;
        }
        return Ok(());
    }
    if items.is_empty() {
        return write_out("The trash is empty.\n");
    }
    for item in &items {
        let title = item.title.as_deref().map_or_else(
            || "untitled".to_owned(),
            |title| escape_controls_inline(title).into_owned(),
        );
        write_out(&format!(
            "{}  {} {title} · deleted {} · {}\n",
            short_id(item),
            item.kind.as_str(),
            crate::render::local_time(&item.deleted_at),
            erased_when(purge(item)),
        ))?;
    }
    Ok(())
}

fn erased_when(purge_at: Option<Timestamp>) -> String {
    match purge_at {
        Some(at) => format!("erased {}", crate::render::local_time(&at)),
        None => "kept until `hearth trash empty`".to_owned(),
    }
}

/// The one item `key` names: its full id, or the start (4+ characters) of its short id.
fn find<'a>(items: &'a [TrashItem], key: &str) -> anyhow::Result<&'a TrashItem> {
    if let Some(item) = items.iter().find(|item| item.id == key) {
        return Ok(item);
    }
    if key.chars().count() < 4 {
        bail!(
            "`{key}` is too short to name a trash item: give 4 or more characters of its id (`hearth trash list` shows them)"
        );
    }
    let matching: Vec<&TrashItem> = items
        .iter()
        .filter(|item| short_id(item).starts_with(key))
        .collect();
    match matching.as_slice() {
        [item] => Ok(item),
        [] => bail!(
            "nothing in the trash has the id `{key}` (`hearth trash list` shows what is there)"
        ),
        several => bail!(
            "`{key}` could be any of {}; give more of its id",
            several
                .iter()
                .map(|item| item.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `hearth trash restore`: through the running server when there is one, so its
/// clients list the session again at once.
async fn restore(app: &App, store: &dyn Store, key: &str) -> anyhow::Result<()> {
    let items = store.trash_items().await?;
    let item = find(&items, key)?;
    if let Some(remote) = crate::remote::connect(app).await? {
        let kind = match item.kind {
            TrashKind::Session => hearth_protocol::TrashKind::Session,
            TrashKind::Project => hearth_protocol::TrashKind::Project,
        };
        crate::remote::restore_from_trash(&remote, kind, &item.id).await?;
    } else {
        store.restore_from_trash(item.kind, &item.id).await?;
    }
    write_out(&format!("restored {} {}\n", item.kind.as_str(), item.id))
}
