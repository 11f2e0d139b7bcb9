//! Privacy at rest: the data directory is readable by its owner only (0700) and every
//! file Hearth creates in it likewise (0600). New directories and files are created
//! private (never created open and narrowed afterwards); an install made by an older
//! Hearth, or touched by hand, is tightened in place.
//!
//! Only group and other permission bits are ever removed: what the owner may do with a
//! file is left as it is (a database the user made read-only stays read-only).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Mode of a private directory.
pub const PRIVATE_DIRECTORY_MODE: u32 = 0o700;
/// Mode of a private file.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// The permission bits that open a file or directory to other users.
const SHARED_BITS: u32 = 0o077;

/// Creates `path` (and any missing parents) as a private directory; the parents Hearth
/// did not ask for are created with the usual permissions. An existing directory is left
/// as it is ([`tighten`] narrows it).
pub fn create_private_dir(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        fs::create_dir_all(parent)?;
    }
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(PRIVATE_DIRECTORY_MODE);
    }
    match builder.create(path) {
        Ok(()) => Ok(()),
        // Another process made it first.
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        Err(error) => Err(error),
    }
}

/// Options that create files only their owner can read and write (0600). Set how to open
/// on them (`write`, `create_new`, …) as usual.
pub fn private_file_options() -> fs::OpenOptions {
    #[allow(unused_mut)]
    let mut options = fs::OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(PRIVATE_FILE_MODE);
    }
    options
}

/// A file or directory whose permissions [`tighten`] narrowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tightened {
    /// The file or directory.
    pub path: PathBuf,
    /// Its permission bits before.
    pub was: u32,
    /// Its permission bits now.
    pub now: u32,
}

/// What [`tighten`] did to a tree.
#[derive(Debug, Default)]
pub struct Tightening {
    /// What it narrowed.
    pub tightened: Vec<Tightened>,
    /// What it could not narrow (a read-only file system, a file of another user).
    pub failed: Vec<(PathBuf, io::Error)>,
}

impl Tightening {
    /// Whether nothing was found open to other users.
    pub fn is_empty(&self) -> bool {
        self.tightened.is_empty() && self.failed.is_empty()
    }

    /// One line for the user: what was narrowed, and what could not be.
    pub fn notice(&self, root: &Path) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let mut notice = String::new();
        if !self.tightened.is_empty() {
            let root_before = self
                .tightened
                .iter()
                .find(|entry| entry.path == root)
                .map(|entry| format!(" (the directory was {:o})", entry.was))
                .unwrap_or_default();
            notice.push_str(&format!(
                "made {} in {} readable by you only{root_before}: Hearth's data directory is private (0700, files 0600)",
                count(self.tightened.len(), "file or directory", "files and directories"),
                root.display(),
            ));
        }
        if let Some((path, error)) = self.failed.first() {
            if !notice.is_empty() {
                notice.push_str("; ");
            }
            notice.push_str(&format!(
                "could not make {} private ({error}){} — other users may be able to read it; run `chmod -R go-rwx {}`",
                path.display(),
                match self.failed.len() {
                    1 => String::new(),
                    more => format!(" nor {} more", more - 1),
                },
                root.display(),
            ));
        }
        Some(notice)
    }
}

fn count(number: usize, one: &str, many: &str) -> String {
    if number == 1 {
        format!("1 {one}")
    } else {
        format!("{number} {many}")
    }
}

/// Removes group and other permissions from one file or directory (not following a
/// symbolic link). Returns what changed, or `None` when it was already private or does
/// not exist.
pub fn make_private(path: &Path) -> io::Result<Option<Tightened>> {
    let metadata = match fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error),
    };
    narrow(path, &metadata)
}

#[cfg(unix)]
fn narrow(path: &Path, metadata: &fs::Metadata) -> io::Result<Option<Tightened>> {
    use std::os::unix::fs::PermissionsExt;
    if metadata.file_type().is_symlink() {
        return Ok(None);
    }
    let was = metadata.permissions().mode() & 0o7777;
    if was & SHARED_BITS == 0 {
        return Ok(None);
    }
    let now = was & !SHARED_BITS;
    fs::set_permissions(path, fs::Permissions::from_mode(now))?;
    Ok(Some(Tightened {
        path: path.to_path_buf(),
        was: was & 0o777,
        now: now & 0o777,
    }))
}

