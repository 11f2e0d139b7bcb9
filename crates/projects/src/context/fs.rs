//! The cache's root-confined file system.
//!
//! Every path Hearth uses inside the cache is relative to the root and checked here,
//! in this order:
//!
//! 1. [`Confinement::NotEmpty`], [`Confinement::Relative`], [`Confinement::NoParent`]:
//!    the path is lexically a plain relative path (only normal components).
//! 2. [`Confinement::NoSymlink`]: no component below the root is a symbolic link.
//!    Intermediate components are checked with `symlink_metadata` before each use; the
//!    final component is checked too, and files are opened with `O_NOFOLLOW`, so a
//!    link planted at a snapshot or marker path is refused, never followed. Writes go
//!    to a fresh temporary file (created exclusively) renamed over the target, and a
//!    rename replaces a link instead of writing through it.
//!
//! The root itself is trusted (it may legitimately sit behind a symlinked home). Every
//! directory is created 0700 and every file 0600. Temporary files start with a dot
//! and listings skip dot files.

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use super::error::{Confinement, ContextError, Result};

/// Prefix of the temporary files of atomic writes (after the leading dot).
const TEMPORARY_MARK: &str = ".hearth-tmp-";

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

    /// Rule 2 for the directories holding `relative`: each exists as a real directory
    /// (a missing one is reported as `Ok(false)`).
    fn parents_are_directories(&self, relative: &Path) -> Result<bool> {
        let mut current = self.root.clone();
        let mut components = relative.components().peekable();
        while let Some(component) = components.next() {
            if components.peek().is_none() {
                break;
            }
            current.push(component);
            match fs::symlink_metadata(&current) {
                Ok(metadata) => check_directory(&current, &metadata)?,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
                Err(error) => return Err(ContextError::io("inspect", &current)(error)),
            }
        }
        Ok(true)
    }

    /// Creates the root (with missing parents) and each directory of `relative`, all
    /// 0700; refuses a component that is a link or not a directory.
    pub(crate) fn ensure_dir(&self, relative: &Path) -> Result<PathBuf> {
        let target = self.resolve(relative)?;
        create_directory(&self.root, true)?;
        let mut current = self.root.clone();
        for component in relative.components() {
            current.push(component);
            match fs::symlink_metadata(&current) {
                Ok(metadata) => check_directory(&current, &metadata)?,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                    create_directory(&current, false)?;
                    let metadata = fs::symlink_metadata(&current)
                        .map_err(ContextError::io("inspect", &current))?;
                    check_directory(&current, &metadata)?;
                }
                Err(error) => return Err(ContextError::io("inspect", &current)(error)),
            }
        }
        Ok(target)
    }

    /// Opens the regular file at `relative` for reading, `None` if it does not exist.
    pub(crate) fn open(&self, relative: &Path) -> Result<Option<(File, Metadata)>> {
        let path = self.resolve(relative)?;
        if !self.parents_are_directories(relative)? {
            return Ok(None);
        }
        let mut options = OpenOptions::new();
        options.read(true);
        no_follow(&mut options);
        let file = match options.open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => {
                // With O_NOFOLLOW a link fails the open (ELOOP): name the rule.
                if let Ok(metadata) = fs::symlink_metadata(&path) {
                    check_file(&path, &metadata)?;
                }
                return Err(ContextError::io("open", path)(error));
            }
        };
        let metadata = file
            .metadata()
            .map_err(ContextError::io("inspect", &path))?;
        check_file(&path, &metadata)?;
        Ok(Some((file, metadata)))
    }

    /// Reads the whole regular file at `relative`, `None` if it does not exist.
    pub(crate) fn read(&self, relative: &Path) -> Result<Option<Vec<u8>>> {
        let Some((mut file, metadata)) = self.open(relative)? else {
            return Ok(None);
        };
        let mut contents = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
        file.read_to_end(&mut contents)
            .map_err(ContextError::io("read", self.root.join(relative)))?;
        Ok(Some(contents))
    }

    /// Writes `contents` to `relative` atomically: a temporary file beside it (0600,
    /// created exclusively), synced, renamed over the target, the directory synced.
    /// Refuses a target that is a link or a directory. Returns the bytes written.
    pub(crate) fn write(&self, relative: &Path, contents: &[u8]) -> Result<u64> {
        let path = self.resolve(relative)?;
        let (Some(parent), Some(name)) = (relative.parent(), relative.file_name()) else {
            return Err(ContextError::Confined {
                path: relative.to_path_buf(),
                rule: Confinement::NotEmpty,
            });
        };
        let directory = if parent.as_os_str().is_empty() {
            create_directory(&self.root, true)?;
            self.root.clone()
        } else {
            self.ensure_dir(parent)?
        };
        match fs::symlink_metadata(&path) {
            Ok(metadata) => check_file(&path, &metadata)?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => return Err(ContextError::io("inspect", &path)(error)),
        }
        let temporary = directory.join(format!(
            ".{}{TEMPORARY_MARK}{}",
            name.to_string_lossy(),
            uuid::Uuid::now_v7().simple()
        ));
        let written = write_new_file(&temporary, contents).and_then(|()| {
            fs::rename(&temporary, &path).map_err(ContextError::io("rename into place", &path))
        });
        if let Err(error) = written {
            if let Err(cleanup) = fs::remove_file(&temporary)
                && cleanup.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(path = %temporary.display(), %cleanup, "could not remove a temporary file");
            }
            return Err(error);
        }
        sync_directory(&directory);
        Ok(contents.len() as u64)
    }

    /// Opens (creating, 0600) the file at `relative` for locking; refuses a link.
    pub(crate) fn open_lock_file(&self, relative: &Path) -> Result<File> {
        let path = self.resolve(relative)?;
        if let Some(parent) = relative
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            self.ensure_dir(parent)?;
        }
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        no_follow(&mut options);
        owner_only(&mut options);
        let file = match options.open(&path) {
            Ok(file) => file,
            Err(error) => {
                if let Ok(metadata) = fs::symlink_metadata(&path) {
                    check_file(&path, &metadata)?;
                }
                return Err(ContextError::io("open", path)(error));
            }
        };
        let metadata = file
            .metadata()
            .map_err(ContextError::io("inspect", &path))?;
        check_file(&path, &metadata)?;
        Ok(file)
    }

    /// Removes the file (or link) at `relative`; `false` if there was none.
    pub(crate) fn remove(&self, relative: &Path) -> Result<bool> {
        let path = self.resolve(relative)?;
        if !self.parents_are_directories(relative)? {
            return Ok(false);
        }
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(ContextError::io("remove", path)(error)),
        }
    }

    /// The entries of the directory `relative` (none if it does not exist), without
    /// dot files (temporary files).
    pub(crate) fn list(&self, relative: &Path) -> Result<Vec<Entry>> {
        let path = self.resolve(relative)?;
        if !self.parents_are_directories(relative)? {
            return Ok(Vec::new());
        }
        match fs::symlink_metadata(&path) {
            Ok(metadata) => check_directory(&path, &metadata)?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(ContextError::io("inspect", path)(error)),
        }
        let reader = fs::read_dir(&path).map_err(ContextError::io("list", &path))?;
        let mut entries = Vec::new();
        for entry in reader {
            let entry = entry.map_err(ContextError::io("list", &path))?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let metadata = entry
                .metadata()
                .map_err(ContextError::io("inspect", entry.path()))?;
            entries.push(Entry { name, metadata });
        }
        entries.sort_by(|left, right| left.name.cmp(&right.name));
        Ok(entries)
    }

    /// Removes the directory `relative` and everything in it (a link is removed, not
    /// followed); `false` if there was none. Never touches anything above the root.
    pub(crate) fn remove_tree(&self, relative: &Path) -> Result<bool> {
        let path = self.resolve(relative)?;
        if !self.parents_are_directories(relative)? {
            return Ok(false);
        }
        let metadata = match fs::symlink_metadata(&path) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(ContextError::io("inspect", path)(error)),
        };
        if metadata.is_dir() {
            fs::remove_dir_all(&path).map_err(ContextError::io("remove", path))?;
        } else {
            fs::remove_file(&path).map_err(ContextError::io("remove", path))?;
        }
        Ok(true)
    }
}

