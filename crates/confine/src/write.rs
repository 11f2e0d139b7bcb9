//! Confined, atomic writes: a temporary file beside the target, written and synced,
//! renamed over the target, and the directory synced.

use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher as _, Hasher as _};
use std::io::Write as _;
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use crate::digest::{sha256_hex, sha256_hex_of};
use crate::error::{Error, FileKind, Result};
use crate::kernel::{
    BENEATH, Identity, NAME_ONLY, confirmed_canonical, io_error, kind, one_regular_file,
    open_beneath, open_error,
};
use crate::lexical::split_name;
use crate::roots::{Located, Roots};

/// Permission bits of a file Hearth creates (the umask applies).
const NEW_FILE_MODE: u32 = 0o644;
/// Permission bits of a directory Hearth creates (the umask applies).
const NEW_DIRECTORY_MODE: u32 = 0o755;
/// The permission bits an existing file keeps (set-id and sticky bits are dropped).
const KEPT_MODE_BITS: u32 = 0o777;
/// Marks Hearth's temporary files: `.<name>.hearth-tmp-<random>`.
const TEMP_MARKER: &str = ".hearth-tmp-";
/// The longest file name Linux file systems take.
const NAME_MAX: usize = 255;
/// Temporary names tried before giving up.
const TEMP_ATTEMPTS: usize = 16;

/// What a write did, for the audit log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The file written: its directory's canonical path and its name.
    pub path: PathBuf,
    /// SHA-256 (lower-case hex) of the content replaced; `None` when the file is new.
    pub before_sha256: Option<String>,
    /// SHA-256 (lower-case hex) of the content written.
    pub after_sha256: String,
    /// Whether the file did not exist before.
    pub created: bool,
}

/// The file a write replaces.
struct Existing {
    /// Its permission bits, kept by the new content.
    mode: u32,
    /// SHA-256 of its content.
    sha256: String,
}

impl Roots {
    /// Replaces or creates the regular file at `path` (absolute, inside a root) with
    /// `contents`, atomically: readers see the old content or the new, never a part,
    /// and a failed write leaves the old file and no temporary file behind.
    ///
    /// Missing parent directories are created beneath the root. Symlinks on the way
    /// that stay beneath the root are followed, but a symlink as the final component is
    /// refused, never replaced. An existing file keeps its permission bits; a new one
    /// gets 0o644 less the umask.
    ///
    /// Refuses, naming the rule: paths outside the roots or leaving them through `..`
    /// or a symlink, Hearth's denied directories, anything but a regular file, and files
    /// with more than one hard link.
    pub fn write(&self, path: &Path, contents: &[u8]) -> Result<Written> {
        let located = self.locate(path)?;
        let Some((parent_relative, name)) = split_name(&located.relative) else {
            // The root itself, or a path ending in `..`.
            return Err(Error::NotRegularFile {
                path: path.to_path_buf(),
                kind: FileKind::Directory,
            });
        };
        let parent = self.open_parent(&located, parent_relative, path)?;
        self.check_directory_not_denied(located.root, parent.as_fd(), path)?;
        let parent_identity =
            Identity::of_fd(parent.as_fd()).map_err(|errno| io_error(errno, "stat", path))?;
        let directory =
            confirmed_canonical(&located.root.canonical, parent_relative, parent_identity)
                .ok_or_else(|| Error::Changed {
                    path: path.to_path_buf(),
                })?;
        let existing = self.existing(&located, parent.as_fd(), name, path)?;

        let mode = existing
            .as_ref()
            .map_or(NEW_FILE_MODE, |existing| existing.mode);
        let (mut temp, mut file) = TempFile::create(parent.as_fd(), name, mode, path)?;
        let failed = |operation: &'static str| {
            move |source: std::io::Error| Error::Io {
                operation,
                path: path.to_path_buf(),
                source,
            }
        };
        file.write_all(contents)
            .map_err(failed("write a temporary file for"))?;
        if existing.is_some() {
            // The umask applied at creation; the old bits are kept exactly.
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))
                .map_err(|errno| io_error(errno, "set the permissions of", path))?;
        }
        file.sync_all()
            .map_err(failed("sync a temporary file for"))?;
        drop(file);
        rustix::fs::renameat(&parent, &temp.name, &parent, name)
            .map_err(|errno| io_error(errno, "rename a temporary file over", path))?;
        temp.disarm();
        if let Err(errno) = rustix::fs::fsync(&parent) {
            // The new content is in place; only its durability across a crash is in
            // doubt, so the write is reported as done.
            tracing::warn!(
                path = %path.display(),
                %errno,
                "could not sync the directory of a written file"
            );
        }
        Ok(Written {
            path: directory.join(name),
            created: existing.is_none(),
            before_sha256: existing.map(|existing| existing.sha256),
            after_sha256: sha256_hex(contents),
        })
    }

    /// Opens the directory `parent_relative` names beneath the root, creating what is
    /// missing of it one directory at a time, each inside a checked directory.
    fn open_parent(
        &self,
        located: &Located<'_>,
        parent_relative: &Path,
        path: &Path,
    ) -> Result<OwnedFd> {
        let root = located.root.directory.as_fd();
        let open = |relative: &Path| {
            open_beneath(
                root,
                relative,
                OFlags::RDONLY | OFlags::DIRECTORY,
                Mode::empty(),
                BENEATH,
            )
        };
        let opened = |relative: &Path| {
            open(relative).map_err(|errno| open_error(errno, "open the directory of", path))
        };
        match open(parent_relative) {
            Ok(directory) => return Ok(directory),
            Err(Errno::NOENT) => {}
            Err(errno) => return Err(open_error(errno, "open the directory of", path)),
        }
        let mut current = opened(Path::new(""))?;
        let mut prefix = PathBuf::new();
        for component in parent_relative.components() {
            prefix.push(component);
            match open(&prefix) {
                Ok(directory) => {
                    current = directory;
                    continue;
                }
                Err(Errno::NOENT) => {}
                Err(errno) => return Err(open_error(errno, "open the directory of", path)),
            }
            let Component::Normal(name) = component else {
                return Err(open_error(Errno::NOENT, "open the directory of", path));
            };
            self.check_directory_not_denied(located.root, current.as_fd(), path)?;
            match rustix::fs::mkdirat(&current, name, Mode::from_raw_mode(NEW_DIRECTORY_MODE)) {
                Ok(()) => {
                    tracing::debug!(
                        directory = %prefix.display(),
                        path = %path.display(),
                        "created a directory for a write"
                    );
                }
                // Created meanwhile by someone else; opened below like any directory.
                Err(Errno::EXIST) => {}
                Err(errno) => return Err(io_error(errno, "create a directory for", path)),
            }
            current = opened(&prefix)?;
        }
        Ok(current)
    }

    /// The file a write to `name` in `parent` replaces: none, or a regular file with a
    /// single link. Symlinks are not followed here.
    fn existing(
        &self,
        located: &Located<'_>,
        parent: BorrowedFd<'_>,
        name: &OsStr,
        path: &Path,
    ) -> Result<Option<Existing>> {
        let name = Path::new(name);
        let handle = match open_beneath(
            parent,
            name,
            OFlags::PATH | OFlags::NOFOLLOW,
            Mode::empty(),
            NAME_ONLY,
        ) {
            Ok(handle) => handle,
            Err(Errno::NOENT) => return Ok(None),
            Err(errno) => return Err(open_error(errno, "open", path)),
        };
        let stat = rustix::fs::fstat(&handle).map_err(|errno| io_error(errno, "stat", path))?;
        match kind(&stat) {
            FileKind::RegularFile => {}
            FileKind::Symlink => {
                return Err(Error::SymlinkTarget {
                    path: path.to_path_buf(),
                });
            }
            FileKind::Directory => {
                self.check_directory_not_denied(located.root, handle.as_fd(), path)?;
            }
            _ => {}
        }
        one_regular_file(&stat, path)?;
        let changed = || Error::Changed {
            path: path.to_path_buf(),
        };
        let opened = open_beneath(
            parent,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
            NAME_ONLY,
        )
        .map_err(|errno| match errno {
            Errno::NOENT | Errno::LOOP => changed(),
            other => open_error(other, "open", path),
        })?;
        let identity =
            Identity::of_fd(opened.as_fd()).map_err(|errno| io_error(errno, "stat", path))?;
        if identity != Identity::of(&stat) {
            return Err(changed());
        }
        let sha256 = sha256_hex_of(std::fs::File::from(opened)).map_err(|source| Error::Io {
            operation: "read",
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Some(Existing {
            mode: stat.st_mode & KEPT_MODE_BITS,
            sha256,
        }))
    }
}