#[cfg(not(unix))]
fn narrow(_path: &Path, _metadata: &fs::Metadata) -> io::Result<Option<Tightened>> {
    Ok(None)
}

/// Makes `root` and everything under it private: directories 0700 at most, files 0600
/// at most (group and other bits removed, the owner's kept). Symbolic links are not
/// followed. A missing `root` is nothing to do.
pub fn tighten(root: &Path) -> Tightening {
    let mut tightening = Tightening::default();
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let metadata = match fs::symlink_metadata(&path) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => {
                tightening.failed.push((path, error));
                continue;
            }
        };
        match narrow(&path, &metadata) {
            Ok(Some(tightened)) => tightening.tightened.push(tightened),
            Ok(None) => {}
            Err(error) => tightening.failed.push((path.clone(), error)),
        }
        if metadata.is_dir() {
            match fs::read_dir(&path) {
                Ok(entries) => {
                    for entry in entries {
                        match entry {
                            Ok(entry) => pending.push(entry.path()),
                            Err(error) => tightening.failed.push((path.clone(), error)),
                        }
                    }
                }
                Err(error) => tightening.failed.push((path.clone(), error)),
            }
        }
    }
    tightening
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use pretty_assertions::assert_eq;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn creates_private_directories_and_files() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("parent/home");
        create_private_dir(&home).unwrap();
        assert_eq!(mode(&home), 0o700);
        create_private_dir(&home).unwrap();
        let file = home.join("file");
        private_file_options()
            .write(true)
            .create_new(true)
            .open(&file)
            .unwrap();
        assert_eq!(mode(&file), 0o600);
    }

    #[test]
    fn tightening_removes_only_other_users_bits_and_reports_each() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("home");
        fs::create_dir_all(root.join("logs")).unwrap();
        fs::write(root.join("hearth.db"), b"x").unwrap();
        fs::write(root.join("logs/today.log"), b"x").unwrap();
        fs::write(root.join("kept"), b"x").unwrap();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(root.join("logs"), fs::Permissions::from_mode(0o775)).unwrap();
        fs::set_permissions(root.join("hearth.db"), fs::Permissions::from_mode(0o644)).unwrap();
        fs::set_permissions(
            root.join("logs/today.log"),
            fs::Permissions::from_mode(0o444),
        )
        .unwrap();
        fs::set_permissions(root.join("kept"), fs::Permissions::from_mode(0o600)).unwrap();
        let outside = dir.path().join("outside");
        fs::write(&outside, b"x").unwrap();
        fs::set_permissions(&outside, fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();

        let tightening = tighten(&root);
        let mut changed: Vec<(String, u32, u32)> = tightening
            .tightened
            .iter()
            .map(|entry| {
                let name = entry
                    .path
                    .strip_prefix(&root)
                    .unwrap()
                    .display()
                    .to_string();
                (name, entry.was, entry.now)
            })
            .collect();
        changed.sort();
        assert_eq!(
            changed,
            vec![
                (String::new(), 0o755, 0o700),
                ("hearth.db".to_owned(), 0o644, 0o600),
                ("logs".to_owned(), 0o775, 0o700),
                ("logs/today.log".to_owned(), 0o444, 0o400),
            ]
        );
        assert!(tightening.failed.is_empty(), "{:?}", tightening.failed);
        assert_eq!(mode(&root.join("kept")), 0o600);
        // The link's target is not ours to change.
        assert_eq!(mode(&outside), 0o644);
        let notice = tightening.notice(&root).unwrap();
        assert!(notice.contains("4 files and directories"), "{notice}");
        assert!(notice.contains("(the directory was 755)"), "{notice}");

        // Done once: nothing more to say.
        assert!(tighten(&root).notice(&root).is_none());
        assert!(tighten(&dir.path().join("missing")).is_empty());
    }
}
