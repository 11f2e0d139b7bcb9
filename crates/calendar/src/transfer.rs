//! Importing an iCalendar text into a calendar, and exporting a calendar as iCalendar.
//! Both are user actions (the CLI's `import` and `export`), not agent tools.

use std::collections::HashSet;

use chrono::{NaiveDate, Utc};
use serde::Serialize;

use crate::atomic::{WriteMode, read_optional, write_atomic};
use crate::change::unique_note_name;
use crate::component::parse_tree;
use crate::error::{CalendarError, LoadWarning, Result};
use crate::event::{Event, EventSource};
use crate::fingerprint::content_fingerprint;
use crate::ics_read::{component_uid, read_tree};
use crate::ics_write::{append_components, create, delete_occurrence, empty_calendar};
use crate::notes_write::{new_note_skipping, note_file_name};
use crate::spec::{EventSpec, RecurrenceSpec, SpecTime};
use crate::store::{Calendars, Content, Storage};

/// What an import did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// The calendar imported into.
    pub calendar: String,
    /// Events added.
    pub imported: usize,
    /// Events left out, and why.
    pub skipped: Vec<String>,
    /// Problems reading the imported text.
    pub warnings: Vec<LoadWarning>,
}

fn spec_of(event: &Event, uid: String) -> (EventSpec, Vec<String>) {
    let mut notes = Vec::new();
    let recurrence = match &event.recurrence {
        None => RecurrenceSpec::None,
        Some(recurrence) => {
            if recurrence.rules.len() > 1 || !recurrence.rdates.is_empty() {
                notes.push(format!(
                    "'{}': only its first rule is kept (notes cannot hold extra rules or dates)",
                    event.title
                ));
            }
            match recurrence.rules.first() {
                Some(rule) => RecurrenceSpec::Rule {
                    rule: rule.to_string(),
                },
                None => RecurrenceSpec::None,
            }
        }
    };
    let spec = EventSpec {
        uid,
        title: event.title.clone(),
        start: SpecTime::from_event_time(event.start),
        end: SpecTime::from_event_time(event.end),
        location: event.location.clone(),
        description: event.description.clone(),
        recurrence,
    };
    (spec, notes)
}

fn skipped_dates(event: &Event) -> Vec<NaiveDate> {
    event
        .recurrence
        .as_ref()
        .map(|r| r.exdates.iter().map(|e| e.date()).collect())
        .unwrap_or_default()
}

