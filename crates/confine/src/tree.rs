//! A directory Hearth owns (its context cache), opened once, whose files are reached by
//! relative paths the kernel resolves beneath it without following any symlink.
//!
//! Where [`Roots`](crate::Roots) serves an agent's working directories, in which a
//! user's symlinks that stay inside are legitimate, a [`ConfinedDir`] holds only what
//! Hearth wrote there itself: a symlink anywhere below it was planted, and is never
//! followed. The rules, in the order they run (each refusal names its rule and the
//! path):
//!
//! 1. Rule 3 `beneath`: every path is resolved by `openat2` beneath the opened
//!    directory with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`:
//!    a `..` that leaves it is refused ([`Error::Escape`]), and so is any symlink on
//!    the way, the final component included ([`Error::ThroughSymlink`]). Directories
//!    are created one at a time, each inside a directory opened that way.
//! 2. Rule 5 `no_symlink_replaced`: a write whose final component is a symlink is
//!    refused ([`Error::SymlinkTarget`]), never replaced. A removal removes a symlink
//!    itself, never what it points to.
//! 3. Rule 6 `file_kind`: only regular files are read and written, only directories
//!    listed or entered; a file is located with `O_PATH` first, so a
//!    FIFO or device is never opened for reading ([`Error::NotRegularFile`],
//!    [`Error::NotDirectory`]).
//! 4. Rule 7 `single_link`: a file with more than one hard link is not read
//!    ([`Error::HardLinked`]): it may be the same inode as a file outside. A write
//!    never writes through one: it renames a new file over the name.
//! 5. Rule 8 `size_cap`: reads are capped ([`Error::TooLarge`]).
//!
//! The directory itself is trusted: its path is resolved once, at
//! [`ConfinedDir::open`], and may pass through symlinks (a home directory behind one).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;

use crate::error::{Error, FileKind, Result};
use crate::kernel::{BENEATH, Identity, io_error, kind, links, open_beneath, size};
use crate::lexical::split_name;
use crate::write::TempFile;

/// How every path beneath a [`ConfinedDir`] is resolved: beneath it, with no symlink at
/// all.
const NO_SYMLINKS: ResolveFlags = BENEATH.union(ResolveFlags::NO_SYMLINKS);

/// Directories nested deeper than this are not removed (the walk would not end
/// otherwise on a corrupted file system).
const MAX_DEPTH: usize = 256;

/// A directory opened once; the files beneath it are reached by relative paths resolved
/// by the kernel with no symlink followed (see the module documentation for the rules).
///
/// All operations block on file-system calls; call them from a blocking context.
#[derive(Debug)]
pub struct ConfinedDir {
    /// The directory's path, as given, for messages.
    path: PathBuf,
    /// The directory, opened with `O_PATH`.
    directory: OwnedFd,
}

/// One entry of a [`ConfinedDir::list`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's name.
    pub name: OsString,
    /// What it is (a symlink is reported as one, never followed).
    pub kind: FileKind,
    /// Its size in bytes, as `lstat` reports it.
    pub bytes: u64,
}

