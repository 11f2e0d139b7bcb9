//! Minimal, honest edits: a changed note keeps its front matter's formatting except the
//! fields that change, and the diff shown at staging is exactly what applying writes —
//! for every staging tool on both calendar kinds.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chrono_tz::Europe::Berlin;
use hearth_calendar::{Calendars, ChangeRequest, EventId, EventPatch, tool_names};
use hearth_core::ToolOutput;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::support::{context, copy_fixture, copy_notes, notes_calendar, tool};

/// A note as a phone app and a person left it: comments, quotes, a block list, an
/// `rrule` carrying its `DTSTART`, keys Hearth does not know, a body with a checklist.
const PHYSIO: &str = "---\n\
# Synced from my phone\n\
title: \"Health - Physio\"   # keep the quotes\n\
allDay: false\n\
type: rrule\n\
startDate: 2026-03-02\n\
startTime: \"09:00\"\n\
endTime: '09:45'\n\
rrule: \"DTSTART:20260302T080000Z\\nRRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=10\"\n\
skipDates:\n  - 2026-03-09\n\
tags: [health, physio]\n\
---\n\
Bring the exercise sheet.\n\
\n\
- [ ] stretch\n";

const PHYSIO_NAME: &str = "(Repeats) Physio.md";

fn notes_with_physio(dir: &Path) -> (Calendars, PathBuf) {
    let folder = copy_notes(dir);
    std::fs::write(folder.join(PHYSIO_NAME), PHYSIO).unwrap();
    (notes_calendar("notes", &folder, Berlin), folder)
}

async fn stage_and_apply(calendars: &Calendars, request: ChangeRequest) {
    let staged = calendars.stage(request).await.unwrap();
    calendars.apply(&staged.payload).await.unwrap();
}

fn update(uid: &str, patch: EventPatch) -> ChangeRequest {
    ChangeRequest::Update {
        event: EventId::new("notes", uid),
        occurrence: None,
        patch,
    }
}

#[tokio::test]
async fn a_changed_note_keeps_its_formatting_except_the_changed_fields() {
    let dir = tempfile::tempdir().unwrap();
    let (calendars, folder) = notes_with_physio(dir.path());
    let note = folder.join(PHYSIO_NAME);

    // A new title: only the title's value changes, in its quotes, before its comment.
    let retitle = EventPatch {
        title: Some("Physiotherapy".into()),
        ..EventPatch::default()
    };
    stage_and_apply(&calendars, update(PHYSIO_NAME, retitle)).await;
    let expected = PHYSIO.replace(
        "title: \"Health - Physio\"   # keep",
        "title: \"Health - Physiotherapy\"   # keep",
    );
    assert_eq!(std::fs::read_to_string(&note).unwrap(), expected);

    // An hour later: the times keep their quotes, the rule's DTSTART moves with them.
    let later = EventPatch {
        start: Some("2026-03-02T10:00".into()),
        ..EventPatch::default()
    };
    stage_and_apply(&calendars, update(PHYSIO_NAME, later)).await;
    let expected = expected
        .replace("startTime: \"09:00\"", "startTime: \"10:00\"")
        .replace("endTime: '09:45'", "endTime: '10:45'")
        .replace("DTSTART:20260302T080000Z", "DTSTART:20260302T090000Z");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), expected);

    // Skipping a date adds one item to the block list; the rule is kept as written.
    let skip = ChangeRequest::Delete {
        event: EventId::new("notes", PHYSIO_NAME),
        occurrence: Some("2026-03-16".into()),
    };
    stage_and_apply(&calendars, skip).await;
    let expected = expected.replace("  - 2026-03-09\n", "  - 2026-03-09\n  - 2026-03-16\n");
    assert_eq!(std::fs::read_to_string(&note).unwrap(), expected);

    // A note whose times are written `8:00 am` keeps writing them that way, and a note
    // without `type` or `allDay` does not gain them.
    let old = "archive/2026-03-05 Old meeting.md";
    let moved = EventPatch {
        start: Some("2026-03-05T09:00".into()),
        ..EventPatch::default()
    };
    stage_and_apply(&calendars, update(old, moved)).await;
    assert_eq!(
        std::fs::read_to_string(folder.join(old)).unwrap(),
        "---\ntitle: Work - Old meeting\ndate: 2026-03-05\nstartTime: 9:00 am\nendTime: 10:00 am\n---\n"
    );
}

