//! Importing an iCalendar text into a calendar, and exporting a calendar as iCalendar.
//! Both are user actions (the CLI's `import` and `export`), not agent tools.

use std::collections::HashSet;
use std::path::Path;

use chrono::Utc;
use hearth_ical::{
    EventSource, EventSpec, EventTime, LoadWarning, append_components, component_uid,
    content_fingerprint, create_events, delete_occurrence, empty_calendar, parse_tree, read_tree,
};
use serde::Serialize;

use crate::atomic::{FileChange, WriteMode, read_optional, write_all, write_atomic};
use crate::change::unique_note_name;
use crate::error::{CalendarError, Result};
use crate::loading::{Decoding, decode, read_limited};
use crate::note_conversion::{ics_as_notes, note_as_ics};
use crate::notes_write::{new_note_skipping, note_file_name};
use crate::presence::StorageState;
use crate::store::{Calendars, Content, Storage};

/// What an import did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImportReport {
    /// The calendar imported into.
    pub calendar: String,
    /// Events added.
    pub imported: usize,
    /// Events left out (or parts of them), and why.
    pub skipped: Vec<String>,
    /// Events stored differently from the imported text, with the same occurrences,
    /// and how.
    pub adapted: Vec<String>,
    /// Problems reading the imported text.
    pub warnings: Vec<LoadWarning>,
}

impl Calendars {
    /// Adds the events of the iCalendar file at `path` to a calendar (the default one
    /// when `None`), as [`Calendars::import_ics`] does. The file is read as loading
    /// reads a calendar: refused above the calendar size limit
    /// ([`CalendarOptions::max_calendar_bytes`](crate::CalendarOptions)), and bytes that
    /// are not UTF-8 replaced by `�` with a warning in the report.
    pub async fn import_ics_file(
        &self,
        calendar: Option<&str>,
        path: &Path,
    ) -> Result<ImportReport> {
        let limit = self.inner.options.max_calendar_bytes;
        let file = path.to_path_buf();
        let bytes = tokio::task::spawn_blocking(move || read_limited(&file, limit))
            .await
            .map_err(|error| CalendarError::Task(error.to_string()))??;
        let origin = path.display().to_string();
        let mut warnings = Vec::new();
        let (text, _) = decode(bytes, &origin, Decoding::Imported, &mut warnings);
        let mut report = self.import_ics(calendar, &text, &origin).await?;
        warnings.append(&mut report.warnings);
        report.warnings = warnings;
        Ok(report)
    }

