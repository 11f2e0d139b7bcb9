//! Durable file writes: a temporary file in the target's folder, written and synced,
//! renamed over the target, and the folder synced, so a crash leaves either the old
//! file or the new one, never a mix. Batches of writes ([`write_all`]) are all or
//! nothing: a failure part-way undoes the writes already made. Writes never create
//! folders: a file goes into a folder that exists, or the write fails.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{CalendarError, Result};

pub(crate) use hearth_fs::WriteMode;
use hearth_fs::{FilePermissions, sync_directory as sync_folder};

fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn write_error(path: &Path) -> impl FnOnce(io::Error) -> CalendarError + '_ {
    move |source| CalendarError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// `bytes` in a synced temporary file beside `path`, with `path`'s permissions when it
/// exists (a calendar the user made keeps the permissions they gave it).
fn synced_temporary(path: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile> {
    hearth_fs::synced_temporary(path, bytes, FilePermissions::KeepExisting)
        .map_err(write_error(path))
}

/// Writes `bytes` to `path` atomically and durably; a [`WriteMode::CreateNew`] write
/// over an existing file is a conflict.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], mode: WriteMode) -> Result<()> {
    hearth_fs::write_atomic(path, bytes, mode, FilePermissions::KeepExisting).map_err(|error| {
        if mode == WriteMode::CreateNew && error.kind() == io::ErrorKind::AlreadyExists {
            CalendarError::Conflict {
                path: path.to_path_buf(),
            }
        } else {
            write_error(path)(error)
        }
    })
}

/// Removes a file durably.
pub(crate) fn remove_durably(path: &Path) -> Result<()> {
    hearth_fs::remove_durably(path).map_err(write_error(path))
}

/// One file operation of a batch ([`write_all`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FileChange {
    /// Write `bytes` to `path`.
    Put {
        path: PathBuf,
        bytes: Vec<u8>,
        mode: WriteMode,
    },
    /// Remove `path`.
    Remove { path: PathBuf },
}

impl FileChange {
    fn path(&self) -> &Path {
        match self {
            Self::Put { path, .. } | Self::Remove { path } => path,
        }
    }
}

/// What a committed step of a batch did, so it can be undone.
enum Undo {
    /// The file did not exist before: remove it.
    Created(PathBuf),
    /// The file was moved or linked aside to `backup`: move it back.
    Replaced { path: PathBuf, backup: PathBuf },
}

/// A free name next to `path` for keeping its current content aside.
fn backup_path(path: &Path) -> PathBuf {
    folder_of(path).join(format!(".hearth-{}.bak", uuid::Uuid::now_v7().simple()))
}

/// Keeps `path`'s current content at a new backup name (a hard link, or a copy where
/// the file system has none) and returns that name.
fn keep_aside(path: &Path) -> io::Result<PathBuf> {
    let backup = backup_path(path);
    match fs::hard_link(path, &backup) {
        Ok(()) => Ok(backup),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Err(error),
        Err(_) => {
            fs::copy(path, &backup)?;
            File::open(&backup)?.sync_all()?;
            Ok(backup)
        }
    }
}

/// Applies every change of a batch or none of them. First each new content is written
/// and synced to a temporary file in its target's folder; only when all are ready are
/// they renamed into place (replaced files kept aside under a backup name). When any
/// step fails, what was already renamed is undone — created files removed, replaced
/// and removed files moved back — and the temporary files
/// are deleted, so the folder is as it was. A crash part-way can still leave part of
/// a batch (plus `.hearth-*` files, which the note reader skips); every single file is
/// always whole.
pub(crate) fn write_all(changes: Vec<FileChange>) -> Result<()> {
    // One change is atomic on its own.
    if let [change] = changes.as_slice() {
        return match change {
            FileChange::Put { path, bytes, mode } => write_atomic(path, bytes, *mode),
            FileChange::Remove { path } => remove_durably(path),
        };
    }
    let mut prepared = Vec::with_capacity(changes.len());
    for change in &changes {
        // A failure drops the temporary files prepared so far, which deletes them.
        prepared.push(prepare(change)?);
    }
    let mut undo: Vec<Undo> = Vec::new();
    let mut folders: Vec<PathBuf> = Vec::new();
    let mut outcome = Ok(());
    for (change, temporary) in changes.iter().zip(prepared) {
        let folder = folder_of(change.path());
        if !folders.contains(&folder) {
            folders.push(folder);
        }
        if let Err(error) = commit(change, temporary, &mut undo) {
            outcome = Err(error);
            break;
        }
    }
    if outcome.is_ok() {
        outcome = folders
            .iter()
            .try_for_each(|folder| sync_folder(folder).map_err(write_error(folder)));
    }
    if let Err(error) = outcome {
        return Err(roll_back(error, undo, &folders));
    }
    for step in undo {
        if let Undo::Replaced { backup, .. } = step
            && let Err(error) = fs::remove_file(&backup)
        {
            tracing::warn!(
                "the batch was written, but its backup {} could not be removed: {error}",
                backup.display()
            );
        }
    }
    for folder in &folders {
        if let Err(error) = sync_folder(folder) {
            tracing::warn!("cannot sync folder {}: {error}", folder.display());
        }
    }
    Ok(())
}