/// One entry of a listing.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) metadata: Metadata,
}

fn check_directory(path: &Path, metadata: &Metadata) -> Result<()> {
    if metadata.file_type().is_symlink() {
        return Err(ContextError::Confined {
            path: path.to_path_buf(),
            rule: Confinement::NoSymlink,
        });
    }
    if !metadata.is_dir() {
        return Err(ContextError::WrongKind {
            path: path.to_path_buf(),
            expected: "directory",
        });
    }
    Ok(())
}

fn check_file(path: &Path, metadata: &Metadata) -> Result<()> {
    if metadata.file_type().is_symlink() {
        return Err(ContextError::Confined {
            path: path.to_path_buf(),
            rule: Confinement::NoSymlink,
        });
    }
    if !metadata.is_file() {
        return Err(ContextError::WrongKind {
            path: path.to_path_buf(),
            expected: "regular file",
        });
    }
    Ok(())
}

fn create_directory(path: &Path, recursive: bool) -> Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(recursive);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(ContextError::io("create directory", path)(error)),
    }
}

fn write_new_file(path: &Path, contents: &[u8]) -> Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    owner_only(&mut options);
    let mut file = options
        .open(path)
        .map_err(ContextError::io("create", path))?;
    file.write_all(contents)
        .and_then(|()| file.sync_all())
        .map_err(ContextError::io("write", path))
}

/// Best effort: a snapshot is regenerable, so a failed directory sync is only logged.
fn sync_directory(directory: &Path) {
    #[cfg(unix)]
    if let Err(error) = File::open(directory).and_then(|handle| handle.sync_all()) {
        tracing::debug!(path = %directory.display(), %error, "could not sync a cache directory");
    }
}

fn no_follow(options: &mut OpenOptions) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NOFOLLOW is a small positive flag: the cast to the C `int` is exact.
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    #[cfg(not(unix))]
    let _unused = options;
}

fn owner_only(options: &mut OpenOptions) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _unused = options;
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
