//! Rendering an operation against the current text of the files it touches: the exact
//! bytes of each file before and after, the diff shown for them, and what the change
//! writes apart from where it lands ([`Writes`]).

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use hearth_ical::{Event, Rewrite, parts_fingerprint};

use super::{Operation, Writes, note_path, notes_occurrence_error};
use crate::atomic::{FileChange, WriteMode};
use crate::error::{CalendarError, Result};
use crate::file_diff::unified;
use crate::notes::read_note;
use crate::notes_write::{new_note, skip_occurrence, update_note};
use crate::store::{CalendarInfo, Storage};

/// One file a change writes: its exact text before (`None`: absent) and after (`None`:
/// removed).
pub(super) struct PlannedFile {
    pub path: PathBuf,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// What a change does to the files, rendered against their current text.
pub(super) struct Plan {
    pub files: Vec<PlannedFile>,
    pub writes: Writes,
}

impl Plan {
    /// The unified diff of every file the change writes.
    pub fn diff(&self) -> String {
        self.files
            .iter()
            .map(|file| unified(&file.path, file.before.as_deref(), file.after.as_deref()))
            .filter(|diff| !diff.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The file operations that write exactly the planned bytes.
    pub fn into_changes(self) -> Vec<FileChange> {
        self.files
            .into_iter()
            .map(|file| match file.after {
                Some(after) => FileChange::Put {
                    path: file.path,
                    bytes: after.into_bytes(),
                    mode: if file.before.is_some() {
                        WriteMode::Replace
                    } else {
                        WriteMode::CreateNew
                    },
                },
                None => FileChange::Remove { path: file.path },
            })
            .collect()
    }
}

/// The current text of the files a change reads (`None`: absent).
pub(super) type Texts = [(PathBuf, Option<String>)];

fn text_of<'t>(texts: &'t Texts, path: &Path) -> Option<&'t str> {
    texts
        .iter()
        .find(|(p, _)| p == path)
        .and_then(|(_, t)| t.as_deref())
}

/// Renders `operation` against `texts`; `stamp` is the staging time written into
/// changed iCalendar events, so the same change renders the same bytes at apply.
pub(super) fn plan(
    info: &CalendarInfo,
    operation: &Operation,
    texts: &Texts,
    stamp: DateTime<Utc>,
) -> Result<Plan> {
    match &info.storage {
        Storage::File(path) => plan_ics(path, operation, text_of(texts, path), stamp),
        Storage::Folder(folder) => plan_notes(info, folder, operation, texts),
        Storage::CalDav(_) => plan_caldav(info, operation, texts, stamp),
        Storage::Subscription(_) => Err(CalendarError::ReadOnly {
            id: info.id.clone(),
            reason: "a subscription".to_owned(),
        }),
    }
}

fn plan_ics(
    path: &Path,
    operation: &Operation,
    before: Option<&str>,
    stamp: DateTime<Utc>,
) -> Result<Plan> {
    let current = before.unwrap_or("");
    let rewrite: Rewrite = match operation {
        Operation::Create { events } => hearth_ical::create_events(current, events, stamp)?,
        Operation::Update {
            event,
            occurrence: None,
        } => hearth_ical::update_event(current, event, stamp)?,
        Operation::Update {
            event,
            occurrence: Some(occurrence),
        } => hearth_ical::update_occurrence(current, &occurrence.to_event_time()?, event, stamp)?,
        Operation::Delete {
            uid,
            occurrence: None,
        } => hearth_ical::delete_event(current, uid)?,
        Operation::Delete {
            uid,
            occurrence: Some(occurrence),
        } => hearth_ical::delete_occurrence(current, uid, &occurrence.to_event_time()?, stamp)?,
    };
    let mut parts: Vec<&[u8]> = vec![b"ics"];
    for (replaced, written) in &rewrite.edits {
        parts.push(replaced.as_bytes());
        parts.push(written.as_bytes());
    }
    let writes = Writes {
        digest: parts_fingerprint(parts),
        time_zones: rewrite.time_zones.clone(),
    };
    Ok(Plan {
        files: vec![PlannedFile {
            path: path.to_path_buf(),
            before: before.map(str::to_owned),
            after: Some(rewrite.text),
        }],
        writes,
    })
}

/// A CalDAV change: each event is a resource of its own, `texts` in the order of the
/// events the operation touches.
fn plan_caldav(
    info: &CalendarInfo,
    operation: &Operation,
    texts: &Texts,
    stamp: DateTime<Utc>,
) -> Result<Plan> {
    let mut planned = CalDavPlan::default();
    let current = |uid: &str| -> Result<(&Path, &str)> {
        match texts.first() {
            Some((path, Some(text))) => Ok((path.as_path(), text.as_str())),
            _ => Err(CalendarError::UnknownEvent {
                id: format!("{}/{uid}", info.id),
            }),
        }
    };
    match operation {
        Operation::Create { events } => {
            if events.len() != texts.len() {
                return Err(CalendarError::InvalidPayload(
                    "a CalDAV change names one resource per event".to_owned(),
                ));
            }
            for (spec, (path, before)) in events.iter().zip(texts) {
                if before.is_some() {
                    return Err(CalendarError::InvalidInput(format!(
                        "the resource {} of the new event '{}' exists on the server",
                        path.display(),
                        spec.title
                    )));
                }
                let rewrite = hearth_ical::create_events("", std::slice::from_ref(spec), stamp)?;
                planned.push(path, None, Some(rewrite));
            }
        }
        Operation::Update { event, occurrence } => {
            let (path, text) = current(&event.uid)?;
            let rewrite = match occurrence {
                None => hearth_ical::update_event(text, event, stamp)?,
                Some(occurrence) => hearth_ical::update_occurrence(
                    text,
                    &occurrence.to_event_time()?,
                    event,
                    stamp,
                )?,
            };
            planned.push(path, Some(text), Some(rewrite));
        }
        Operation::Delete { uid, occurrence } => {
            let (path, text) = current(uid)?;
            match occurrence {
                None => planned.push(path, Some(text), None),
                Some(occurrence) => {
                    let rewrite = hearth_ical::delete_occurrence(
                        text,
                        uid,
                        &occurrence.to_event_time()?,
                        stamp,
                    )?;
                    planned.push(path, Some(text), Some(rewrite));
                }
            }
        }
    }
    Ok(planned.finish())
}

/// A CalDAV change's resources as they are planned, and what its writes are made of.
struct CalDavPlan {
    files: Vec<PlannedFile>,
    parts: Vec<Vec<u8>>,
    time_zones: Vec<String>,
}

impl Default for CalDavPlan {
    fn default() -> Self {
        Self {
            files: Vec::new(),
            parts: vec![b"caldav".to_vec()],
            time_zones: Vec::new(),
        }
    }
}

impl CalDavPlan {
    /// The resource at `path` goes from `before` to what `after` writes (`None`:
    /// removed).
    fn push(&mut self, path: &Path, before: Option<&str>, after: Option<Rewrite>) {
        self.parts
            .push(path.as_os_str().as_encoded_bytes().to_vec());
        match &after {
            Some(rewrite) => {
                for (replaced, written) in &rewrite.edits {
                    self.parts.push(replaced.as_bytes().to_vec());
                    self.parts.push(written.as_bytes().to_vec());
                }
                self.time_zones.extend(rewrite.time_zones.iter().cloned());
            }
            None => self.parts.push(b"removed".to_vec()),
        }
        self.files.push(PlannedFile {
            path: path.to_path_buf(),
            before: before.map(str::to_owned),
            after: after.map(|rewrite| rewrite.text),
        });
    }