impl ConfinedDir {
    /// Opens the existing directory at `path` (absolute; symlinks on the way to it are
    /// followed: the directory itself is trusted).
    ///
    /// Fails when it is missing or not a directory, or when the kernel lacks `openat2`
    /// ([`Error::Unsupported`]).
    pub fn open(path: &Path) -> Result<Self> {
        let directory = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| io_error(errno, "open the directory", path))?;
        // Probe once, so that a kernel without openat2 fails here, clearly.
        open_beneath(
            directory.as_fd(),
            Path::new(""),
            OFlags::PATH,
            Mode::empty(),
            NO_SYMLINKS,
        )
        .map_err(|errno| match errno {
            Errno::NOSYS => Error::Unsupported {
                reason: "the kernel does not provide openat2".to_owned(),
            },
            other => io_error(other, "open the directory", path),
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            directory,
        })
    }

    /// Creates the directory at `path` with its missing parents (each with permission
    /// bits `mode`, less the umask), then opens it as [`ConfinedDir::open`] does.
    pub fn create(path: &Path, mode: u32) -> Result<Self> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(mode)
            .create(path)
            .map_err(|source| Error::Io {
                operation: "create the directory",
                path: path.to_path_buf(),
                source,
            })?;
        Self::open(path)
    }

    /// The directory's path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates each missing directory of `relative` (permission bits `mode`, less the
    /// umask), one at a time inside a directory opened beneath this one.
    pub fn create_directories(&self, relative: &Path, mode: u32) -> Result<()> {
        self.directories(relative, mode).map(drop)
    }

    /// Opens the regular file at `relative` for reading; `None` when it (or a directory
    /// on its way) does not exist.
    pub fn open_file(&self, relative: &Path) -> Result<Option<File>> {
        let path = self.path.join(relative);
        let handle = match self.resolve(relative, OFlags::PATH, Mode::empty()) {
            Ok(handle) => handle,
            Err(Errno::NOENT) => return Ok(None),
            Err(errno) => return Err(refusal(errno, "open", &path)),
        };
        let stat = rustix::fs::fstat(&handle).map_err(|errno| io_error(errno, "stat", &path))?;
        regular_file(&stat, &path)?;
        if links(&stat) > 1 {
            return Err(Error::HardLinked {
                path,
                links: links(&stat),
            });
        }
        // The same resolution again, now for reading; it must reach the same file.
        let opened = self
            .resolve(
                relative,
                OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
                Mode::empty(),
            )
            .map_err(|errno| match errno {
                Errno::NOENT => Error::Changed { path: path.clone() },
                other => refusal(other, "open", &path),
            })?;
        let identity =
            Identity::of_fd(opened.as_fd()).map_err(|errno| io_error(errno, "stat", &path))?;
        if identity != Identity::of(&stat) {
            return Err(Error::Changed { path });
        }
        Ok(Some(File::from(opened)))
    }

    /// Reads the regular file at `relative`, at most `max_bytes` of it
    /// ([`Error::TooLarge`] past that); `None` when it does not exist.
    pub fn read(&self, relative: &Path, max_bytes: u64) -> Result<Option<Vec<u8>>> {
        let Some(file) = self.open_file(relative)? else {
            return Ok(None);
        };
        let path = self.path.join(relative);
        let too_large = |size: u64| Error::TooLarge {
            path: path.clone(),
            size,
            limit: max_bytes,
        };
        let length = file
            .metadata()
            .map_err(|source| io(source, "stat", &path))?
            .len();
        if length > max_bytes {
            return Err(too_large(length));
        }
        let mut contents = Vec::with_capacity(usize::try_from(length).unwrap_or(0));
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut contents)
            .map_err(|source| io(source, "read", &path))?;
        let read = u64::try_from(contents.len()).unwrap_or(u64::MAX);
        if read > max_bytes {
            // The file grew after it was measured.
            return Err(too_large(read));
        }
        Ok(Some(contents))
    }

    /// Replaces or creates the regular file at `relative` with `contents`, atomically:
    /// a temporary file beside it (created exclusively with permission bits `mode`, less
    /// the umask), written, synced, renamed over the name, and the directory synced.
    /// The directory holding it must exist. A symlink or directory at the name is
    /// refused, never replaced.
    pub fn write(&self, relative: &Path, contents: &[u8], mode: u32) -> Result<()> {
        let path = self.path.join(relative);
        let (parent, name) = self.parent_of(relative, &path)?;
        match entry_kind(parent.as_fd(), name, &path)? {
            None | Some(FileKind::RegularFile) => {}
            Some(FileKind::Symlink) => return Err(Error::SymlinkTarget { path }),
            Some(other) => return Err(Error::NotRegularFile { path, kind: other }),
        }
        let (mut temp, mut file) = TempFile::create(parent.as_fd(), name, mode, &path)?;
        file.write_all(contents)
            .map_err(|source| io(source, "write a temporary file for", &path))?;
        file.sync_all()
            .map_err(|source| io(source, "sync a temporary file for", &path))?;
        drop(file);
        rustix::fs::renameat(&parent, &temp.name, &parent, name)
            .map_err(|errno| io_error(errno, "rename a temporary file over", &path))?;
        temp.disarm();
        if let Err(errno) = rustix::fs::fsync(&parent) {
            // The new content is in place; only its durability across a crash is in
            // doubt, so the write is reported as done.
            tracing::debug!(path = %path.display(), %errno, "could not sync the directory of a written file");
        }
        Ok(())
    }

    /// Opens the regular file at `relative` for reading and writing, creating it empty
    /// (permission bits `mode`, less the umask) when it does not exist; never truncates.
    /// The directory holding it must exist. For lock files.
    pub fn open_or_create(&self, relative: &Path, mode: u32) -> Result<File> {
        let path = self.path.join(relative);
        let opened = self
            .resolve(
                relative,
                OFlags::RDWR | OFlags::CREATE | OFlags::NONBLOCK | OFlags::NOCTTY,
                Mode::from_raw_mode(mode),
            )
            .map_err(|errno| match errno {
                // A directory at the name.
                Errno::ISDIR => Error::NotRegularFile {
                    path: path.clone(),
                    kind: FileKind::Directory,
                },
                other => refusal(other, "open", &path),
            })?;
        let stat = rustix::fs::fstat(&opened).map_err(|errno| io_error(errno, "stat", &path))?;
        regular_file(&stat, &path)?;
        Ok(File::from(opened))
    }

    /// Whether `relative` names `file` now (the same device and inode); `false` when it
    /// names nothing or another file. For a lock file, whose name may have been removed
    /// or replaced after it was opened.
    pub fn still_names(&self, relative: &Path, file: &File) -> Result<bool> {
        let path = self.path.join(relative);
        let handle = match self.resolve(relative, OFlags::PATH, Mode::empty()) {
            Ok(handle) => handle,
            Err(Errno::NOENT) => return Ok(false),
            Err(errno) => return Err(refusal(errno, "open", &path)),
        };
        let named =
            Identity::of_fd(handle.as_fd()).map_err(|errno| io_error(errno, "stat", &path))?;
        let held = Identity::of_fd(file.as_fd()).map_err(|errno| io_error(errno, "stat", &path))?;
        Ok(named == held)
    }

    /// Removes the regular file (or the symlink itself) at `relative`; `false` when there
    /// was none. A directory is refused: [`ConfinedDir::remove_tree`] removes those.
    pub fn remove_file(&self, relative: &Path) -> Result<bool> {
        let path = self.path.join(relative);
        let (parent, name) = match self.parent_of(relative, &path) {
            Ok(found) => found,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(false);
            }
            Err(error) => return Err(error),
        };
        match entry_kind(parent.as_fd(), name, &path)? {
            None => return Ok(false),
            Some(FileKind::Directory) => {
                return Err(Error::NotRegularFile {
                    path,
                    kind: FileKind::Directory,
                });
            }
            Some(_) => {}
        }
        match rustix::fs::unlinkat(&parent, name, AtFlags::empty()) {
            Ok(()) => Ok(true),
            // Removed meanwhile by someone else.
            Err(Errno::NOENT) => Ok(false),
            Err(errno) => Err(io_error(errno, "remove", &path)),
        }
    }

    /// The entries of the directory `relative` (empty for this directory itself), by
    /// name; `None` when it does not exist. Entries are reported as they are: a
    /// symlink is a symlink.
    pub fn list(&self, relative: &Path) -> Result<Option<Vec<DirEntry>>> {
        let path = self.path.join(relative);
        let directory =
            match self.resolve(relative, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()) {
                Ok(directory) => directory,
                Err(Errno::NOENT) => return Ok(None),
                Err(Errno::NOTDIR) => {
                    return Err(not_a_directory(self.directory.as_fd(), relative, &path));
                }
                Err(errno) => return Err(refusal(errno, "open", &path)),
            };
        let mut entries = Vec::new();
        for (name, stat) in entries_of(directory, &path)? {
            entries.push(DirEntry {
                name,
                kind: kind(&stat),
                bytes: size(&stat),
            });
        }
        entries.sort_by(|left, right| left.name.cmp(&right.name));
        Ok(Some(entries))
    }

    /// Removes what `relative` names and, for a directory, everything in it; a symlink
    /// is removed, never followed. `false` when there was nothing. Never touches anything
    /// outside this directory.
    pub fn remove_tree(&self, relative: &Path) -> Result<bool> {
        let path = self.path.join(relative);
        let (parent, name) = match self.parent_of(relative, &path) {
            Ok(found) => found,
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(false);
            }
            Err(error) => return Err(error),
        };
        let flags = match entry_kind(parent.as_fd(), name, &path)? {
            None => return Ok(false),
            Some(FileKind::Directory) => {
                empty_directory(parent.as_fd(), name, &path, 0)?;
                AtFlags::REMOVEDIR
            }
            Some(_) => AtFlags::empty(),
        };
        match rustix::fs::unlinkat(&parent, name, flags) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(errno) => Err(io_error(errno, "remove", &path)),
        }
    }

    /// Resolves `relative` beneath this directory, with no symlink followed.
    fn resolve(&self, relative: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
        open_beneath(self.directory.as_fd(), relative, flags, mode, NO_SYMLINKS)
    }

    /// The directory holding `relative` (opened for reading, so it can be synced) and
    /// its final name. A missing directory is an [`Error::Io`] of kind `NotFound`.
    fn parent_of<'a>(&self, relative: &'a Path, path: &Path) -> Result<(OwnedFd, &'a OsStr)> {
        let Some((parent, name)) = split_name(relative) else {
            // This directory itself, or a path ending in `..`.
            return Err(Error::NotRegularFile {
                path: path.to_path_buf(),
                kind: FileKind::Directory,
            });
        };
        let directory = self
            .resolve(parent, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
            .map_err(|errno| refusal(errno, "open the directory of", path))?;
        Ok((directory, name))
    }

    /// Opens (creating what is missing) each directory of `relative` in turn; returns
    /// the last.
    fn directories(&self, relative: &Path, mode: u32) -> Result<OwnedFd> {
        let open = |directory: BorrowedFd<'_>, name: &Path| {
            open_beneath(
                directory,
                name,
                OFlags::RDONLY | OFlags::DIRECTORY,
                Mode::empty(),
                NO_SYMLINKS,
            )
        };
        let mut current = open(self.directory.as_fd(), Path::new(""))
            .map_err(|errno| refusal(errno, "open", &self.path))?;
        let mut prefix = self.path.clone();
        for component in relative.components() {
            let name = Path::new(component.as_os_str());
            prefix.push(name);
            let opened = match open(current.as_fd(), name) {
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(&current, name, Mode::from_raw_mode(mode)) {
                        // Created meanwhile by someone else: opened like any directory.
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(errno) => return Err(io_error(errno, "create the directory", &prefix)),
                    }
                    open(current.as_fd(), name)
                }
                other => other,
            };
            current = opened.map_err(|errno| match errno {
                Errno::NOTDIR => not_a_directory(current.as_fd(), name, &prefix),
                other => refusal(other, "open", &prefix),
            })?;
        }
        Ok(current)
    }
}

