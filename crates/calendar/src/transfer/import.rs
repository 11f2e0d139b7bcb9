//! Importing into each kind of calendar: an iCalendar file gets the new events copied
//! verbatim, a note folder a note per event (all or none), a CalDAV calendar a new
//! resource per UID created with `If-None-Match: *`. Events whose UID the calendar
//! already has are skipped, and said so once each.

use std::collections::HashSet;
use std::path::Path;

use hearth_caldav::{DavClient, Precondition, new_resource_href, resolve};
use hearth_ical::{
    Component, Event, EventSource, Tree, append_components, component_uid, content_fingerprint,
    empty_calendar, parse_tree,
};

use super::{ImportReport, normalise_endings, note_zones, zone_definitions};
use crate::atomic::{FileChange, WriteMode, read_optional, write_all, write_atomic};
use crate::caldav::CalDavSource;
use crate::change::unique_note_name;
use crate::error::{CalendarError, Result};
use crate::note_conversion::ics_as_notes;
use crate::notes_write::{new_note_skipping, note_file_name};
use crate::store::{CalendarInfo, Calendars, Content};

/// The lines of the VEVENTs reading kept (the current revision of each event).
fn loaded_lines(events: &[Event]) -> HashSet<usize> {
    events
        .iter()
        .filter_map(|e| match e.source {
            EventSource::Ics { line } => Some(line),
            EventSource::Note { .. } => None,
        })
        .collect()
}

/// The VEVENTs of `tree` that reading kept, in file order.
fn kept_events<'t, 'a>(tree: &'t Tree<'a>, events: &[Event]) -> Vec<&'t Component<'a>> {
    let lines = loaded_lines(events);
    tree.components
        .iter()
        .filter(|c| c.name == "VCALENDAR")
        .flat_map(|c| c.children.iter())
        .filter(|c| c.name == "VEVENT" && lines.contains(&c.line))
        .collect()
}

/// Says once per UID that the calendar already has an event.
#[derive(Default)]
struct AlreadyThere(HashSet<String>);

impl AlreadyThere {
    fn skip(&mut self, uid: &str, report: &mut ImportReport) {
        if self.0.insert(uid.to_owned()) {
            report
                .skipped
                .push(format!("`{uid}`: the calendar already has it"));
        }
    }
}

/// Copies the events of `text` (parsed as `tree`) that the calendar file at `path`
/// lacks into it, verbatim, with the time zones they use and the file's line endings;
/// false when there was nothing to copy (nothing was written).
pub(super) fn import_into_file(
    info: &CalendarInfo,
    path: &Path,
    text: &str,
    tree: &Tree<'_>,
    events: &[Event],
    report: &mut ImportReport,
) -> Result<bool> {
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
    let (existing, zones) = uids_and_zones(&target_tree, &target);
    let mut copied = String::new();
    let mut needed: Vec<String> = Vec::new();
    let mut already = AlreadyThere::default();
    for child in kept_events(tree, events) {
        let uid = component_uid(child, text);
        if existing.contains(&uid) {
            already.skip(&uid, report);
            continue;
        }
        copied.push_str(&normalise_endings(&text[child.span.clone()], ending));
        report.imported += usize::from(child.property("RECURRENCE-ID").is_none());
        note_zones(child, &mut needed, &zones);
    }
    let timezones = zone_definitions(tree, text, &needed, ending);
    if report.imported == 0 && copied.is_empty() {
        return Ok(false);
    }
    let written = append_components(&target, &copied, &timezones)?;
    // Nothing else may have written since we read (we hold the lock; this guards
    // against other programs).
    let now = read_optional(path)?.as_deref().map(content_fingerprint);
    if now != fingerprint {
        return Err(CalendarError::Conflict {
            path: path.to_path_buf(),
        });
    }
    info.ensure_folder()?;
    let mode = if fingerprint.is_some() {
        WriteMode::Replace
    } else {
        WriteMode::CreateNew
    };
    write_atomic(path, written.as_bytes(), mode)?;
    Ok(true)
}