impl Calendars {
    /// Adds the events of an iCalendar `text` (named `origin` in warnings) to a calendar
    /// (the default one when `None`). Events whose UID the calendar already has are
    /// skipped. Into an iCalendar file the events are copied verbatim, with the time
    /// zones they use.
    pub async fn import_ics(
        &self,
        calendar: Option<&str>,
        text: &str,
        origin: &str,
    ) -> Result<ImportReport> {
        let info = self.calendar_or_default(calendar)?.clone();
        if !info.writable {
            return Err(CalendarError::ReadOnly {
                id: info.id.clone(),
                reason: info.read_only_reason.clone().unwrap_or_default(),
            });
        }
        let tree = parse_tree(text);
        let parsed = read_tree(&info.id, origin, text, &tree)?;
        let _guard = self.inner.write_lock.lock().await;
        let mut report = ImportReport {
            calendar: info.id.clone(),
            imported: 0,
            skipped: Vec::new(),
            warnings: parsed.warnings.clone(),
        };
        match &info.storage {
            Storage::File(path) => {
                let loaded_lines: HashSet<usize> = parsed
                    .events
                    .iter()
                    .filter_map(|e| match e.source {
                        EventSource::Ics { line } => Some(line),
                        EventSource::Note { .. } => None,
                    })
                    .collect();
                let current = read_optional(path)?;
                let fingerprint = current.as_deref().map(content_fingerprint);
                let target = current
                    .map(String::from_utf8)
                    .transpose()
                    .map_err(|_| CalendarError::ReadOnly {
                        id: info.id.clone(),
                        reason: "the file is not valid UTF-8".to_owned(),
                    })?
                    .unwrap_or_default();
                let target_tree = parse_tree(&target);
                let ending = target_tree.line_ending;
                let calendars = |tree: &crate::component::Tree<'_>| -> Vec<usize> {
                    tree.components
                        .iter()
                        .enumerate()
                        .filter(|(_, c)| c.name == "VCALENDAR")
                        .map(|(i, _)| i)
                        .collect()
                };
                let mut existing: HashSet<String> = HashSet::new();
                let mut zones: HashSet<String> = HashSet::new();
                for i in calendars(&target_tree) {
                    for child in &target_tree.components[i].children {
                        match child.name.as_str() {
                            "VEVENT" => {
                                existing.insert(component_uid(child, &target));
                            }
                            "VTIMEZONE" => {
                                zones.extend(child.value("TZID").map(|t| t.trim().to_owned()));
                            }
                            _ => {}
                        }
                    }
                }
                let mut events = String::new();
                let mut needed: Vec<String> = Vec::new();
                let mut skipped_uids: HashSet<String> = HashSet::new();
                for i in calendars(&tree) {
                    for child in tree.components[i]
                        .children
                        .iter()
                        .filter(|c| c.name == "VEVENT" && loaded_lines.contains(&c.line))
                    {
                        let uid = component_uid(child, text);
                        if existing.contains(&uid) {
                            if skipped_uids.insert(uid.clone()) {
                                report
                                    .skipped
                                    .push(format!("`{uid}`: the calendar already has it"));
                            }
                            continue;
                        }
                        events.push_str(&normalise_endings(&text[child.span.clone()], ending));
                        report.imported += usize::from(child.property("RECURRENCE-ID").is_none());
                        for property in &child.properties {
                            if let Some(tzid) = property.content.param("TZID")
                                && !zones.contains(tzid.trim())
                                && !needed.iter().any(|n| n == tzid.trim())
                            {
                                needed.push(tzid.trim().to_owned());
                            }
                        }
                    }
                }
                let mut timezones = String::new();
                for tzid in &needed {
                    let definition = calendars(&tree)
                        .into_iter()
                        .flat_map(|i| tree.components[i].children.iter())
                        .find(|c| {
                            c.name == "VTIMEZONE"
                                && c.value("TZID").is_some_and(|t| t.trim() == tzid)
                        });
                    if let Some(definition) = definition {
                        timezones
                            .push_str(&normalise_endings(&text[definition.span.clone()], ending));
                    }
                }
                if report.imported == 0 && events.is_empty() {
                    return Ok(report);
                }
                let written = append_components(&target, &events, &timezones)?;
                // Nothing else may have written since we read (we hold the lock; this
                // guards against other programs).
                let now = read_optional(path)?.as_deref().map(content_fingerprint);
                if now != fingerprint {
                    return Err(CalendarError::Conflict { path: path.clone() });
                }
                if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    std::fs::create_dir_all(parent).map_err(|source| CalendarError::Write {
                        path: parent.to_path_buf(),
                        source,
                    })?;
                }
                let mode = if fingerprint.is_some() {
                    WriteMode::Replace
                } else {
                    WriteMode::CreateNew
                };
                write_atomic(path, written.as_bytes(), mode)?;
            }
            Storage::Folder(folder) => {
                std::fs::create_dir_all(folder).map_err(|source| CalendarError::Write {
                    path: folder.clone(),
                    source,
                })?;
                let mut taken = Vec::new();
                for event in &parsed.events {
                    if event.recurrence_id.is_some() {
                        report.skipped.push(format!(
                            "a changed occurrence of '{}': notes cannot hold one",
                            event.title
                        ));
                        continue;
                    }
                    let (mut spec, notes) = spec_of(event, String::new());
                    report.skipped.extend(notes);
                    let name = note_file_name(&spec)?;
                    spec.uid = unique_note_name(folder, &name, &taken);
                    taken.push(spec.uid.clone());
                    let note = new_note_skipping(&spec, info.zone, &skipped_dates(event))?;
                    write_atomic(
                        &folder.join(&spec.uid),
                        note.as_bytes(),
                        WriteMode::CreateNew,
                    )?;
                    report.imported += 1;
                }
            }
            Storage::Subscription(_) => {
                return Err(CalendarError::ReadOnly {
                    id: info.id.clone(),
                    reason: "a subscription".to_owned(),
                });
            }
        }
        self.forget(&info.id);
        Ok(report)
    }

    /// A calendar as iCalendar text: an iCalendar file or subscription as it is, a note
    /// folder converted.
    pub async fn export_ics(&self, calendar: &str) -> Result<String> {
        let loaded = self.load(calendar).await?;
        match &loaded.content {
            Content::Ics { text, .. } if text.trim().is_empty() => Ok(empty_calendar()),
            Content::Ics { text, .. } | Content::Subscription { text } => Ok(text.clone()),
            Content::Notes { .. } => {
                let stamp = Utc::now();
                let events: Vec<&Event> = loaded.index.events().iter().collect();
                let specs: Vec<EventSpec> =
                    events.iter().map(|e| spec_of(e, e.uid.clone()).0).collect();
                let mut text = create(&empty_calendar(), &specs, stamp)?;
                for event in events {
                    if let Some(recurrence) = &event.recurrence {
                        for exdate in &recurrence.exdates {
                            let occurrence = match (exdate, event.start) {
                                (
                                    crate::time::EventTime::Date(date),
                                    crate::time::EventTime::DateTime { local, zone },
                                ) => crate::time::EventTime::DateTime {
                                    local: date.and_time(local.time()),
                                    zone,
                                },
                                (time, _) => *time,
                            };
                            text = delete_occurrence(&text, &event.uid, &occurrence, stamp)?;
                        }
                    }
                }
                Ok(text)
            }
        }
    }
}

fn normalise_endings(text: &str, ending: &str) -> String {
    let unified = text.replace("\r\n", "\n");
    if ending == "\n" {
        unified
    } else {
        unified.replace('\n', ending)
    }
}