/// The error for a resolution the kernel refused: with no symlink allowed, `ELOOP`
/// means a symlink was met.
fn refusal(errno: Errno, operation: &'static str, path: &Path) -> Error {
    let path = path.to_path_buf();
    match errno {
        Errno::LOOP => Error::ThroughSymlink { path },
        Errno::XDEV => Error::Escape { path },
        Errno::NOSYS => Error::Unsupported {
            reason: "the kernel does not provide openat2".to_owned(),
        },
        other => Error::Io {
            operation,
            path,
            source: std::io::Error::from(other),
        },
    }
}

/// `relative` beneath `directory` is not a directory: say what it is, when that can be
/// found without following anything.
fn not_a_directory(directory: BorrowedFd<'_>, relative: &Path, path: &Path) -> Error {
    let found = rustix::fs::statat(directory, relative, AtFlags::SYMLINK_NOFOLLOW)
        .map(|stat| kind(&stat))
        .unwrap_or(FileKind::Unknown);
    Error::NotDirectory {
        path: path.to_path_buf(),
        kind: found,
    }
}

/// Rule 3 for a file.
fn regular_file(stat: &Stat, path: &Path) -> Result<()> {
    match kind(stat) {
        FileKind::RegularFile => Ok(()),
        other => Err(Error::NotRegularFile {
            path: path.to_path_buf(),
            kind: other,
        }),
    }
}