/// The UIDs of the events, and the TZIDs of the time zones, a calendar text holds.
fn uids_and_zones(tree: &Tree<'_>, text: &str) -> (HashSet<String>, HashSet<String>) {
    let mut uids = HashSet::new();
    let mut zones = HashSet::new();
    for child in tree
        .components
        .iter()
        .filter(|c| c.name == "VCALENDAR")
        .flat_map(|c| c.children.iter())
    {
        match child.name.as_str() {
            "VEVENT" => {
                uids.insert(component_uid(child, text));
            }
            "VTIMEZONE" => {
                zones.extend(child.value("TZID").map(|t| t.trim().to_owned()));
            }
            _ => {}
        }
    }
    (uids, zones)
}

/// Writes a note for each of `events` into `folder` (occurrences a note cannot hold as
/// single-event notes beside it), every note or none.
pub(super) fn import_into_folder(
    info: &CalendarInfo,
    folder: &Path,
    events: &[Event],
    report: &mut ImportReport,
) -> Result<()> {
    let mut taken = Vec::new();
    let mut writes = Vec::new();
    for event in events {
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
    write_all(writes)
}

/// A resource an import creates: one UID's events (a series with its changed
/// occurrences) and the zones they name.
struct NewResource {
    uid: String,
    components: String,
    zones: Vec<String>,
    /// Its series or single events (not overrides), as the report counts them.
    masters: usize,
}

/// The resources to create for the events of `text` the calendar lacks, in file order.
fn new_resources(
    text: &str,
    tree: &Tree<'_>,
    events: &[Event],
    exists: impl Fn(&str) -> bool,
    report: &mut ImportReport,
) -> Vec<NewResource> {
    let mut resources: Vec<NewResource> = Vec::new();
    let mut already = AlreadyThere::default();
    for child in kept_events(tree, events) {
        let uid = component_uid(child, text);
        if exists(&uid) {
            already.skip(&uid, report);
            continue;
        }
        let index = match resources.iter().position(|r| r.uid == uid) {
            Some(index) => index,
            None => {
                resources.push(NewResource {
                    uid,
                    components: String::new(),
                    zones: Vec::new(),
                    masters: 0,
                });
                resources.len() - 1
            }
        };
        let resource = &mut resources[index];
        resource
            .components
            .push_str(&normalise_endings(&text[child.span.clone()], "\r\n"));
        resource.masters += usize::from(child.property("RECURRENCE-ID").is_none());
        note_zones(child, &mut resource.zones, &HashSet::new());
    }
    resources
}

impl Calendars {
    /// Imports into a CalDAV calendar: each UID's events (a series with its changed
    /// occurrences) become one new resource with the time zones they use, created with
    /// `If-None-Match: *` so nothing on the server is overwritten.
    pub(super) async fn import_caldav(
        &self,
        info: &CalendarInfo,
        source: &CalDavSource,
        text: &str,
        tree: &Tree<'_>,
        events: &[Event],
        report: &mut ImportReport,
    ) -> Result<()> {
        let loaded = self.load(&info.id).await?;
        let Content::CalDav { by_uid, .. } = &loaded.content else {
            return Err(CalendarError::Task(
                "calendar content does not match its kind".to_owned(),
            ));
        };
        let resources = new_resources(text, tree, events, |uid| by_uid.contains_key(uid), report);
        let transport = std::sync::Arc::clone(&self.inner.options.dav_transport);
        let client = DavClient::new(&*transport, &source.account, source.max_bytes).await?;
        for resource in &resources {
            let uid = &resource.uid;
            let timezones = zone_definitions(tree, text, &resource.zones, "\r\n");
            let body = append_components(&empty_calendar(), &resource.components, &timezones)?;
            let href = new_resource_href(&source.account.url, uid)?;
            let url = resolve(&source.account.url, &href)?;
            let response = client
                .put(&url, body, &Precondition::Absent)
                .await
                .map_err(|error| partial(error.into(), report.imported))?;
            match response.status {
                200..=299 => report.imported += resource.masters,
                412 => report
                    .skipped
                    .push(format!("`{uid}`: the server already has a resource {href}")),
                status => {
                    let error = source.account.error(format!(
                        "PUT {url} answered HTTP {status} for event `{uid}`"
                    ));
                    return Err(partial(error.into(), report.imported));
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
