//! `hearth audit list|verify|export`: reading, checking and exporting the audit log.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use hearth_tools::{
    AuditLog, AuditQuery, AuditRow, ChainHead, ChainReport, DEFAULT_EXPORT_KEEP, MAX_EXPORT_KEEP,
};

use crate::render::local_time;
use crate::toolbox::{json_line, write_out};
use hearth_app::App;

/// `hearth audit …`.
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// List entries, newest first.
    List {
        /// At most this many.
        #[arg(long, default_value_t = 50)]
        limit: u32,
        /// Only entries of this actor (`user`, `hearth`, or a chat URI).
        #[arg(long)]
        actor: Option<String>,
        /// Only entries about this tool.
        #[arg(long)]
        tool: Option<String>,
        /// Only entries before this sequence number (to page back).
        #[arg(long)]
        before: Option<i64>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Check the log: the chain from the first entry (each entry sealed with the key in
    /// the data directory), the head file, and that every applied proposal has its
    /// entry; names the first entry that was changed, removed or inserted. Prints the
    /// head (SEQ:HASH) to keep somewhere Hearth cannot write.
    Verify {
        /// A head printed by an earlier verify (SEQ:HASH) that the log must still hold;
        /// may be repeated.
        #[arg(long = "head", value_name = "SEQ:HASH")]
        heads: Vec<ChainHead>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Export the newest entries as JSON Lines, oldest first.
    Export {
        /// How many of the newest entries to keep.
        #[arg(long, default_value_t = DEFAULT_EXPORT_KEEP)]
        keep: usize,
        /// Write to this file (replaced atomically) instead of stdout.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

fn render(row: &AuditRow) -> String {
    let entry = &row.entry;
    let mut line = format!(
        "{:>6}  {}  {:<10} {:<9}",
        row.seq,
        local_time(&entry.at),
        entry.kind,
        entry.decision
    );
    if let Some(tool) = &entry.tool {
        line.push_str(&format!(" {tool}"));
    }
    if let Some(proposal) = &entry.proposal_id {
        line.push_str(&format!(" [{proposal}]"));
    }
    line.push_str(&format!("  {}  by {}\n", entry.outcome, entry.actor));
    // Tool names and outcomes may quote an agent or a server: escaped.
    crate::shown::message(&line).into_owned()
}

/// Writes `text` to `path` atomically and durably (the user's export: its permissions
/// kept when it is replaced).
pub fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    hearth_fs::write_atomic(
        path,
        text.as_bytes(),
        hearth_fs::WriteMode::Replace,
        hearth_fs::FilePermissions::KeepExisting,
    )
    .map_err(|error| anyhow::anyhow!("cannot write {}: {error}", path.display()))
}

/// What `hearth audit verify` prints for an intact log.
fn render_intact(report: &ChainReport) -> String {
    let mut text = format!(
        "The audit log is intact: {} {}",
        report.rows,
        if report.rows == 1 { "entry" } else { "entries" }
    );
    match (report.keyed_from, &report.key_file) {
        (Some(1), Some(key)) => text.push_str(&format!(
            ", each sealed with the key in {}.\n",
            key.display()
        )),
        (Some(from), Some(key)) => text.push_str(&format!(
            "; entries 1 to {} predate the key and are chained with plain SHA-256, entries from {from} on are sealed with the key in {}.\n",
            from - 1,
            key.display()
        )),
        _ => text.push_str(".\n"),
    }
    for note in &report.notes {
        text.push_str(&format!("Note: {note}.\n"));
    }
    if let Some(head) = &report.head {
        text.push_str(&format!("Head: {head}\n"));
        text.push_str(&format!(
            "Keep the head somewhere Hearth cannot write (a note, a password manager): `hearth audit verify --head {head}` then shows whether the log still holds it, even if someone rewrote both the database and the files beside it.\n"
        ));
    }
    text
}

/// The audit log kept in `store`, with the key and head file of the app's data
/// directory.
pub fn log_in(app: &App, store: std::sync::Arc<dyn hearth_store::Stores>) -> AuditLog {
    app.audit_log(store)
}

/// Runs `hearth audit …`.
pub async fn audit(app: &App, command: AuditCommand) -> anyhow::Result<ExitCode> {
    let log = log_in(app, app.open_store().await?);
    match command {
        AuditCommand::List {
            limit,
            actor,
            tool,
            before,
            json,
        } => {
            let rows = log
                .list(&AuditQuery {
                    before,
                    actor,
                    tool,
                    limit,
                })
                .await?;
            if rows.is_empty() && !json {
                write_out("The audit log has no entries.\n")?;
            }
            for row in &rows {
                if json {
                    json_line(row)?;
                } else {
                    write_out(&render(row))?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        AuditCommand::Verify { heads, json } => verify(&log, &heads, json).await,
        AuditCommand::Export { keep, output } => {
            if keep == 0 || keep > MAX_EXPORT_KEEP {
                anyhow::bail!("--keep must be between 1 and {MAX_EXPORT_KEEP}");
            }
            let text = log.export_jsonl(keep).await?;
            match output {
                Some(path) => {
                    write_atomically(&path, &text)?;
                    let count = text.lines().count();
                    tracing::info!("exported {count} entries to {}", path.display());
                }
                None => write_out(&text)?,
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `hearth audit verify`: the log's checks, and the first one that fails.
async fn verify(log: &AuditLog, heads: &[ChainHead], json: bool) -> anyhow::Result<ExitCode> {
    let report = log.verify_with(heads).await?;
    if json {
        json_line(&report)?;
    }
    match &report.broken {
        None => {
            if !json {
                write_out(&render_intact(&report))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(broken) if json => {
            tracing::debug!(check = broken.check.as_str(), "audit log broken");
            Ok(ExitCode::FAILURE)
        }
        Some(broken) => anyhow::bail!("{broken}"),
    }
}