/// What the entry `name` of `directory` is, not following a symlink; `None` when there
/// is none.
fn entry_kind(directory: BorrowedFd<'_>, name: &OsStr, path: &Path) -> Result<Option<FileKind>> {
    match rustix::fs::statat(directory, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Ok(Some(kind(&stat))),
        Err(Errno::NOENT) => Ok(None),
        Err(errno) => Err(io_error(errno, "stat", path)),
    }
}

/// The names (without `.` and `..`) of the directory opened as `directory`, each with
/// its `lstat`; an entry removed while listing is left out.
fn entries_of(directory: OwnedFd, path: &Path) -> Result<Vec<(OsString, Stat)>> {
    let mut reader =
        rustix::fs::Dir::new(directory).map_err(|errno| io_error(errno, "list", path))?;
    let mut names = Vec::new();
    while let Some(entry) = reader.read() {
        let entry = entry.map_err(|errno| io_error(errno, "list", path))?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        names.push(OsStr::from_bytes(name).to_os_string());
    }
    let listed = reader.fd().map_err(|errno| io_error(errno, "list", path))?;
    let mut entries = Vec::with_capacity(names.len());
    for name in names {
        match rustix::fs::statat(listed, &name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => entries.push((name, stat)),
            Err(Errno::NOENT) => {}
            Err(errno) => return Err(io_error(errno, "stat", &path.join(&name))),
        }
    }
    Ok(entries)
}

