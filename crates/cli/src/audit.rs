//! `hearth audit list|verify|export`: reading, checking and exporting the audit log.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use hearth_tools::{AuditLog, AuditQuery, AuditRow, DEFAULT_EXPORT_KEEP, MAX_EXPORT_KEEP};

use crate::app::App;
use crate::render::local_time;
use crate::toolbox::{json_line, write_out};

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
    /// Check the hash chain from the first entry; names the first entry that was changed,
    /// removed or inserted.
    Verify {
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
    let mut line = format!(
        "{:>6}  {}  {:<10} {:<9}",
        row.seq,
        local_time(&row.at),
        row.kind,
        row.decision
    );
    if let Some(tool) = &row.tool {
        line.push_str(&format!(" {tool}"));
    }
    if let Some(proposal) = &row.proposal_id {
        line.push_str(&format!(" [{proposal}]"));
    }
    line.push_str(&format!("  {}  by {}\n", row.outcome, row.actor));
    line
}

/// Writes `text` to `path` atomically: a temporary file beside it, synced, renamed over
/// it, and the directory synced.
pub fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let directory = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .ok_or_else(|| anyhow::anyhow!("{} is not a file name", path.display()))?;
    let temporary = directory.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| -> std::io::Result<()> {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)?;
        // Not every platform can open a directory to sync it; the rename is done.
        if let Ok(directory) = std::fs::File::open(directory)
            && let Err(error) = directory.sync_all()
        {
            tracing::debug!("could not sync {}: {error}", path.display());
        }
        Ok(())
    })();
    if let Err(error) = written {
        if let Err(cleanup) = std::fs::remove_file(&temporary)
            && cleanup.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("could not remove {}: {cleanup}", temporary.display());
        }
        anyhow::bail!("cannot write {}: {error}", path.display());
    }
    Ok(())
}

/// Runs `hearth audit …`.
pub async fn audit(app: &App, command: AuditCommand) -> anyhow::Result<ExitCode> {
    let store = app.open_store().await?;
    let log = AuditLog::new(store);
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
        AuditCommand::Verify { json } => {
            let report = log.verify().await?;
            if json {
                json_line(&report)?;
            }
            match &report.broken {
                None => {
                    if !json {
                        let head = report.head.as_deref().unwrap_or("none");
                        write_out(&format!(
                            "The audit log is intact: {} entries, last hash {head}.\n",
                            report.rows
                        ))?;
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Some(broken) if json => {
                    tracing::debug!(seq = broken.seq, "audit chain broken");
                    Ok(ExitCode::FAILURE)
                }
                Some(broken) => anyhow::bail!(
                    "the audit log is broken at entry {}: {}; entries from there on cannot be trusted (an export from before shows what they were)",
                    broken.seq,
                    broken.reason
                ),
            }
        }
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
