//! A staged change as pictures show it: what a proposal's payload would create, move or
//! delete, in the calendar's own terms, read through the payload's own types.

use std::str::FromStr;

use hearth_ical::{EventSpec, EventTime, Recurrence, RecurrenceRule, RecurrenceSpec};
use serde_json::Value;

use super::{Operation, Payload};
use crate::error::{CalendarError, Result};

/// What a staged change does to its calendar.
#[derive(Clone, Debug, PartialEq)]
pub enum ProposedChange {
    /// Events it creates.
    Create(Vec<ProposedEvent>),
    /// An event it changes: the whole series, or the one occurrence named.
    Update {
        /// The event as it will be.
        event: ProposedEvent,
        /// The occurrence moved, when only one is.
        occurrence: Option<EventTime>,
    },
    /// An event it deletes: the whole series, or the one occurrence named.
    Delete {
        /// The event.
        uid: String,
        /// The occurrence, when only one is deleted.
        occurrence: Option<EventTime>,
    },
}

/// An event as a staged change writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProposedEvent {
    /// Its UID.
    pub uid: String,
    /// Its title.
    pub title: String,
    /// Where.
    pub location: Option<String>,
    /// Its start.
    pub start: EventTime,
    /// Its end.
    pub end: EventTime,
    /// How it repeats after the change.
    pub recurrence: ProposedRecurrence,
}

/// How an event repeats after a staged change.
#[derive(Clone, Debug, PartialEq)]
pub enum ProposedRecurrence {
    /// As it does now.
    Unchanged,
    /// Not at all.
    None,
    /// By this rule.
    Rule(Recurrence),
}

/// The calendar a staged change's payload writes to, and what it does there. A payload
/// that is not a calendar change is an [`CalendarError::InvalidInput`].
pub fn read_proposal(payload: &Value) -> Result<(String, ProposedChange)> {
    let payload: Payload = serde_json::from_value(payload.clone())
        .map_err(|error| CalendarError::InvalidInput(format!("not a calendar change: {error}")))?;
    let change = match payload.operation {
        Operation::Create { events } => ProposedChange::Create(
            events
                .iter()
                .map(proposed_event)
                .collect::<Result<Vec<_>>>()?,
        ),
        Operation::Update { event, occurrence } => ProposedChange::Update {
            event: proposed_event(&event)?,
            occurrence: occurrence.map(|time| time.to_event_time()).transpose()?,
        },
        Operation::Delete { uid, occurrence } => ProposedChange::Delete {
            uid,
            occurrence: occurrence.map(|time| time.to_event_time()).transpose()?,
        },
    };
    Ok((payload.calendar, change))
}

fn proposed_event(spec: &EventSpec) -> Result<ProposedEvent> {
    Ok(ProposedEvent {
        uid: spec.uid.clone(),
        title: spec.title.clone(),
        location: spec.location.clone(),
        start: spec.start_time()?,
        end: spec.end_time()?,
        recurrence: match &spec.recurrence {
            RecurrenceSpec::Unchanged => ProposedRecurrence::Unchanged,
            RecurrenceSpec::None => ProposedRecurrence::None,
            RecurrenceSpec::Rule { rule } => ProposedRecurrence::Rule(Recurrence {
                rules: vec![RecurrenceRule::from_str(rule)?],
                rdates: Vec::new(),
                periods: Vec::new(),
                exdates: Vec::new(),
                start_is_occurrence: true,
            }),
        },
    })
}