    /// Adds the events of an iCalendar `text` (named `origin` in warnings) to a calendar
    /// (the default one when `None`). Events whose UID the calendar already has are
    /// skipped. Into an iCalendar file the events are copied verbatim, with the time
    /// zones they use. Into a note folder each event becomes a note, all of them or none;
    /// occurrences a note cannot hold become single-event notes beside it (see
    /// [`ImportReport::adapted`] and the `note_conversion` module).
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
        if info.storage_state() == StorageState::Missing {
            return Err(info.missing());
        }
        let tree = parse_tree(text);
        let parsed = read_tree(&info.id, origin, text, &tree)?;
        let _guard = self.inner.write_lock.lock().await;
        let mut report = ImportReport {
            calendar: info.id.clone(),
            imported: 0,
            skipped: Vec::new(),
            adapted: Vec::new(),
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
                let calendars = |tree: &hearth_ical::Tree<'_>| -> Vec<usize> {
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
                        note_zones(child, &mut needed, &zones);
                    }
                }
                let timezones = zone_definitions(&tree, text, &needed, ending);
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
                info.ensure_folder()?;
                let mode = if fingerprint.is_some() {
                    WriteMode::Replace
                } else {
                    WriteMode::CreateNew
                };
                write_atomic(path, written.as_bytes(), mode)?;
            }
            Storage::Folder(folder) => {
                let mut taken = Vec::new();
                let mut writes = Vec::new();
                for event in &parsed.events {
                    if event.recurrence_id.is_some() {
                        report.skipped.push(format!(
                            "a changed occurrence of '{}': notes cannot hold one",
                            event.title
                        ));
                        continue;
                    }
                    let form = ics_as_notes(event, info.zone);
                    report.skipped.extend(form.lost);
                    report.adapted.extend(form.adapted);
                    let singles = form.singles.into_iter().map(|spec| (spec, Vec::new()));
                    for (mut spec, skip) in form.main.into_iter().chain(singles) {
                        let name = note_file_name(&spec)?;
                        spec.uid = unique_note_name(folder, &name, &taken);
                        taken.push(spec.uid.clone());
                        writes.push(FileChange::Put {
                            path: folder.join(&spec.uid),
                            bytes: new_note_skipping(&spec, info.zone, &skip)?.into_bytes(),
                            mode: WriteMode::CreateNew,
                        });
                    }
                    report.imported += 1;
                }
                // Every note of the import or none.
                info.ensure_folder()?;
                write_all(writes)?;
            }
            Storage::CalDav(source) => {
                self.import_caldav(&info, source, text, &tree, &parsed.events, &mut report)
                    .await?;
                self.forget(&info.id);
                if let Err(error) = self.sync(&info.id).await {
                    tracing::warn!(calendar = %info.id, %error, "sync after a CalDAV import failed");
                }
                return Ok(report);
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
    /// folder converted with the same occurrences (a series' DTSTART is its first
    /// occurrence; see the `note_conversion` module).
    pub async fn export_ics(&self, calendar: &str) -> Result<String> {
        let loaded = self.load(calendar).await?;
        match &loaded.content {
            Content::Ics { text, .. } if text.trim().is_empty() => Ok(empty_calendar()),
            Content::Ics { text, .. } | Content::Subscription { text } => Ok(text.clone()),
            Content::CalDav { resources, .. } => {
                let texts: Vec<&str> = resources.values().map(|r| r.text.as_str()).collect();
                merge_calendars(&texts)
            }
            Content::Notes { .. } => {
                let stamp = Utc::now();
                let floating = loaded.index.floating_zone();
                let forms: Vec<(EventSpec, Vec<EventTime>)> = loaded
                    .index
                    .events()
                    .iter()
                    .map(|event| note_as_ics(event, floating))
                    .collect();
                let specs: Vec<EventSpec> = forms.iter().map(|(spec, _)| spec.clone()).collect();
                let mut text = create_events(&empty_calendar(), &specs, stamp)?.text;
                for (spec, exdates) in &forms {
                    for exdate in exdates {
                        text = delete_occurrence(&text, &spec.uid, exdate, stamp)?.text;
                    }
                }
                Ok(text)
            }
        }
    }
}

/// Adds the zones `event` names (`TZID` parameters) to `needed`, once each, leaving out
/// those in `present`.
fn note_zones(
    event: &hearth_ical::Component<'_>,
    needed: &mut Vec<String>,
    present: &HashSet<String>,
) {
    for property in &event.properties {
        if let Some(tzid) = property.content.param("TZID")
            && !present.contains(tzid.trim())
            && !needed.iter().any(|n| n == tzid.trim())
        {
            needed.push(tzid.trim().to_owned());
        }
    }
}

/// The VTIMEZONE definitions `tree` (of `text`) holds for `zones`, in that order, with
/// `ending` line breaks.
fn zone_definitions(
    tree: &hearth_ical::Tree<'_>,
    text: &str,
    zones: &[String],
    ending: &str,
) -> String {
    let mut definitions = String::new();
    for tzid in zones {
        let definition = tree
            .components
            .iter()
            .filter(|c| c.name == "VCALENDAR")
            .flat_map(|c| c.children.iter())
            .find(|c| c.name == "VTIMEZONE" && c.value("TZID").is_some_and(|t| t.trim() == tzid));
        if let Some(definition) = definition {
            definitions.push_str(&normalise_endings(&text[definition.span.clone()], ending));
        }
    }
    definitions
}

/// One iCalendar text holding the components of every text in `texts` (CalDAV
/// resources), each time zone once.
fn merge_calendars(texts: &[&str]) -> Result<String> {
    let mut components = String::new();
    let mut timezones = String::new();
    let mut zones: HashSet<String> = HashSet::new();
    for text in texts {
        let tree = parse_tree(text);
        for calendar in tree.components.iter().filter(|c| c.name == "VCALENDAR") {
            for child in &calendar.children {
                let body = normalise_endings(&text[child.span.clone()], "\r\n");
                if child.name == "VTIMEZONE" {
                    let tzid = child.value("TZID").map(|t| t.trim().to_owned());
                    if tzid.is_none_or(|tzid| zones.insert(tzid)) {
                        timezones.push_str(&body);
                    }
                } else {
                    components.push_str(&body);
                }
            }
        }
    }
    Ok(append_components(
        &empty_calendar(),
        &components,
        &timezones,
    )?)
}

