//! Staging: validate a request, render it against the storage as it is now, and
//! describe it — the fields as a person reads them, then the exact change to each file.
//! Writes nothing.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use hearth_caldav::CachedResource;
use hearth_ical::{ABSENT, EventId, RecurrenceSpec, SpecTime, event_fingerprints};

use super::plan::plan;
use super::{
    ChangeRequest, EventGuard, MAX_BATCH, NoteTarget, Operation, PAYLOAD_FORMAT, Payload,
    ResourceGuard, StagedChange, Target, describe_occurrence, ensure_writable, header, note_path,
    notes_occurrence_error, read_text, unique_note_name,
};
use crate::diff::{Fields, render, when};
use crate::error::{CalendarError, Result};
use crate::notes_write::note_file_name;
use crate::occurrence::{base_for_occurrence, find_occurrence};
use crate::spec::{EventInput, EventPatch, Zones, resolve_input, resolve_patch};
use crate::store::{CalendarInfo, Calendars, Content, LoadedCalendar, Storage};

/// A change checked and described, before it is rendered against the files.
struct Draft {
    info: CalendarInfo,
    loaded: Arc<LoadedCalendar>,
    operation: Operation,
    summary: String,
    /// The change as a person reads it: a header, then the fields before and after.
    description: String,
    /// The events it touches, with the titles the user knows them by.
    touched: Vec<Touched>,
}

/// An event a change touches.
struct Touched {
    uid: String,
    title: String,
}

impl Calendars {
    /// Stages a change: checks it and describes it; writes nothing.
    pub async fn stage(&self, request: ChangeRequest) -> Result<StagedChange> {
        let staged_at = Utc::now();
        let draft = match request {
            ChangeRequest::Create { calendar, events } => {
                self.draft_create(calendar.as_deref(), &events).await?
            }
            ChangeRequest::Update {
                event,
                occurrence,
                patch,
            } => {
                self.draft_update(&event, occurrence.as_deref(), &patch)
                    .await?
            }
            ChangeRequest::Delete { event, occurrence } => {
                self.draft_delete(&event, occurrence.as_deref()).await?
            }
        };
        finish(draft, staged_at)
    }

    /// A calendar to change, loaded, refusing one that cannot be written.
    async fn writable(&self, info: &CalendarInfo) -> Result<Arc<LoadedCalendar>> {
        let loaded = self.load(&info.id).await?;
        ensure_writable(info, &loaded)?;
        Ok(loaded)
    }

    async fn draft_create(&self, calendar: Option<&str>, events: &[EventInput]) -> Result<Draft> {
        let info = self.calendar_or_default(calendar)?.clone();
        let zone = self.time_zone();
        let loaded = self.writable(&info).await?;
        if events.is_empty() {
            return Err(CalendarError::InvalidInput(
                "`events` is empty; give at least one event".to_owned(),
            ));
        }
        if events.len() > MAX_BATCH {
            return Err(CalendarError::InvalidInput(format!(
                "{} events are more than {MAX_BATCH} in one batch; split them",
                events.len()
            )));
        }
        let batch = events.len() > 1;
        let mut specs = Vec::new();
        let mut taken: Vec<String> = Vec::new();
        for (position, input) in events.iter().enumerate() {
            let uid = format!("{}@hearth", uuid::Uuid::now_v7());
            let mut spec =
                resolve_input(input, zone, uid).map_err(|error| match (batch, error) {
                    (true, CalendarError::InvalidInput(message)) => {
                        CalendarError::InvalidInput(format!("events[{position}]: {message}"))
                    }
                    (true, other) => {
                        CalendarError::InvalidInput(format!("events[{position}]: {other}"))
                    }
                    (false, error) => error,
                })?;
            if let Storage::Folder(folder) = &info.storage {
                spec.uid = unique_note_name(folder, &note_file_name(&spec)?, &taken);
                taken.push(spec.uid.clone());
            }
            specs.push(spec);
        }
        let summary = match specs.as_slice() {
            [one] => format!(
                "Create event '{}' ({}) in calendar `{}`",
                one.title,
                when(&one.start_time()?, &one.end_time()?),
                info.id
            ),
            many => format!("Create {} events in calendar `{}`", many.len(), info.id),
        };
        let mut description = header(&info, "Create");
        for spec in &specs {
            description.push(String::new());
            description.push(render(&[], None, Some(&Fields::of_spec(spec, None)?)));
        }
        let touched = specs
            .iter()
            .map(|spec| Touched {
                uid: spec.uid.clone(),
                title: spec.title.clone(),
            })
            .collect();
        Ok(Draft {
            info,
            loaded,
            operation: Operation::Create { events: specs },
            summary,
            description: description.join("\n"),
            touched,
        })
    }

