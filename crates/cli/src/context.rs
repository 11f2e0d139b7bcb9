//! `hearth context …`: the cache of projects' context sources — what is prepared, what
//! failed and why, preparing again, clearing it, and removing what no project uses.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Subcommand;
use hearth_projects::context::{
    CacheState, ContextCache, ContextSource, MaterializeOptions, Progress, ProjectRef,
    SourceCacheStatus, SourceStatus,
};

use crate::projects::registry;
use hearth_app::App;

/// `hearth context` subcommands.
#[derive(Debug, Subcommand)]
pub enum ContextCommand {
    /// Show each source of a project (or of every project): prepared, failed (and why),
    /// or not yet prepared. Converts nothing.
    Status {
        /// A project's name or id (default: every project).
        project: Option<String>,
    },
    /// Prepare a project's sources now, retrying the ones that failed before.
    Retry {
        /// A project's name or id.
        project: String,
    },
    /// Remove every prepared snapshot and failure note (they are made again when needed).
    Clear,
    /// Remove snapshots no project's sources use any more.
    Gc,
}

/// Writes text about sources (file names, URLs, errors quoting servers and documents),
/// shown escaped and without credentials.
fn write_out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(crate::shown::message(text).as_bytes())?;
    Ok(stdout.flush()?)
}

/// Progress bars on a terminal: one bar over the sources, the current one named.
struct Bars {
    bar: indicatif::ProgressBar,
}

impl Bars {
    fn new(total: usize) -> Option<Self> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = indicatif::ProgressBar::new(total as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{spinner} {pos}/{len} sources {wide_msg}")
        {
            bar.set_style(style);
        }
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Some(Self { bar })
    }
}

impl Progress for Bars {
    fn started(&self, source: &ContextSource) {
        self.bar
            .set_message(crate::shown::message(&source.to_string()).into_owned());
    }

    fn finished(&self, _source: &ContextSource, _status: &SourceStatus) {
        self.bar.inc(1);
    }
}

fn status_line(status: &SourceStatus) -> String {
    match status {
        SourceStatus::Ready { snapshot, .. } => format!("ready    {}", snapshot.display()),
        SourceStatus::Directory { path } => format!("folder   {}", path.display()),
        SourceStatus::Failed { reason, .. } => format!("failed   {reason}"),
        SourceStatus::Expanded { .. } => "pattern".to_owned(),
    }
}

/// One line of `context status`.
fn describe(entry: &SourceCacheStatus) -> String {
    let state = match &entry.state {
        CacheState::Cached {
            snapshot,
            fresh: true,
            bytes,
            ..
        } => format!("ready ({bytes} bytes) {}", snapshot.display()),
        CacheState::Cached {
            snapshot,
            fresh: false,
            ..
        } => format!("changed since prepared {}", snapshot.display()),
        CacheState::Missing { .. } => "not prepared yet".to_owned(),
        CacheState::Directory { path } => format!("folder {}", path.display()),
        CacheState::Expanded { matched, capped } => {
            format!("{matched}{} file(s) match", if *capped { "+" } else { "" })
        }
        CacheState::Unavailable { reason } => format!("unavailable: {reason}"),
    };
    let failure = match &entry.failure {
        Some(failure) if failure.current => format!(
            "; failed {}: {} (skipped until it changes or `hearth context retry`)",
            failure.failed_at.format("%Y-%m-%d %H:%M"),
            failure.error
        ),
        _ => String::new(),
    };
    format!("{}: {state}{failure}", entry.source)
}

/// Runs `hearth context …`.
pub async fn context(app: &App, command: ContextCommand) -> anyhow::Result<ExitCode> {
    let projects = registry(app).await?;
    let cache = ContextCache::new(app.paths.context_cache());
    match command {
        ContextCommand::Status { project } => {
            let list = match project {
                Some(key) => {
                    let record = projects.find(&key).await?;
                    vec![projects.get(&record.id).await?]
                }
                None => projects.list().await?,
            };
            let mut text = status(&cache, list).await;
            if let Some(shared) = app.config.context.shared_location() {
                text.push_str(&format!(
                    "(this node's copies; snapshots missing here are taken from the shared cache {shared} when a session needs them)\n"
                ));
            }
            write_out(&text)?;
        }
        ContextCommand::Retry { project } => return retry(app, &projects, &project).await,
        ContextCommand::Clear => {
            cache.clear().await?;
            let shared = app
                .config
                .context
                .shared_location()
                .map(|shared| format!(" (the shared cache {shared} is left as it is)"))
                .unwrap_or_default();
            write_out(&format!(
                "cleared the context cache in {}{shared}; sources are prepared again when a session needs them\n",
                cache.root().display()
            ))?;
        }
        ContextCommand::Gc => {
            let mut referenced = Vec::new();
            for project in projects.list().await? {
                if let Ok(file) = project.file {
                    referenced.extend(
                        file.sources
                            .iter()
                            .map(|source| source.resolved(&project.record.folder)),
                    );
                }
            }
            let report = cache.gc(&referenced).await?;
            write_out(&format!(
                "removed {} snapshot(s) no project uses ({} bytes) and {} stale failure note(s); kept {}\n",
                report.removed, report.bytes_freed, report.markers_removed, report.kept
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `hearth context status`: each project's sources and how their snapshots stand.
async fn status(cache: &ContextCache, projects: Vec<hearth_projects::Project>) -> String {
    let mut text = String::new();
    for project in projects {
        text.push_str(&format!(
            "{} ({})\n",
            project.record.name, project.record.id
        ));
        let file = match &project.file {
            Ok(file) => file,
            Err(error) => {
                text.push_str(&format!("  {error}\n"));
                continue;
            }
        };
        if file.sources.is_empty() {
            text.push_str("  no sources\n");
        }
        let reference = ProjectRef {
            id: project.record.id.to_string(),
            folder: project.record.folder.clone(),
        };
        for entry in cache.status(&reference, &file.sources).await {
            text.push_str(&format!("  {}\n", describe(&entry)));
        }
    }
    text
}

/// `hearth context retry`: prepares a trusted project's sources again, failed ones
/// included, with progress on a terminal; fails when one still fails.
async fn retry(
    app: &App,
    projects: &hearth_projects::Projects,
    key: &str,
) -> anyhow::Result<ExitCode> {
    // Converting sources a project.md names is acting on it: only once trusted.
    let (record, file) = projects.open_trusted(key).await?;
    let materializer = hearth_app::backend::materializer(app, &app.open_store().await?)?;
    let reference = ProjectRef {
        id: record.id.to_string(),
        folder: record.folder.clone(),
    };
    let bars = Bars::new(file.sources.len());
    let options = MaterializeOptions { retry_failed: true };
    let manifest = match &bars {
        Some(bars) => {
            materializer
                .materialize_with_progress(&reference, &file.sources, options, bars)
                .await
        }
        None => {
            materializer
                .materialize(&reference, &file.sources, options)
                .await
        }
    };
    if let Some(bars) = bars {
        bars.bar.finish_and_clear();
    }
    let mut text = String::new();
    let mut failed = 0;
    for entry in &manifest.entries {
        if matches!(entry.status, SourceStatus::Failed { .. }) {
            failed += 1;
        }
        text.push_str(&format!(
            "{}  {}\n",
            entry.source,
            status_line(&entry.status)
        ));
    }
    write_out(&text)?;
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
