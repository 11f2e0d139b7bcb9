//! The cache's root-confined file system, on [`hearth_confine::ConfinedDir`].
//!
//! Every path Hearth uses inside the cache is relative to the root and checked, in this
//! order:
//!
//! 1. [`Confinement::NotEmpty`], [`Confinement::Relative`], [`Confinement::NoParent`]:
//!    the path is lexically a plain relative path (only normal components), checked
//!    here on its text before anything is opened.
//! 2. [`Confinement::NoSymlink`]: no component below the root is a symbolic link. The
//!    kernel enforces it: every path is resolved beneath the opened root with `openat2`
//!    and no symlink followed, so a link planted at a snapshot, marker or lock path, or
//!    in place of one of the cache's folders, is refused, never followed — also when it
//!    appears between a check and a use. Writes go to a fresh temporary file (created
//!    exclusively) renamed over the target; a link at the target refuses the write.
//! 3. [`Confinement::SingleLink`]: a file with more than one hard link is not read.
//!
//! The root itself is trusted (it may legitimately sit behind a symlinked home). Every
//! directory is created 0700 and every file 0600. Temporary files start with a dot
//! and listings skip dot files.

use std::fs::{File, Metadata};
use std::path::{Component, Path, PathBuf};

use hearth_confine::{ConfinedDir, FileKind};

use super::error::{Confinement, ContextError, Result};

/// Permission bits of the cache's directories.
const DIRECTORY_MODE: u32 = 0o700;
/// Permission bits of the cache's files.
const FILE_MODE: u32 = 0o600;

/// File system access confined to one root directory.
#[derive(Clone, Debug)]
pub(crate) struct CacheFs {
    root: PathBuf,
}

impl CacheFs {
    pub(crate) fn new(root: PathBuf) -> Self {
        Self { root }
    }

    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Rule 1: the absolute path of a plain relative path inside the root.
    pub(crate) fn resolve(&self, relative: &Path) -> Result<PathBuf> {
        let refuse = |rule| ContextError::Confined {
            path: relative.to_path_buf(),
            rule,
        };
        if relative.as_os_str().is_empty() {
            return Err(refuse(Confinement::NotEmpty));
        }
        for component in relative.components() {
            match component {
                Component::Normal(_) => {}
                Component::Prefix(_) | Component::RootDir => {
                    return Err(refuse(Confinement::Relative));
                }
                Component::CurDir | Component::ParentDir => {
                    return Err(refuse(Confinement::NoParent));
                }
            }
        }
        Ok(self.root.join(relative))
    }

    /// The root, opened; `None` when it does not exist yet.
    fn existing_root(&self) -> Result<Option<ConfinedDir>> {
        match ConfinedDir::open(&self.root) {
            Ok(root) => Ok(Some(root)),
            Err(hearth_confine::Error::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                Ok(None)
            }
            Err(error) => Err(from_confine(error)),
        }
    }

    /// The root, created (with missing parents, 0700) when missing, and opened.
    fn created_root(&self) -> Result<ConfinedDir> {
        ConfinedDir::create(&self.root, DIRECTORY_MODE).map_err(from_confine)
    }

    /// Opens the regular file at `relative` for reading, `None` if it does not exist.
    pub(crate) fn open(&self, relative: &Path) -> Result<Option<(File, Metadata)>> {
        let path = self.resolve(relative)?;
        let Some(root) = self.existing_root()? else {
            return Ok(None);
        };
        let Some(file) = root.open_file(relative).map_err(from_confine)? else {
            return Ok(None);
        };
        let metadata = file
            .metadata()
            .map_err(ContextError::io("inspect", &path))?;
        Ok(Some((file, metadata)))
    }

    /// Reads the whole regular file at `relative`, `None` if it does not exist.
    pub(crate) fn read(&self, relative: &Path) -> Result<Option<Vec<u8>>> {
        self.resolve(relative)?;
        let Some(root) = self.existing_root()? else {
            return Ok(None);
        };
        root.read(relative, u64::MAX).map_err(from_confine)
    }

    /// Writes `contents` to `relative` atomically: a temporary file beside it (0600,
    /// created exclusively), synced, renamed over the target, the directory synced.
    /// Refuses a target that is a link or a directory. Returns the bytes written.
    pub(crate) fn write(&self, relative: &Path, contents: &[u8]) -> Result<u64> {
        self.resolve(relative)?;
        let root = self.created_root()?;
        if let Some(parent) = non_empty_parent(relative) {
            root.create_directories(parent, DIRECTORY_MODE)
                .map_err(from_confine)?;
        }
        root.write(relative, contents, FILE_MODE)
            .map_err(from_confine)?;
        Ok(contents.len() as u64)
    }

