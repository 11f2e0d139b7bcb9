//! `hearth export` and `hearth import`: a session as Markdown (to read) or as a JSON
//! Lines archive (lossless), everything as one archive, and an archive read into this
//! data directory — all or nothing, ids kept, what is already here skipped and named.

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use hearth_fs::{FilePermissions, WriteMode};
use hearth_store::ImportReport;

use crate::toolbox::write_out;
use hearth_app::App;

/// What `hearth export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For reading: title, agent, folder, then each turn's prompt, answer and tool calls.
    Markdown,
    /// Lossless JSON Lines, what `hearth import` reads.
    Jsonl,
}

/// `hearth export` arguments.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The session: its URI, id, or the first 4+ characters of its id.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    session: Option<String>,
    /// Every project and session (also those in the trash) with all their records, as
    /// one JSON Lines archive.
    #[arg(long, requires = "output", conflicts_with = "format")]
    all: bool,
    /// Markdown to read, or JSON Lines that `hearth import` reads back.
    #[arg(long, value_enum, default_value = "markdown")]
    format: Format,
    /// Write to this file (private to you) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// `hearth import` arguments.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// An archive from `hearth export --all` or `hearth export --format jsonl`.
    archive: PathBuf,
}

/// Writes `bytes` to `output` (atomically, readable by its owner only), or to stdout.
fn deliver(output: Option<&Path>, bytes: &[u8]) -> anyhow::Result<()> {
    match output {
        Some(path) => {
            hearth_fs::write_atomic(path, bytes, WriteMode::Replace, FilePermissions::Private)
                .with_context(|| format!("writing {}", path.display()))
        }
        None => write_out(&String::from_utf8_lossy(bytes)),
    }
}

/// Runs `hearth export`.
pub async fn export(app: &App, args: ExportArgs) -> anyhow::Result<ExitCode> {
    let store = app.open_store().await?;
    let mut bytes = Vec::new();
    if args.all {
        store.export_all(&mut bytes).await?;
    } else {
        let Some(session) = args.session.as_deref() else {
            bail!("name a session to export, or give --all");
        };
        let uri = crate::names::session_in(app, session).await?;
        match args.format {
            Format::Markdown => {
                bytes = hearth_store::session_markdown(store.as_ref(), &uri)
                    .await?
                    .into_bytes();
            }
            Format::Jsonl => bytes = store.archive_session(&uri).await?.into_bytes(),
        }
    }
    deliver(args.output.as_deref(), &bytes)?;
    Ok(ExitCode::SUCCESS)
}

fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        format!("1 {noun}")
    } else {
        format!("{count} {noun}s")
    }
}

/// Runs `hearth import`.
#[allow(clippy::print_stderr)]
pub async fn import(app: &App, args: ImportArgs) -> anyhow::Result<ExitCode> {
    let file = std::fs::File::open(&args.archive)
        .with_context(|| format!("opening {}", args.archive.display()))?;
    let store = app.open_store().await?;
    let report: ImportReport = store
        .import_archive(&mut BufReader::new(file))
        .await
        .with_context(|| format!("importing {}", args.archive.display()))?;
    write_out(&format!(
        "Imported {}, {} ({}, {}) and {}.\n",
        plural(report.projects, "project"),
        plural(report.sessions, "session"),
        plural(report.chats, "chat"),
        plural(report.turns, "turn"),
        plural(report.proposals, "proposal"),
    ))?;
    for (kind, id) in &report.skipped {
        eprintln!(
            "hearth: skipped {kind} {id}: this data directory already has it (left as it is)"
        );
    }
    Ok(ExitCode::SUCCESS)
}
