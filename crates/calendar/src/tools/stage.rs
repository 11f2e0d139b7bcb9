//! `event_create`, `event_update`, `event_delete`, `events_create_batch`: they stage
//! proposals and write only when the approval gate applies an approved payload.

use futures::future::BoxFuture;
use hearth_core::{ApplyOutput, ProposalDraft, ToolCallContext, ToolError, ToolOutput, TypedTool};
use hearth_ical::EventId;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{calendar_tool, names};
use crate::change::{ChangeRequest, MAX_BATCH};
use crate::error::CalendarError;
use crate::spec::{EventInput, EventPatch};
use crate::store::Calendars;

/// `event_create` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventCreateArgs {
    /// Calendar id from `calendar_list`; the default calendar when absent.
    #[serde(default)]
    calendar: Option<String>,
    /// Title, e.g. `Dentist`. May already be `Category - SubCategory - Title`.
    title: String,
    /// Category, e.g. `Health` (the title becomes `Category - SubCategory - Title`).
    #[serde(default)]
    category: Option<String>,
    /// Sub-category, e.g. `Checkups`; needs `category`.
    #[serde(default)]
    sub_category: Option<String>,
    /// Start: `2026-03-03` for an all-day event, `2026-03-03T09:00` for a timed event
    /// (wall clock in the user's time zone, the zone `events_list` shows, unless
    /// `time_zone` is given), or RFC 3339 with an offset.
    start: String,
    /// End, in the same zone as `start`. Timed: a date-time after `start` (default: one
    /// hour after). All-day: the last day, inclusive (default: the start day).
    #[serde(default)]
    end: Option<String>,
    /// Whether the event lasts whole days; inferred from `start` when absent.
    #[serde(default)]
    all_day: Option<bool>,
    /// IANA time zone such as `America/New_York` that `start`/`end` are given in and the
    /// event is kept in; default: the user's zone.
    #[serde(default)]
    time_zone: Option<String>,
    /// Location.
    #[serde(default)]
    location: Option<String>,
    /// Description.
    #[serde(default)]
    description: Option<String>,
    /// Recurrence as an RFC 5545 RRULE, e.g. `FREQ=WEEKLY;BYDAY=MO,WE`,
    /// `FREQ=MONTHLY;BYDAY=-1FR;COUNT=6`, `FREQ=YEARLY;UNTIL=20301231`.
    #[serde(default)]
    recurrence: Option<String>,
}

impl EventCreateArgs {
    fn request(self) -> ChangeRequest {
        ChangeRequest::Create {
            calendar: self.calendar,
            events: vec![EventInput {
                title: self.title,
                category: self.category,
                sub_category: self.sub_category,
                start: self.start,
                end: self.end,
                all_day: self.all_day,
                time_zone: self.time_zone,
                location: self.location,
                description: self.description,
                recurrence: self.recurrence,
            }],
        }
    }
}

/// `event_update` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventUpdateArgs {
    /// The event id (`<calendar>/<uid>`) from `events_list`.
    id: String,
    /// To change one occurrence of a repeating event only: its handle from
    /// `events_list` (e.g. `2026-03-10T09:00` or `2026-03-10`, in the user's time zone).
    /// Absent: the whole event.
    #[serde(default)]
    occurrence: Option<String>,
    /// New title.
    #[serde(default)]
    title: Option<String>,
    /// New category (empty string: remove it).
    #[serde(default)]
    category: Option<String>,
    /// New sub-category (empty string: remove it).
    #[serde(default)]
    sub_category: Option<String>,
    /// New start, e.g. `2026-03-10T16:30`: a wall clock in the user's time zone (the zone
    /// `events_list` and occurrence handles use) unless it carries an offset or
    /// `time_zone` is given. The event keeps its own zone. The length is kept unless
    /// `end` is given.
    #[serde(default)]
    start: Option<String>,
    /// New end, read like `start`.
    #[serde(default)]
    end: Option<String>,
    /// Make it all-day (true) or timed (false).
    #[serde(default)]
    all_day: Option<bool>,
    /// IANA time zone that `start`/`end` are given in; the event moves to it. Absent:
    /// they are in the user's zone and the event keeps its own.
    #[serde(default)]
    time_zone: Option<String>,
    /// New location (empty string: remove it).
    #[serde(default)]
    location: Option<String>,
    /// New description (empty string: remove it).
    #[serde(default)]
    description: Option<String>,
    /// New RRULE (empty string: stop repeating).
    #[serde(default)]
    recurrence: Option<String>,
}

impl EventUpdateArgs {
    fn request(self) -> Result<ChangeRequest, ToolError> {
        Ok(ChangeRequest::Update {
            event: event_id(&self.id)?,
            occurrence: self.occurrence,
            patch: EventPatch {
                title: self.title,
                category: self.category,
                sub_category: self.sub_category,
                start: self.start,
                end: self.end,
                all_day: self.all_day,
                time_zone: self.time_zone,
                location: self.location,
                description: self.description,
                recurrence: self.recurrence,
            },
        })
    }
}

/// `event_delete` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EventDeleteArgs {
    /// The event id (`<calendar>/<uid>`) from `events_list`.
    id: String,
    /// To delete one occurrence of a repeating event only: its handle from
    /// `events_list`. Absent: the whole event, all occurrences.
    #[serde(default)]
    occurrence: Option<String>,
}

