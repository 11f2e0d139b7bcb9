//! `hearth projects …`: make, list, show, rename, re-link and delete projects, and edit
//! their context sources. A project is a folder holding `project.md`; these commands keep
//! that file, Hearth's registry and the `AGENTS.md` mirror in step.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use hearth_core::{ProjectId, Scope};
use hearth_projects::context::ContextSource;
use hearth_projects::{
    Consent, Created, MirrorOutcome, PROJECT_FILE, Project, ProjectError, ProjectFile, Projects,
    Review, ReviewReason, has_mirror,
};
use hearth_store::{ProjectRecord, ScopeFilter, SessionQuery};
use serde_json::json;

use hearth_app::App;

/// `hearth projects` subcommands.
#[derive(Debug, Subcommand)]
pub enum ProjectsCommand {
    /// Make a folder a project (writes its project.md), or adopt the project.md it holds.
    New {
        /// The project's name.
        name: String,
        /// Its folder (default: the current directory); created when missing.
        #[arg(long)]
        folder: Option<PathBuf>,
        /// A line about it.
        #[arg(long)]
        description: Option<String>,
        /// Context sources to add: URLs, YouTube links, files, folders or patterns.
        #[arg(long = "source", value_name = "SOURCE")]
        sources: Vec<String>,
        /// Adopt the folder's existing project.md without asking: you trust where it came
        /// from (its instructions and the sources it reaches outside the folder). Without
        /// it, Hearth shows them and asks; without a terminal it refuses.
        #[arg(long)]
        trust: bool,
    },
    /// Look at a project whose project.md changed since you trusted it (or was never
    /// trusted), and trust it; until then it takes no new turns.
    Trust {
        /// Its name, id or the start of its id.
        project: String,
        /// Trust it as it is without asking (for scripts that showed it already).
        #[arg(long)]
        yes: bool,
    },
    /// List projects, with where each is and whether it is there.
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Show a project: folder, defaults, sources, instructions, sessions.
    Show {
        /// Its name, id or the start of its id.
        project: String,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rename a project.
    Rename {
        /// Its name, id or the start of its id.
        project: String,
        /// The new name.
        name: String,
    },
    /// Delete a project from Hearth. Its folder, project.md and sessions stay (the
    /// sessions take no new turns); Hearth's AGENTS.md mirror is removed.
    Delete {
        /// Its name, id or the start of its id.
        project: String,
    },
    /// Add context sources: URLs, YouTube links, files (PDF, DOCX, PPTX, XLSX, ODT, EPUB,
    /// HTML, Markdown, text, images), folders, or patterns like `notes/*.md`.
    AddSource {
        /// Its name, id or the start of its id.
        project: String,
        /// The sources (paths relative to the project's folder or the current directory).
        #[arg(required = true)]
        sources: Vec<String>,
    },
    /// Remove a context source, as written or by its number in `projects show`.
    RemoveSource {
        /// Its name, id or the start of its id.
        project: String,
        /// The source.
        source: String,
    },
    /// Point a project whose folder moved or was renamed at its new folder.
    Relink {
        /// Its name, id or the start of its id.
        project: String,
        /// The folder now holding its project.md.
        folder: PathBuf,
    },
}

fn write_out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    Ok(stdout.flush()?)
}

/// The projects of this data directory.
pub(crate) async fn registry(app: &App) -> anyhow::Result<Projects> {
    let store = app.open_store().await?;
    Ok(Projects::new(store))
}

/// The scope and file of `--project KEY`, which must be able to take new sessions (its
/// file readable and trusted as it is).
pub(crate) async fn open_scope(app: &App, key: &str) -> anyhow::Result<(Scope, ProjectFile)> {
    let (record, file) = registry(app).await?.open_trusted(key).await?;
    Ok((
        Scope::Project {
            project_id: record.id,
        },
        file,
    ))
}

/// The project filter of `sessions list --project KEY`: a registered project's id by
/// name or id, else the text as an id (a deleted project's sessions stay listable).
pub(crate) async fn scope_filter(app: &App, key: &str) -> anyhow::Result<ScopeFilter> {
    match registry(app).await?.find(key).await {
        Ok(record) => Ok(ScopeFilter::Project(record.id)),
        Err(error) => match ProjectId::parse(key) {
            Ok(id) => Ok(ScopeFilter::Project(id)),
            Err(_) => Err(error.into()),
        },
    }
}

