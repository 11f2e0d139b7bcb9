//! `calendar/list` and `calendar/events`: the calendars read through hearth-calendar's
//! query API (the one the calendar tools and `hearth calendar` use), in the user's zone.
//! A calendar that cannot be read is named with what to do, and the others still
//! answer; pending calendar proposals are drawn as events by [`crate::calendar_proposals`].

use chrono::{DateTime, Duration, NaiveDate, SecondsFormat, Utc};
use chrono_tz::Tz;
use hearth_calendar::{
    CalendarInfo, CalendarSummary, Calendars, EventListing, EventQuery, OccurrenceInfo,
    StorageKind, StorageState, UnavailableCalendar, parse_time_bound,
};
use hearth_config::{CalendarKind as ConfigKind, ClockFormat, Config};
use hearth_protocol::{self as wire, ErrorKind, RpcError};

use crate::access::{Principal, sees_calendar};
use crate::approvals::Approvals;
use crate::backend::Shared;
use crate::calendar_proposals::proposed_events;
use crate::dispatch::{MethodTable, route};
use crate::edge::unavailable;
use hearth_protocol::Method;

/// The longest window `calendar/events` answers.
pub(crate) const MAX_WINDOW_DAYS: i64 = 400;
/// The most occurrences of one calendar one answer holds.
const MAX_OCCURRENCES: usize = 5000;

/// The configuration file, as errors name it (the server does not know its path).
const CONFIG_FILE: &str = "config.toml";

fn kind(kind: StorageKind) -> wire::CalendarKind {
    match kind {
        StorageKind::Ics => wire::CalendarKind::Ics,
        StorageKind::Notes => wire::CalendarKind::Notes,
        StorageKind::Subscription => wire::CalendarKind::Subscription,
        StorageKind::Caldav => wire::CalendarKind::Caldav,
    }
}

fn config_kind(kind: ConfigKind) -> wire::CalendarKind {
    match kind {
        ConfigKind::Ics => wire::CalendarKind::Ics,
        ConfigKind::Notes => wire::CalendarKind::Notes,
        ConfigKind::Subscription => wire::CalendarKind::Subscription,
        ConfigKind::Caldav => wire::CalendarKind::Caldav,
    }
}

fn folder_of(info: &CalendarInfo) -> String {
    info.folder()
        .map(|folder| folder.display().to_string())
        .unwrap_or_else(|| info.location.clone())
}

/// What to tell the user about a calendar whose folder is not there.
fn missing(info: &CalendarInfo) -> String {
    format!(
        "{} does not exist, so nothing is read from or written to this calendar; create it (or reconnect its drive), or correct `path` in [calendars.{}] of {CONFIG_FILE}",
        folder_of(info),
        info.id
    )
}

/// What to tell the user about a calendar that did not load.
fn unreadable(id: &str, error: &str) -> String {
    format!(
        "cannot be read: {error}; fix the file, or correct `path` in [calendars.{id}] of {CONFIG_FILE}"
    )
}

/// A configured file that is not there yet: empty, and perhaps a wrong `path`.
fn not_created(info: &CalendarInfo) -> Option<String> {
    (info.storage_state() == StorageState::NotCreated && !info.is_hearth_default()).then(|| {
        format!(
            "{} does not exist yet, so the calendar is empty (the file is created on the first write); if the calendar is elsewhere, correct `path` in [calendars.{}] of {CONFIG_FILE}",
            info.location, info.id
        )
    })
}

fn entry(summary: CalendarSummary, calendars: &Calendars) -> wire::CalendarEntry {
    let info = &summary.info;
    let mut warnings: Vec<String> = calendars
        .problems()
        .iter()
        .filter(|problem| problem.calendar == info.id)
        .map(|problem| format!("in {CONFIG_FILE}: {}", problem.message))
        .collect();
    warnings.extend(not_created(info));
    warnings.extend(
        summary
            .warnings
            .iter()
            .map(|warning| format!("{}: {}", warning.location, warning.message)),
    );
    let error = match (summary.storage, summary.error.as_deref()) {
        (StorageState::Missing, _) => Some(missing(info)),
        (_, Some(error)) if info.kind == StorageKind::Caldav => Some(format!(
            "cannot be read: {error}; check `url`, `username` and the password in [calendars.{}] of {CONFIG_FILE}",
            info.id
        )),
        (_, Some(error)) => Some(unreadable(&info.id, error)),
        (_, None) => None,
    };
    wire::CalendarEntry {
        id: info.id.clone(),
        name: info.name.clone(),
        kind: kind(info.kind),
        read_only: !info.writable,
        default: info.default,
        color: info.color.clone(),
        warnings,
        error,
        synced_at: summary
            .synced_at
            .map(|at| at.to_rfc3339_opts(SecondsFormat::Secs, true)),
    }
}