/// Removes everything inside the directory `name` of `parent` (itself stays), entering
/// subdirectories only by name with no symlink followed.
fn empty_directory(parent: BorrowedFd<'_>, name: &OsStr, path: &Path, depth: usize) -> Result<()> {
    if depth >= MAX_DEPTH {
        return Err(io_error(Errno::NAMETOOLONG, "remove", path));
    }
    let directory = open_beneath(
        parent,
        Path::new(name),
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
        NO_SYMLINKS,
    )
    .map_err(|errno| refusal(errno, "open", path))?;
    let held = rustix::io::dup(&directory).map_err(|errno| io_error(errno, "open", path))?;
    for (entry, stat) in entries_of(directory, path)? {
        let inner = path.join(&entry);
        let flags = if kind(&stat) == FileKind::Directory {
            empty_directory(held.as_fd(), &entry, &inner, depth + 1)?;
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        };
        match rustix::fs::unlinkat(&held, &entry, flags) {
            Ok(()) | Err(Errno::NOENT) => {}
            Err(errno) => return Err(io_error(errno, "remove", &inner)),
        }
    }
    Ok(())
}

/// A failed I/O `operation` on `path`.
fn io(source: std::io::Error, operation: &'static str, path: &Path) -> Error {
    Error::Io {
        operation,
        path: path.to_path_buf(),
        source,
    }
}
