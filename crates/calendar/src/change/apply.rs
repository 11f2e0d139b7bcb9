//! Applying a staged payload: the events it touches must be as they were when it was
//! staged (changes elsewhere in the file do not matter); it is rendered again against
//! the files as they are now, must write the same edits as staged, and is written
//! atomically.

use std::path::{Path, PathBuf};

use hearth_caldav::{DavClient, Precondition, resolve, same_origin};
use hearth_ical::{ABSENT, event_fingerprints};
use serde_json::Value;

use super::plan::{PlannedFile, plan};
use super::{
    AppliedChange, ChangeRequest, EventGuard, NoteTarget, PAYLOAD_FORMAT, Payload, ResourceGuard,
    Target, WHOLE_FILE_FORMAT, Writes, note_path, read_text,
};
use crate::atomic::write_all;
use crate::caldav::CalDavSource;
use crate::error::{CalendarError, ConflictKind, Result};
use crate::spec::EventInput;
use crate::store::{CalendarInfo, Calendars, Storage};

/// The change an event went through between two fingerprints, if any.
fn conflict_kind(staged: &str, now: &str) -> Option<ConflictKind> {
    match (staged == now, staged == ABSENT, now == ABSENT) {
        (true, _, _) => None,
        (false, true, _) => Some(ConflictKind::Appeared),
        (false, false, true) => Some(ConflictKind::Removed),
        (false, false, false) => Some(ConflictKind::Changed),
    }
}

/// Reads the calendar file, refusing when an event the change touches changed since
/// staging (format 2), or when the file changed at all (format 1).
fn check_ics(
    path: &Path,
    calendar: &str,
    fingerprint: Option<&str>,
    existed: bool,
    events: &[EventGuard],
) -> Result<Option<String>> {
    let current = read_text(path)?;
    if let Some(whole) = fingerprint {
        let now = current.as_ref().map_or(ABSENT, |(_, f)| f.as_str());
        if now != whole {
            return Err(CalendarError::Conflict {
                path: path.to_path_buf(),
            });
        }
        return Ok(current.map(|(text, _)| text));
    }
    if existed && current.is_none() {
        return Err(CalendarError::Conflict {
            path: path.to_path_buf(),
        });
    }
    let text = current.map(|(text, _)| text);
    let uids: Vec<&str> = events.iter().map(|e| e.uid.as_str()).collect();
    let now = event_fingerprints(text.as_deref().unwrap_or(""), &uids);
    for (event, now) in events.iter().zip(&now) {
        if let Some(kind) = conflict_kind(&event.fingerprint, now) {
            return Err(CalendarError::EventConflict {
                title: event.title.clone(),
                event: format!("{calendar}/{}", event.uid),
                path: path.to_path_buf(),
                kind,
            });
        }
    }
    Ok(text)
}

/// Reads the notes, refusing when any changed since staging.
fn check_notes(
    folder: &Path,
    calendar: &str,
    notes: &[NoteTarget],
) -> Result<Vec<(PathBuf, Option<String>)>> {
    let mut texts = Vec::new();
    for note in notes {
        let path = note_path(folder, &note.name)?;
        let current = read_text(&path)?;
        let now = current.as_ref().map_or(ABSENT, |(_, f)| f.as_str());
        if let Some(kind) = conflict_kind(&note.fingerprint, now) {
            return Err(CalendarError::EventConflict {
                title: note.title.clone().unwrap_or_else(|| note.name.clone()),
                event: format!("{calendar}/{}", note.name),
                path,
                kind,
            });
        }
        texts.push((path, current.map(|(text, _)| text)));
    }
    Ok(texts)
}

/// The event to name when applying would write something other than what was staged.
fn first_event(target: &Target, calendar: &str) -> (String, String, PathBuf) {
    match target {
        Target::IcsFile { path, events, .. } => events.first().map_or_else(
            || (String::new(), calendar.to_owned(), path.clone()),
            |e| {
                (
                    e.title.clone(),
                    format!("{calendar}/{}", e.uid),
                    path.clone(),
                )
            },
        ),
        Target::CalDav {
            collection,
            resources,
        } => resources.first().map_or_else(
            || {
                (
                    String::new(),
                    calendar.to_owned(),
                    PathBuf::from(collection),
                )
            },
            |r| {
                (
                    r.title.clone(),
                    format!("{calendar}/{}", r.uid),
                    PathBuf::from(&r.href),
                )
            },
        ),
        Target::Notes { folder, notes } => notes.first().map_or_else(
            || (String::new(), calendar.to_owned(), folder.clone()),
            |n| {
                (
                    n.title.clone().unwrap_or_else(|| n.name.clone()),
                    format!("{calendar}/{}", n.name),
                    folder.join(&n.name),
                )
            },
        ),
    }
}