    fn finish(self) -> Plan {
        Plan {
            files: self.files,
            writes: Writes {
                digest: parts_fingerprint(self.parts.iter().map(Vec::as_slice)),
                time_zones: self.time_zones,
            },
        }
    }
}

fn plan_notes(
    info: &CalendarInfo,
    folder: &Path,
    operation: &Operation,
    texts: &Texts,
) -> Result<Plan> {
    let current = |uid: &str| note_event(info, folder, texts, uid);
    let changed = |path: PathBuf, before: String, after: String| PlannedFile {
        path,
        before: Some(before),
        after: Some(after),
    };
    let files = match operation {
        Operation::Create { events } => events
            .iter()
            .map(|spec| {
                Ok(PlannedFile {
                    path: note_path(folder, &spec.uid)?,
                    before: None,
                    after: Some(new_note(spec, info.zone)?),
                })
            })
            .collect::<Result<Vec<_>>>()?,
        Operation::Update {
            event,
            occurrence: None,
        } => {
            let (path, text, current) = current(&event.uid)?;
            let after = update_note(&text, &current, event, info.zone)?;
            vec![changed(path, text, after)]
        }
        Operation::Update {
            occurrence: Some(_),
            ..
        } => return Err(notes_occurrence_error()),
        Operation::Delete {
            uid,
            occurrence: None,
        } => {
            let (path, text, _) = current(uid)?;
            vec![PlannedFile {
                path,
                before: Some(text),
                after: None,
            }]
        }
        Operation::Delete {
            uid,
            occurrence: Some(occurrence),
        } => {
            let (path, text, current) = current(uid)?;
            let date = occurrence.to_event_time()?.date();
            let after = skip_occurrence(&text, &current, date, info.zone)?;
            vec![changed(path, text, after)]
        }
    };
    let writes = notes_writes(folder, &files);
    Ok(Plan { files, writes })
}

/// The note of event `uid`: its path, its text, and the event it holds.
fn note_event(
    info: &CalendarInfo,
    folder: &Path,
    texts: &Texts,
    uid: &str,
) -> Result<(PathBuf, String, Event)> {
    let path = note_path(folder, uid)?;
    let text = text_of(texts, &path)
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
}

/// What a notes change writes: each note by its name in the folder, put or removed.
fn notes_writes(folder: &Path, files: &[PlannedFile]) -> Writes {
    let mut parts: Vec<&[u8]> = vec![b"notes"];
    for file in files {
        let name = file.path.strip_prefix(folder).unwrap_or(&file.path);
        parts.push(name.as_os_str().as_encoded_bytes());
        match &file.after {
            Some(after) => {
                parts.push(b"put");
                parts.push(after.as_bytes());
            }
            None => parts.push(b"remove"),
        }
    }
    Writes {
        digest: parts_fingerprint(parts),
        time_zones: Vec::new(),
    }
}
