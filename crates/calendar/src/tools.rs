//! The calendar tools agents call, on Hearth's tool seam as [`TypedTool`]s: each
//! declares its arguments as a type, whose JSON Schema is what the model sees. Read
//! tools answer at once; staging tools only return a [`ToolOutput::Staged`] draft, and
//! write when the approval gate calls `apply`. They reach nothing but calendar storage,
//! through [`Calendars`].
//!
//! [`TypedTool`]: hearth_core::TypedTool
//! [`ToolOutput::Staged`]: hearth_core::ToolOutput::Staged

mod read;
mod stage;

use std::sync::Arc;

use hearth_core::ToolHandler;

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

/// A calendar tool's type: the tool over the calendars it shares.
macro_rules! calendar_tool {
    ($(#[$doc:meta])* $tool:ident) => {
        $(#[$doc])*
        pub struct $tool {
            calendars: Calendars,
        }

        impl $tool {
            /// The tool over `calendars`.
            pub fn new(calendars: Calendars) -> Self {
                Self { calendars }
            }
        }
    };
}

use calendar_tool;