impl EventDeleteArgs {
    fn request(self) -> Result<ChangeRequest, ToolError> {
        Ok(ChangeRequest::Delete {
            event: event_id(&self.id)?,
            occurrence: self.occurrence,
        })
    }
}

/// `events_create_batch` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchArgs {
    /// Calendar id from `calendar_list`; the default calendar when absent.
    #[serde(default)]
    calendar: Option<String>,
    /// The events (at most 100), each as for `event_create` without `calendar`.
    events: Vec<EventInput>,
}

impl BatchArgs {
    fn request(self) -> Result<ChangeRequest, ToolError> {
        if self.events.len() > MAX_BATCH {
            return Err(ToolError::InvalidArguments(format!(
                "{} events are more than {MAX_BATCH}; split them into several batches",
                self.events.len()
            )));
        }
        Ok(ChangeRequest::Create {
            calendar: self.calendar,
            events: self.events,
        })
    }
}

fn event_id(text: &str) -> Result<EventId, ToolError> {
    text.parse::<EventId>()
        .map_err(|error| ToolError::from(CalendarError::from(error)))
}

fn stage(
    calendars: &Calendars,
    request: Result<ChangeRequest, ToolError>,
) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
    Box::pin(async move {
        let staged = calendars.stage(request?).await?;
        Ok(ToolOutput::Staged(ProposalDraft {
            summary: staged.summary,
            diff: staged.diff,
            payload: staged.payload,
        }))
    })
}

fn apply<'a>(
    calendars: &'a Calendars,
    payload: &'a Value,
) -> BoxFuture<'a, Result<ApplyOutput, ToolError>> {
    Box::pin(async move {
        let applied = calendars.apply(payload).await?;
        Ok(ApplyOutput {
            summary: applied.summary,
        })
    })
}

calendar_tool!(
    /// `event_create`: stages a new event.
    EventCreateTool
);

impl TypedTool for EventCreateTool {
    type Arguments = EventCreateArgs;
    const NAME: &'static str = names::EVENT_CREATE;
    const DESCRIPTION: &'static str = "Propose a new calendar event. Nothing is written until the user approves the proposal; tell the user it awaits their approval. Times without an offset are in the user's time zone unless `time_zone` is given. Checks the times (end after start), time zone, recurrence rule and that the calendar is writable.";
    const MUTATES: bool = true;

    fn run<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        arguments: EventCreateArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        stage(&self.calendars, Ok(arguments.request()))
    }

    fn apply_approved<'a>(
        &'a self,
        payload: &'a Value,
    ) -> BoxFuture<'a, Result<ApplyOutput, ToolError>> {
        apply(&self.calendars, payload)
    }
}

calendar_tool!(
    /// `event_update`: stages changes to an event or one of its occurrences.
    EventUpdateTool
);

impl TypedTool for EventUpdateTool {
    type Arguments = EventUpdateArgs;
    const NAME: &'static str = names::EVENT_UPDATE;
    const DESCRIPTION: &'static str = "Propose changes to an event (or, with `occurrence`, to one occurrence of a repeating event). Only the given fields change. Times without an offset are in the user's time zone, as `events_list` shows them, unless `time_zone` is given; the event keeps its own zone. Nothing is written until the user approves.";
    const MUTATES: bool = true;

    fn run<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        arguments: EventUpdateArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        stage(&self.calendars, arguments.request())
    }

    fn apply_approved<'a>(
        &'a self,
        payload: &'a Value,
    ) -> BoxFuture<'a, Result<ApplyOutput, ToolError>> {
        apply(&self.calendars, payload)
    }
}

calendar_tool!(
    /// `event_delete`: stages deleting an event or one of its occurrences.
    EventDeleteTool
);

impl TypedTool for EventDeleteTool {
    type Arguments = EventDeleteArgs;
    const NAME: &'static str = names::EVENT_DELETE;
    const DESCRIPTION: &'static str = "Propose deleting an event (all its occurrences), or with `occurrence` one occurrence of a repeating event. Nothing is deleted until the user approves.";
    const MUTATES: bool = true;

    fn run<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        arguments: EventDeleteArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        stage(&self.calendars, arguments.request())
    }

    fn apply_approved<'a>(
        &'a self,
        payload: &'a Value,
    ) -> BoxFuture<'a, Result<ApplyOutput, ToolError>> {
        apply(&self.calendars, payload)
    }
}

calendar_tool!(
    /// `events_create_batch`: stages several new events as one proposal.
    EventsCreateBatchTool
);

impl TypedTool for EventsCreateBatchTool {
    type Arguments = BatchArgs;
    const NAME: &'static str = names::EVENTS_CREATE_BATCH;
    const DESCRIPTION: &'static str = "Propose several new events at once (e.g. a course schedule), as one proposal the user approves or rejects as a whole. At most 100 events. Times without an offset are in the user's time zone unless an event's `time_zone` is given.";
    const MUTATES: bool = true;

    fn run<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        arguments: BatchArgs,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        stage(&self.calendars, arguments.request())
    }

    fn apply_approved<'a>(
        &'a self,
        payload: &'a Value,
    ) -> BoxFuture<'a, Result<ApplyOutput, ToolError>> {
        apply(&self.calendars, payload)
    }
}