    async fn draft_update(
        &self,
        id: &EventId,
        occurrence: Option<&str>,
        patch: &EventPatch,
    ) -> Result<Draft> {
        let info = self.calendar(&id.calendar)?.clone();
        let loaded = self.writable(&info).await?;
        let current = loaded
            .index
            .get(&id.calendar, &id.uid)
            .ok_or_else(|| CalendarError::UnknownEvent { id: id.to_string() })?;
        let zone = self.time_zone();
        let (base, occurrence) = match occurrence.map(str::trim).filter(|o| !o.is_empty()) {
            Some(text) => {
                if matches!(info.storage, Storage::Folder(_)) {
                    return Err(notes_occurrence_error());
                }
                if patch.recurrence.is_some() {
                    return Err(CalendarError::InvalidInput("one occurrence cannot repeat on its own; leave out `recurrence`, or change the whole series".to_owned()));
                }
                let found = find_occurrence(&loaded, current, text, zone)?;
                (
                    base_for_occurrence(current, &found, info.zone),
                    Some(SpecTime::from_event_time(found.recurrence_id)),
                )
            }
            None => (current.clone(), None),
        };
        let zones = Zones {
            user: zone,
            calendar: info.zone,
        };
        let spec = resolve_patch(&base, patch, zones)?;
        let before = Fields::of_event(&base);
        let after = Fields::of_spec(&spec, Some(&base))?;
        if before == after && spec.recurrence == RecurrenceSpec::Unchanged {
            return Err(CalendarError::InvalidInput(
                "the changes leave the event as it is; nothing to stage".to_owned(),
            ));
        }
        let what = match &occurrence {
            Some(o) => format!(
                "Change the {} occurrence of event `{id}`",
                describe_occurrence(o)
            ),
            None => format!("Change event `{id}`"),
        };
        let changed: Vec<&str> = [
            ("title", before.title != after.title),
            ("time", before.when != after.when),
            ("recurrence", before.repeats != after.repeats),
            ("location", before.location != after.location),
            ("description", before.description != after.description),
        ]
        .into_iter()
        .filter_map(|(name, changed)| changed.then_some(name))
        .collect();
        let touched = vec![Touched {
            uid: id.uid.clone(),
            title: current.title.clone(),
        }];
        Ok(Draft {
            summary: format!("{what} '{}': {}", base.title, changed.join(", ")),
            description: render(&header(&info, &what), Some(&before), Some(&after)),
            operation: Operation::Update {
                event: spec,
                occurrence,
            },
            info,
            loaded,
            touched,
        })
    }

    async fn draft_delete(&self, id: &EventId, occurrence: Option<&str>) -> Result<Draft> {
        let info = self.calendar(&id.calendar)?.clone();
        let loaded = self.writable(&info).await?;
        let current = loaded
            .index
            .get(&id.calendar, &id.uid)
            .ok_or_else(|| CalendarError::UnknownEvent { id: id.to_string() })?;
        let zone = self.time_zone();
        let (summary, description, occurrence) =
            match occurrence.map(str::trim).filter(|o| !o.is_empty()) {
                Some(text) => {
                    let found = find_occurrence(&loaded, current, text, zone)?;
                    let base = base_for_occurrence(current, &found, info.zone);
                    let occurrence = SpecTime::from_event_time(found.recurrence_id);
                    let what = format!(
                        "Delete the {} occurrence of event `{id}`",
                        describe_occurrence(&occurrence)
                    );
                    (
                        format!(
                            "Delete the {} occurrence of '{}'",
                            describe_occurrence(&occurrence),
                            current.title
                        ),
                        render(&header(&info, &what), Some(&Fields::of_event(&base)), None),
                        Some(occurrence),
                    )
                }
                None => {
                    let overrides = loaded.index.overrides(&id.calendar, &id.uid).count();
                    let mut what = format!("Delete event `{id}`");
                    if current.is_recurring() {
                        what.push_str(" and all its occurrences");
                    }
                    if overrides > 0 {
                        what.push_str(&format!(" ({overrides} changed occurrences too)"));
                    }
                    (
                        format!(
                            "Delete event '{}' ({})",
                            current.title,
                            when(&current.start, &current.end)
                        ),
                        render(
                            &header(&info, &what),
                            Some(&Fields::of_event(current)),
                            None,
                        ),
                        None,
                    )
                }
            };
        let touched = vec![Touched {
            uid: id.uid.clone(),
            title: current.title.clone(),
        }];
        Ok(Draft {
            operation: Operation::Delete {
                uid: id.uid.clone(),
                occurrence,
            },
            info,
            loaded,
            summary,
            description,
            touched,
        })
    }
}

