//! `calendar_list`, `events_list`, `event_get`.

use chrono::{DateTime, Duration, NaiveTime, Utc};
use chrono_tz::Tz;
use futures::future::BoxFuture;
use hearth_core::{ToolCallContext, ToolError, ToolOutput, ToolReach, TypedTool};
use hearth_ical::{EventId, Zone};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{calendar_tool, names};
use crate::presence::StorageState;
use crate::query::{
    CalendarSummary, EventDetails, EventListing, EventQuery, OccurrenceInfo, parse_time_bound,
};
use crate::store::Calendars;

const DEFAULT_LIMIT: u32 = 50;
const MAX_LIMIT: u32 = 500;
const MAX_RANGE_DAYS: i64 = 5 * 366;
const WARNINGS_SHOWN: usize = 5;

fn to_tool_error(error: crate::error::CalendarError) -> ToolError {
    error.into()
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalendarListArgs {}

calendar_tool!(
    /// `calendar_list`: the calendars, with counts, categories and problems.
    CalendarListTool
);

impl TypedTool for CalendarListTool {
    type Arguments = CalendarListArgs;
    const NAME: &'static str = names::CALENDAR_LIST;
    const DESCRIPTION: &'static str = "List the user's calendars: id, kind, whether writable, which is the default, time zone, event counts, categories (from titles 'Category - SubCategory - Title') and load problems. Call it before creating events to pick a calendar.";
    const MUTATES: bool = false;
    const REACH: ToolReach = ToolReach::Private;

    fn run<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        _arguments: CalendarListArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let summaries = self.calendars.summaries().await;
            let zone = self.calendars.time_zone();
            let mut lines = vec![format!(
                "Calendars (the user's time zone is {}):",
                zone.name()
            )];
            for summary in &summaries {
                lines.extend(summary_lines(summary, zone));
            }
            for problem in self.calendars.problems() {
                lines.push(format!(
                    "- `{}` is not usable: {}",
                    problem.calendar, problem.message
                ));
            }
            let data = json!({ "calendars": summaries, "problems": self.calendars.problems() });
            Ok(ToolOutput::Content {
                text: lines.join("\n"),
                data: Some(data),
            })
        })
    }
}

/// One calendar's lines in `calendar_list`: what it is and its state, its categories,
/// and the first of its warnings.
fn summary_lines(summary: &CalendarSummary, zone: Tz) -> Vec<String> {
    let mut lines = vec![calendar_line(summary, zone)];
    if !summary.categories.is_empty() {
        let categories: Vec<String> = summary
            .categories
            .iter()
            .map(|c| {
                let subs: Vec<String> = c
                    .sub_categories
                    .iter()
                    .map(|s| format!("{} {}", s.name, s.count))
                    .collect();
                if subs.is_empty() {
                    format!("{} {}", c.category, c.count)
                } else {
                    format!("{} {} ({})", c.category, c.count, subs.join(", "))
                }
            })
            .collect();
        lines.push(format!("  categories: {}", categories.join("; ")));
    }
    if !summary.warnings.is_empty() {
        lines.push(format!(
            "  {} items could not be read fully:",
            summary.warnings.len()
        ));
        for warning in summary.warnings.iter().take(WARNINGS_SHOWN) {
            lines.push(format!("    {warning}"));
        }
    }
    lines
}

/// A calendar's line in `calendar_list`: id, name, kind, writable, default, zone, and
/// its state (events, missing, unreadable, last sync).
fn calendar_line(summary: &CalendarSummary, zone: Tz) -> String {
    let info = &summary.info;
    let mut line = format!("- `{}`", info.id);
    if info.name != info.id {
        line.push_str(&format!(" \"{}\"", info.name));
    }
    line.push_str(&format!(" — {:?}", info.kind).to_lowercase());
    line.push_str(if info.writable {
        ", writable"
    } else {
        ", read-only"
    });
    if let Some(reason) = &info.read_only_reason {
        line.push_str(&format!(" ({reason})"));
    }
    if info.default {
        line.push_str(", default");
    }
    line.push_str(&format!(", zone {}", info.time_zone));
    match (&summary.error, summary.events) {
        (Some(_), _) if summary.storage == StorageState::Missing => line.push_str(&format!(
            ", missing: {} does not exist, so nothing is read from or written to this calendar; ask the user to create it or to correct `path` in [calendars.{}]",
            info.folder().map(|f| f.display().to_string()).unwrap_or_default(),
            info.id
        )),
        (Some(error), _) => line.push_str(&format!(", could not be read: {error}")),
        (None, Some(0)) if summary.storage == StorageState::NotCreated => {
            line.push_str(", 0 events (its file is created on the first write)")
        }
        (None, Some(events)) => line.push_str(&format!(
            ", {events} events ({} repeating)",
            summary.recurring.unwrap_or(0)
        )),
        (None, None) => {}
    }
    if let Some(at) = summary.synced_at {
        line.push_str(&format!(
            ", synced with its server at {}",
            at.with_timezone(&zone).format("%Y-%m-%d %H:%M")
        ));
    }
    line
}

