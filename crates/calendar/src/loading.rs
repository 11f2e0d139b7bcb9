//! Reading a calendar's storage: an iCalendar file, a note folder, or a subscription's
//! bytes. Runs on a blocking thread.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use hearth_caldav::SyncCache;
use hearth_ical::{
    ABSENT, EventIndex, EventSource, LoadWarning, content_fingerprint, parse_tree, read_tree,
    write_blocker,
};

use crate::atomic::read_optional;
use crate::error::{CalendarError, Result};
use crate::notes::read_note;
use crate::store::{CalendarInfo, Content, LoadedCalendar, Stamp, Storage};

/// Notes larger than this are not read.
const MAX_NOTE_BYTES: u64 = 4 * 1024 * 1024;
/// Folders deeper than this are not searched for notes.
const MAX_DEPTH: usize = 16;

fn read_error(path: &Path) -> impl FnOnce(std::io::Error) -> CalendarError + '_ {
    move |source| CalendarError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// What the storage looks like now (cheap: metadata only).
pub(crate) fn stamp(storage: &Storage) -> Result<Stamp> {
    match storage {
        Storage::File(path) => match fs::metadata(path) {
            Ok(metadata) => Ok(Stamp::File {
                len: metadata.len(),
                modified: metadata.modified().ok(),
                inode: inode(&metadata),
            }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Stamp::Missing),
            Err(source) => Err(CalendarError::Read {
                path: path.clone(),
                source,
            }),
        },
        Storage::Folder(folder) => {
            let mut notes = Vec::new();
            let mut warnings = Vec::new();
            list_notes(folder, Path::new(""), 0, &mut notes, &mut warnings)?;
            Ok(Stamp::Folder(notes))
        }
        Storage::Subscription(_) | Storage::CalDav(_) => Ok(Stamp::Missing),
    }
}

#[cfg(unix)]
fn inode(metadata: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(metadata)
}

#[cfg(not(unix))]
fn inode(_metadata: &fs::Metadata) -> u64 {
    0
}

type NoteEntry = (PathBuf, u64, Option<std::time::SystemTime>);

/// The Markdown notes under `folder` (relative paths, sorted), skipping hidden entries
/// and symbolic links to folders.
fn list_notes(
    folder: &Path,
    relative: &Path,
    depth: usize,
    out: &mut Vec<NoteEntry>,
    warnings: &mut Vec<LoadWarning>,
) -> Result<()> {
    let here = folder.join(relative);
    let entries = match fs::read_dir(&here) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound && depth == 0 => return Ok(()),
        Err(source) => return Err(CalendarError::Read { path: here, source }),
    };
    let mut names: Vec<(PathBuf, fs::FileType)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(read_error(&here))?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let file_type = entry.file_type().map_err(read_error(&here))?;
        names.push((relative.join(name), file_type));
    }
    names.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, file_type) in names {
        let full = folder.join(&path);
        if file_type.is_dir() {
            if depth + 1 >= MAX_DEPTH {
                warnings.push(LoadWarning::new(
                    full.display().to_string(),
                    format!("folders nest deeper than {MAX_DEPTH} levels; not searched"),
                ));
            } else {
                list_notes(folder, &path, depth + 1, out, warnings)?;
            }
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md"))
        {
            // A link to a file is read; a link to a folder is not followed.
            match fs::metadata(&full) {
                Ok(metadata) if metadata.is_file() => {
                    out.push((path, metadata.len(), metadata.modified().ok()))
                }
                Ok(_) => {}
                Err(source) => warnings.push(LoadWarning::new(
                    full.display().to_string(),
                    format!("cannot read: {source}"),
                )),
            }
        }
    }
    Ok(())
}

fn too_large(what: &Path, size: u64, limit: u64) -> CalendarError {
    CalendarError::TooLarge {
        what: what.display().to_string(),
        size,
        limit,
    }
}

