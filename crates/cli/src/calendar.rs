//! `hearth calendar list|events|add|import|export`: the user's own calendar actions.
//! They write at once (the user is acting, not an agent); agents reach calendars only
//! through the tools, whose writes wait for approval.

use std::path::PathBuf;
use std::process::ExitCode;

use chrono::{Days, Utc};
use clap::{Args, Subcommand};
use hearth_calendar::{
    CalendarInfo, Calendars, EventInput, EventQuery, OccurrenceInfo, StorageKind, StorageState,
    UnavailableCalendar, parse_time_bound,
};

use crate::app::App;
use crate::audit::write_atomically;
use crate::toolbox::{calendars, json_line, write_out};

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
    /// Add an event to a calendar (the default one unless `--calendar`).
    Add(AddArgs),
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
    title: String,
    /// Start: `2026-03-03` (all-day) or `2026-03-03T09:00` (local time), or RFC 3339.
    #[arg(long)]
    start: String,
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
    /// IANA time zone of the times (default: the calendar's).
    #[arg(long)]
    time_zone: Option<String>,
    /// Print what was written as JSON.
    #[arg(long)]
    json: bool,
}

fn kind_name(kind: StorageKind) -> &'static str {
    match kind {
        StorageKind::Ics => "ics",
        StorageKind::Notes => "notes",
        StorageKind::Subscription => "subscription",
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
    let mut line = format!("{when}  {}", occurrence.title);
    if let Some(location) = &occurrence.location {
        line.push_str(&format!(" @ {location}"));
    }
    if occurrence.recurring {
        line.push_str(" ↻");
    }
    line.push_str(&format!("  [{}]\n", occurrence.id));
    line
}

/// `hearth doctor`'s calendar section: each calendar ok or missing, with its path and
/// what to do; `false` when one is missing or its configuration is unusable.
pub fn doctor_section(app: &App) -> anyhow::Result<(String, bool)> {
    let calendars = calendars(app)?;
    let config = app.paths.config_file.display();
    let mut out = String::from("\ncalendars:\n");
    let mut healthy = true;
    for info in calendars.calendars() {
        let name = format!("{} ({}, {})", info.id, kind_name(info.kind), info.location);
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
            info.name,
            kind_name(info.kind),
            info.location,
            if info.writable { "" } else { " read-only" },
        );
        match (&summary.error, summary.events, summary.storage) {
            (_, _, StorageState::Missing) => line.push_str(&format!(
                "    missing: {} does not exist; create it (or reconnect its drive), or correct `path` in [calendars.{}]. Nothing is read from or written to it until then.\n",
                info.folder().map(|f| f.display().to_string()).unwrap_or_default(),
                info.id
            )),
            (Some(error), _, _) => line.push_str(&format!("    cannot be read: {error}\n")),
            (None, Some(0), StorageState::NotCreated) => {
                line.push_str("    0 events; the file is created on the first write\n")
            }
            (None, Some(events), _) => line.push_str(&format!(
                "    {events} events, {} repeating\n",
                summary.recurring.unwrap_or(0)
            )),
            (None, None, _) => {}
        }
        for warning in &summary.warnings {
            line.push_str(&format!(
                "    warning: {}: {}\n",
                warning.location, warning.message
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

/// Runs `hearth calendar …`.
pub async fn calendar(app: &App, command: CalendarCommand) -> anyhow::Result<ExitCode> {
    let calendars = calendars(app)?;
    match command {
        CalendarCommand::List { json } => list(&calendars, json).await?,
        CalendarCommand::Events(args) => events(app, &calendars, args).await?,
        CalendarCommand::Add(args) => {
            let event = EventInput {
                title: args.title,
                category: args.category,
                sub_category: args.sub_category,
                start: args.start,
                end: args.end,
                all_day: None,
                time_zone: args.time_zone,
                location: args.location,
                description: args.description,
                recurrence: args.repeat,
            };
            let applied = calendars.add_event(args.calendar.as_deref(), event).await?;
            if args.json {
                json_line(&applied)?;
            } else {
                write_out(&format!("{}\n", applied.summary))?;
            }
        }
        CalendarCommand::Import {
            file,
            calendar,
            json,
        } => {
            // Read as a calendar is loaded: capped in size, and bytes that are not
            // UTF-8 replaced with a warning rather than failing the whole import.
            let report = calendars
                .import_ics_file(calendar.as_deref(), &file)
                .await?;
            if json {
                json_line(&report)?;
            } else {
                let noun = if report.imported == 1 {
                    "event"
                } else {
                    "events"
                };
                let mut out = format!(
                    "Imported {} {noun} into `{}`.\n",
                    report.imported, report.calendar
                );
                for skipped in &report.skipped {
                    out.push_str(&format!("  skipped: {skipped}\n"));
                }
                for adapted in &report.adapted {
                    out.push_str(&format!("  adapted: {adapted}\n"));
                }
                for warning in &report.warnings {
                    out.push_str(&format!(
                        "  warning: {}: {}\n",
                        warning.location, warning.message
                    ));
                }
                write_out(&out)?;
            }
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