/// The files of a calendar: its iCalendar file, or every file under its folder.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    if root.is_file() {
        files.insert(root.to_path_buf(), std::fs::read_to_string(root).unwrap());
        return files;
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    files
}

/// Applies the unified diffs in `diff` (the part after the human-readable fields) to
/// `files`, as `patch` would, with no fuzz: every context and removed line must match.
fn apply_unified(diff: &str, files: &mut BTreeMap<PathBuf, String>) -> usize {
    let lines: Vec<&str> = diff.split('\n').collect();
    let mut index = lines
        .iter()
        .position(|l| l.starts_with("--- "))
        .unwrap_or_else(|| panic!("no file diff in:\n{diff}"));
    let mut patched = 0;
    while index < lines.len() {
        let old = lines[index].strip_prefix("--- ").unwrap();
        let new = lines[index + 1]
            .strip_prefix("+++ ")
            .unwrap_or_else(|| panic!("no +++ after --- at line {index}:\n{diff}"));
        index += 2;
        let path = PathBuf::from(if old == "/dev/null" { new } else { old });
        let before = if old == "/dev/null" {
            assert!(!files.contains_key(&path), "{} exists", path.display());
            String::new()
        } else {
            files
                .get(&path)
                .unwrap_or_else(|| panic!("{} is not there", path.display()))
                .clone()
        };
        let source: Vec<&str> = before.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut position = 0;
        while index < lines.len() && lines[index].starts_with("@@ ") {
            // `@@ -a,b +c,d @@`: `b` lines of the old file from line `a`, `d` of the new.
            let ranges: Vec<usize> = lines[index]
                .trim_matches(['@', ' '])
                .split([' ', ',', '-', '+'])
                .filter(|part| !part.is_empty())
                .map(|part| part.parse().unwrap())
                .collect();
            let (old_start, old_count, new_count) = (ranges[0], ranges[1], ranges[3]);
            let first = if old_count == 0 {
                old_start
            } else {
                old_start - 1
            };
            while position < first {
                out.push_str(source[position]);
                position += 1;
            }
            index += 1;
            let (mut old_seen, mut new_seen) = (0, 0);
            while old_seen < old_count || new_seen < new_count {
                let marker = &lines[index][..1];
                let mut text = format!("{}\n", &lines[index][1..]);
                if lines.get(index + 1) == Some(&"\\ No newline at end of file") {
                    text.pop();
                    index += 1;
                }
                if marker != "+" {
                    assert_eq!(
                        source.get(position).copied(),
                        Some(text.as_str()),
                        "{} line {}",
                        path.display(),
                        position + 1
                    );
                    position += 1;
                    old_seen += 1;
                }
                if marker != "-" {
                    out.push_str(&text);
                    new_seen += 1;
                }
                index += 1;
            }
        }
        while position < source.len() {
            out.push_str(source[position]);
            position += 1;
        }
        if new == "/dev/null" {
            assert_eq!(out, "", "{} is removed whole", path.display());
            files.remove(&path);
        } else {
            files.insert(path, out);
        }
        patched += 1;
        while index < lines.len() && lines[index].is_empty() {
            index += 1;
        }
    }
    patched
}

/// Stages `args` with the staging tool `name`, applies the proposal, and checks that
/// the files changed exactly as the proposal's diff says.
async fn check_diff_is_the_write(calendars: &Calendars, root: &Path, name: &str, args: Value) {
    let staging = tool(calendars, name);
    let output = staging.execute(&context(), args.clone()).await.unwrap();
    let ToolOutput::Staged(draft) = output else {
        panic!("{name} {args}: {output:?}")
    };
    let before = snapshot(root);
    let mut expected = before.clone();
    let patched = apply_unified(&draft.diff, &mut expected);
    assert!(
        patched > 0,
        "{name} {args}: no file diff in\n{}",
        draft.diff
    );
    assert_eq!(snapshot(root), before, "{name} {args}: staging wrote");
    staging.apply(&draft.payload).await.unwrap();
    assert_eq!(
        snapshot(root),
        expected,
        "{name} {args}: the write differs from the diff\n{}",
        draft.diff
    );
}