/// Loads a local calendar.
pub(crate) fn load_local(info: CalendarInfo, max_bytes: u64) -> Result<LoadedCalendar> {
    match info.storage.clone() {
        Storage::File(path) => load_file(info, &path, max_bytes),
        Storage::Folder(folder) => load_folder(info, &folder, max_bytes),
        Storage::Subscription(_) | Storage::CalDav(_) => Err(CalendarError::Task(
            "a subscription or CalDAV calendar is not local".to_owned(),
        )),
    }
}

/// What happens to the characters of a text that is not valid UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decoding {
    /// Loading: they are shown as `�`.
    Shown,
    /// Importing: they are copied into the calendar as `�`.
    Imported,
}

/// Text from bytes; bytes that are not UTF-8 are replaced, with a warning, and make the
/// text unsafe to write back.
pub(crate) fn decode(
    bytes: Vec<u8>,
    origin: &str,
    decoding: Decoding,
    warnings: &mut Vec<LoadWarning>,
) -> (String, Option<String>) {
    match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(error) => {
            let at = error.utf8_error().valid_up_to();
            let fate = match decoding {
                Decoding::Shown => "shown",
                Decoding::Imported => "imported",
            };
            warnings.push(LoadWarning::new(origin, format!("the file is not valid UTF-8 (first bad byte at offset {at}); unreadable characters are {fate} as �")));
            (
                String::from_utf8_lossy(error.as_bytes()).into_owned(),
                Some("the file is not valid UTF-8; Hearth does not rewrite it".to_owned()),
            )
        }
    }
}

/// Reads a file that must exist, refusing one larger than `max_bytes` (checked before
/// reading, and again while reading in case it grows).
pub(crate) fn read_limited(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let file = fs::File::open(path).map_err(read_error(path))?;
    let size = file.metadata().map_err(read_error(path))?.len();
    if size > max_bytes {
        return Err(too_large(path, size, max_bytes));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, max_bytes.saturating_add(1)),
        &mut bytes,
    )
    .map_err(read_error(path))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(path, bytes.len() as u64, max_bytes));
    }
    Ok(bytes)
}

fn load_file(info: CalendarInfo, path: &Path, max_bytes: u64) -> Result<LoadedCalendar> {
    if let Ok(metadata) = fs::metadata(path)
        && metadata.len() > max_bytes
    {
        return Err(too_large(path, metadata.len(), max_bytes));
    }
    let origin = path.display().to_string();
    let mut warnings = Vec::new();
    let Some(bytes) = read_optional(path)? else {
        let index = EventIndex::new(Vec::new(), info.zone);
        let content = Content::Ics {
            text: String::new(),
            fingerprint: ABSENT.to_owned(),
            blocker: None,
        };
        return Ok(LoadedCalendar {
            info,
            index,
            warnings,
            content,
            synced_at: None,
            offline: None,
        });
    };
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(path, bytes.len() as u64, max_bytes));
    }
    let fingerprint = content_fingerprint(&bytes);
    let (text, encoding_blocker) = decode(bytes, &origin, Decoding::Shown, &mut warnings);
    let tree = parse_tree(&text);
    let parsed = read_tree(&info.id, &origin, &text, &tree)?;
    let blocker = encoding_blocker.or_else(|| write_blocker(&tree));
    drop(tree);
    warnings.extend(parsed.warnings);
    let index = EventIndex::new(parsed.events, info.zone);
    warnings.extend(limit_warnings(&index, &origin));
    Ok(LoadedCalendar {
        info,
        index,
        warnings,
        synced_at: None,
        offline: None,
        content: Content::Ics {
            text,
            fingerprint,
            blocker,
        },
    })
}

