//! `event_create`, `event_update`, `event_delete`, `events_create_batch`: they stage
//! proposals and write only when the approval gate applies an approved payload.

use futures::future::BoxFuture;
use hearth_core::{
    ApplyOutput, ProposalDraft, ToolCallContext, ToolError, ToolHandler, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{arguments, names, schema_of};
use crate::change::{ChangeRequest, MAX_BATCH};
use crate::event::EventId;
use crate::spec::{EventInput, EventPatch};
use crate::store::Calendars;

/// `event_create` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EventCreateArgs {
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
    /// (wall clock in `time_zone`), or RFC 3339 with an offset.
    start: String,
    /// End. Timed: a date-time after `start` (default: one hour after). All-day: the last
    /// day, inclusive (default: the start day).
    #[serde(default)]
    end: Option<String>,
    /// Whether the event lasts whole days; inferred from `start` when absent.
    #[serde(default)]
    all_day: Option<bool>,
    /// IANA time zone such as `Europe/Berlin`; default: the calendar's (or user's) zone.
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
    fn split(self) -> (Option<String>, EventInput) {
        (
            self.calendar,
            EventInput {
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
        )
    }
}

/// `event_update` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EventUpdateArgs {
    /// The event id (`<calendar>/<uid>`) from `events_list`.
    id: String,
    /// To change one occurrence of a repeating event only: its handle from
    /// `events_list` (e.g. `2026-03-10T09:00` or `2026-03-10`). Absent: the whole event.
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
    /// New start; the length is kept unless `end` is given.
    #[serde(default)]
    start: Option<String>,
    /// New end.
    #[serde(default)]
    end: Option<String>,
    /// Make it all-day (true) or timed (false).
    #[serde(default)]
    all_day: Option<bool>,
    /// IANA time zone for the new times.
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

/// `event_delete` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EventDeleteArgs {
    /// The event id (`<calendar>/<uid>`) from `events_list`.
    id: String,
    /// To delete one occurrence of a repeating event only: its handle from
    /// `events_list`. Absent: the whole event, all occurrences.
    #[serde(default)]
    occurrence: Option<String>,
}

/// `events_create_batch` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct BatchArgs {
    /// Calendar id from `calendar_list`; the default calendar when absent.
    #[serde(default)]
    calendar: Option<String>,
    /// The events (at most 100), each as for `event_create` without `calendar`.
    events: Vec<EventInput>,
}

async fn stage(calendars: &Calendars, request: ChangeRequest) -> Result<ToolOutput, ToolError> {
    let staged = calendars.stage(request).await?;
    Ok(ToolOutput::Staged(ProposalDraft {
        summary: staged.summary,
        diff: staged.diff,
        payload: staged.payload,
    }))
}

async fn apply(calendars: &Calendars, payload: &Value) -> Result<ApplyOutput, ToolError> {
    let applied = calendars.apply(payload).await?;
    Ok(ApplyOutput {
        summary: applied.summary,
    })
}

macro_rules! staging_tool {
    ($tool:ident, $name:expr, $args:ty, $description:expr, $request:expr) => {
        #[doc = concat!("The `", stringify!($tool), "` staging tool.")]
        pub struct $tool {
            calendars: Calendars,
        }

        impl $tool {
            /// The tool over `calendars`.
            pub fn new(calendars: Calendars) -> Self {
                Self { calendars }
            }
        }

        impl ToolHandler for $tool {
            fn name(&self) -> &str {
                $name
            }

            fn description(&self) -> &str {
                $description
            }

            fn parameters(&self) -> Value {
                schema_of::<$args>()
            }

            fn mutates(&self) -> bool {
                true
            }

            fn execute<'a>(
                &'a self,
                _call: &'a ToolCallContext,
                args: Value,
            ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
                Box::pin(async move {
                    let args: $args = arguments(self.name(), args)?;
                    let request: Result<ChangeRequest, ToolError> = $request(args);
                    stage(&self.calendars, request?).await
                })
            }

            fn apply<'a>(
                &'a self,
                payload: &'a Value,
            ) -> BoxFuture<'a, Result<ApplyOutput, ToolError>> {
                Box::pin(apply(&self.calendars, payload))
            }
        }
    };
}

fn event_id(text: &str) -> Result<EventId, ToolError> {
    text.parse()
        .map_err(|e: crate::error::CalendarError| ToolError::from(e))
}

staging_tool!(
    EventCreateTool,
    names::EVENT_CREATE,
    EventCreateArgs,
    "Propose a new calendar event. Nothing is written until the user approves the proposal; tell the user it awaits their approval. Checks the times (end after start), time zone, recurrence rule and that the calendar is writable.",
    |args: EventCreateArgs| {
        let (calendar, event) = args.split();
        Ok(ChangeRequest::Create {
            calendar,
            events: vec![event],
        })
    }
);

staging_tool!(
    EventUpdateTool,
    names::EVENT_UPDATE,
    EventUpdateArgs,
    "Propose changes to an event (or, with `occurrence`, to one occurrence of a repeating event). Only the given fields change. Nothing is written until the user approves.",
    |args: EventUpdateArgs| {
        Ok(ChangeRequest::Update {
            event: event_id(&args.id)?,
            occurrence: args.occurrence,
            patch: EventPatch {
                title: args.title,
                category: args.category,
                sub_category: args.sub_category,
                start: args.start,
                end: args.end,
                all_day: args.all_day,
                time_zone: args.time_zone,
                location: args.location,
                description: args.description,
                recurrence: args.recurrence,
            },
        })
    }
);

staging_tool!(
    EventDeleteTool,
    names::EVENT_DELETE,
    EventDeleteArgs,
    "Propose deleting an event (all its occurrences), or with `occurrence` one occurrence of a repeating event. Nothing is deleted until the user approves.",
    |args: EventDeleteArgs| Ok(ChangeRequest::Delete {
        event: event_id(&args.id)?,
        occurrence: args.occurrence
    })
);

staging_tool!(
    EventsCreateBatchTool,
    names::EVENTS_CREATE_BATCH,
    BatchArgs,
    "Propose several new events at once (e.g. a course schedule), as one proposal the user approves or rejects as a whole. At most 100 events.",
    |args: BatchArgs| {
        if args.events.len() > MAX_BATCH {
            return Err(ToolError::InvalidArguments(format!(
                "{} events are more than {MAX_BATCH}; split them into several batches",
                args.events.len()
            )));
        }
        Ok(ChangeRequest::Create {
            calendar: args.calendar,
            events: args.events,
        })
    }
);
