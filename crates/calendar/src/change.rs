//! Staging and applying changes, so that pending changes compose and what is approved is
//! what is written.
//!
//! Staging validates, renders the change against the storage as it is now (so errors
//! surface before anyone approves) and returns a summary, a diff and a payload. The diff
//! is the fields before and after as a person reads them, then the exact change to each
//! file as a unified diff of its bytes. The payload holds everything applying needs: the
//! operation, a fingerprint of each event it touches (the text of that VEVENT — the
//! series or single event and its changed occurrences — or that note), and a digest of
//! what it writes. Staging writes nothing.
//!
//! Applying re-reads the files and refuses, naming the event, when an event it touches
//! changed since staging; changes elsewhere in the file (another approved proposal, the
//! user's own edits to other events) do not matter. It renders the change again against
//! the file as it is now, checks that this writes the same edits as staged (only where
//! they land may differ), and writes atomically — a batch of notes all or nothing.
//!
//! Payloads staged by earlier versions (format 1, still in proposal databases) carry one
//! fingerprint of the whole iCalendar file and are checked as they always were: any
//! change to the file refuses them.

use std::path::{Component as PathComponent, Path, PathBuf};

use chrono::{DateTime, Utc};
use hearth_ical::{EventId, EventSpec, SpecTime, content_fingerprint};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::atomic::read_optional;
use crate::error::{CalendarError, Result};
use crate::spec::{EventInput, EventPatch};
use crate::store::{CalendarInfo, Content, LoadedCalendar};

mod apply;
mod plan;
mod stage;
mod view;

pub use view::{ProposedChange, ProposedEvent, ProposedRecurrence, read_proposal};

/// Payloads staged before per-event fingerprints: the whole file's fingerprint guards
/// them.
const WHOLE_FILE_FORMAT: u32 = 1;
/// The payload format staged now.
const PAYLOAD_FORMAT: u32 = 2;
/// The most events one batch may create.
pub const MAX_BATCH: usize = 100;

/// A change to stage.
#[derive(Clone, Debug, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "built once per call; boxing would only burden callers"
)]
pub enum ChangeRequest {
    /// Create events in a calendar (the default one when `None`).
    Create {
        /// The calendar.
        calendar: Option<String>,
        /// The events.
        events: Vec<EventInput>,
    },
    /// Change an event, or one occurrence of a repeating event.
    Update {
        /// The event.
        event: EventId,
        /// The occurrence (its date, or date and time), for one occurrence only.
        occurrence: Option<String>,
        /// The changes.
        patch: EventPatch,
    },
    /// Delete an event, or one occurrence of a repeating event.
    Delete {
        /// The event.
        event: EventId,
        /// The occurrence, for one occurrence only.
        occurrence: Option<String>,
    },
}

/// A staged change: what the user approves.
#[derive(Clone, Debug, PartialEq)]
pub struct StagedChange {
    /// One line.
    pub summary: String,
    /// The fields before and after, then the exact change to each file (unified diff).
    pub diff: String,
    /// What [`Calendars::apply`](crate::Calendars::apply) needs.
    pub payload: Value,
}

/// What applying wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AppliedChange {
    /// One line.
    pub summary: String,
    /// The events created or changed.
    pub events: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Payload {
    format: u32,
    calendar: String,
    target: Target,
    operation: Operation,
    summary: String,
    staged_at: DateTime<Utc>,
    /// What applying writes (format 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    writes: Option<Writes>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Target {
    IcsFile {
        path: PathBuf,
        /// The whole file's fingerprint (format 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fingerprint: Option<String>,
        /// Whether the file existed when the change was staged (format 2).
        #[serde(default)]
        existed: bool,
        /// The events the change touches (format 2).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        events: Vec<EventGuard>,
    },
    Notes {
        folder: PathBuf,
        notes: Vec<NoteTarget>,
    },
    /// A CalDAV collection: each event is a resource of its own.
    #[serde(rename = "caldav")]
    CalDav {
        collection: String,
        resources: Vec<ResourceGuard>,
    },
}

/// A CalDAV resource a change writes, as it was when the change was staged: applying
/// renders the change against this text again and sends it with `If-Match` on this
/// ETag (`If-None-Match: *` for a new resource), so the server refuses it (412) when
/// the event changed there since.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct ResourceGuard {
    href: String,
    uid: String,
    title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    etag: Option<String>,
    /// The resource's text when staged; `None` for one to create.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

