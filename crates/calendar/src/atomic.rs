//! Durable file writes: a temporary file in the target's folder, written and synced,
//! renamed over the target, and the folder synced, so a crash leaves either the old
//! file or the new one, never a mix.

use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::error::{CalendarError, Result};

/// Whether a write may replace an existing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteMode {
    /// Replace the file if it exists (keeping its permissions).
    Replace,
    /// Fail if the file exists.
    CreateNew,
}

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

/// Writes `bytes` to `path` atomically and durably.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], mode: WriteMode) -> Result<()> {
    let folder = folder_of(path);
    let mut temporary = tempfile::Builder::new()
        .prefix(".hearth-")
        .suffix(".tmp")
        .tempfile_in(&folder)
        .map_err(write_error(path))?;
    temporary.write_all(bytes).map_err(write_error(path))?;
    if let Ok(metadata) = fs::metadata(path) {
        temporary
            .as_file()
            .set_permissions(metadata.permissions())
            .map_err(write_error(path))?;
    }
    // `persist` does not sync: the data first, then (after the rename) the folder.
    temporary.as_file().sync_all().map_err(write_error(path))?;
    match mode {
        WriteMode::Replace => temporary
            .persist(path)
            .map_err(|error| write_error(path)(error.error))?,
        WriteMode::CreateNew => temporary.persist_noclobber(path).map_err(|error| {
            if error.error.kind() == io::ErrorKind::AlreadyExists {
                CalendarError::Conflict {
                    path: path.to_path_buf(),
                }
            } else {
                write_error(path)(error.error)
            }
        })?,
    };
    sync_folder(&folder).map_err(write_error(path))
}

/// Removes a file durably.
pub(crate) fn remove_durably(path: &Path) -> Result<()> {
    fs::remove_file(path).map_err(write_error(path))?;
    sync_folder(&folder_of(path)).map_err(write_error(path))
}

fn sync_folder(folder: &Path) -> io::Result<()> {
    // Folders cannot be opened for syncing on every platform; where they can, do it.
    #[cfg(unix)]
    {
        File::open(folder)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _unused = folder;
        Ok(())
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
