//! Durable atomic writes.

use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// Whether a write may replace an existing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteMode {
    /// Replace the file if it exists.
    Replace,
    /// Fail with [`io::ErrorKind::AlreadyExists`] if the file exists.
    CreateNew,
}

/// The permissions the written file gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilePermissions {
    /// Readable and writable by its owner only (0600), from the moment it exists.
    Private,
    /// Those of the file it replaces; the process's default for a new file.
    KeepExisting,
}

/// The directory holding `path` (`.` for a bare name).
fn directory_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `bytes` to `path` atomically and durably: a temporary file beside it
/// (`.hearth-*.tmp`, created exclusively, with the permissions asked for), written and
/// synced, renamed over `path` (or linked into place for [`WriteMode::CreateNew`]), the
/// directory synced. A failure leaves `path` as it was and removes the temporary file.
/// The directory must exist.
pub fn write_atomic(
    path: &Path,
    bytes: &[u8],
    mode: WriteMode,
    permissions: FilePermissions,
) -> io::Result<()> {
    let temporary = synced_temporary(path, bytes, permissions)?;
    match mode {
        WriteMode::Replace => temporary.persist(path).map_err(|error| error.error)?,
        WriteMode::CreateNew => temporary
            .persist_noclobber(path)
            .map_err(|error| error.error)?,
    };
    sync_directory(&directory_of(path))
}

/// `bytes` in a temporary file beside `path` (`.hearth-*.tmp`, created exclusively, with
/// the permissions asked for), written and synced: ready to be renamed over `path` by
/// [`tempfile::NamedTempFile::persist`] (then sync the directory), or deleted when
/// dropped. [`write_atomic`] is this and the rename; a batch of writes that must all
/// land or none prepares each with this first.
pub fn synced_temporary(
    path: &Path,
    bytes: &[u8],
    permissions: FilePermissions,
) -> io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".hearth-").suffix(".tmp");
    #[cfg(unix)]
    if permissions == FilePermissions::Private {
        use std::os::unix::fs::PermissionsExt as _;
        builder.permissions(fs::Permissions::from_mode(0o600));
    }
    let mut temporary = builder.tempfile_in(directory_of(path))?;
    temporary.write_all(bytes)?;
    if permissions == FilePermissions::KeepExisting
        && let Ok(metadata) = fs::metadata(path)
    {
        temporary
            .as_file()
            .set_permissions(metadata.permissions())?;
    }
    temporary.as_file().sync_all()?;
    Ok(temporary)
}

/// Removes `path` durably (the directory synced after).
pub fn remove_durably(path: &Path) -> io::Result<()> {
    fs::remove_file(path)?;
    sync_directory(&directory_of(path))
}

/// Syncs a directory, so a rename or removal in it survives a crash. Where a platform
/// cannot open a directory for that, nothing more can be done and it is not an error.
pub fn sync_directory(directory: &Path) -> io::Result<()> {
    match File::open(directory) {
        Ok(handle) => handle.sync_all(),
        Err(error) if error.kind() == io::ErrorKind::PermissionDenied => Ok(()),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::os::unix::fs::PermissionsExt as _;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_private_file_is_private_from_the_start_and_replaced_whole() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("token");
        write_atomic(
            &path,
            b"one",
            WriteMode::CreateNew,
            FilePermissions::Private,
        )
        .unwrap();
        assert_eq!(
            (fs::read(&path).unwrap(), mode(&path)),
            (b"one".to_vec(), 0o600)
        );
        write_atomic(&path, b"two", WriteMode::Replace, FilePermissions::Private).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let error = write_atomic(
            &path,
            b"three",
            WriteMode::CreateNew,
            FilePermissions::Private,
        )
        .unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read(&path).unwrap(), b"two");
        // No temporary file is left behind.
        let names: Vec<String> = fs::read_dir(directory.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["token"]);
    }

    #[test]
    fn keeping_permissions_keeps_the_replaced_files() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("calendar.ics");
        fs::write(&path, "old").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(
            &path,
            b"new",
            WriteMode::Replace,
            FilePermissions::KeepExisting,
        )
        .unwrap();
        assert_eq!(
            (fs::read(&path).unwrap(), mode(&path)),
            (b"new".to_vec(), 0o640)
        );
        remove_durably(&path).unwrap();
        assert!(!path.exists());
        // A missing directory is an error, not created.
        let missing = directory.path().join("no/such/file");
        assert!(
            write_atomic(&missing, b"x", WriteMode::Replace, FilePermissions::Private).is_err()
        );
    }
}
