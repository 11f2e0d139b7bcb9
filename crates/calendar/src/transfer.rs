//! Importing an iCalendar text into a calendar, and exporting a calendar as iCalendar.
//! Both are user actions (the CLI's `import` and `export`), not agent tools.

use std::collections::HashSet;
use std::path::Path;

use chrono::Utc;
use hearth_ical::{
    EventSpec, EventTime, LoadWarning, append_components, create_events, delete_occurrence,
    empty_calendar, parse_tree, read_tree,
};
use serde::Serialize;

use crate::error::{CalendarError, Result};
use crate::loading::{Decoding, decode, read_limited};
use crate::note_conversion::note_as_ics;
use crate::presence::StorageState;
use crate::store::{Calendars, Content, Storage};
use import::{import_into_file, import_into_folder};

mod import;

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
                if !import_into_file(&info, path, text, &tree, &parsed.events, &mut report)? {
                    return Ok(report);
                }
            }
            Storage::Folder(folder) => {
                import_into_folder(&info, folder, &parsed.events, &mut report)?;
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
pub(crate) fn note_zones(
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
pub(crate) fn zone_definitions(
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

pub(crate) fn normalise_endings(text: &str, ending: &str) -> String {
    let unified = text.replace("\r\n", "\n");
    if ending == "\n" {
        unified
    } else {
        unified.replace('\n', ending)
    }
}