/// A temporary file beside a write's target, removed unless it was renamed into place.
pub(crate) struct TempFile<'a> {
    directory: BorrowedFd<'a>,
    pub(crate) name: OsString,
    armed: bool,
}

impl<'a> TempFile<'a> {
    /// Creates a new temporary file for `target` in `directory`, with `mode`.
    pub(crate) fn create(
        directory: BorrowedFd<'a>,
        target: &OsStr,
        mode: u32,
        path: &Path,
    ) -> Result<(Self, std::fs::File)> {
        for _ in 0..TEMP_ATTEMPTS {
            let name = temp_name(target, random_suffix());
            match open_beneath(
                directory,
                Path::new(&name),
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW,
                Mode::from_raw_mode(mode),
                NAME_ONLY,
            ) {
                Ok(file) => {
                    let temp = TempFile {
                        directory,
                        name,
                        armed: true,
                    };
                    return Ok((temp, std::fs::File::from(file)));
                }
                Err(Errno::EXIST) => {}
                Err(errno) => return Err(open_error(errno, "create a temporary file for", path)),
            }
        }
        Err(io_error(
            Errno::EXIST,
            "find a free temporary file name for",
            path,
        ))
    }

    /// The file was renamed into place: nothing to remove.
    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        if let Err(errno) = rustix::fs::unlinkat(self.directory, &self.name, AtFlags::empty()) {
            tracing::warn!(
                name = %Path::new(&self.name).display(),
                %errno,
                "could not remove a temporary file after a failed write"
            );
        }
    }
}

/// `.<name>.hearth-tmp-<suffix>`, with `name` shortened so the whole fits in a file
/// name.
fn temp_name(target: &OsStr, suffix: u64) -> OsString {
    let suffix = format!("{TEMP_MARKER}{suffix:016x}");
    let room = NAME_MAX.saturating_sub(1 + suffix.len());
    let target = target.as_bytes();
    let mut name = Vec::with_capacity(NAME_MAX);
    name.push(b'.');
    name.extend_from_slice(&target[..target.len().min(room)]);
    name.extend_from_slice(suffix.as_bytes());
    OsString::from_vec(name)
}

/// A suffix no other write is likely to choose at the same time (creation is
/// exclusive, so a collision only costs another attempt).
fn random_suffix() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn temp_names_are_hidden_marked_and_fit() {
        let name = temp_name(OsStr::new("notes.md"), 0xab);
        assert_eq!(
            name,
            OsString::from(".notes.md.hearth-tmp-00000000000000ab")
        );
        let long = "x".repeat(NAME_MAX);
        let name = temp_name(OsStr::new(&long), u64::MAX);
        assert_eq!(name.len(), NAME_MAX);
        assert!(name.as_bytes().ends_with(b".hearth-tmp-ffffffffffffffff"));
    }
}