/// An event a change touches, as it was when the change was staged.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct EventGuard {
    uid: String,
    /// Its title, to name it when it changed.
    title: String,
    /// The fingerprint of its components, or `absent` for an event to create.
    fingerprint: String,
}

/// A note a change touches, as it was when the change was staged.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct NoteTarget {
    name: String,
    fingerprint: String,
    /// Its event's title (format 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
}

/// What a change writes, apart from where in a file it lands: a digest of its edits to
/// events (iCalendar) or of the notes it writes, and the time zones it adds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Writes {
    digest: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    time_zones: Vec<String>,
}

impl Writes {
    /// Whether `planned` (rendered at apply) writes what `self` (staged) does: the same
    /// edits, and no time zone the staged change did not add (one it added may be in
    /// the file by now, added by another change).
    fn admits(&self, planned: &Self) -> bool {
        self.digest == planned.digest
            && planned
                .time_zones
                .iter()
                .all(|zone| self.time_zones.contains(zone))
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Operation {
    Create {
        events: Vec<EventSpec>,
    },
    Update {
        event: EventSpec,
        occurrence: Option<SpecTime>,
    },
    Delete {
        uid: String,
        occurrence: Option<SpecTime>,
    },
}

impl Operation {
    /// The uids of the events it creates or changes.
    fn uids(&self) -> Vec<&str> {
        match self {
            Self::Create { events } => events.iter().map(|e| e.uid.as_str()).collect(),
            Self::Update { event, .. } => vec![event.uid.as_str()],
            Self::Delete { uid, .. } => vec![uid.as_str()],
        }
    }
}

fn ensure_writable(info: &CalendarInfo, loaded: &LoadedCalendar) -> Result<()> {
    if !info.writable {
        return Err(CalendarError::ReadOnly {
            id: info.id.clone(),
            reason: info
                .read_only_reason
                .clone()
                .unwrap_or_else(|| "read-only".to_owned()),
        });
    }
    if let Content::Ics {
        blocker: Some(reason),
        ..
    } = &loaded.content
    {
        return Err(CalendarError::ReadOnly {
            id: info.id.clone(),
            reason: reason.clone(),
        });
    }
    Ok(())
}

/// A note's path inside its folder, refusing anything that leaves the folder.
fn note_path(folder: &Path, name: &str) -> Result<PathBuf> {
    let relative = Path::new(name);
    let inside = !name.is_empty()
        && relative
            .components()
            .all(|c| matches!(c, PathComponent::Normal(_)));
    if !inside {
        return Err(CalendarError::InvalidPayload(format!(
            "note `{name}` is not inside the calendar's folder"
        )));
    }
    Ok(folder.join(relative))
}

/// A file's text and fingerprint, or `None` when it does not exist.
fn read_text(path: &Path) -> Result<Option<(String, String)>> {
    match read_optional(path)? {
        None => Ok(None),
        Some(bytes) => {
            let fingerprint = content_fingerprint(&bytes);
            let text = String::from_utf8(bytes).map_err(|_| {
                CalendarError::InvalidInput(format!(
                    "{} is not valid UTF-8; Hearth does not rewrite it",
                    path.display()
                ))
            })?;
            Ok(Some((text, fingerprint)))
        }
    }
}

fn notes_occurrence_error() -> CalendarError {
    CalendarError::InvalidInput("a note calendar cannot change one occurrence on its own; change the whole series, or delete the occurrence and create a single event".to_owned())
}

fn header(info: &CalendarInfo, what: &str) -> Vec<String> {
    vec![format!(
        "{what} in calendar `{}` ({})",
        info.id, info.location
    )]
}

fn describe_occurrence(occurrence: &SpecTime) -> String {
    match occurrence {
        SpecTime::Date { date } => date.to_string(),
        SpecTime::Zoned { local, .. } | SpecTime::Floating { local } => {
            local.format("%Y-%m-%d %H:%M").to_string()
        }
        SpecTime::Utc { utc } => format!("{} UTC", utc.format("%Y-%m-%d %H:%M")),
    }
}

pub(crate) fn unique_note_name(folder: &Path, name: &str, taken: &[String]) -> String {
    let stem = name.strip_suffix(".md").unwrap_or(name);
    let mut candidate = name.to_owned();
    let mut counter = 2;
    while taken.contains(&candidate) || folder.join(&candidate).exists() {
        candidate = format!("{stem} ({counter}).md");
        counter += 1;
    }
    candidate
}