/// Writes a `Put`'s content to a synced temporary file beside its target.
fn prepare(change: &FileChange) -> Result<Option<tempfile::NamedTempFile>> {
    let FileChange::Put { path, bytes, .. } = change else {
        return Ok(None);
    };
    synced_temporary(path, bytes).map(Some)
}

/// Puts one prepared change in place, recording how to undo it.
fn commit(
    change: &FileChange,
    temporary: Option<tempfile::NamedTempFile>,
    undo: &mut Vec<Undo>,
) -> Result<()> {
    match (change, temporary) {
        (FileChange::Remove { path }, _) => {
            let backup = backup_path(path);
            fs::rename(path, &backup).map_err(write_error(path))?;
            undo.push(Undo::Replaced {
                path: path.clone(),
                backup,
            });
        }
        (FileChange::Put { path, mode, .. }, Some(temporary)) => match mode {
            WriteMode::CreateNew => {
                temporary.persist_noclobber(path).map_err(|error| {
                    if error.error.kind() == io::ErrorKind::AlreadyExists {
                        CalendarError::Conflict { path: path.clone() }
                    } else {
                        write_error(path)(error.error)
                    }
                })?;
                undo.push(Undo::Created(path.clone()));
            }
            WriteMode::Replace => {
                let backup = match keep_aside(path) {
                    Ok(backup) => Some(backup),
                    Err(error) if error.kind() == io::ErrorKind::NotFound => None,
                    Err(error) => return Err(write_error(path)(error)),
                };
                if let Err(error) = temporary.persist(path) {
                    if let Some(backup) = &backup
                        && let Err(error) = fs::remove_file(backup)
                    {
                        tracing::warn!("cannot remove backup {}: {error}", backup.display());
                    }
                    return Err(write_error(path)(error.error));
                }
                undo.push(match backup {
                    Some(backup) => Undo::Replaced {
                        path: path.clone(),
                        backup,
                    },
                    None => Undo::Created(path.clone()),
                });
            }
        },
        (FileChange::Put { path, .. }, None) => {
            return Err(CalendarError::Task(format!(
                "no prepared content for {}",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Undoes the committed steps of a failed batch, newest first.
fn roll_back(error: CalendarError, undo: Vec<Undo>, folders: &[PathBuf]) -> CalendarError {
    let mut problems = Vec::new();
    for step in undo.into_iter().rev() {
        let result = match &step {
            Undo::Created(path) => fs::remove_file(path).map_err(|e| (path, e)),
            Undo::Replaced { path, backup } => fs::rename(backup, path).map_err(|e| (path, e)),
        };
        if let Err((path, cause)) = result {
            problems.push(format!("{}: {cause}", path.display()));
        }
    }
    for folder in folders {
        if let Err(cause) = sync_folder(folder) {
            tracing::warn!("cannot sync folder {}: {cause}", folder.display());
        }
    }
    if problems.is_empty() {
        error
    } else {
        CalendarError::PartlyWritten {
            error: Box::new(error),
            problems,
        }
    }
}

/// Reads a file; `None` when it does not exist.
pub(crate) fn read_optional(path: &Path) -> Result<Option<Vec<u8>>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(CalendarError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn replaces_and_creates_without_leaving_temporary_files() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("a.ics");
        write_atomic(&path, b"one", WriteMode::CreateNew).unwrap();
        write_atomic(&path, b"two", WriteMode::Replace).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let error = write_atomic(&path, b"three", WriteMode::CreateNew).unwrap_err();
        assert!(matches!(error, CalendarError::Conflict { .. }), "{error}");
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(folder.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.ics")]);
        remove_durably(&path).unwrap();
        assert_eq!(read_optional(&path).unwrap(), None);
    }

    fn names(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_batch_that_fails_part_way_leaves_the_folder_as_it_was() {
        let folder = tempfile::tempdir().unwrap();
        let path = |name: &str| folder.path().join(name);
        fs::write(path("kept.md"), b"old").unwrap();
        fs::write(path("removed.md"), b"gone?").unwrap();
        fs::write(path("taken.md"), b"someone else's").unwrap();
        let put = |name: &str, bytes: &[u8], mode| FileChange::Put {
            path: path(name),
            bytes: bytes.to_vec(),
            mode,
        };
        let batch = vec![
            put("new.md", b"new", WriteMode::CreateNew),
            put("kept.md", b"changed", WriteMode::Replace),
            FileChange::Remove {
                path: path("removed.md"),
            },
            // Fails: the name was taken after the batch was planned.
            put("taken.md", b"mine", WriteMode::CreateNew),
        ];
        let error = write_all(batch).unwrap_err();
        assert!(matches!(error, CalendarError::Conflict { .. }), "{error}");
        assert_eq!(names(folder.path()), ["kept.md", "removed.md", "taken.md"]);
        assert_eq!(fs::read(path("kept.md")).unwrap(), b"old");
        assert_eq!(fs::read(path("removed.md")).unwrap(), b"gone?");
        assert_eq!(fs::read(path("taken.md")).unwrap(), b"someone else's");
    }

    #[test]
    fn writes_never_create_folders() {
        let folder = tempfile::tempdir().unwrap();
        let missing = folder.path().join("missing/deeper");
        let put = |name: &str| FileChange::Put {
            path: missing.join(name),
            bytes: b"x".to_vec(),
            mode: WriteMode::CreateNew,
        };
        let error = write_all(vec![put("a.md")]).unwrap_err();
        assert!(matches!(error, CalendarError::Write { .. }), "{error}");
        fs::write(folder.path().join("kept.md"), b"old").unwrap();
        let error = write_all(vec![
            FileChange::Put {
                path: folder.path().join("kept.md"),
                bytes: b"new".to_vec(),
                mode: WriteMode::Replace,
            },
            put("b.md"),
        ])
        .unwrap_err();
        assert!(matches!(error, CalendarError::Write { .. }), "{error}");
        assert!(!folder.path().join("missing").exists());
        assert_eq!(names(folder.path()), ["kept.md"]);
        assert_eq!(fs::read(folder.path().join("kept.md")).unwrap(), b"old");
    }

    #[test]
    fn a_batch_that_succeeds_writes_everything_and_leaves_no_backups() {
        let folder = tempfile::tempdir().unwrap();
        let path = |name: &str| folder.path().join(name);
        fs::write(path("kept.md"), b"old").unwrap();
        fs::write(path("removed.md"), b"gone").unwrap();
        write_all(vec![
            FileChange::Put {
                path: path("new.md"),
                bytes: b"new".to_vec(),
                mode: WriteMode::CreateNew,
            },
            FileChange::Put {
                path: path("kept.md"),
                bytes: b"changed".to_vec(),
                mode: WriteMode::Replace,
            },
            FileChange::Remove {
                path: path("removed.md"),
            },
        ])
        .unwrap();
        assert_eq!(names(folder.path()), ["kept.md", "new.md"]);
        assert_eq!(fs::read(path("kept.md")).unwrap(), b"changed");
        assert_eq!(fs::read(path("new.md")).unwrap(), b"new");
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_permissions_of_the_replaced_file() {
        use std::os::unix::fs::PermissionsExt;
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("a.ics");
        fs::write(&path, b"one").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&path, b"two", WriteMode::Replace).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o640
        );
    }
}