fn load_folder(info: CalendarInfo, folder: &Path, max_bytes: u64) -> Result<LoadedCalendar> {
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    list_notes(folder, Path::new(""), 0, &mut notes, &mut warnings)?;
    let mut events = Vec::new();
    let mut fingerprints = HashMap::new();
    let mut total: u64 = 0;
    for (relative, len, _) in notes {
        let full = folder.join(&relative);
        let origin = full.display().to_string();
        if len > MAX_NOTE_BYTES {
            warnings.push(LoadWarning::new(
                origin,
                format!("the note is {len} bytes, over {MAX_NOTE_BYTES}; skipped"),
            ));
            continue;
        }
        total += len;
        if total > max_bytes {
            return Err(too_large(folder, total, max_bytes));
        }
        let bytes = match fs::read(&full) {
            Ok(bytes) => bytes,
            Err(source) => {
                warnings.push(LoadWarning::new(origin, format!("cannot read: {source}")));
                continue;
            }
        };
        let fingerprint = content_fingerprint(&bytes);
        let Ok(text) = String::from_utf8(bytes) else {
            warnings.push(LoadWarning::new(
                origin,
                "the note is not valid UTF-8; skipped",
            ));
            continue;
        };
        match read_note(&info.id, &relative, &text) {
            Ok(Some(event)) => {
                fingerprints.insert(event.uid.clone(), fingerprint);
                events.push(event);
            }
            Ok(None) => {}
            Err(message) => warnings.push(LoadWarning::new(origin, message)),
        }
    }
    let index = EventIndex::new(events, info.zone);
    warnings.extend(limit_warnings(&index, &folder.display().to_string()));
    Ok(LoadedCalendar {
        info,
        index,
        warnings,
        synced_at: None,
        offline: None,
        content: Content::Notes { fingerprints },
    })
}

/// Parses a subscription's bytes.
pub(crate) fn load_subscription(info: CalendarInfo, bytes: &[u8]) -> Result<LoadedCalendar> {
    let mut warnings = Vec::new();
    let (text, _) = decode(
        bytes.to_vec(),
        &info.location,
        Decoding::Shown,
        &mut warnings,
    );
    let tree = parse_tree(&text);
    let parsed = read_tree(&info.id, &info.location, &text, &tree)?;
    drop(tree);
    warnings.extend(parsed.warnings);
    let index = EventIndex::new(parsed.events, info.zone);
    warnings.extend(limit_warnings(&index, &info.location));
    Ok(LoadedCalendar {
        info,
        index,
        warnings,
        synced_at: None,
        offline: None,
        content: Content::Subscription { text },
    })
}

/// Indexes a CalDAV calendar's last sync: every resource's events, each resource read
/// like a small iCalendar file (its warnings name the resource).
pub(crate) fn load_caldav(
    info: CalendarInfo,
    cache: SyncCache,
    mut warnings: Vec<LoadWarning>,
) -> LoadedCalendar {
    let mut events = Vec::new();
    let mut by_uid = HashMap::new();
    for (href, resource) in &cache.resources {
        let tree = parse_tree(&resource.text);
        match read_tree(&info.id, href, &resource.text, &tree) {
            Ok(parsed) => {
                warnings.extend(parsed.warnings);
                for event in parsed.events {
                    by_uid
                        .entry(event.uid.clone())
                        .or_insert_with(|| href.clone());
                    events.push(event);
                }
            }
            Err(error) => warnings.push(LoadWarning::new(
                href.clone(),
                format!("{error}; this resource is skipped"),
            )),
        }
    }
    let index = EventIndex::new(events, info.zone);
    warnings.extend(limit_warnings(&index, &info.location));
    LoadedCalendar {
        info,
        index,
        warnings,
        synced_at: cache.synced_at,
        offline: None,
        content: Content::CalDav {
            resources: cache.resources,
            by_uid,
        },
    }
}

/// A warning for each series the index cut off at its work budget.
pub(crate) fn limit_warnings(index: &EventIndex, origin: &str) -> Vec<LoadWarning> {
    index
        .limited()
        .iter()
        .map(|limited| {
            let location = match &limited.source {
                EventSource::Ics { line } => format!("{origin}:{line}"),
                EventSource::Note { path } => Path::new(origin).join(path).display().to_string(),
            };
            LoadWarning::new(
                location,
                format!(
                    "`RRULE:{}` of event `{}` has more occurrences than Hearth works out when it reads a calendar; it is shown up to {} only. Lower its COUNT, or end it with UNTIL",
                    limited.rule,
                    limited.event.uid,
                    limited.shown_until.format("%Y-%m-%d %H:%M")
                ),
            )
        })
        .collect()
}