/// `events_list` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventsListArgs {
    /// Range start: a date (`2026-03-02`, midnight in the user's zone) or date-time
    /// (`2026-03-02T14:00`, in the user's zone unless it carries an offset). Default:
    /// today.
    #[serde(default)]
    from: Option<String>,
    /// Range end, exclusive (same forms). Default: 7 days after `from`. At most 5 years
    /// after `from`.
    #[serde(default)]
    to: Option<String>,
    /// Words to find in title, description or location (case-insensitive).
    #[serde(default)]
    query: Option<String>,
    /// Only events of this category (`Work`, `Work - Meetings`, or an iCalendar category).
    #[serde(default)]
    category: Option<String>,
    /// Only this calendar (an id from `calendar_list`).
    #[serde(default)]
    calendar: Option<String>,
    /// The most occurrences to return, earliest first (default 50, at most 500).
    #[serde(default)]
    limit: Option<u32>,
}

impl EventsListArgs {
    /// The query these arguments ask, times read in `zone`.
    fn query(self, zone: Tz) -> Result<EventQuery, ToolError> {
        let from = match &self.from {
            Some(text) => parse_time_bound("from", text, zone).map_err(to_tool_error)?,
            None => {
                let today = Utc::now().with_timezone(&zone).date_naive();
                Zone::Named(zone).to_utc(today.and_time(NaiveTime::MIN), zone)
            }
        };
        let to = match &self.to {
            Some(text) => parse_time_bound("to", text, zone).map_err(to_tool_error)?,
            None => from + Duration::days(7),
        };
        if to <= from {
            return Err(ToolError::InvalidArguments(
                "`to` must be after `from`".to_owned(),
            ));
        }
        if to - from > Duration::days(MAX_RANGE_DAYS) {
            return Err(ToolError::InvalidArguments(
                "the range is longer than 5 years; narrow `from`/`to`".to_owned(),
            ));
        }
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        Ok(EventQuery {
            from,
            to,
            text: self.query,
            category: self.category,
            calendar: self.calendar,
            limit: limit as usize,
        })
    }
}

calendar_tool!(
    /// `events_list`: event occurrences in a range.
    EventsListTool
);

fn occurrence_line(occurrence: &OccurrenceInfo) -> String {
    let when = if occurrence.all_day {
        if occurrence.start == occurrence.end {
            format!("{} (all day)", occurrence.start)
        } else {
            format!("{} – {} (all day)", occurrence.start, occurrence.end)
        }
    } else if occurrence.start.get(..10) == occurrence.end.get(..10) {
        format!(
            "{}–{}",
            occurrence.start.replace('T', " "),
            occurrence.end.get(11..).unwrap_or("")
        )
    } else {
        format!(
            "{} – {}",
            occurrence.start.replace('T', " "),
            occurrence.end.replace('T', " ")
        )
    };
    let mut line = format!("- {when} · {} · id `{}`", occurrence.title, occurrence.id);
    if let Some(handle) = &occurrence.occurrence {
        line.push_str(&format!(" · occurrence `{handle}`"));
    }
    if let Some(location) = &occurrence.location {
        line.push_str(&format!(" · at {location}"));
    }
    if let Some(status) = &occurrence.status {
        line.push_str(&format!(" · {}", status.to_lowercase()));
    }
    line
}

impl TypedTool for EventsListTool {
    type Arguments = EventsListArgs;
    const NAME: &'static str = names::EVENTS_LIST;
    const DESCRIPTION: &'static str = "List event occurrences between `from` and `to` (repeating events expanded), earliest first, optionally filtered by words (`query`) or `category`. Times are in the user's time zone. Each line gives the event id (for event_get/event_update/event_delete) and, for repeating events, the occurrence handle (for changing or deleting one occurrence).";
    const MUTATES: bool = false;
    const REACH: ToolReach = ToolReach::Private;

    fn run<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        arguments: EventsListArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let zone = self.calendars.time_zone();
            let query = arguments.query(zone)?;
            let listing = self.calendars.events(&query).await.map_err(to_tool_error)?;
            let text = self.listing_lines(&listing, &query, zone).join("\n");
            let data = json!({
                "occurrences": listing.occurrences,
                "total": listing.total,
                "truncated": listing.total > listing.occurrences.len(),
                "unavailable": listing.unavailable,
                "offline": listing.offline,
            });
            Ok(ToolOutput::Content {
                text,
                data: Some(data),
            })
        })
    }
}