/// A source as the user typed it: relative paths are taken from the current directory
/// when they exist there, else from the project's folder (as written).
fn parse_source(text: &str, folder: &std::path::Path) -> ContextSource {
    let here = std::env::current_dir()
        .ok()
        .map(|current| current.join(text));
    match here {
        Some(path)
            if !text.contains("://")
                && std::path::Path::new(text).is_relative()
                && path.exists()
                && !folder.join(text).exists() =>
        {
            ContextSource::parse(&path.display().to_string(), folder)
        }
        _ => ContextSource::parse(text, folder),
    }
}

fn state_of(project: &Project) -> String {
    match &project.file {
        Ok(_) if project.review.is_some() => "needs trust".into(),
        Ok(_) => "ready".into(),
        Err(hearth_projects::ProjectError::Missing { .. }) => "missing".into(),
        Err(error) => format!("unreadable: {error}"),
    }
}

async fn session_count(app: &App, id: &ProjectId) -> anyhow::Result<usize> {
    let store = app.open_store().await?;
    let mut count = 0;
    let mut cursor = None;
    loop {
        let page = store
            .list_sessions(&SessionQuery {
                scope: ScopeFilter::Project(id.clone()),
                cursor,
                limit: 500,
                ..SessionQuery::default()
            })
            .await?;
        count += page.sessions.len();
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(count),
        }
    }
}

fn record_json(record: &ProjectRecord, state: &str) -> serde_json::Value {
    json!({
        "id": record.id.to_string(),
        "name": record.name,
        "folder": record.folder,
        "state": state,
        "createdAt": record.created_at,
        "updatedAt": record.updated_at,
    })
}

fn mirror_note(outcome: MirrorOutcome, folder: &std::path::Path) -> String {
    match outcome {
        MirrorOutcome::Written | MirrorOutcome::Unchanged => format!(
            "instructions mirrored to {} for agents that read AGENTS.md",
            folder.join(hearth_projects::MIRROR_FILE).display()
        ),
        MirrorOutcome::YieldedToUser => format!(
            "{} is yours, so Hearth leaves it alone; agents get the project's instructions with the prompt instead",
            folder.join(hearth_projects::MIRROR_FILE).display()
        ),
    }
}

/// Whether there is someone at a terminal to answer a question.
fn can_ask() -> bool {
    std::io::stdin().is_terminal()
}