/// `calendar/list`.
pub(crate) async fn list(calendars: &Calendars, config: &Config) -> wire::CalendarListResponse {
    let mut entries: Vec<wire::CalendarEntry> = calendars
        .summaries()
        .await
        .into_iter()
        .map(|summary| entry(summary, calendars))
        .collect();
    // Configured calendars Hearth cannot use at all are listed with why.
    for problem in calendars.problems() {
        if entries.iter().any(|entry| entry.id == problem.calendar) {
            continue;
        }
        let configured = config.calendars.get(&problem.calendar);
        entries.push(wire::CalendarEntry {
            id: problem.calendar.clone(),
            name: configured
                .and_then(|calendar| calendar.name.clone())
                .unwrap_or_else(|| problem.calendar.clone()),
            kind: configured.map_or(wire::CalendarKind::Ics, |calendar| {
                config_kind(calendar.kind)
            }),
            read_only: true,
            default: false,
            color: configured.and_then(|calendar| calendar.color.clone()),
            warnings: Vec::new(),
            error: Some(format!(
                "not used: {}; fix [calendars.{}] in {CONFIG_FILE}",
                problem.message, problem.calendar
            )),
            synced_at: None,
        });
    }
    wire::CalendarListResponse {
        calendars: entries,
        timezone: calendars.time_zone().name().to_owned(),
        hour12: config.defaults.clock == Some(ClockFormat::Hours12),
    }
}

fn invalid(message: String) -> RpcError {
    RpcError::new(ErrorKind::InvalidParams, message, false)
}

/// The window of a request, checked: both ends parse, `to` is after `from`, and it is
/// at most [`MAX_WINDOW_DAYS`] long.
fn window(params: &wire::CalendarEventsParams, zone: Tz) -> Result<Window, RpcError> {
    let bound = |field: &str, text: &str| {
        parse_time_bound(field, text, zone).map_err(|error| {
            invalid(format!(
                "`{field}` ({text:?}) is not a date or time: {error}; give a date like 2026-12-01 or an RFC 3339 time like 2026-12-01T09:00:00+01:00"
            ))
        })
    };
    let from = bound("from", &params.from)?;
    let to = bound("to", &params.to)?;
    if to <= from {
        return Err(invalid(format!(
            "the window is empty: `to` ({}) must be after `from` ({}); `to` is exclusive",
            params.to, params.from
        )));
    }
    if to - from > Duration::days(MAX_WINDOW_DAYS) {
        return Err(invalid(format!(
            "the window from {} to {} is longer than {MAX_WINDOW_DAYS} days; ask for a shorter one",
            params.from, params.to
        )));
    }
    Ok(Window { from, to, zone })
}

/// A checked window and the zone answers are written in.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub zone: Tz,
}

impl Window {
    /// An instant as RFC 3339 with the offset of the window's zone.
    pub fn stamp(&self, instant: DateTime<Utc>) -> String {
        instant
            .with_timezone(&self.zone)
            .to_rfc3339_opts(SecondsFormat::Secs, false)
    }
}

/// The calendars a request covers, refusing ids that are not configured.
fn in_scope<'a>(
    calendars: &'a Calendars,
    requested: Option<&[String]>,
) -> Result<Vec<&'a CalendarInfo>, RpcError> {
    let Some(requested) = requested else {
        return Ok(calendars.calendars().iter().collect());
    };
    requested
        .iter()
        .map(|id| {
            calendars.calendar(id).map_err(|_| {
                let known: Vec<&str> = calendars
                    .calendars()
                    .iter()
                    .map(|info| info.id.as_str())
                    .collect();
                RpcError::new(
                    ErrorKind::NotFound,
                    format!(
                        "there is no calendar `{id}`; the configured calendars are: {}",
                        if known.is_empty() {
                            "none".to_owned()
                        } else {
                            known.join(", ")
                        }
                    ),
                    false,
                )
            })
        })
        .collect()
}

/// An occurrence as the wire shows it.
fn event(occurrence: OccurrenceInfo, window: &Window) -> wire::CalendarEvent {
    let prefix = format!("{}/", occurrence.calendar);
    let uid = occurrence
        .id
        .strip_prefix(&prefix)
        .unwrap_or(&occurrence.id)
        .to_owned();
    let (start, end) = if occurrence.all_day {
        // The listing's end is the last day; the wire's is the day after it.
        let end = NaiveDate::parse_from_str(&occurrence.end, "%Y-%m-%d")
            .ok()
            .and_then(|last| last.succ_opt())
            .map_or(occurrence.end.clone(), |after| after.to_string());
        (occurrence.start, end)
    } else {
        (
            window.stamp(occurrence.start_utc),
            window.stamp(occurrence.end_utc),
        )
    };
    wire::CalendarEvent {
        calendar: occurrence.calendar,
        uid,
        recurrence_id: occurrence.occurrence,
        title: occurrence.title,
        start,
        end,
        all_day: occurrence.all_day,
        location: occurrence.location,
    }
}

fn unavailable_warning(info: &CalendarInfo, unavailable: &UnavailableCalendar) -> String {
    match unavailable.storage {
        StorageState::Missing => format!(
            "calendar `{}` is missing, so its events are not shown: {}",
            info.id,
            missing(info)
        ),
        StorageState::Present | StorageState::NotCreated => format!(
            "calendar `{}` {}; its events are not shown",
            info.id,
            unreadable(&info.id, &unavailable.error)
        ),
    }
}