/// Checks, renders again and writes a payload; runs on a blocking thread.
fn write(info: &CalendarInfo, payload: &Payload) -> Result<()> {
    info.ensure_folder()?;
    let texts = match &payload.target {
        Target::IcsFile {
            path,
            fingerprint,
            existed,
            events,
        } => {
            let text = check_ics(path, &info.id, fingerprint.as_deref(), *existed, events)?;
            vec![(path.clone(), text)]
        }
        Target::Notes { folder, notes } => check_notes(folder, &info.id, notes)?,
        Target::CalDav { .. } => {
            return Err(CalendarError::Task(
                "a CalDAV change is applied on the server".to_owned(),
            ));
        }
    };
    let planned = plan(info, &payload.operation, &texts, payload.staged_at)?;
    if let Some(staged) = &payload.writes
        && !staged.admits(&planned.writes)
    {
        let (title, event, path) = first_event(&payload.target, &info.id);
        return Err(CalendarError::EventConflict {
            title,
            event,
            path,
            kind: ConflictKind::WouldDiffer,
        });
    }
    // All of a batch or none of it: a failure part-way leaves the files as they were.
    write_all(planned.into_changes())
}

fn parse(payload: &Value) -> Result<Payload> {
    let payload: Payload = serde_json::from_value(payload.clone())
        .map_err(|error| CalendarError::InvalidPayload(error.to_string()))?;
    let complete = match (payload.format, &payload.target, &payload.writes) {
        (WHOLE_FILE_FORMAT, Target::IcsFile { fingerprint, .. }, _) => fingerprint.is_some(),
        (WHOLE_FILE_FORMAT, Target::Notes { .. }, _) => true,
        (WHOLE_FILE_FORMAT, Target::CalDav { .. }, _) => false,
        (PAYLOAD_FORMAT, Target::CalDav { .. }, Some(_)) => true,
        (PAYLOAD_FORMAT, Target::IcsFile { fingerprint, .. }, Some(Writes { .. })) => {
            fingerprint.is_none()
        }
        (PAYLOAD_FORMAT, Target::Notes { .. }, Some(_)) => true,
        (PAYLOAD_FORMAT, _, None) => false,
        (other, _, _) => {
            return Err(CalendarError::InvalidPayload(format!(
                "payload format {other} is not {WHOLE_FILE_FORMAT} or {PAYLOAD_FORMAT}"
            )));
        }
    };
    if !complete {
        return Err(CalendarError::InvalidPayload(format!(
            "a format {} payload for {} lacks what applying checks",
            payload.format, payload.calendar
        )));
    }
    Ok(payload)
}

impl Calendars {
    /// Applies a staged payload: refuses, naming the event, when an event it touches
    /// changed since staging; otherwise writes the staged edits atomically.
    pub async fn apply(&self, payload: &Value) -> Result<AppliedChange> {
        let payload = parse(payload)?;
        let info = self.calendar(&payload.calendar)?.clone();
        if !info.writable {
            return Err(CalendarError::ReadOnly {
                id: info.id.clone(),
                reason: info.read_only_reason.clone().unwrap_or_default(),
            });
        }
        let matches = match (&payload.target, &info.storage) {
            (Target::IcsFile { path, .. }, Storage::File(configured)) => path == configured,
            (Target::Notes { folder, .. }, Storage::Folder(configured)) => folder == configured,
            (Target::CalDav { collection, .. }, Storage::CalDav(source)) => {
                *collection == source.account.url
            }
            _ => false,
        };
        if !matches {
            return Err(CalendarError::InvalidPayload(format!(
                "the payload's storage is not calendar `{}`'s ({}) any more",
                info.id, info.location
            )));
        }
        let events = payload
            .operation
            .uids()
            .iter()
            .map(|uid| format!("{}/{uid}", info.id))
            .collect();
        let _guard = self.inner.write_lock.lock().await;
        if let Storage::CalDav(source) = &info.storage {
            let result = self.apply_caldav(&info, source, &payload).await;
            self.forget(&info.id);
            result?;
            // The cache learns the server's new ETags now; if that fails, the next read
            // syncs.
            if let Err(error) = self.sync(&info.id).await {
                tracing::warn!(calendar = %info.id, %error, "sync after a CalDAV write failed");
            }
            return Ok(AppliedChange {
                summary: payload.summary,
                events,
            });
        }
        let job_info = info.clone();
        let summary = payload.summary.clone();
        let result = tokio::task::spawn_blocking(move || write(&job_info, &payload))
            .await
            .map_err(|error| CalendarError::Task(error.to_string()))?;
        self.forget(&info.id);
        result?;
        Ok(AppliedChange { summary, events })
    }

