//! The fixture every test starts from, and the snapshot that proves a refusal left
//! everything outside the root (and in Hearth's data directory) as it was.
//!
//! Layout, under a fresh temporary directory (canonical):
//!
//! ```text
//! base/
//!   root/                 the session's root
//!     inside.txt          "inside\n"
//!     sub/nested.txt      "nested\n"
//!     .hearth/            Hearth's data directory (denied)
//!       state.db          "hearth state\n"
//!   outside/              never to be read or changed
//!     secret.txt          "outside secret\n"
//! ```

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::fs;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use hearth_confine::{Error, Result, Roots};
use pretty_assertions::assert_eq;
use tempfile::TempDir;

pub const INSIDE: &[u8] = b"inside\n";
pub const NESTED: &[u8] = b"nested\n";
pub const SECRET: &[u8] = b"outside secret\n";
pub const STATE: &[u8] = b"hearth state\n";
/// A read limit no fixture file reaches.
pub const CAP: u64 = 1 << 20;
/// How long an operation that must not block may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Asserts that `value` matches `pattern`, showing the value when it does not.
macro_rules! assert_matches {
    ($value:expr, $pattern:pat $(if $guard:expr)? $(,)?) => {
        match $value {
            $pattern $(if $guard)? => {}
            ref other => panic!(
                "expected {}, got {:?}",
                stringify!($pattern $(if $guard)?),
                other
            ),
        }
    };
}
pub(crate) use assert_matches;

pub struct Fixture {
    _temp: TempDir,
    pub base: PathBuf,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub data: PathBuf,
    /// The root, with `data` denied.
    pub roots: Roots,
    /// The same root with nothing denied: refusals other than for the data directory
    /// must not depend on the denied-directory check.
    pub bare: Roots,
}

impl Fixture {
    pub fn new() -> Self {
        let temp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(temp.path()).unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        let data = root.join(".hearth");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::create_dir_all(&data).unwrap();
        fs::write(root.join("inside.txt"), INSIDE).unwrap();
        fs::write(root.join("sub/nested.txt"), NESTED).unwrap();
        fs::write(outside.join("secret.txt"), SECRET).unwrap();
        fs::write(data.join("state.db"), STATE).unwrap();
        let roots = Roots::new(std::slice::from_ref(&root), std::slice::from_ref(&data)).unwrap();
        let bare = Roots::new(std::slice::from_ref(&root), &[]).unwrap();
        Fixture {
            _temp: temp,
            base,
            root,
            outside,
            data,
            roots,
            bare,
        }
    }

    /// A path under the root.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// A symlink `link` (under the root) pointing at `target`, as given.
    pub fn symlink(&self, target: impl AsRef<Path>, link: &str) -> PathBuf {
        let link = self.path(link);
        std::os::unix::fs::symlink(target, &link).unwrap();
        link
    }

    /// Runs `action`, asserting that nothing outside the root and nothing in Hearth's
    /// data directory changed.
    pub fn guarded<T>(&self, action: impl FnOnce() -> T) -> T {
        let outside = Snapshot::of(&self.outside);
        let data = Snapshot::of(&self.data);
        let result = action();
        assert_eq!(
            Snapshot::of(&self.outside),
            outside,
            "something outside the root changed"
        );
        assert_eq!(
            Snapshot::of(&self.data),
            data,
            "something in Hearth's data directory changed"
        );
        result
    }

    /// Reads `path` under [`Fixture::guarded`], expecting a refusal. The same read
    /// through [`Fixture::bare`] must be refused the same way, unless the refusal was
    /// for Hearth's data directory, which the bare roots must then not refuse.
    pub fn read_refused(&self, path: &Path) -> Error {
        self.guarded(|| {
            let error = refused(self.roots.read(path, CAP));
            agree(&error, self.bare.read(path, CAP));
            error
        })
    }

    /// Writes `path` under [`Fixture::guarded`], expecting a refusal; refusals other
    /// than for Hearth's data directory must also come from [`Fixture::bare`].
    pub fn write_refused(&self, path: &Path) -> Error {
        let contents = b"written by hearth\n";
        self.guarded(|| {
            let error = refused(self.roots.write(path, contents));
            if !matches!(error, Error::Denied { .. }) {
                agree(&error, self.bare.write(path, contents));
            }
            error
        })
    }
}

/// Checks the outcome through the bare roots against the refusal through the roots
/// with a denied directory.
fn agree<T: Debug>(error: &Error, bare: Result<T>) {
    match (error, bare) {
        (Error::Denied { .. }, Err(bare @ Error::Denied { .. })) => {
            panic!("roots without a denied directory refused with {bare:?}")
        }
        (Error::Denied { .. }, _) => {}
        (_, Ok(value)) => {
            panic!("refused with {error:?}, but roots without a denied directory gave {value:?}")
        }
        (_, Err(bare)) => assert_eq!(
            std::mem::discriminant(error),
            std::mem::discriminant(&bare),
            "refused with {error:?}, but roots without a denied directory with {bare:?}"
        ),
    }
}

/// The error of a result that must be one.
pub fn refused<T: Debug>(result: Result<T>) -> Error {
    match result {
        Ok(value) => panic!("expected a refusal, got Ok({value:?})"),
        Err(error) => error,
    }
}

/// Runs `action` on another thread and waits for it at most [`DEADLINE`].
pub fn within_deadline<T: Send + 'static>(action: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || sender.send(action()));
    receiver
        .recv_timeout(DEADLINE)
        .expect("the operation blocked past its deadline")
}

/// Names of the temporary files Hearth left in `directory`.
pub fn temp_files(directory: &Path) -> Vec<String> {
    fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".hearth-tmp-"))
        .collect()
}

/// Permission bits of `path`.
pub fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// The process's umask, read without changing it.
pub fn umask() -> u32 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("Umask:"))
        .unwrap();
    u32::from_str_radix(line.trim(), 8).unwrap()
}

/// Everything under a directory: kinds, contents, link targets, modes, link counts,
/// inodes (a file replaced by a rename has a new one).
#[derive(Debug, PartialEq, Eq)]
pub struct Snapshot(BTreeMap<PathBuf, Entry>);

#[derive(Debug, PartialEq, Eq)]
pub enum Entry {
    File {
        content: Vec<u8>,
        mode: u32,
        links: u64,
        inode: u64,
    },
    Directory {
        mode: u32,
    },
    Symlink {
        target: PathBuf,
    },
    Other {
        mode: u32,
    },
}

impl Snapshot {
    pub fn of(directory: &Path) -> Self {
        let mut entries = BTreeMap::new();
        collect(directory, directory, &mut entries);
        Snapshot(entries)
    }
}

fn collect(base: &Path, path: &Path, entries: &mut BTreeMap<PathBuf, Entry>) {
    let metadata = fs::symlink_metadata(path).unwrap();
    let relative = path.strip_prefix(base).unwrap().to_path_buf();
    let file_type = metadata.file_type();
    let entry = if file_type.is_symlink() {
        Entry::Symlink {
            target: fs::read_link(path).unwrap(),
        }
    } else if file_type.is_dir() {
        for child in fs::read_dir(path).unwrap() {
            collect(base, &child.unwrap().path(), entries);
        }
        Entry::Directory {
            mode: metadata.mode(),
        }
    } else if file_type.is_file() {
        Entry::File {
            content: fs::read(path).unwrap(),
            mode: metadata.mode(),
            links: metadata.nlink(),
            inode: metadata.ino(),
        }
    } else {
        Entry::Other {
            mode: metadata.mode(),
        }
    };
    entries.insert(relative, entry);
}