fn staging_cases_for_ics() -> Vec<(&'static str, Value)> {
    let standup = "work/7kq3p0s1d2f3g4h5j6k7l8m9n0@google.com";
    vec![
        (
            tool_names::EVENT_CREATE,
            json!({"title": "Call Tokyo", "start": "2026-03-11T09:00", "time_zone": "Asia/Tokyo", "description": "Two lines,\nboth kept."}),
        ),
        (
            tool_names::EVENT_UPDATE,
            json!({"id": "work/easter-break-2026@google.com", "title": "Easter trip", "location": "Lisbon"}),
        ),
        (
            tool_names::EVENT_UPDATE,
            json!({"id": standup, "occurrence": "2026-03-09T09:30", "start": "2026-03-09T10:00"}),
        ),
        (
            tool_names::EVENT_DELETE,
            json!({"id": "work/partner-sync-0310@google.com"}),
        ),
        (
            tool_names::EVENT_DELETE,
            json!({"id": standup, "occurrence": "2026-03-10T09:30"}),
        ),
        (
            tool_names::EVENTS_CREATE_BATCH,
            json!({"events": [
                {"title": "Lecture 1", "start": "2026-04-13T10:00", "end": "2026-04-13T11:30"},
                {"title": "Lecture 2", "start": "2026-04-20", "recurrence": "FREQ=WEEKLY;COUNT=3"}
            ]}),
        ),
    ]
}

fn staging_cases_for_notes() -> Vec<(&'static str, Value)> {
    vec![
        (
            tool_names::EVENT_CREATE,
            json!({"title": "Haircut", "start": "2026-03-12T15:00", "description": "Ask for Sam."}),
        ),
        (
            tool_names::EVENT_UPDATE,
            json!({"id": format!("notes/{PHYSIO_NAME}"), "title": "Physiotherapy", "start": "2026-03-02T10:00", "location": "Clinic"}),
        ),
        (
            tool_names::EVENT_UPDATE,
            json!({"id": "notes/2026-03-03 Dentist.md", "description": "Bring the form."}),
        ),
        (
            tool_names::EVENT_DELETE,
            json!({"id": "notes/2026-03-20 Conference.md"}),
        ),
        (
            tool_names::EVENT_DELETE,
            json!({"id": "notes/(Every M,R) Gym.md", "occurrence": "2026-03-05"}),
        ),
        (
            tool_names::EVENTS_CREATE_BATCH,
            json!({"events": [
                {"title": "Lecture 1", "start": "2026-04-13T10:00", "end": "2026-04-13T11:30"},
                {"title": "Lecture 2", "start": "2026-04-20", "recurrence": "FREQ=WEEKLY;BYDAY=MO,TH"}
            ]}),
        ),
    ]
}

#[tokio::test]
async fn the_staged_diff_is_exactly_what_applying_writes_for_every_staging_tool() {
    for (name, args) in staging_cases_for_ics() {
        let dir = tempfile::tempdir().unwrap();
        let path = copy_fixture(dir.path(), "google.ics");
        let calendars = super::support::ics_calendar("work", &path, Berlin);
        check_diff_is_the_write(&calendars, &path, name, args).await;
    }
    // A calendar file that does not exist yet: the diff creates it whole.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.ics");
    let calendars = super::support::ics_calendar("work", &path, Berlin);
    let args = json!({"title": "First", "start": "2026-03-11"});
    let staging = tool(&calendars, tool_names::EVENT_CREATE);
    let ToolOutput::Staged(draft) = staging.execute(&context(), args).await.unwrap() else {
        panic!()
    };
    let mut expected = BTreeMap::new();
    apply_unified(&draft.diff, &mut expected);
    staging.apply(&draft.payload).await.unwrap();
    assert_eq!(snapshot(&path), expected);

    for (name, args) in staging_cases_for_notes() {
        let dir = tempfile::tempdir().unwrap();
        let (calendars, folder) = notes_with_physio(dir.path());
        check_diff_is_the_write(&calendars, &folder, name, args).await;
    }
}