    /// Sends a CalDAV change: each resource `PUT` with `If-Match` on the ETag staged
    /// (`If-None-Match: *` to create), or `DELETE`d with `If-Match`. A 412 is a conflict:
    /// nothing is overwritten, and resources a batch created before it are removed again.
    async fn apply_caldav(
        &self,
        info: &CalendarInfo,
        source: &CalDavSource,
        payload: &Payload,
    ) -> Result<()> {
        let Target::CalDav {
            collection,
            resources,
        } = &payload.target
        else {
            return Err(CalendarError::InvalidPayload(
                "not a CalDAV change".to_owned(),
            ));
        };
        let texts: Vec<(PathBuf, Option<String>)> = resources
            .iter()
            .map(|r| (PathBuf::from(&r.href), r.text.clone()))
            .collect();
        let planned = plan(info, &payload.operation, &texts, payload.staged_at)?;
        if let Some(staged) = &payload.writes
            && !staged.admits(&planned.writes)
        {
            let (title, event, path) = first_event(&payload.target, &info.id);
            return Err(CalendarError::EventConflict {
                title,
                event,
                path,
                kind: ConflictKind::WouldDiffer,
            });
        }
        let transport = std::sync::Arc::clone(&self.inner.options.dav_transport);
        let client = DavClient::new(&*transport, &source.account, source.max_bytes).await?;
        if let Some(elsewhere) = resources.iter().find(|r| !same_origin(collection, &r.href)) {
            return Err(CalendarError::InvalidPayload(format!(
                "the resource {} is not on the calendar's server",
                elsewhere.href
            )));
        }
        // Resources this change created, to remove again if a later one fails.
        let mut created: Vec<(String, Option<String>)> = Vec::new();
        for (file, guard) in planned.files.iter().zip(resources) {
            let url = resolve(collection, &guard.href)?;
            let precondition = precondition(&client, guard)?;
            let sent = send_resource(&client, &info.id, &url, &precondition, file, guard).await;
            match sent {
                Ok(Some(resource)) => created.push(resource),
                Ok(None) => {}
                Err(failure) => return Err(undo_batch(&client, &created, failure).await),
            }
        }
        Ok(())
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

/// The condition a resource is written on: its ETag as staged, or its absence for one
/// to create.
fn precondition(client: &DavClient<'_>, guard: &ResourceGuard) -> Result<Precondition> {
    match (&guard.etag, &guard.text) {
        (Some(etag), _) => Ok(Precondition::Matches(etag.clone())),
        (None, None) => Ok(Precondition::Absent),
        (None, Some(_)) => Err(client.account().error(format!(
            "the server gave no ETag for event '{}', so Hearth cannot change it without risking another client's edit; nothing was written",
            guard.title
        )).into()),
    }
}

/// Sends one resource of a CalDAV change to `url` on `precondition`; returns the URL and
/// ETag of a resource it created.
async fn send_resource(
    client: &DavClient<'_>,
    calendar: &str,
    url: &str,
    precondition: &Precondition,
    file: &PlannedFile,
    guard: &ResourceGuard,
) -> Result<Option<(String, Option<String>)>> {
    let (method, response) = match &file.after {
        Some(after) => ("PUT", client.put(url, after.clone(), precondition).await?),
        None => ("DELETE", client.delete(url, precondition).await?),
    };
    match response.status {
        200..=299 => Ok(guard
            .text
            .is_none()
            .then(|| (url.to_owned(), response.etag))),
        412 | 404 => Err(CalendarError::ServerConflict {
            title: guard.title.clone(),
            event: format!("{calendar}/{}", guard.uid),
            written: String::new(),
        }),
        status => Err(client
            .account()
            .error(format!(
                "{method} {url} answered HTTP {status}; nothing of this change stays on the server"
            ))
            .into()),
    }
}

/// The error of a batch that failed part-way with `failure`, once the resources it
/// created are removed again (or saying which could not be).
async fn undo_batch(
    client: &DavClient<'_>,
    created: &[(String, Option<String>)],
    failure: CalendarError,
) -> CalendarError {
    match (failure, undo_created(client, created).await) {
        (failure, Ok(())) => failure,
        (CalendarError::ServerConflict { title, event, .. }, Err(left)) => {
            CalendarError::ServerConflict {
                title,
                event,
                written: format!(
                    "; {} events of this change were created and could not be removed again: {left}",
                    created.len()
                ),
            }
        }
        (failure, Err(left)) => client
            .account()
            .error(format!(
                "{failure}; {} events of this change were created and could not be removed again: {left}",
                created.len()
            ))
            .into(),
    }
}

/// Removes the resources a failed batch created.
async fn undo_created(
    client: &DavClient<'_>,
    created: &[(String, Option<String>)],
) -> std::result::Result<(), String> {
    let mut left = Vec::new();
    for (url, etag) in created {
        let precondition = match etag {
            Some(etag) => Precondition::Matches(etag.clone()),
            None => Precondition::Unconditional,
        };
        match client.delete(url, &precondition).await {
            Ok(response) if (200..300).contains(&response.status) || response.status == 404 => {}
            Ok(response) => left.push(format!("{url} (HTTP {})", response.status)),
            Err(error) => left.push(format!("{url} ({error})")),
        }
    }
    if left.is_empty() {
        Ok(())
    } else {
        Err(left.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_say_what_happened_to_the_event() {
        assert_eq!(conflict_kind("sha256:a", "sha256:a"), None);
        assert_eq!(conflict_kind(ABSENT, ABSENT), None);
        assert_eq!(
            conflict_kind(ABSENT, "sha256:a"),
            Some(ConflictKind::Appeared)
        );
        assert_eq!(
            conflict_kind("sha256:a", ABSENT),
            Some(ConflictKind::Removed)
        );
        assert_eq!(
            conflict_kind("sha256:a", "sha256:b"),
            Some(ConflictKind::Changed)
        );
    }
}