impl EventsListTool {
    /// The text of a listing: its range, one line per occurrence, whether it was cut,
    /// and the calendars that were offline or could not be read.
    fn listing_lines(&self, listing: &EventListing, query: &EventQuery, zone: Tz) -> Vec<String> {
        let local = |t: DateTime<Utc>| {
            t.with_timezone(&zone)
                .format("%a %Y-%m-%d %H:%M")
                .to_string()
        };
        let mut lines = vec![format!(
            "{} occurrences from {} to {} (times in {}):",
            listing.total,
            local(query.from),
            local(query.to),
            zone.name()
        )];
        lines.extend(listing.occurrences.iter().map(occurrence_line));
        if listing.total > listing.occurrences.len() {
            lines.push(format!(
                "Showing the first {} of {}; narrow the range, add `query` or `category`, or raise `limit` (at most {MAX_LIMIT}).",
                listing.occurrences.len(),
                listing.total
            ));
        }
        for offline in &listing.offline {
            lines.push(format!(
                "Calendar `{}` could not sync with its server ({}); its events are as of its last sync{} and may be out of date.",
                offline.calendar,
                offline.error,
                offline
                    .synced_at
                    .map(|at| format!(" at {}", local(at)))
                    .unwrap_or_default()
            ));
        }
        for unavailable in &listing.unavailable {
            let calendar = &unavailable.calendar;
            lines.push(match unavailable.storage {
                StorageState::Missing => format!(
                    "Calendar `{calendar}` is missing ({} does not exist), so its events are not listed; ask the user to create it or to correct `path` in [calendars.{calendar}]",
                    self.calendars
                        .calendar(calendar)
                        .ok()
                        .and_then(|info| info.folder())
                        .map(|folder| folder.display().to_string())
                        .unwrap_or_default()
                ),
                StorageState::Present | StorageState::NotCreated => format!(
                    "Calendar `{calendar}` could not be read: {}",
                    unavailable.error
                ),
            });
        }
        lines
    }
}

/// `event_get` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventGetArgs {
    /// The event id (`<calendar>/<uid>`) from `events_list`.
    id: String,
}

calendar_tool!(
    /// `event_get`: one event.
    EventGetTool
);

impl TypedTool for EventGetTool {
    type Arguments = EventGetArgs;
    const NAME: &'static str = names::EVENT_GET;
    const DESCRIPTION: &'static str = "Show one event by id: title and category, start and end in the event's own time zone, recurrence rule and exceptions, location, description, and its next occurrences.";
    const MUTATES: bool = false;
    const REACH: ToolReach = ToolReach::Private;

    fn run<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        arguments: EventGetArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let id: EventId = arguments
                .id
                .parse()
                .map_err(|error: hearth_ical::IcalError| to_tool_error(error.into()))?;
            let details = self.calendars.event(&id).await.map_err(to_tool_error)?;
            let data =
                serde_json::to_value(&details).map_err(|e| ToolError::Failed(e.to_string()))?;
            Ok(ToolOutput::Content {
                text: details_lines(&details).join("\n"),
                data: Some(data),
            })
        })
    }
}

/// What `event_get` says of an event, a line per field it has.
fn details_lines(details: &EventDetails) -> Vec<String> {
    let mut lines = vec![
        format!("id: {}", details.id),
        format!("title: {}", details.title),
    ];
    if let Some(category) = &details.taxonomy.category {
        let sub = details
            .taxonomy
            .sub_category
            .as_deref()
            .map(|s| format!(" / {s}"))
            .unwrap_or_default();
        lines.push(format!("category: {category}{sub}"));
    }
    lines.push(format!("calendar: {}", details.calendar));
    if details.all_day {
        lines.push(format!("all day: {} to {}", details.start, details.end));
    } else {
        lines.push(format!("start: {}", details.start));
        lines.push(format!("end: {}", details.end));
    }
    lines.push(format!("time zone: {}", details.time_zone));
    if let Some(repeats) = &details.repeats {
        lines.push(format!("repeats: {repeats} ({})", details.rules.join("; ")));
    }
    if !details.exceptions.is_empty() {
        lines.push(format!(
            "skipped occurrences: {}",
            details.exceptions.join(", ")
        ));
    }
    if details.overridden > 0 {
        lines.push(format!(
            "occurrences changed on their own: {}",
            details.overridden
        ));
    }
    for (label, value) in [("location", &details.location), ("status", &details.status)] {
        if let Some(value) = value {
            lines.push(format!("{label}: {value}"));
        }
    }
    if !details.categories.is_empty() {
        lines.push(format!(
            "iCalendar categories: {}",
            details.categories.join(", ")
        ));
    }
    if let Some(description) = &details.description {
        lines.push(format!("description: {description}"));
    }
    if !details.upcoming.is_empty() {
        lines.push("next occurrences:".to_owned());
        lines.extend(details.upcoming.iter().map(occurrence_line));
    }
    lines
}
