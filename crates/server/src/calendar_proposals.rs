//! Pending calendar proposals drawn as events: what `event_create`,
//! `events_create_batch`, `event_update` and `event_delete` staged, read from the
//! payloads hearth-calendar stores with each proposal, placed in the window the way
//! the calendar's own events are (repeating ones expanded through its event index).
//!
//! The payload's shape is hearth-calendar's (`change.rs`: `calendar`, and an
//! `operation` tagged by `type` holding event specs whose times are tagged by `kind`);
//! only the fields a picture needs are read here. A payload that does not read is
//! skipped with a warning naming the proposal, never an error: the proposal itself is
//! still listed, and decided, by `proposal/*`.

use std::str::FromStr;

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;
use hearth_calendar::{
    Calendars, Event, EventIndex, EventSource, EventTime, OverrideRange, Recurrence,
    RecurrenceRule, Zone, parse_time_zone, tool_names,
};
use hearth_protocol::{self as wire, ProposalListParams, ProposalStatus, RpcError};
use serde::Deserialize;

use crate::approvals::Approvals;
use crate::calendar::Window;

/// Proposals read per page.
const PAGE: u32 = 500;
/// Pages read at most (pending proposals beyond these are not drawn).
const MAX_PAGES: usize = 20;

/// The part of a calendar proposal's payload a picture needs.
#[derive(Debug, Deserialize)]
struct Payload {
    calendar: String,
    operation: Operation,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Operation {
    Create {
        events: Vec<Spec>,
    },
    Update {
        event: Spec,
        #[serde(default)]
        occurrence: Option<SpecTime>,
    },
    Delete {
        uid: String,
        #[serde(default)]
        occurrence: Option<SpecTime>,
    },
}

/// An event as a staged change writes it.
#[derive(Debug, Deserialize)]
struct Spec {
    uid: String,
    title: String,
    start: SpecTime,
    end: SpecTime,
    #[serde(default)]
    location: Option<String>,
    recurrence: RecurrenceSpec,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum SpecTime {
    Date {
        date: NaiveDate,
    },
    Zoned {
        local: NaiveDateTime,
        time_zone: String,
    },
    Floating {
        local: NaiveDateTime,
    },
    Utc {
        utc: NaiveDateTime,
    },
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum RecurrenceSpec {
    Unchanged,
    None,
    Rule { rule: String },
}

impl SpecTime {
    fn event_time(&self) -> Result<EventTime, String> {
        Ok(match self {
            Self::Date { date } => EventTime::Date(*date),
            Self::Zoned { local, time_zone } => EventTime::DateTime {
                local: *local,
                zone: Zone::Named(parse_time_zone(time_zone).map_err(|e| e.to_string())?),
            },
            Self::Floating { local } => EventTime::DateTime {
                local: *local,
                zone: Zone::Floating,
            },
            Self::Utc { utc } => EventTime::DateTime {
                local: *utc,
                zone: Zone::Utc,
            },
        })
    }
}

/// What a proposal is, for the pictures made of it.
struct Ghost<'a> {
    proposal: &'a wire::Proposal,
    action: wire::ProposedAction,
    calendar: &'a str,
}

impl Ghost<'_> {
    fn event(
        &self,
        uid: Option<&str>,
        title: &str,
        all_day: bool,
        (start, end): (String, String),
    ) -> wire::ProposedEvent {
        wire::ProposedEvent {
            proposal_id: self.proposal.id.clone(),
            payload_hash: self.proposal.payload_hash.clone(),
            summary: self.proposal.summary.clone(),
            action: self.action,
            calendar: self.calendar.to_owned(),
            uid: uid.map(str::to_owned),
            title: title.to_owned(),
            start,
            end,
            all_day,
        }
    }
}

/// Every pending proposal, oldest pages last.
async fn pending(approvals: &dyn Approvals) -> Result<Vec<wire::Proposal>, RpcError> {
    let mut proposals = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let page = approvals
            .list(ProposalListParams {
                statuses: vec![ProposalStatus::Pending],
                session: None,
                cursor,
                limit: Some(PAGE),
            })
            .await?;
        proposals.extend(page.proposals);
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    Ok(proposals)
}

fn is_calendar_tool(tool: &str) -> bool {
    [
        tool_names::EVENT_CREATE,
        tool_names::EVENTS_CREATE_BATCH,
        tool_names::EVENT_UPDATE,
        tool_names::EVENT_DELETE,
    ]
    .contains(&tool)
}

/// The pending calendar proposals of the calendars `ids` as the events they would
/// create, move or delete in the window; `events` are the window's events (what a
/// delete removes is found there).
pub(crate) async fn proposed_events(
    approvals: &dyn Approvals,
    calendars: &Calendars,
    window: &Window,
    ids: &[&str],
    events: &[wire::CalendarEvent],
    warnings: &mut Vec<String>,
) -> Result<Vec<wire::ProposedEvent>, RpcError> {
    let now = Utc::now();
    let mut proposed = Vec::new();
    for proposal in pending(approvals).await? {
        if !is_calendar_tool(&proposal.tool) || proposal.expires_at <= now {
            continue;
        }
        let payload = match serde_json::from_value::<Payload>(proposal.payload.clone()) {
            Ok(payload) => payload,
            Err(error) => {
                warnings.push(unreadable(&proposal, &error.to_string()));
                continue;
            }
        };
        if !ids.contains(&payload.calendar.as_str()) {
            continue;
        }
        let floating = calendars
            .calendar(&payload.calendar)
            .ok()
            .and_then(|info| parse_time_zone(&info.time_zone).ok())
            .unwrap_or(window.zone);
        match drawn(&proposal, &payload, calendars, window, floating, events).await {
            Ok(ghosts) => proposed.extend(ghosts),
            Err(error) => warnings.push(unreadable(&proposal, &error)),
        }
    }
    proposed.sort_by(|a, b| (&a.start, &a.proposal_id).cmp(&(&b.start, &b.proposal_id)));
    Ok(proposed)
}

fn unreadable(proposal: &wire::Proposal, error: &str) -> String {
    format!(
        "proposal {} (\"{}\") is not drawn on the calendar: its change cannot be read ({error}); it can still be approved or rejected from the proposals",
        proposal.id, proposal.summary
    )
}

/// The pictures of one proposal in the window.
async fn drawn(
    proposal: &wire::Proposal,
    payload: &Payload,
    calendars: &Calendars,
    window: &Window,
    floating: Tz,
    events: &[wire::CalendarEvent],
) -> Result<Vec<wire::ProposedEvent>, String> {
    let ghost = |action| Ghost {
        proposal,
        action,
        calendar: &payload.calendar,
    };
    let mut drawn = Vec::new();
    match &payload.operation {
        Operation::Create { events: specs } => {
            let ghost = ghost(wire::ProposedAction::Create);
            for spec in specs {
                let recurrence = match &spec.recurrence {
                    RecurrenceSpec::Rule { rule } => Some(rule_recurrence(rule)?),
                    RecurrenceSpec::None | RecurrenceSpec::Unchanged => None,
                };
                drawn.extend(occurrences(&ghost, spec, recurrence, window, floating)?);
            }
        }
        Operation::Update { event, occurrence } => {
            let ghost = ghost(wire::ProposedAction::Update);
            let recurrence = match (&event.recurrence, occurrence) {
                // One occurrence moves: it is drawn once, at its new time.
                (_, Some(_)) | (RecurrenceSpec::None, None) => None,
                (RecurrenceSpec::Rule { rule }, None) => Some(rule_recurrence(rule)?),
                (RecurrenceSpec::Unchanged, None) => calendars
                    .load(&payload.calendar)
                    .await
                    .ok()
                    .and_then(|loaded| {
                        loaded
                            .index
                            .get(&payload.calendar, &event.uid)
                            .and_then(|current| current.recurrence.clone())
                    }),
            };
            drawn.extend(occurrences(&ghost, event, recurrence, window, floating)?);
        }
        Operation::Delete { uid, occurrence } => {
            let ghost = ghost(wire::ProposedAction::Delete);
            let handle = occurrence
                .as_ref()
                .map(|time| handle(time, window.zone))
                .transpose()?;
            for event in events.iter().filter(|event| {
                event.calendar == payload.calendar
                    && &event.uid == uid
                    && handle
                        .as_ref()
                        .is_none_or(|handle| event.recurrence_id.as_ref() == Some(handle))
            }) {
                drawn.push(ghost.event(
                    Some(uid),
                    &event.title,
                    event.all_day,
                    (event.start.clone(), event.end.clone()),
                ));
            }
        }
    }
    Ok(drawn)
}

fn rule_recurrence(rule: &str) -> Result<Recurrence, String> {
    Ok(Recurrence {
        rules: vec![RecurrenceRule::from_str(rule).map_err(|e| e.to_string())?],
        rdates: Vec::new(),
        periods: Vec::new(),
        exdates: Vec::new(),
        start_is_occurrence: true,
    })
}

/// How the calendar's listing names an occurrence (its `recurrenceId`).
fn handle(time: &SpecTime, zone: Tz) -> Result<String, String> {
    Ok(match time.event_time()? {
        EventTime::Date(date) => date.to_string(),
        time => time
            .to_utc(zone)
            .with_timezone(&zone)
            .format("%Y-%m-%dT%H:%M")
            .to_string(),
    })
}

/// The occurrences in the window of the event `spec` describes, repeating by
/// `recurrence`, through the calendar's own event index.
fn occurrences(
    ghost: &Ghost<'_>,
    spec: &Spec,
    recurrence: Option<Recurrence>,
    window: &Window,
    floating: Tz,
) -> Result<Vec<wire::ProposedEvent>, String> {
    let start = spec.start.event_time()?;
    let end = spec.end.event_time()?;
    let all_day = matches!(start, EventTime::Date(_));
    let days = match (start, end) {
        (EventTime::Date(first), EventTime::Date(after)) => (after - first).num_days().max(1),
        _ => 1,
    };
    let event = Event {
        calendar: ghost.calendar.to_owned(),
        uid: spec.uid.clone(),
        recurrence_id: None,
        range: OverrideRange::ThisOccurrence,
        title: spec.title.clone(),
        description: None,
        location: spec.location.clone(),
        categories: Vec::new(),
        status: None,
        start,
        end,
        recurrence,
        source: EventSource::Ics { line: 0 },
    };
    let index = EventIndex::new(vec![event], floating);
    let mut drawn = Vec::new();
    for occurrence in index.between(window.from, window.to) {
        let times = if all_day {
            let first = local_date(occurrence.start, floating);
            let after = first
                .checked_add_days(chrono::Days::new(days.unsigned_abs()))
                .unwrap_or(first);
            (first.to_string(), after.to_string())
        } else {
            (window.stamp(occurrence.start), window.stamp(occurrence.end))
        };
        drawn.push(ghost.event(Some(&spec.uid), &spec.title, all_day, times));
    }
    Ok(drawn)
}

fn local_date(instant: DateTime<Utc>, zone: Tz) -> NaiveDate {
    instant.with_timezone(&zone).date_naive()
}
