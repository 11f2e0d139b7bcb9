//! Staging: validate a request, render it against the storage as it is now, and
//! describe it. Writes nothing.

use chrono::Utc;

use super::{
    ChangeRequest, MAX_BATCH, NoteTarget, Operation, PAYLOAD_FORMAT, Payload, StagedChange, Target,
    describe_occurrence, ensure_writable, header, note_path, note_targets, notes_occurrence_error,
    plan, read_text, unique_note_name,
};
use crate::diff::{Fields, render, when};
use crate::error::{CalendarError, Result};
use crate::fingerprint::ABSENT;
use crate::notes_write::note_file_name;
use crate::occurrence::{base_for_occurrence, find_occurrence};
use crate::spec::{RecurrenceSpec, SpecTime, resolve_input, resolve_patch};
use crate::store::{Calendars, Content, Storage};

impl Calendars {
    /// Stages a change: checks it and describes it; writes nothing.
    pub async fn stage(&self, request: ChangeRequest) -> Result<StagedChange> {
        let staged_at = Utc::now();
        let (info, loaded, operation, summary, diff, mut notes) = match request {
            ChangeRequest::Create { calendar, events } => {
                let info = self.calendar_or_default(calendar.as_deref())?.clone();
                let loaded = self.load(&info.id).await?;
                ensure_writable(&info, &loaded)?;
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
                        resolve_input(input, info.zone, uid).map_err(|error| {
                            match (batch, error) {
                                (true, CalendarError::InvalidInput(message)) => {
                                    CalendarError::InvalidInput(format!(
                                        "events[{position}]: {message}"
                                    ))
                                }
                                (true, other) => CalendarError::InvalidInput(format!(
                                    "events[{position}]: {other}"
                                )),
                                (false, error) => error,
                            }
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
                let mut diff = header(&info, "Create");
                for spec in &specs {
                    diff.push(String::new());
                    diff.push(render(&[], None, Some(&Fields::of_spec(spec, None)?)));
                }
                let notes = taken
                    .iter()
                    .map(|name| NoteTarget {
                        name: name.clone(),
                        fingerprint: ABSENT.to_owned(),
                    })
                    .collect();
                (
                    info,
                    loaded,
                    Operation::Create { events: specs },
                    summary,
                    diff.join("\n"),
                    notes,
                )
            }
            ChangeRequest::Update {
                event: id,
                occurrence,
                patch,
            } => {
                let info = self.calendar(&id.calendar)?.clone();
                let loaded = self.load(&info.id).await?;
                ensure_writable(&info, &loaded)?;
                let current = loaded
                    .index
                    .get(&id.calendar, &id.uid)
                    .ok_or_else(|| CalendarError::UnknownEvent { id: id.to_string() })?;
                let zone = self.time_zone();
                let (base, occurrence) = match occurrence
                    .as_deref()
                    .map(str::trim)
                    .filter(|o| !o.is_empty())
                {
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
                let spec = resolve_patch(&base, &patch, info.zone)?;
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
                let summary = format!("{what} '{}': {}", base.title, changed.join(", "));
                let diff = render(&header(&info, &what), Some(&before), Some(&after));
                let notes = note_targets(&info, &loaded, &id.uid);
                (
                    info,
                    loaded,
                    Operation::Update {
                        event: spec,
                        occurrence,
                    },
                    summary,
                    diff,
                    notes,
                )
            }
            ChangeRequest::Delete {
                event: id,
                occurrence,
            } => {
                let info = self.calendar(&id.calendar)?.clone();
                let loaded = self.load(&info.id).await?;
                ensure_writable(&info, &loaded)?;
                let current = loaded
                    .index
                    .get(&id.calendar, &id.uid)
                    .ok_or_else(|| CalendarError::UnknownEvent { id: id.to_string() })?;
                let zone = self.time_zone();
                let (summary, diff, occurrence) = match occurrence
                    .as_deref()
                    .map(str::trim)
                    .filter(|o| !o.is_empty())
                {
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
                let notes = note_targets(&info, &loaded, &id.uid);
                (
                    info,
                    loaded,
                    Operation::Delete {
                        uid: id.uid.clone(),
                        occurrence,
                    },
                    summary,
                    diff,
                    notes,
                )
            }
        };
        // Render against the storage as it is now, so errors show before approval.
        let (target, texts) = match &info.storage {
            Storage::File(path) => {
                let Content::Ics {
                    text, fingerprint, ..
                } = &loaded.content
                else {
                    return Err(CalendarError::Task(
                        "calendar content does not match its kind".to_owned(),
                    ));
                };
                let current = (fingerprint != ABSENT).then(|| text.clone());
                (
                    Target::IcsFile {
                        path: path.clone(),
                        fingerprint: fingerprint.clone(),
                    },
                    vec![(path.clone(), current)],
                )
            }
            Storage::Folder(folder) => {
                let mut texts = Vec::new();
                for note in &mut notes {
                    let path = note_path(folder, &note.name)?;
                    let current = read_text(&path)?;
                    // The note must still be what the event was read from.
                    let now = current
                        .as_ref()
                        .map_or(ABSENT, |(_, fingerprint)| fingerprint.as_str());
                    if now != note.fingerprint {
                        return Err(CalendarError::Conflict { path });
                    }
                    texts.push((path, current.map(|(text, _)| text)));
                }
                (
                    Target::Notes {
                        folder: folder.clone(),
                        notes,
                    },
                    texts,
                )
            }
            Storage::Subscription(_) => {
                return Err(CalendarError::ReadOnly {
                    id: info.id.clone(),
                    reason: "a subscription".to_owned(),
                });
            }
        };
        plan(&info, &operation, &texts, staged_at)?;
        let payload = Payload {
            format: PAYLOAD_FORMAT,
            calendar: info.id,
            target,
            operation,
            summary,
            staged_at,
        };
        let value = serde_json::to_value(&payload)
            .map_err(|error| CalendarError::Task(error.to_string()))?;
        Ok(StagedChange {
            summary: payload.summary,
            diff,
            payload: value,
        })
    }
}
