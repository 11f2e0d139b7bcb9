//! `hearth calendar list|events|add|import|export|sync`: the user's own calendar actions.
//! They write at once (the user is acting, not an agent), and `add` and `import` are
//! recorded in the audit log as an applied proposal is; agents reach calendars only
//! through the tools, whose writes wait for approval.

use std::path::PathBuf;
use std::process::ExitCode;

use chrono::{Days, Utc};
use clap::{Args, Subcommand};
use hearth_calendar::{
    CalDavAccount, CalendarInfo, Calendars, EventInput, EventQuery, OccurrenceInfo, PasswordSource,
    StorageKind, StorageState, SyncMethod, UnavailableCalendar, discover, parse_time_bound,
};
use hearth_core::escape_controls_inline;
use hearth_store::Access;
use hearth_tools::{Actor, AuditEntry, AuditKind, AuditLog, AuditOutcome, Decision, UserActor};
use serde_json::{Value, json};

use crate::audit::{log_in, write_atomically};
use crate::toolbox::{json_line, write_out};
use hearth_app::App;
use hearth_app::tools::{calendars, dav_transport};

/// `hearth calendar …`.
#[derive(Debug, Subcommand)]
pub enum CalendarCommand {
    /// List the configured calendars with their event counts and problems.
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// List events in a range, repeating events expanded.
    Events(EventsArgs),
    /// Add an event to a calendar (the default one unless `--calendar`); with
    /// `--caldav URL`, find the calendars of a CalDAV account instead.
    Add(Box<AddArgs>),
    /// Sync CalDAV calendars with their servers now (all of them, or one).
    Sync {
        /// The calendar (default: every CalDAV calendar).
        calendar: Option<String>,
        /// One JSON object per calendar per line.
        #[arg(long)]
        json: bool,
    },
    /// Add the events of an iCalendar file (events whose UID exists are skipped).
    Import {
        /// The .ics file.
        file: PathBuf,
        /// The calendar to import into (default: the default calendar).
        #[arg(long)]
        calendar: Option<String>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a calendar as iCalendar.
    Export {
        /// The calendar (default: the default calendar).
        #[arg(long)]
        calendar: Option<String>,
        /// Write to this file (replaced atomically) instead of stdout.
        #[arg(long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// `hearth calendar events`.
#[derive(Debug, Args)]
pub struct EventsArgs {
    /// Start: a date (`2026-03-01`), a local date-time, or RFC 3339. Default: today.
    #[arg(long)]
    from: Option<String>,
    /// End (exclusive), same forms. Default: seven days after the start.
    #[arg(long)]
    to: Option<String>,
    /// Words to find in title, description or location.
    #[arg(long)]
    query: Option<String>,
    /// Category (`Work`, `Work - Meetings`).
    #[arg(long)]
    category: Option<String>,
    /// Only this calendar.
    #[arg(long)]
    calendar: Option<String>,
    /// At most this many occurrences.
    #[arg(long, default_value_t = 200)]
    limit: usize,
    /// One JSON object per occurrence per line.
    #[arg(long)]
    json: bool,
}

/// `hearth calendar add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// Title (may be `Category - SubCategory - Title`).
    #[arg(required_unless_present = "caldav")]
    title: Option<String>,
    /// Start: `2026-03-03` (all-day) or `2026-03-03T09:00` (local time), or RFC 3339.
    #[arg(long, required_unless_present = "caldav")]
    start: Option<String>,
    /// End: a later time, or the last day of an all-day event.
    #[arg(long)]
    end: Option<String>,
    /// The calendar (default: the default calendar).
    #[arg(long)]
    calendar: Option<String>,
    /// Category.
    #[arg(long)]
    category: Option<String>,
    /// Sub-category.
    #[arg(long)]
    sub_category: Option<String>,
    /// Location.
    #[arg(long)]
    location: Option<String>,
    /// Description.
    #[arg(long)]
    description: Option<String>,
    /// Recurrence rule, e.g. `FREQ=WEEKLY;BYDAY=MO`.
    #[arg(long)]
    repeat: Option<String>,
    /// IANA time zone the times are given in and the event is kept in (default: the
    /// user's time zone).
    #[arg(long)]
    time_zone: Option<String>,
    /// Print what was written as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    caldav: CalDavArgs,
}

/// `hearth calendar add --caldav URL`: the account whose calendars to find.
#[derive(Debug, Args)]
pub struct CalDavArgs {
    /// A CalDAV server (`https://caldav.fastmail.com/`, `https://cloud.example.com/remote.php/dav/`),
    /// principal, calendar home or calendar: its calendars are found and listed as
    /// `[calendars.<id>]` sections for config.toml.
    #[arg(long, value_name = "URL", conflicts_with_all = ["title", "start", "end", "category", "sub_category", "location", "description", "repeat", "time_zone"])]
    caldav: Option<String>,
    /// The account's user name.
    #[arg(long, requires = "caldav")]
    username: Option<String>,
    /// The environment variable holding the password (an app password).
    #[arg(long, requires = "caldav", conflicts_with = "password_command")]
    password_env: Option<String>,
    /// A command printing the password (a system keyring), e.g.
    /// `secret-tool lookup service caldav user me`; split on spaces.
    #[arg(long, requires = "caldav")]
    password_command: Option<String>,
    /// The server is on the user's own network (loopback or private addresses).
    #[arg(long, requires = "caldav")]
    allow_private_network: bool,
    /// Append the sections to config.toml instead of only printing them.
    #[arg(long, requires = "caldav")]
    save: bool,
}

fn kind_name(kind: StorageKind) -> &'static str {
    match kind {
        StorageKind::Ics => "ics",
        StorageKind::Notes => "notes",
        StorageKind::Subscription => "subscription",
        StorageKind::Caldav => "caldav",
    }
}

fn occurrence_line(occurrence: &OccurrenceInfo) -> String {
    let start = occurrence.start.replace('T', " ");
    let end = occurrence.end.replace('T', " ");
    let when = if occurrence.all_day {
        if start == end {
            format!("{start} (all day)")
        } else {
            format!("{start} – {end} (all day)")
        }
    } else {
        format!("{start} – {end}")
    };
    // Titles and places come from calendar files and servers: escaped.
    let mut line = format!("{when}  {}", escape_controls_inline(&occurrence.title));
    if let Some(location) = &occurrence.location {
        line.push_str(&format!(" @ {}", escape_controls_inline(location)));
    }
    if occurrence.recurring {
        line.push_str(" ↻");
    }
    line.push_str(&format!("  [{}]\n", occurrence.id));
    line
}

/// `hearth doctor`'s calendar section: each calendar ok or missing, with its path and
/// what to do (a CalDAV calendar is synced to test it); `false` when one is missing,
/// cannot sync, or its configuration is unusable.
pub async fn doctor_section(app: &App) -> anyhow::Result<(String, bool)> {
    let calendars = calendars(app)?;
    let config = app.paths.config_file.display();
    let mut out = String::from("\ncalendars:\n");
    let mut healthy = true;
    for info in calendars.calendars() {
        let name = format!(
            "{} ({}, {})",
            info.id,
            kind_name(info.kind),
            escape_controls_inline(&info.location)
        );
        if info.kind == StorageKind::Caldav {
            match calendars.sync(&info.id).await {
                Ok(report) => out.push_str(&format!(
                    "ok      {name}: synced, {} resources\n",
                    report.resources
                )),
                Err(error) => {
                    healthy = false;
                    out.push_str(&format!(
                        "FAIL    {name}: {}\n        fix: check `url`, `username` and the password source in [calendars.{}] of {config}; reads use the last sync meanwhile\n",
                        crate::shown::message(&error.to_string()),
                        info.id
                    ));
                }
            }
            continue;
        }
        match info.storage_state() {
            StorageState::Present => out.push_str(&format!("ok      {name}\n")),
            StorageState::NotCreated => out.push_str(&format!(
                "ok      {name}: no file yet; it is created on the first write\n"
            )),
            StorageState::Missing => {
                healthy = false;
                out.push_str(&format!(
                    "MISSING {name}: {} does not exist; nothing is read from or written to this calendar\n        fix: create the folder (or reconnect its drive), or correct `path` in [calendars.{}] of {config}\n",
                    info.folder().map(|f| f.display().to_string()).unwrap_or_default(),
                    info.id
                ));
            }
        }
    }
    for problem in calendars.problems() {
        healthy = false;
        out.push_str(&format!(
            "! calendar `{}` in {config}: {}\n",
            problem.calendar, problem.message
        ));
    }
    Ok((out, healthy))
}

async fn list(calendars: &Calendars, json: bool) -> anyhow::Result<()> {
    for summary in calendars.summaries().await {
        if json {
            json_line(&summary)?;
            continue;
        }
        let info = &summary.info;
        let mut line = format!(
            "{}{}  {} ({}, {}){}\n",
            info.id,
            if info.default { " *" } else { "" },
            escape_controls_inline(&info.name),
            kind_name(info.kind),
            escape_controls_inline(&info.location),
            if info.writable { "" } else { " read-only" },
        );
        match (&summary.error, summary.events, summary.storage) {
            (_, _, StorageState::Missing) => line.push_str(&format!(
                "    missing: {} does not exist; create it (or reconnect its drive), or correct `path` in [calendars.{}]. Nothing is read from or written to it until then.\n",
                info.folder().map(|f| f.display().to_string()).unwrap_or_default(),
                info.id
            )),
            (Some(error), _, _) => line.push_str(&format!(
                "    cannot be read: {}\n",
                crate::shown::message(error)
            )),
            (None, Some(0), StorageState::NotCreated) => {
                line.push_str("    0 events; the file is created on the first write\n")
            }
            (None, Some(events), _) => line.push_str(&format!(
                "    {events} events, {} repeating\n",
                summary.recurring.unwrap_or(0)
            )),
            (None, None, _) => {}
        }
        if let Some(synced) = summary.synced_at {
            line.push_str(&format!(
                "    synced with the server at {}\n",
                synced
                    .with_timezone(&calendars.time_zone())
                    .format("%Y-%m-%d %H:%M %Z")
            ));
        }
        for warning in &summary.warnings {
            line.push_str(&format!(
                "    warning: {}: {}\n",
                escape_controls_inline(&warning.location),
                crate::shown::message(&warning.message)
            ));
        }
        write_out(&line)?;
    }
    for problem in calendars.problems() {
        write_out(&format!(
            "{}  not used: {}\n",
            problem.calendar, problem.message
        ))?;
    }
    Ok(())
}

async fn events(app: &App, calendars: &Calendars, args: EventsArgs) -> anyhow::Result<()> {
    let zone = calendars.time_zone();
    let from = match &args.from {
        Some(text) => parse_time_bound("from", text, zone)?,
        None => {
            let today = Utc::now().with_timezone(&zone).date_naive();
            parse_time_bound("from", &today.to_string(), zone)?
        }
    };
    let to = match &args.to {
        Some(text) => parse_time_bound("to", text, zone)?,
        None => {
            let start = from.with_timezone(&zone).date_naive();
            let end = start.checked_add_days(Days::new(7)).unwrap_or(start);
            parse_time_bound("to", &end.to_string(), zone)?
        }
    };
    let in_scope: Vec<&CalendarInfo> = match args.calendar.as_deref() {
        Some(id) => vec![calendars.calendar(id)?],
        None => calendars.calendars().iter().collect(),
    };
    let listing = calendars
        .events(&EventQuery {
            from,
            to,
            text: args.query,
            category: args.category,
            calendar: args.calendar,
            limit: args.limit,
        })
        .await?;
    let config = app.paths.config_file.display().to_string();
    let skipped: Vec<String> = listing
        .unavailable
        .iter()
        .map(|unavailable| unavailable_line(calendars, unavailable, &config))
        .collect();
    if !in_scope.is_empty() && skipped.len() == in_scope.len() {
        anyhow::bail!(
            "no calendar could be read, so there are no events to list:\n  {}",
            skipped.join("\n  ")
        );
    }
    for line in &skipped {
        tracing::warn!("{line}");
    }
    // A configured file that is not there yet is empty, and may be a wrong `path`.
    for info in in_scope.iter().filter(|info| {
        info.storage_state() == StorageState::NotCreated && !info.is_hearth_default()
    }) {
        tracing::warn!(
            "calendar `{}`: {} does not exist yet, so it has no events (it is created on the first write); if the calendar is elsewhere, correct `path` in [calendars.{}] of {config}",
            info.id,
            info.location,
            info.id
        );
    }
    if args.json {
        for occurrence in &listing.occurrences {
            json_line(occurrence)?;
        }
    } else if listing.occurrences.is_empty() && !skipped.is_empty() {
        write_out("No events in the calendars that could be read.\n")?;
    } else if listing.occurrences.is_empty() {
        write_out("No events.\n")?;
    } else {
        for occurrence in &listing.occurrences {
            write_out(&occurrence_line(occurrence))?;
        }
    }
    if listing.total > listing.occurrences.len() {
        tracing::warn!(
            "showing {} of {} occurrences; narrow the range or raise --limit",
            listing.occurrences.len(),
            listing.total
        );
    }
    Ok(())
}

/// What to tell the user about a calendar a listing could not read.
fn unavailable_line(
    calendars: &Calendars,
    unavailable: &UnavailableCalendar,
    config: &str,
) -> String {
    let id = &unavailable.calendar;
    match unavailable.storage {
        StorageState::Missing => format!(
            "calendar `{id}` is missing: {} does not exist, so its events are not listed; create it (or reconnect its drive), or correct `path` in [calendars.{id}] of {config}",
            calendars
                .calendar(id)
                .ok()
                .and_then(|info| info.folder())
                .map(|folder| folder.display().to_string())
                .unwrap_or_default()
        ),
        StorageState::Present | StorageState::NotCreated => format!(
            "calendar `{id}` could not be read, so its events are not listed: {}; fix the file or correct `path` in [calendars.{id}] of {config}",
            unavailable.error
        ),
    }
}

/// `hearth calendar sync`: each CalDAV calendar synced, or why it could not be.
async fn sync(calendars: &Calendars, only: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let ids: Vec<String> = match only {
        Some(id) => vec![calendars.calendar(id)?.id.clone()],
        None => calendars
            .calendars()
            .iter()
            .filter(|info| info.kind == StorageKind::Caldav)
            .map(|info| info.id.clone())
            .collect(),
    };
    if ids.is_empty() {
        write_out(
            "No CalDAV calendars are configured; find yours with `hearth calendar add --caldav <server URL>`.\n",
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = false;
    for id in ids {
        let started = std::time::Instant::now();
        match calendars.sync(&id).await {
            Ok(report) if json => json_line(&report)?,
            Ok(report) => write_out(&format!(
                "{id}: {} resources ({} added, {} changed, {} removed; {}) in {} ms\n",
                report.resources,
                report.added,
                report.changed,
                report.removed,
                match report.method {
                    SyncMethod::SyncCollection => "sync-collection",
                    SyncMethod::EtagComparison => "ETag comparison",
                    SyncMethod::Unchanged => "unchanged",
                },
                started.elapsed().as_millis()
            ))?,
            Err(error) => {
                failed = true;
                if json {
                    json_line(&serde_json::json!({ "calendar": id, "error": error.to_string() }))?;
                } else {
                    tracing::error!("{id}: {error}; the last sync is kept for reading");
                }
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// An id for a discovered calendar: its name in lower case, letters, digits and `-`,
/// not one of `taken`.
fn calendar_id(name: &str, taken: &[String]) -> String {
    let mut base: String = name
        .trim()
        .to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '-' })
        .collect();
    while base.contains("--") {
        base = base.replace("--", "-");
    }
    let base = base.trim_matches('-');
    let base = if base.is_empty() { "caldav" } else { base };
    let mut id = base.to_owned();
    let mut n = 2;
    while taken.contains(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    id
}

/// `hearth calendar add --caldav URL`: finds the account's calendars and prints (or
/// saves) a `[calendars.<id>]` section for each calendar that holds events.
async fn discover_caldav(app: &App, args: CalDavArgs, json: bool) -> anyhow::Result<()> {
    let Some(url) = args.caldav.clone() else {
        return Ok(());
    };
    let shown = hearth_core::redact_userinfo(&url).into_owned();
    let parsed = url::Url::parse(url.trim())
        .ok()
        .filter(|parsed| matches!(parsed.scheme(), "http" | "https"));
    let Some(parsed) = parsed else {
        anyhow::bail!("`{shown}` is not an http(s) URL; give the CalDAV server's address");
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        anyhow::bail!(
            "`{shown}` carries a user name or password, which Hearth never keeps in a URL: give the address without them, the user with --username, and the password with --password-env VAR (an environment variable holding it) or --password-command"
        );
    }
    let password = match (&args.password_env, &args.password_command) {
        (Some(name), _) => PasswordSource::Env(name.clone()),
        (None, Some(command)) => {
            PasswordSource::Command(command.split_whitespace().map(str::to_owned).collect())
        }
        (None, None) if args.username.is_some() => anyhow::bail!(
            "give --password-env VAR (an environment variable holding the password) or --password-command; a password is never passed on the command line"
        ),
        (None, None) => PasswordSource::None,
    };
    let account = CalDavAccount {
        label: shown.clone(),
        url: url.clone(),
        username: args.username.clone(),
        password: password.clone(),
        allow_private_network: args.allow_private_network,
    };
    let transport = dav_transport(app)?;
    let found = discover(&transport, &account).await?;
    let mut edit = hearth_config::ConfigEdit::open(&app.paths.config_file)?;
    let listed = caldav_sections(app, &mut edit, &found, &args, &password);
    if json {
        for (id, name, calendar) in &listed {
            json_line(&serde_json::json!({
                "id": id,
                "name": name,
                "url": calendar.url,
                "color": calendar.color,
                "components": calendar.components,
            }))?;
        }
    }
    if listed.is_empty() {
        anyhow::bail!(
            "{shown} has no calendars that hold events ({} other collections found)",
            found.len()
        );
    }
    let config = app.paths.config_file.display();
    let sections = edit.added_text();
    if args.save {
        // Read as a document and written back with the user's comments and order; the
        // result must still be a configuration Hearth reads.
        edit.save()?;
        if !json {
            write_out(&format!(
                "Added {} calendars to {config}:\n{sections}\nThey sync on first use; `hearth calendar sync` syncs now.\n",
                listed.len(),
            ))?;
        }
    } else if !json {
        write_out(&format!(
            "Found {} calendars. Add these sections to {config} (or run this again with --save):\n{sections}",
            listed.len(),
        ))?;
    }
    Ok(())
}

/// A `[calendars.<id>]` table in `edit` for each calendar found that holds events (ids
/// not taken yet); the calendars, with their ids and names.
fn caldav_sections(
    app: &App,
    edit: &mut hearth_config::ConfigEdit,
    found: &[hearth_calendar::DiscoveredCalendar],
    args: &CalDavArgs,
    password: &PasswordSource,
) -> Vec<(String, String, hearth_calendar::DiscoveredCalendar)> {
    use hearth_config::ConfigValue as Value;
    let mut taken: Vec<String> = app.config.calendars.keys().cloned().collect();
    let mut listed = Vec::new();
    for calendar in found.iter().filter(|c| c.holds_events()) {
        let name = calendar.name.clone().unwrap_or_else(|| {
            calendar
                .url
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or("caldav")
                .to_owned()
        });
        let id = calendar_id(&name, &taken);
        taken.push(id.clone());
        let mut entries: Vec<(&str, Value)> = vec![
            ("kind", Value::from("caldav")),
            ("name", Value::from(name.as_str())),
            ("url", Value::from(calendar.url.as_str())),
        ];
        if let Some(user) = &args.username {
            entries.push(("username", Value::from(user.as_str())));
        }
        match password {
            PasswordSource::Env(name) => entries.push(("password_env", Value::from(name.as_str()))),
            PasswordSource::Command(command) => entries.push((
                "password_command",
                Value::Array(command.iter().map(String::as_str).collect()),
            )),
            PasswordSource::None => {}
        }
        if let Some(color) = &calendar.color {
            entries.push(("color", Value::from(color.as_str())));
        }
        if args.allow_private_network {
            entries.push(("allow_private_network", Value::from(true)));
        }
        edit.set_table("calendars", &id, entries);
        listed.push((id, name, calendar.clone()));
    }
    listed
}

/// Runs `hearth calendar …`.
pub async fn calendar(app: &App, command: CalendarCommand) -> anyhow::Result<ExitCode> {
    let calendars = calendars(app)?;
    match command {
        CalendarCommand::List { json } => list(&calendars, json).await?,
        CalendarCommand::Events(args) => events(app, &calendars, args).await?,
        CalendarCommand::Add(args) if args.caldav.caldav.is_some() => {
            let AddArgs { caldav, json, .. } = *args;
            discover_caldav(app, caldav, json).await?;
        }
        CalendarCommand::Sync { calendar, json } => {
            return sync(&calendars, calendar.as_deref(), json).await;
        }
        CalendarCommand::Add(args) => add(&calendars, &writable_audit(app).await?, *args).await?,
        CalendarCommand::Import {
            file,
            calendar,
            json,
        } => {
            let audit = writable_audit(app).await?;
            import(&calendars, &audit, calendar.as_deref(), &file, json).await?
        }
        CalendarCommand::Export { calendar, output } => {
            let id = calendars
                .calendar_or_default(calendar.as_deref())?
                .id
                .clone();
            let text = calendars.export_ics(&id).await?;
            match output {
                Some(path) => write_atomically(&path, &text)?,
                None => write_out(&text)?,
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The audit log the user's own calendar writes go to, as approved proposals do: the
/// commands refuse before writing anything when it cannot be written.
async fn writable_audit(app: &App) -> anyhow::Result<AuditLog> {
    let store = app.open_store().await?;
    if let Access::ReadOnly { reason } = store.access() {
        anyhow::bail!(
            "nothing was written: calendar changes are recorded in the audit log of {}, which is open for reading only ({reason})",
            store.location()
        );
    }
    Ok(log_in(app, store))
}

/// Records a calendar write the user made at the command line (`command`, e.g.
/// `calendar_add`), as an applied proposal is recorded: applied, by the user via the
/// CLI, with the hash of what was asked and the change's summary.
async fn record_write(
    audit: &AuditLog,
    command: &str,
    arguments: &Value,
    summary: &str,
) -> anyhow::Result<()> {
    let user = UserActor::cli();
    let entry = AuditEntry::new(
        Actor::User(user.clone()),
        AuditKind::ToolCall,
        Decision::Applied,
        AuditOutcome::ok_with(summary),
    )
    .tool(command)
    .arguments(arguments)
    .detail(json!({ "via": user.via(), "summary": summary }));
    audit.append(entry).await.map_err(|error| {
        anyhow::anyhow!(
            "the change was written ({summary}), but the audit log could not record it: {error}"
        )
    })?;
    Ok(())
}

/// `hearth calendar add TITLE --start …`: one event, written at once (the user's own
/// change) and recorded in the audit log.
async fn add(calendars: &Calendars, audit: &AuditLog, args: AddArgs) -> anyhow::Result<()> {
    let (Some(title), Some(start)) = (args.title, args.start) else {
        anyhow::bail!("give the event's title and --start");
    };
    let event = EventInput {
        title,
        category: args.category,
        sub_category: args.sub_category,
        start,
        end: args.end,
        all_day: None,
        time_zone: args.time_zone,
        location: args.location,
        description: args.description,
        recurrence: args.repeat,
    };
    let arguments = json!({ "calendar": &args.calendar, "event": &event });
    let applied = calendars.add_event(args.calendar.as_deref(), event).await?;
    record_write(audit, "calendar_add", &arguments, &applied.summary).await?;
    if args.json {
        json_line(&applied)
    } else {
        write_out(&format!("{}\n", escape_controls_inline(&applied.summary)))
    }
}

/// `hearth calendar import FILE`: the file's events, and what was skipped or adapted;
/// an import that added events is recorded in the audit log.
async fn import(
    calendars: &Calendars,
    audit: &AuditLog,
    calendar: Option<&str>,
    file: &std::path::Path,
    json: bool,
) -> anyhow::Result<()> {
    // Read as a calendar is loaded: capped in size, and bytes that are not UTF-8
    // replaced with a warning rather than failing the whole import.
    let report = calendars.import_ics_file(calendar, file).await?;
    let noun = if report.imported == 1 {
        "event"
    } else {
        "events"
    };
    let summary = format!(
        "Imported {} {noun} into `{}`",
        report.imported, report.calendar
    );
    if report.imported > 0 {
        let arguments = json!({ "calendar": &report.calendar, "file": file.display().to_string() });
        record_write(audit, "calendar_import", &arguments, &summary).await?;
    }
    if json {
        return json_line(&report);
    }
    let mut out = format!("{summary}.\n");
    for skipped in &report.skipped {
        out.push_str(&format!("  skipped: {}\n", crate::shown::message(skipped)));
    }
    for adapted in &report.adapted {
        out.push_str(&format!("  adapted: {}\n", crate::shown::message(adapted)));
    }
    for warning in &report.warnings {
        out.push_str(&format!(
            "  warning: {}: {}\n",
            escape_controls_inline(&warning.location),
            crate::shown::message(&warning.message)
        ));
    }
    write_out(&out)
}