/// Renders a draft against the storage as it is now (so errors show before approval),
/// fingerprints the events it touches, and builds what the user approves.
fn finish(draft: Draft, staged_at: DateTime<Utc>) -> Result<StagedChange> {
    let Draft {
        info,
        loaded,
        operation,
        summary,
        description,
        touched,
    } = draft;
    let (target, texts) = match (&info.storage, &loaded.content) {
        (
            Storage::File(path),
            Content::Ics {
                text, fingerprint, ..
            },
        ) => ics_target(path, text, fingerprint, &touched),
        (Storage::Folder(folder), Content::Notes { fingerprints }) => {
            notes_target(folder, fingerprints, &touched)?
        }
        (Storage::CalDav(source), Content::CalDav { resources, by_uid }) => {
            caldav_target(&source.account.url, resources, by_uid, &touched)?
        }
        (Storage::Subscription(_), _) => {
            return Err(CalendarError::ReadOnly {
                id: info.id.clone(),
                reason: "a subscription".to_owned(),
            });
        }
        _ => {
            return Err(CalendarError::Task(
                "calendar content does not match its kind".to_owned(),
            ));
        }
    };
    let planned = plan(&info, &operation, &texts, staged_at)?;
    let diff = format!("{description}\n\n{}", planned.diff());
    let payload = Payload {
        format: PAYLOAD_FORMAT,
        calendar: info.id,
        target,
        operation,
        summary,
        staged_at,
        writes: Some(planned.writes),
    };
    let value =
        serde_json::to_value(&payload).map_err(|error| CalendarError::Task(error.to_string()))?;
    Ok(StagedChange {
        summary: payload.summary,
        diff,
        payload: value,
    })
}

/// The files a change reads, by path, with their text now (`None`: absent).
type Texts = Vec<(PathBuf, Option<String>)>;

/// An iCalendar file's target: the fingerprint of each touched event in its text.
fn ics_target(path: &Path, text: &str, fingerprint: &str, touched: &[Touched]) -> (Target, Texts) {
    let uids: Vec<&str> = touched.iter().map(|t| t.uid.as_str()).collect();
    let events = touched
        .iter()
        .zip(event_fingerprints(text, &uids))
        .map(|(event, fingerprint)| EventGuard {
            uid: event.uid.clone(),
            title: event.title.clone(),
            fingerprint,
        })
        .collect();
    let current = (fingerprint != ABSENT).then(|| text.to_owned());
    (
        Target::IcsFile {
            path: path.to_path_buf(),
            fingerprint: None,
            existed: current.is_some(),
            events,
        },
        vec![(path.to_path_buf(), current)],
    )
}

/// A note folder's target: each touched note as it is now, which must be what its
/// event was read from.
fn notes_target(
    folder: &Path,
    fingerprints: &HashMap<String, String>,
    touched: &[Touched],
) -> Result<(Target, Texts)> {
    let mut notes = Vec::new();
    let mut texts = Vec::new();
    for event in touched {
        let path = note_path(folder, &event.uid)?;
        let current = read_text(&path)?;
        // The note must still be what the event was read from.
        let now = current
            .as_ref()
            .map_or(ABSENT, |(_, fingerprint)| fingerprint.as_str());
        let read = fingerprints.get(&event.uid).map_or(ABSENT, String::as_str);
        if now != read {
            return Err(CalendarError::Conflict { path });
        }
        notes.push(NoteTarget {
            name: event.uid.clone(),
            fingerprint: now.to_owned(),
            title: Some(event.title.clone()),
        });
        texts.push((path, current.map(|(text, _)| text)));
    }
    let target = Target::Notes {
        folder: folder.to_path_buf(),
        notes,
    };
    Ok((target, texts))
}

/// A CalDAV calendar's target: each touched resource as last synced (its ETag and
/// text), or a new resource's href.
fn caldav_target(
    collection: &str,
    resources: &BTreeMap<String, CachedResource>,
    by_uid: &HashMap<String, String>,
    touched: &[Touched],
) -> Result<(Target, Texts)> {
    let mut guards = Vec::new();
    let mut texts = Vec::new();
    for event in touched {
        let (href, resource) = match by_uid.get(&event.uid) {
            Some(href) => (href.clone(), resources.get(href)),
            None => (
                hearth_caldav::new_resource_href(collection, &event.uid)?,
                None,
            ),
        };
        let text = resource.map(|r| r.text.clone());
        guards.push(ResourceGuard {
            href: href.clone(),
            uid: event.uid.clone(),
            title: event.title.clone(),
            etag: resource.and_then(|r| r.etag.clone()),
            text: text.clone(),
        });
        texts.push((PathBuf::from(href), text));
    }
    let target = Target::CalDav {
        collection: collection.to_owned(),
        resources: guards,
    };
    Ok((target, texts))
}
