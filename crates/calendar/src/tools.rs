//! The calendar tools agents call, as implementations of Hearth's tool seam
//! ([`ToolHandler`]). Read tools answer at once; staging tools only return a
//! [`ToolOutput::Staged`] draft, and write when the approval gate calls `apply`.
//! They reach nothing but calendar storage, through [`Calendars`].

mod read;
mod stage;

use std::sync::Arc;

use hearth_core::{ToolError, ToolHandler};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::store::Calendars;

pub use read::{CalendarListTool, EventGetTool, EventsListTool};
pub use stage::{EventCreateTool, EventDeleteTool, EventUpdateTool, EventsCreateBatchTool};

/// Names of the calendar tools.
pub mod names {
    /// Lists calendars.
    pub const CALENDAR_LIST: &str = "calendar_list";
    /// Lists events in a range.
    pub const EVENTS_LIST: &str = "events_list";
    /// Shows one event.
    pub const EVENT_GET: &str = "event_get";
    /// Stages a new event.
    pub const EVENT_CREATE: &str = "event_create";
    /// Stages a change to an event.
    pub const EVENT_UPDATE: &str = "event_update";
    /// Stages deleting an event.
    pub const EVENT_DELETE: &str = "event_delete";
    /// Stages several new events.
    pub const EVENTS_CREATE_BATCH: &str = "events_create_batch";
}

/// Every calendar tool, sharing `calendars`.
pub fn calendar_tools(calendars: Calendars) -> Vec<Arc<dyn ToolHandler>> {
    vec![
        Arc::new(CalendarListTool::new(calendars.clone())),
        Arc::new(EventsListTool::new(calendars.clone())),
        Arc::new(EventGetTool::new(calendars.clone())),
        Arc::new(EventCreateTool::new(calendars.clone())),
        Arc::new(EventUpdateTool::new(calendars.clone())),
        Arc::new(EventDeleteTool::new(calendars.clone())),
        Arc::new(EventsCreateBatchTool::new(calendars)),
    ]
}

/// The JSON Schema of a tool's arguments, with subschemas inlined (some models do not
/// follow `$ref`).
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>();
    let mut value = schema.to_value();
    if let Value::Object(map) = &mut value {
        map.remove("$schema");
        map.remove("title");
    }
    value
}

/// Reads a tool's arguments; a missing or `null` arguments object counts as `{}`.
pub(crate) fn arguments<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ToolError> {
    let arguments = if arguments.is_null() {
        Value::Object(Default::default())
    } else {
        arguments
    };
    serde_json::from_value(arguments)
        .map_err(|error| ToolError::InvalidArguments(format!("{tool}: {error}")))
}