impl Calendars {
    /// Imports into a CalDAV calendar: each UID's events (a series with its changed
    /// occurrences) become one new resource with the time zones they use, created with
    /// `If-None-Match: *` so nothing on the server is overwritten.
    async fn import_caldav(
        &self,
        info: &crate::store::CalendarInfo,
        source: &crate::caldav::CalDavSource,
        text: &str,
        tree: &hearth_ical::Tree<'_>,
        events: &[hearth_ical::Event],
        report: &mut ImportReport,
    ) -> Result<()> {
        let loaded = self.load(&info.id).await?;
        let Content::CalDav { by_uid, .. } = &loaded.content else {
            return Err(CalendarError::Task(
                "calendar content does not match its kind".to_owned(),
            ));
        };
        let loaded_lines: HashSet<usize> = events
            .iter()
            .filter_map(|e| match e.source {
                EventSource::Ics { line } => Some(line),
                EventSource::Note { .. } => None,
            })
            .collect();
        let calendars: Vec<&hearth_ical::Component<'_>> = tree
            .components
            .iter()
            .filter(|c| c.name == "VCALENDAR")
            .collect();
        // Each new UID's components and the zones they name, in file order.
        let mut groups: Vec<(String, String, Vec<String>, usize)> = Vec::new();
        let mut skipped: HashSet<String> = HashSet::new();
        for child in calendars.iter().flat_map(|c| c.children.iter()) {
            if child.name != "VEVENT" || !loaded_lines.contains(&child.line) {
                continue;
            }
            let uid = component_uid(child, text);
            if by_uid.contains_key(&uid) {
                if skipped.insert(uid.clone()) {
                    report
                        .skipped
                        .push(format!("`{uid}`: the calendar already has it"));
                }
                continue;
            }
            let index = match groups.iter().position(|(u, ..)| *u == uid) {
                Some(index) => index,
                None => {
                    groups.push((uid.clone(), String::new(), Vec::new(), 0));
                    groups.len() - 1
                }
            };
            let group = &mut groups[index];
            group
                .1
                .push_str(&normalise_endings(&text[child.span.clone()], "\r\n"));
            group.3 += usize::from(child.property("RECURRENCE-ID").is_none());
            note_zones(child, &mut group.2, &HashSet::new());
        }
        let transport = std::sync::Arc::clone(&self.inner.options.dav_transport);
        let client = hearth_caldav::DavClient::new(&*transport, &source.account, source.max_bytes)?;
        for (uid, components, zones, masters) in &groups {
            let timezones = zone_definitions(tree, text, zones, "\r\n");
            let body = append_components(&empty_calendar(), components, &timezones)?;
            let href = hearth_caldav::new_resource_href(&source.account.url, uid)?;
            let url = hearth_caldav::resolve(&source.account.url, &href)?;
            let response = client
                .put(&url, body, &hearth_caldav::Precondition::Absent)
                .await
                .map_err(|error| partial(error.into(), report.imported))?;
            match response.status {
                200..=299 => report.imported += masters,
                412 => report
                    .skipped
                    .push(format!("`{uid}`: the server already has a resource {href}")),
                status => {
                    return Err(partial(
                        source
                            .account
                            .error(format!(
                                "PUT {url} answered HTTP {status} for event `{uid}`"
                            ))
                            .into(),
                        report.imported,
                    ));
                }
            }
        }
        Ok(())
    }
}

/// An import error saying how many events were imported before it.
fn partial(error: CalendarError, imported: usize) -> CalendarError {
    match (imported, error) {
        (0, error) => error,
        (n, CalendarError::Server { id, url, message }) => CalendarError::Server {
            id,
            url,
            message: format!("{message}; the {n} events before it were imported"),
        },
        (_, error) => error,
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
