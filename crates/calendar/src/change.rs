//! Staging and applying changes. Staging validates, renders the change against the
//! storage as it is now (so errors surface before anyone approves), and returns a
//! summary, a before/after and a payload holding everything applying needs — including
//! a fingerprint of each file it touches. Staging writes nothing. Applying re-reads the
//! files, refuses with a conflict when any changed since staging, and writes atomically —
//! a batch (several notes) all or nothing.

use std::path::{Component as PathComponent, Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::atomic::{FileChange, WriteMode, read_optional, write_all};
use crate::error::{CalendarError, Result};
use crate::event::{Event, EventId};
use crate::fingerprint::{ABSENT, content_fingerprint};
use crate::ics_write;
use crate::notes::read_note;
use crate::notes_write::{new_note, skip_occurrence, update_note};
use crate::spec::{EventInput, EventPatch, EventSpec, SpecTime};
use crate::store::{CalendarInfo, Calendars, Content, LoadedCalendar, Storage};

mod stage;

const PAYLOAD_FORMAT: u32 = 1;
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
    /// Before and after.
    pub diff: String,
    /// What [`Calendars::apply`] needs.
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
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Target {
    IcsFile {
        path: PathBuf,
        fingerprint: String,
    },
    Notes {
        folder: PathBuf,
        notes: Vec<NoteTarget>,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct NoteTarget {
    name: String,
    fingerprint: String,
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

/// The file operations for `operation`, given the current text of each file it reads.
fn plan(
    info: &CalendarInfo,
    operation: &Operation,
    texts: &[(PathBuf, Option<String>)],
    stamp: DateTime<Utc>,
) -> Result<Vec<FileChange>> {
    let text_of = |path: &Path| {
        texts
            .iter()
            .find(|(p, _)| p == path)
            .and_then(|(_, t)| t.as_deref())
    };
    match &info.storage {
        Storage::File(path) => {
            let current = text_of(path).unwrap_or("");
            let text = match operation {
                Operation::Create { events } => ics_write::create(current, events, stamp)?,
                Operation::Update {
                    event,
                    occurrence: None,
                } => ics_write::update(current, event, stamp)?,
                Operation::Update {
                    event,
                    occurrence: Some(occurrence),
                } => ics_write::update_occurrence(
                    current,
                    &occurrence.to_event_time()?,
                    event,
                    stamp,
                )?,
                Operation::Delete {
                    uid,
                    occurrence: None,
                } => ics_write::delete(current, uid)?,
                Operation::Delete {
                    uid,
                    occurrence: Some(occurrence),
                } => {
                    ics_write::delete_occurrence(current, uid, &occurrence.to_event_time()?, stamp)?
                }
            };
            let mode = if text_of(path).is_some() {
                WriteMode::Replace
            } else {
                WriteMode::CreateNew
            };
            Ok(vec![FileChange::Put {
                path: path.clone(),
                bytes: text.into_bytes(),
                mode,
            }])
        }
        Storage::Folder(folder) => {
            let current = |uid: &str| -> Result<(PathBuf, String, Event)> {
                let path = note_path(folder, uid)?;
                let text = text_of(&path)
                    .ok_or_else(|| CalendarError::UnknownEvent {
                        id: format!("{}/{uid}", info.id),
                    })?
                    .to_owned();
                let event = read_note(&info.id, Path::new(uid), &text)
                    .map_err(CalendarError::InvalidInput)?
                    .ok_or_else(|| {
                        CalendarError::InvalidInput(format!("note `{uid}` is no longer an event"))
                    })?;
                Ok((path, text, event))
            };
            match operation {
                Operation::Create { events } => events
                    .iter()
                    .map(|spec| {
                        Ok(FileChange::Put {
                            path: note_path(folder, &spec.uid)?,
                            bytes: new_note(spec, info.zone)?.into_bytes(),
                            mode: WriteMode::CreateNew,
                        })
                    })
                    .collect(),
                Operation::Update {
                    event,
                    occurrence: None,
                } => {
                    let (path, text, current) = current(&event.uid)?;
                    Ok(vec![FileChange::Put {
                        path,
                        bytes: update_note(&text, &current, event, info.zone)?.into_bytes(),
                        mode: WriteMode::Replace,
                    }])
                }
                Operation::Update {
                    occurrence: Some(_),
                    ..
                } => Err(notes_occurrence_error()),
                Operation::Delete {
                    uid,
                    occurrence: None,
                } => Ok(vec![FileChange::Remove {
                    path: note_path(folder, uid)?,
                }]),
                Operation::Delete {
                    uid,
                    occurrence: Some(occurrence),
                } => {
                    let (path, text, current) = current(uid)?;
                    let date = occurrence.to_event_time()?.date();
                    Ok(vec![FileChange::Put {
                        path,
                        bytes: skip_occurrence(&text, &current, date, info.zone)?.into_bytes(),
                        mode: WriteMode::Replace,
                    }])
                }
            }
        }
        Storage::Subscription(_) => Err(CalendarError::ReadOnly {
            id: info.id.clone(),
            reason: "a subscription".to_owned(),
        }),
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

impl Calendars {
    /// Applies a staged payload: refuses when any file it touches changed since staging;
    /// otherwise writes atomically.
    pub async fn apply(&self, payload: &Value) -> Result<AppliedChange> {
        let payload: Payload = serde_json::from_value(payload.clone())
            .map_err(|error| CalendarError::InvalidPayload(error.to_string()))?;
        if payload.format != PAYLOAD_FORMAT {
            return Err(CalendarError::InvalidPayload(format!(
                "payload format {} is not {PAYLOAD_FORMAT}",
                payload.format
            )));
        }
        let info = self.calendar(&payload.calendar)?.clone();
        if !info.writable {
            return Err(CalendarError::ReadOnly {
                id: info.id.clone(),
                reason: info.read_only_reason.clone().unwrap_or_default(),
            });
        }
        let checks: Vec<(PathBuf, String)> = match (&payload.target, &info.storage) {
            (Target::IcsFile { path, fingerprint }, Storage::File(configured))
                if path == configured =>
            {
                vec![(path.clone(), fingerprint.clone())]
            }
            (Target::Notes { folder, notes }, Storage::Folder(configured))
                if folder == configured =>
            {
                notes
                    .iter()
                    .map(|n| Ok((note_path(folder, &n.name)?, n.fingerprint.clone())))
                    .collect::<Result<_>>()?
            }
            _ => {
                return Err(CalendarError::InvalidPayload(format!(
                    "the payload's storage is not calendar `{}`'s ({}) any more",
                    info.id, info.location
                )));
            }
        };
        let _guard = self.inner.write_lock.lock().await;
        let events = match &payload.operation {
            Operation::Create { events } => events
                .iter()
                .map(|e| format!("{}/{}", info.id, e.uid))
                .collect(),
            Operation::Update { event, .. } => vec![format!("{}/{}", info.id, event.uid)],
            Operation::Delete { uid, .. } => vec![format!("{}/{uid}", info.id)],
        };
        let job_info = info.clone();
        let operation = payload.operation.clone();
        let staged_at = payload.staged_at;
        tokio::task::spawn_blocking(move || -> Result<()> {
            let mut texts = Vec::new();
            for (path, fingerprint) in checks {
                let current = read_optional(&path)?;
                let now = current
                    .as_deref()
                    .map_or_else(|| ABSENT.to_owned(), content_fingerprint);
                if now != fingerprint {
                    return Err(CalendarError::Conflict { path });
                }
                let text = current.map(String::from_utf8).transpose().map_err(|_| {
                    CalendarError::InvalidInput(format!(
                        "{} is not valid UTF-8; Hearth does not rewrite it",
                        path.display()
                    ))
                })?;
                texts.push((path, text));
            }
            // All of a batch or none of it: a failure part-way leaves the files as they were.
            write_all(plan(&job_info, &operation, &texts, staged_at)?)
        })
        .await
        .map_err(|error| CalendarError::Task(error.to_string()))??;
        self.forget(&info.id);
        Ok(AppliedChange {
            summary: payload.summary,
            events,
        })
    }

    /// Creates an event at once (a user action, as `hearth calendar add`): stages and
    /// applies in one step.
    pub async fn add_event(
        &self,
        calendar: Option<&str>,
        event: EventInput,
    ) -> Result<AppliedChange> {
        let staged = self
            .stage(ChangeRequest::Create {
                calendar: calendar.map(str::to_owned),
                events: vec![event],
            })
            .await?;
        self.apply(&staged.payload).await
    }
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

fn note_targets(info: &CalendarInfo, loaded: &LoadedCalendar, uid: &str) -> Vec<NoteTarget> {
    match (&info.storage, &loaded.content) {
        (Storage::Folder(_), Content::Notes { fingerprints }) => vec![NoteTarget {
            name: uid.to_owned(),
            fingerprint: fingerprints
                .get(uid)
                .cloned()
                .unwrap_or_else(|| ABSENT.to_owned()),
        }],
        _ => Vec::new(),
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