    /// Opens (creating, 0600) the file at `relative` for locking; refuses a link.
    pub(crate) fn open_lock_file(&self, relative: &Path) -> Result<File> {
        self.resolve(relative)?;
        let root = self.created_root()?;
        if let Some(parent) = non_empty_parent(relative) {
            root.create_directories(parent, DIRECTORY_MODE)
                .map_err(from_confine)?;
        }
        root.open_or_create(relative, FILE_MODE)
            .map_err(from_confine)
    }

    /// Whether `relative` still names `file` (it was not removed or replaced since it
    /// was opened); a link there names nothing.
    pub(crate) fn still_names(&self, relative: &Path, file: &File) -> Result<bool> {
        self.resolve(relative)?;
        let Some(root) = self.existing_root()? else {
            return Ok(false);
        };
        root.still_names(relative, file).map_err(from_confine)
    }

    /// Removes the file (or link, never followed) at `relative`; `false` if there was
    /// none.
    pub(crate) fn remove(&self, relative: &Path) -> Result<bool> {
        self.resolve(relative)?;
        let Some(root) = self.existing_root()? else {
            return Ok(false);
        };
        root.remove_file(relative).map_err(from_confine)
    }

    /// The entries of the directory `relative` (none if it does not exist), without
    /// dot files (temporary files) and names that are not UTF-8 (Hearth writes none).
    pub(crate) fn list(&self, relative: &Path) -> Result<Vec<Entry>> {
        self.resolve(relative)?;
        let Some(root) = self.existing_root()? else {
            return Ok(Vec::new());
        };
        let listed = root.list(relative).map_err(from_confine)?;
        Ok(listed
            .unwrap_or_default()
            .into_iter()
            .filter_map(|entry| {
                let name = entry.name.into_string().ok()?;
                (!name.starts_with('.')).then_some(Entry {
                    name,
                    kind: entry.kind,
                    bytes: entry.bytes,
                })
            })
            .collect())
    }

    /// Removes the directory `relative` and everything in it (a link is removed, not
    /// followed); `false` if there was none. Never touches anything above the root.
    pub(crate) fn remove_tree(&self, relative: &Path) -> Result<bool> {
        self.resolve(relative)?;
        let Some(root) = self.existing_root()? else {
            return Ok(false);
        };
        root.remove_tree(relative).map_err(from_confine)
    }
}

/// One entry of a listing.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) kind: FileKind,
    /// Its size (a symlink's own).
    pub(crate) bytes: u64,
}

impl Entry {
    pub(crate) fn is_directory(&self) -> bool {
        self.kind == FileKind::Directory
    }
}

/// The directory holding `relative`, unless that is the root.
fn non_empty_parent(relative: &Path) -> Option<&Path> {
    relative
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
}

/// The context cache's error for a refusal or failure beneath its root.
fn from_confine(error: hearth_confine::Error) -> ContextError {
    use hearth_confine::Error;
    match error {
        Error::Escape { path }
        | Error::ThroughSymlink { path }
        | Error::SymlinkLoop { path }
        | Error::SymlinkTarget { path } => ContextError::Confined {
            path,
            rule: Confinement::NoSymlink,
        },
        Error::HardLinked { path, .. } => ContextError::Confined {
            path,
            rule: Confinement::SingleLink,
        },
        Error::NotRegularFile { path, .. } => ContextError::WrongKind {
            path,
            expected: "regular file",
        },
        Error::NotDirectory { path, .. } => ContextError::WrongKind {
            path,
            expected: "directory",
        },
        Error::Io {
            operation,
            path,
            source,
        } => ContextError::Io {
            operation,
            path,
            source,
        },
        other => ContextError::Cache(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_paths_that_leave_the_root() {
        let cache = CacheFs::new(PathBuf::from("/cache"));
        let rule = |path: &str| match cache.resolve(Path::new(path)) {
            Err(ContextError::Confined { rule, .. }) => Some(rule),
            Err(other) => panic!("unexpected error {other}"),
            Ok(_) => None,
        };
        assert_eq!(rule("../x"), Some(Confinement::NoParent));
        assert_eq!(rule("files/../../x"), Some(Confinement::NoParent));
        assert_eq!(rule("./files"), Some(Confinement::NoParent));
        assert_eq!(rule("/etc/passwd"), Some(Confinement::Relative));
        assert_eq!(rule(""), Some(Confinement::NotEmpty));
        // Control: a plain relative path passes.
        assert_eq!(rule("files/file-00.md"), None);
    }
}