/// Shows a review on stderr (escaped: the file came from anywhere) and asks `question`.
#[allow(clippy::print_stderr)]
fn ask(lead: &str, review: &Review, question: &str) -> anyhow::Result<bool> {
    eprint!(
        "{lead}\n{}\n{question} [y/N] ",
        crate::shown::message(&review.details())
    );
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// `text` as one shell word, quoted when it needs to be.
fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@%+=,".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Why adopting needs the user: what the file gives every agent in the project.
fn adoption_lead(review: &Review) -> String {
    format!(
        "{} already holds a {PROJECT_FILE} Hearth did not write (a cloned folder, say). Adopting it gives every agent working in the project its instructions, and the sources it reaches outside the folder become places they read and work in:",
        review.folder.display()
    )
}

/// Makes or adopts a project, asking before an adoption when nobody said `--trust`.
/// `None` when the user declined.
async fn create(
    projects: &Projects,
    folder: &std::path::Path,
    name: &str,
    description: Option<String>,
    trust: bool,
) -> anyhow::Result<Option<Created>> {
    let consent = if trust { Consent::Given } else { Consent::Ask };
    let review = match projects
        .create(folder, name, description.clone(), consent)
        .await
    {
        Ok(created) => return Ok(Some(created)),
        Err(ProjectError::NeedsTrust(review)) => review,
        Err(error) => return Err(error.into()),
    };
    if !can_ask() {
        anyhow::bail!(
            "not adopting {} unseen: there is no terminal to ask in. {}\n{}If you trust where it came from, adopt it as shown with: hearth projects new {} --folder {} --trust",
            review.folder.join(PROJECT_FILE).display(),
            adoption_lead(&review),
            review.details(),
            shell_word(name),
            shell_word(&review.folder.display().to_string()),
        );
    }
    if !ask(&adoption_lead(&review), &review, "Adopt it?")? {
        return Ok(None);
    }
    let created = projects
        .create(folder, name, description, Consent::Reviewed(review.digest))
        .await?;
    Ok(Some(created))
}

/// The projects section of `hearth doctor`: each project ready, missing or unreadable,
/// with what to do; `false` when one is not ready.
pub(crate) async fn doctor_section(app: &App) -> anyhow::Result<(String, bool)> {
    let list = registry(app).await?.list().await?;
    if list.is_empty() {
        return Ok((String::new(), true));
    }
    let mut out = String::from("\nprojects:\n");
    let mut healthy = true;
    for project in &list {
        let name = format!(
            "{} ({}, {})",
            escape_name(&project.record.name),
            project.record.id,
            project.record.folder.display()
        );
        match &project.file {
            Ok(_) if project.review.is_some() => {
                healthy = false;
                let review = project
                    .review
                    .as_ref()
                    .map(|review| ProjectError::NeedsTrust(Box::new(review.clone())).to_string());
                out.push_str(&format!("TRUST   {name}: {}\n", review.unwrap_or_default()));
            }
            Ok(_) => out.push_str(&format!("ok      {name}\n")),
            Err(error) => {
                healthy = false;
                let label = if matches!(error, hearth_projects::ProjectError::Missing { .. }) {
                    "MISSING"
                } else {
                    "BROKEN "
                };
                out.push_str(&format!("{label} {name}: {error}\n"));
            }
        }
    }
    Ok((out, healthy))
}

/// Runs `hearth projects …`.
pub async fn projects(app: &App, command: ProjectsCommand) -> anyhow::Result<ExitCode> {
    let projects = registry(app).await?;
    match command {
        ProjectsCommand::New {
            name,
            folder,
            description,
            sources,
            trust,
        } => {
            return new_project(&projects, name, folder, description, sources, trust).await;
        }
        ProjectsCommand::List { json } => {
            return list_projects(&projects, json).await;
        }
        ProjectsCommand::Show { project, json } => {
            return show_project(app, &projects, project, json).await;
        }
        ProjectsCommand::Trust { project, yes } => {
            return trust_project(&projects, project, yes).await;
        }
        ProjectsCommand::Rename { project, name } => {
            let record = projects.rename(&project, &name).await?;
            write_out(&format!(
                "renamed project {} to `{}`\n",
                record.id,
                escape_name(&record.name)
            ))?;
        }
        ProjectsCommand::Delete { project } => {
            return delete_project(&projects, &project).await;
        }
        ProjectsCommand::AddSource { project, sources } => {
            return add_sources(&projects, &project, &sources).await;
        }
        ProjectsCommand::RemoveSource { project, source } => {
            let record = projects.find(&project).await?;
            let removed = projects.remove_source(record.id.as_str(), &source).await?;
            write_out(&format!(
                "removed {removed} from `{}`\n",
                escape_name(&record.name)
            ))?;
        }
        ProjectsCommand::Relink { project, folder } => {
            return relink_project(&projects, &project, &folder).await;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `hearth projects delete`.
#[allow(clippy::print_stderr)]
async fn delete_project(projects: &Projects, project: &str) -> anyhow::Result<ExitCode> {
    let (record, mirror_removed) = projects.delete(project).await?;
    write_out(&format!(
        "deleted project `{}` ({}) from Hearth (`hearth trash restore {}` brings it back until the trash is emptied); its folder {} and project.md stay (`hearth projects new` there makes it a project again, under a new id), and its sessions stay readable\n",
        escape_name(&record.name),
        record.id,
        record.id,
        record.folder.display()
    ))?;
    if mirror_removed {
        eprintln!("hearth: removed Hearth's AGENTS.md mirror from its folder");
    }
    Ok(ExitCode::SUCCESS)
}

/// `hearth projects add-source`.
async fn add_sources(
    projects: &Projects,
    project: &str,
    sources: &[String],
) -> anyhow::Result<ExitCode> {
    let record = projects.find(project).await?;
    for text in sources {
        let source = parse_source(text, &record.folder);
        projects
            .add_source(record.id.as_str(), source.clone())
            .await?;
        write_out(&format!(
            "added {source} to `{}`\n",
            escape_name(&record.name)
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `hearth projects relink`.
#[allow(clippy::print_stderr)]
async fn relink_project(
    projects: &Projects,
    project: &str,
    folder: &Path,
) -> anyhow::Result<ExitCode> {
    let relinked = projects.relink(project, folder).await?;
    let record = &relinked.record;
    write_out(&format!(
        "project `{}` ({}) is now at {}\n",
        escape_name(&record.name),
        record.id,
        record.folder.display()
    ))?;
    if relinked.sessions_moved > 0 {
        eprintln!(
            "hearth: {} of its sessions now work in {}; continue the newest with `hearth run -c --project {}`",
            relinked.sessions_moved,
            record.folder.display(),
            record.id
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `hearth projects new`.
#[allow(clippy::print_stderr)]
async fn new_project(
    projects: &Projects,
    name: String,
    folder: Option<PathBuf>,
    description: Option<String>,
    sources: Vec<String>,
    trust: bool,
) -> anyhow::Result<ExitCode> {
    let folder = match folder {
        Some(folder) => folder,
        None => std::env::current_dir().context("finding the current directory")?,
    };
    let Some(created) = create(projects, &folder, &name, description, trust).await? else {
        write_out(&format!(
            "not adopted: {} is not a project of Hearth's, and nothing was changed\n",
            folder.display()
        ))?;
        return Ok(ExitCode::FAILURE);
    };
    let record = created.record;
    for text in &sources {
        projects
            .add_source(record.id.as_str(), parse_source(text, &record.folder))
            .await?;
    }
    let verb = if created.adopted { "adopted" } else { "made" };
    write_out(&format!(
        "{verb} project `{}` ({}) in {}\n",
        record.name,
        record.id,
        record.folder.display()
    ))?;
    eprintln!("hearth: {}", mirror_note(created.mirror, &record.folder));
    eprintln!(
        "hearth: start a session in it with `hearth chat --project {}`",
        record.id
    );
    Ok(ExitCode::SUCCESS)
}

/// `hearth projects list`.
#[allow(clippy::print_stderr)]
async fn list_projects(projects: &Projects, json: bool) -> anyhow::Result<ExitCode> {
    let list = projects.list().await?;
    if list.is_empty() && !json {
        write_out("no projects yet; make one with `hearth projects new NAME`\n")?;
    }
    let mut text = String::new();
    for project in &list {
        let state = state_of(project);
        if json {
            text.push_str(&crate::shown::json(&record_json(&project.record, &state))?);
            text.push('\n');
        } else {
            let sources = project
                .file
                .as_ref()
                .map(|file| format!("{} source(s)", file.sources.len()))
                .unwrap_or_default();
            // A name from a project.md that came from anywhere, a folder's
            // name: escaped.
            text.push_str(&format!(
                "{}  {}  {}  [{}] {sources}\n",
                project.record.id,
                hearth_core::escape_controls_inline(&project.record.name),
                hearth_core::escape_controls_inline(&project.record.folder.display().to_string()),
                crate::shown::message(state.lines().next().unwrap_or_default())
            ));
        }
    }
    write_out(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// `hearth projects show`.
async fn show_project(
    app: &App,
    projects: &Projects,
    project: String,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let record = projects.find(&project).await?;
    let project = projects.get(&record.id).await?;
    let sessions = session_count(app, &record.id).await?;
    if json {
        let value = show_json(&project, sessions)?;
        write_out(&format!("{}\n", serde_json::to_string_pretty(&value)?))?;
    } else {
        // A project.md may come from anywhere (a cloned folder): shown escaped.
        write_out(&crate::shown::message(&show_text(&project, sessions)))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A project as `show --json` prints it.
fn show_json(project: &Project, sessions: usize) -> anyhow::Result<serde_json::Value> {
    let mut value = record_json(&project.record, &state_of(project));
    if let Ok(file) = &project.file {
        value["description"] = json!(file.description);
        value["agent"] = json!(file.agent);
        value["provider"] = json!(file.provider);
        value["model"] = json!(file.model);
        value["sources"] = serde_json::to_value(&file.sources)?;
        value["instructions"] = json!(file.instructions);
    }
    if let Some(review) = &project.review {
        value["review"] = json!({
            "reason": review.reason.to_string(),
            "summary": review.summary(),
            "outsideSources": review.outside.iter().map(|outside| json!({
                "kind": outside.source.kind(),
                "target": outside.source.target(),
                "reaches": outside.reaches,
            })).collect::<Vec<_>>(),
            "digest": review.digest.as_str(),
        });
    }
    value["sessions"] = json!(sessions);
    Ok(value)
}

/// A project as `show` prints it: where it is, its state, what its project.md gives.
fn show_text(project: &Project, sessions: usize) -> String {
    let record = &project.record;
    let mut text = format!(
        "{} ({})\nfolder: {}\nstate: {}\n",
        record.name,
        record.id,
        record.folder.display(),
        state_of(project)
    );
    if let Some(review) = &project.review {
        text.push_str(&format!(
            "  its project.md {} and gives its agents {}; look at it with `hearth projects trust {}`\n",
            match review.reason {
                ReviewReason::Changed => "changed since you trusted it",
                ReviewReason::Unrecorded | ReviewReason::Adopt => "was never trusted",
            },
            review.summary(),
            record.id
        ));
    }
    text.push_str(&format!("sessions: {sessions}\n"));
    if let Ok(file) = &project.file {
        text.push_str(&file_text(&record.folder, file));
    }
    text
}

/// What a project's file gives: description, defaults, AGENTS.md, sources, instructions.
fn file_text(folder: &std::path::Path, file: &hearth_projects::ProjectFile) -> String {
    let mut text = String::new();
    if let Some(description) = &file.description {
        text.push_str(&format!("description: {description}\n"));
    }
    for (label, value) in [
        ("agent", &file.agent),
        ("provider", &file.provider),
        ("model", &file.model),
    ] {
        if let Some(value) = value {
            text.push_str(&format!("{label}: {value}\n"));
        }
    }
    text.push_str(&format!(
        "AGENTS.md: {}\n",
        if has_mirror(folder) {
            "Hearth's mirror of the instructions"
        } else if folder.join(hearth_projects::MIRROR_FILE).exists() {
            "the user's own (left alone)"
        } else {
            "none"
        }
    ));
    if file.sources.is_empty() {
        text.push_str("sources: none (add with `hearth projects add-source`)\n");
    } else {
        text.push_str("sources:\n");
        for (number, source) in file.sources.iter().enumerate() {
            text.push_str(&format!("  {}. {source}\n", number + 1));
        }
    }
    let instructions = file.instructions.trim();
    if instructions.is_empty() {
        text.push_str("instructions: none (write them in project.md, below the front matter)\n");
    } else {
        text.push_str("instructions:\n");
        for line in instructions.lines() {
            text.push_str(&format!("  {line}\n"));
        }
    }
    text
}

/// `hearth projects trust`.
#[allow(clippy::print_stderr)]
async fn trust_project(
    projects: &Projects,
    project: String,
    yes: bool,
) -> anyhow::Result<ExitCode> {
    let consent = if yes { Consent::Given } else { Consent::Ask };
    let (record, trusted) = match projects.trust(&project, consent).await {
        Ok(done) => done,
        Err(ProjectError::NeedsTrust(review)) => {
            let lead = format!(
                "{} gives every agent working in project `{}` ({}) what follows; {}.",
                review.folder.join(PROJECT_FILE).display(),
                review.name,
                review.id,
                match review.reason {
                    ReviewReason::Changed => "it changed since you trusted it",
                    ReviewReason::Unrecorded | ReviewReason::Adopt => "you have not trusted it yet",
                }
            );
            if !can_ask() {
                anyhow::bail!(
                    "not trusting project `{}` unseen: there is no terminal to ask in. {lead}\n{}If you trust it, run: hearth projects trust {} --yes",
                    review.name,
                    review.details(),
                    review.id
                );
            }
            if !ask(&lead, &review, "Trust it?")? {
                write_out(&format!(
                    "not trusted: project `{}` takes no new turns until you trust it\n",
                    review.name
                ))?;
                return Ok(ExitCode::FAILURE);
            }
            projects
                .trust(&project, Consent::Reviewed(review.digest.clone()))
                .await?
        }
        Err(error) => return Err(error.into()),
    };
    let text = match trusted {
        Some(_) => format!(
            "trusted project `{}` ({}): its sessions take new turns with its project.md as it is now\n",
            record.name, record.id
        ),
        None => format!(
            "project `{}` ({}) needs nothing from you: its project.md is as you trusted it, or asks nothing\n",
            record.name, record.id
        ),
    };
    write_out(&crate::shown::message(&text))?;
    Ok(ExitCode::SUCCESS)
}

/// A project's name as printed: it may come from a `project.md` or a folder's name, so
/// its controls are escaped.
fn escape_name(name: &str) -> std::borrow::Cow<'_, str> {
    hearth_core::escape_controls_inline(name)
}