/// What the user should know about one calendar's listing: events cut off, storage
/// that could not be read, a server that could not be reached.
fn listing_warnings(
    calendars: &Calendars,
    info: &CalendarInfo,
    listing: &EventListing,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if listing.total > listing.occurrences.len() {
        warnings.push(format!(
            "calendar `{}`: showing the first {} of {} events; ask for a shorter window",
            info.id,
            listing.occurrences.len(),
            listing.total
        ));
    }
    warnings.extend(
        listing
            .unavailable
            .iter()
            .map(|unavailable| unavailable_warning(info, unavailable)),
    );
    warnings.extend(listing.offline.iter().map(|offline| {
        format!(
            "calendar `{}` could not sync with its server ({}); its events are as of its last sync{}",
            offline.calendar,
            offline.error,
            offline
                .synced_at
                .map(|at| format!(" at {}", at.with_timezone(&calendars.time_zone()).format("%Y-%m-%d %H:%M")))
                .unwrap_or_default()
        )
    }));
    warnings
}

/// `calendar/events`.
pub(crate) async fn events(
    calendars: &Calendars,
    approvals: Option<&dyn Approvals>,
    params: wire::CalendarEventsParams,
) -> Result<wire::CalendarEventsResponse, RpcError> {
    let window = window(&params, calendars.time_zone())?;
    let scope = in_scope(calendars, params.calendars.as_deref())?;
    let mut found: Vec<OccurrenceInfo> = Vec::new();
    let mut warnings = Vec::new();
    for info in &scope {
        let query = EventQuery {
            from: window.from,
            to: window.to,
            text: None,
            category: None,
            calendar: Some(info.id.clone()),
            limit: MAX_OCCURRENCES,
        };
        match calendars.events(&query).await {
            Ok(listing) => {
                warnings.extend(listing_warnings(calendars, info, &listing));
                found.extend(listing.occurrences);
            }
            Err(error) => {
                let unavailable = UnavailableCalendar {
                    calendar: info.id.clone(),
                    storage: info.storage_state(),
                    error: error.to_string(),
                };
                warnings.push(unavailable_warning(info, &unavailable));
            }
        }
    }
    found.sort_by(|a, b| {
        (a.start_utc, &a.calendar, &a.id, a.end_utc).cmp(&(
            b.start_utc,
            &b.calendar,
            &b.id,
            b.end_utc,
        ))
    });
    let events: Vec<wire::CalendarEvent> = found
        .into_iter()
        .map(|occurrence| event(occurrence, &window))
        .collect();
    let ids: Vec<&str> = scope.iter().map(|info| info.id.as_str()).collect();
    let proposed = match approvals {
        Some(approvals) => {
            proposed_events(approvals, calendars, &window, &ids, &events, &mut warnings).await?
        }
        None => Vec::new(),
    };
    Ok(wire::CalendarEventsResponse {
        events,
        proposed,
        warnings,
    })
}

/// The calendar methods.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::CalendarList => calendar_list, narrowed);
    route!(table, wire::CalendarEvents => calendar_events, narrowed);
}

async fn calendar_list(
    shared: &Shared,
    caller: &Principal,
    _params: <wire::CalendarList as Method>::Params,
) -> Result<<wire::CalendarList as Method>::Response, RpcError> {
    let mut listed = crate::calendar::list(calendars(shared)?, &shared.backend.config).await;
    if let Some(user) = caller.viewer() {
        let mut kept = Vec::with_capacity(listed.calendars.len());
        for calendar in listed.calendars {
            if sees_calendar(shared, user, &calendar.id).await? {
                kept.push(calendar);
            }
        }
        listed.calendars = kept;
    }
    Ok(listed)
}

/// A user's window shows only the calendars granted to them (of those they name).
async fn calendar_events(
    shared: &Shared,
    caller: &Principal,
    mut params: <wire::CalendarEvents as Method>::Params,
) -> Result<<wire::CalendarEvents as Method>::Response, RpcError> {
    if let Some(user) = caller.viewer() {
        let named = match params.calendars.take() {
            Some(named) => named,
            None => calendars(shared)?
                .calendars()
                .iter()
                .map(|info| info.id.clone())
                .collect(),
        };
        let mut granted = Vec::with_capacity(named.len());
        for calendar in named {
            if sees_calendar(shared, user, &calendar).await? {
                granted.push(calendar);
            }
        }
        if granted.is_empty() {
            return Ok(wire::CalendarEventsResponse {
                events: Vec::new(),
                proposed: Vec::new(),
                warnings: Vec::new(),
            });
        }
        params.calendars = Some(granted);
    }
    crate::calendar::events(
        calendars(shared)?,
        shared.backend.approvals.as_deref(),
        params,
    )
    .await
}

fn calendars(shared: &Shared) -> Result<&hearth_calendar::Calendars, RpcError> {
    shared.backend.calendars.as_ref().ok_or_else(|| {
        unavailable("the calendars are not available in this server (it was started without them)")
    })
}
