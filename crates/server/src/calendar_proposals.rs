//! Pending calendar proposals drawn as events: what `event_create`,
//! `events_create_batch`, `event_update` and `event_delete` staged, read from the
//! payloads hearth-calendar stores with each proposal, placed in the window the way
//! the calendar's own events are (repeating ones expanded through its event index).
//!
//! The payload is read by hearth-calendar itself ([`read_proposal`]), in its own terms.
//! A payload that does not read is skipped with a warning naming the proposal, never an
//! error: the proposal itself is still listed, and decided, by `proposal/*`.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use hearth_calendar::{
    Calendars, Event, EventIndex, EventSource, EventTime, OverrideRange, ProposedChange,
    ProposedEvent, ProposedRecurrence, Recurrence, parse_time_zone, read_proposal, tool_names,
};
use hearth_protocol::{self as wire, ProposalListParams, ProposalStatus, RpcError};

use crate::approvals::Approvals;
use crate::calendar::Window;

/// Proposals read per page.
const PAGE: u32 = 500;
/// Pages read at most (pending proposals beyond these are not drawn).
const MAX_PAGES: usize = 20;

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
        let (calendar, change) = match read_proposal(&proposal.payload) {
            Ok(read) => read,
            Err(error) => {
                warnings.push(unreadable(&proposal, &error.to_string()));
                continue;
            }
        };
        if !ids.contains(&calendar.as_str()) {
            continue;
        }
        let floating = calendars
            .calendar(&calendar)
            .ok()
            .and_then(|info| parse_time_zone(&info.time_zone).ok())
            .unwrap_or(window.zone);
        let picture = Picture {
            proposal: &proposal,
            calendar: &calendar,
            window,
            floating,
        };
        match drawn(&picture, &change, calendars, events).await {
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

/// One proposal to draw in a window.
struct Picture<'a> {
    proposal: &'a wire::Proposal,
    calendar: &'a str,
    window: &'a Window,
    /// The zone of the calendar's floating times.
    floating: Tz,
}

/// The pictures of one proposal in the window.
async fn drawn(
    picture: &Picture<'_>,
    change: &ProposedChange,
    calendars: &Calendars,
    events: &[wire::CalendarEvent],
) -> Result<Vec<wire::ProposedEvent>, String> {
    let ghost = |action| Ghost {
        proposal: picture.proposal,
        action,
        calendar: picture.calendar,
    };
    let mut drawn = Vec::new();
    match change {
        ProposedChange::Create(created) => {
            let ghost = ghost(wire::ProposedAction::Create);
            for event in created {
                let recurrence = match &event.recurrence {
                    ProposedRecurrence::Rule(rule) => Some(rule.clone()),
                    ProposedRecurrence::None | ProposedRecurrence::Unchanged => None,
                };
                drawn.extend(occurrences(&ghost, event, recurrence, picture));
            }
        }
        ProposedChange::Update { event, occurrence } => {
            let ghost = ghost(wire::ProposedAction::Update);
            let recurrence = match (&event.recurrence, occurrence) {
                // One occurrence moves: it is drawn once, at its new time.
                (_, Some(_)) | (ProposedRecurrence::None, None) => None,
                (ProposedRecurrence::Rule(rule), None) => Some(rule.clone()),
                (ProposedRecurrence::Unchanged, None) => calendars
                    .load(picture.calendar)
                    .await
                    .ok()
                    .and_then(|loaded| {
                        loaded
                            .index
                            .get(picture.calendar, &event.uid)
                            .and_then(|current| current.recurrence.clone())
                    }),
            };
            drawn.extend(occurrences(&ghost, event, recurrence, picture));
        }
        ProposedChange::Delete { uid, occurrence } => {
            let ghost = ghost(wire::ProposedAction::Delete);
            let handle = occurrence.map(|time| handle(time, picture.window.zone));
            for event in events.iter().filter(|event| {
                event.calendar == picture.calendar
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

/// How the calendar's listing names an occurrence (its `recurrenceId`).
fn handle(time: EventTime, zone: Tz) -> String {
    match time {
        EventTime::Date(date) => date.to_string(),
        time => time
            .to_utc(zone)
            .with_timezone(&zone)
            .format("%Y-%m-%dT%H:%M")
            .to_string(),
    }
}

/// The occurrences in the window of the proposed `event`, repeating by `recurrence`,
/// through the calendar's own event index.
fn occurrences(
    ghost: &Ghost<'_>,
    proposed: &ProposedEvent,
    recurrence: Option<Recurrence>,
    picture: &Picture<'_>,
) -> Vec<wire::ProposedEvent> {
    let (start, end) = (proposed.start, proposed.end);
    let all_day = matches!(start, EventTime::Date(_));
    let days = match (start, end) {
        (EventTime::Date(first), EventTime::Date(after)) => (after - first).num_days().max(1),
        _ => 1,
    };
    let event = Event {
        calendar: ghost.calendar.to_owned(),
        uid: proposed.uid.clone(),
        recurrence_id: None,
        range: OverrideRange::ThisOccurrence,
        title: proposed.title.clone(),
        description: None,
        location: proposed.location.clone(),
        categories: Vec::new(),
        status: None,
        start,
        end,
        recurrence,
        source: EventSource::Ics { line: 0 },
    };
    let (window, floating) = (picture.window, picture.floating);
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
        drawn.push(ghost.event(Some(&proposed.uid), &proposed.title, all_day, times));
    }
    drawn
}

fn local_date(instant: DateTime<Utc>, zone: Tz) -> NaiveDate {
    instant.with_timezone(&zone).date_naive()
}
