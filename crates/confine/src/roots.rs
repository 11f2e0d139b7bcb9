//! The roots a session may touch, the directories it may not, and the checks every
//! operation shares: choosing the root (rules 1 and 2) and the denied-directory check
//! on what the kernel opened (rule 4).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags, Stat};
use rustix::io::Errno;

use crate::error::{Error, FileKind, Result};
use crate::kernel::{
    Ancestry, BENEATH, Identity, ancestry, confirmed_canonical, confirmed_parent, io_error, kind,
    locate_beneath, open_beneath, open_error,
};
use crate::lexical::{is_under, normalize, remainder, split_name};

/// The working directories of a session ("roots"), and the directories that are off
/// limits even inside them. Every path is resolved by the kernel beneath a directory
/// opened once per root, so renaming or replacing a root's path later changes nothing.
///
/// Cloning is cheap: clones share the opened directories. All operations block on
/// file-system calls; call them from a blocking context.
#[derive(Clone, Debug)]
pub struct Roots {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The roots' canonical paths, in the order given.
    paths: Vec<PathBuf>,
    roots: Vec<Root>,
    denied: Vec<Denied>,
}

/// One opened root.
#[derive(Debug)]
pub(crate) struct Root {
    /// The canonical path, as resolved at construction.
    pub(crate) canonical: PathBuf,
    /// The spellings a caller may use for the root: the canonical path, and the path
    /// as given (normalized) when it differs.
    spellings: Vec<PathBuf>,
    /// The root directory, opened with `O_PATH`.
    pub(crate) directory: OwnedFd,
    /// The root directory's identity.
    pub(crate) identity: Identity,
}

/// One denied directory.
#[derive(Debug)]
struct Denied {
    /// Canonical when it existed at construction, normalized otherwise.
    path: PathBuf,
    /// Its identity at construction, when it existed.
    identity: Option<Identity>,
}

/// A caller's path matched to its root.
pub(crate) struct Located<'a> {
    /// The root the path is under.
    pub(crate) root: &'a Root,
    /// The rest of the path, as written, for the kernel to resolve beneath the root
    /// (empty for the root itself).
    pub(crate) relative: PathBuf,
}

impl Roots {
    /// Opens `roots`, absolute paths of existing directories, canonicalized once here;
    /// `denied` are absolute paths of directories that stay off limits even inside a
    /// root (Hearth's data directory). A denied directory need not exist yet.
    ///
    /// Fails when a root is relative, missing or not a directory, when it lies inside a
    /// denied directory, or when the kernel lacks `openat2` (Hearth does not fall back
    /// to checking path strings).
    pub fn new(roots: &[PathBuf], denied: &[PathBuf]) -> Result<Self> {
        let denied = denied
            .iter()
            .map(|path| Denied::new(path))
            .collect::<Result<Vec<_>>>()?;
        let mut opened: Vec<Root> = Vec::new();
        for given in roots {
            let root = Root::open(given)?;
            match opened
                .iter_mut()
                .find(|known| known.identity == root.identity)
            {
                Some(known) => {
                    for spelling in root.spellings {
                        if !known.spellings.contains(&spelling) {
                            known.spellings.push(spelling);
                        }
                    }
                }
                None => opened.push(root),
            }
        }
        let roots = Roots {
            inner: Arc::new(Inner {
                paths: opened.iter().map(|root| root.canonical.clone()).collect(),
                roots: opened,
                denied,
            }),
        };
        for root in &roots.inner.roots {
            roots.check_root_allowed(root)?;
        }
        Ok(roots)
    }

    /// The roots' canonical paths, in the order given (duplicates merged).
    pub fn roots(&self) -> &[PathBuf] {
        &self.inner.paths
    }

    /// Whether `path` is absolute and, read lexically (`.` and `..` applied, symlinks
    /// not consulted), under one of the roots. For messages only: it says nothing of
    /// what the path reaches.
    pub fn contains_lexically(&self, path: &Path) -> bool {
        if !path.is_absolute() {
            return false;
        }
        let normalized = normalize(path);
        self.inner
            .roots
            .iter()
            .flat_map(|root| root.spellings.iter())
            .any(|spelling| is_under(&normalized, spelling))
    }

    /// A directory inside the roots, for a terminal's working directory: its canonical
    /// path. Symlinks that stay inside the root are followed.
    pub fn directory(&self, path: &Path) -> Result<PathBuf> {
        let located = self.locate(path)?;
        let directory = locate_beneath(located.root.directory.as_fd(), &located.relative)
            .map_err(|errno| open_error(errno, "open", path))?;
        let stat = rustix::fs::fstat(&directory).map_err(|errno| io_error(errno, "stat", path))?;
        self.check_not_denied(&located, directory.as_fd(), &stat, path)?;
        match kind(&stat) {
            FileKind::Directory => {}
            other => {
                return Err(Error::NotDirectory {
                    path: path.to_path_buf(),
                    kind: other,
                });
            }
        }
        confirmed_canonical(
            &located.root.canonical,
            &located.relative,
            Identity::of(&stat),
        )
        .ok_or_else(|| Error::Changed {
            path: path.to_path_buf(),
        })
    }

    /// Rules 1 and 2: `path` is absolute and under a root; the longest root it is
    /// lexically under, whose spelling it also starts with as written, is chosen.
    pub(crate) fn locate(&self, path: &Path) -> Result<Located<'_>> {
        if !path.is_absolute() {
            return Err(Error::NotAbsolute {
                path: path.to_path_buf(),
            });
        }
        let normalized = normalize(path);
        let mut candidates: Vec<(&Root, &PathBuf)> = self
            .inner
            .roots
            .iter()
            .flat_map(|root| root.spellings.iter().map(move |spelling| (root, spelling)))
            .filter(|(_, spelling)| is_under(&normalized, spelling))
            .collect();
        if candidates.is_empty() {
            return Err(Error::OutsideRoots {
                path: path.to_path_buf(),
                roots: self.inner.paths.clone(),
            });
        }
        candidates.sort_by_key(|(_, spelling)| std::cmp::Reverse(spelling.components().count()));
        candidates
            .into_iter()
            .find_map(|(root, spelling)| {
                remainder(path, spelling).map(|relative| Located { root, relative })
            })
            // Lexically inside, but `..` passes outside the root before entering it.
            .ok_or_else(|| Error::Escape {
                path: path.to_path_buf(),
            })
    }

    /// Rule 4 for something opened beneath `located`'s root: a directory is checked
    /// from itself, anything else from the directory holding it.
    pub(crate) fn check_not_denied(
        &self,
        located: &Located<'_>,
        opened: BorrowedFd<'_>,
        stat: &Stat,
        path: &Path,
    ) -> Result<()> {
        let denied = self.denied_identities();
        if denied.is_empty() {
            return Ok(());
        }
        if kind(stat) == FileKind::Directory {
            return check_ancestry(located.root, opened, &denied, path);
        }
        let parent =
            holding_directory(located, Identity::of(stat)).ok_or_else(|| Error::Changed {
                path: path.to_path_buf(),
            })?;
        check_ancestry(located.root, parent.as_fd(), &denied, path)
    }

    /// Rule 4 for a directory opened beneath `root`.
    pub(crate) fn check_directory_not_denied(
        &self,
        root: &Root,
        directory: BorrowedFd<'_>,
        path: &Path,
    ) -> Result<()> {
        let denied = self.denied_identities();
        if denied.is_empty() {
            return Ok(());
        }
        check_ancestry(root, directory, &denied, path)
    }

    /// The denied directories' identities now: as recorded at construction, and as
    /// found at their paths now (a denied directory may be created later).
    fn denied_identities(&self) -> Vec<Identity> {
        let mut identities = Vec::with_capacity(self.inner.denied.len());
        for denied in &self.inner.denied {
            let now = Identity::of_path(&denied.path);
            for identity in [denied.identity, now].into_iter().flatten() {
                if !identities.contains(&identity) {
                    identities.push(identity);
                }
            }
        }
        identities
    }

    /// A root must not be, or lie inside, a denied directory.
    fn check_root_allowed(&self, root: &Root) -> Result<()> {
        let refused = |denied: &Denied| Error::RootDenied {
            root: root.canonical.clone(),
            denied: denied.path.clone(),
        };
        if let Some(denied) = self
            .inner
            .denied
            .iter()
            .find(|denied| is_under(&root.canonical, &denied.path))
        {
            return Err(refused(denied));
        }
        let identities = self.denied_identities();
        let found = ancestry(root.directory.as_fd(), None, &identities).map_err(|errno| {
            Error::InvalidRoot {
                path: root.canonical.clone(),
                reason: format!("cannot walk its ancestry: {errno}"),
            }
        })?;
        match found {
            Ancestry::Denied(identity) => {
                let denied = self.inner.denied.iter().find(|denied| {
                    denied.identity == Some(identity)
                        || Identity::of_path(&denied.path) == Some(identity)
                });
                Err(Error::RootDenied {
                    root: root.canonical.clone(),
                    denied: denied.map_or_else(PathBuf::new, |denied| denied.path.clone()),
                })
            }
            Ancestry::Root | Ancestry::Elsewhere => Ok(()),
        }
    }
}

/// The directory holding the file `located` names, provided its entry there is still
/// the file `expected` (a file checked for denial has one link, so one such directory).
/// When the path ends in a name, that is the directory its parent path names beneath
/// the root; when it ends in a symlink, the one its canonical path names.
fn holding_directory(located: &Located<'_>, expected: Identity) -> Option<OwnedFd> {
    if let Some((parent, name)) = split_name(&located.relative) {
        let directory = open_beneath(
            located.root.directory.as_fd(),
            parent,
            OFlags::PATH | OFlags::DIRECTORY,
            Mode::empty(),
            BENEATH,
        )
        .ok()?;
        let entry = rustix::fs::statat(&directory, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        if Identity::of(&entry) == expected {
            return Some(directory);
        }
        if kind(&entry) != FileKind::Symlink {
            return None;
        }
    }
    let canonical = confirmed_canonical(&located.root.canonical, &located.relative, expected)?;
    confirmed_parent(&canonical, expected)
}

/// Walks from `directory` up to `root`, refusing a denied directory on the way.
fn check_ancestry(
    root: &Root,
    directory: BorrowedFd<'_>,
    denied: &[Identity],
    path: &Path,
) -> Result<()> {
    let found = ancestry(directory, Some(root.identity), denied)
        .map_err(|errno| io_error(errno, "check the ancestry of", path))?;
    match found {
        Ancestry::Root => Ok(()),
        Ancestry::Denied(_) => Err(Error::Denied {
            path: path.to_path_buf(),
        }),
        // Moved out of the root after the kernel opened it beneath.
        Ancestry::Elsewhere => Err(Error::Escape {
            path: path.to_path_buf(),
        }),
    }
}

impl Root {
    fn open(given: &Path) -> Result<Self> {
        let invalid = |reason: String| Error::InvalidRoot {
            path: given.to_path_buf(),
            reason,
        };
        if !given.is_absolute() {
            return Err(invalid("the path is relative".to_owned()));
        }
        let canonical = std::fs::canonicalize(given).map_err(|error| invalid(error.to_string()))?;
        let directory = rustix::fs::open(
            &canonical,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|errno| match errno {
            Errno::NOTDIR => invalid("it is not a directory".to_owned()),
            other => invalid(other.to_string()),
        })?;
        // Probe once, so that a kernel without openat2 fails here, clearly.
        locate_beneath(directory.as_fd(), Path::new("")).map_err(|errno| match errno {
            Errno::NOSYS => Error::Unsupported {
                reason: "the kernel does not provide openat2".to_owned(),
            },
            other => invalid(format!("openat2 failed on it: {other}")),
        })?;
        let identity =
            Identity::of_fd(directory.as_fd()).map_err(|errno| invalid(errno.to_string()))?;
        let mut spellings = vec![canonical.clone()];
        let given = normalize(given);
        if given != canonical {
            spellings.push(given);
        }
        Ok(Root {
            canonical,
            spellings,
            directory,
            identity,
        })
    }
}

impl Denied {
    fn new(given: &Path) -> Result<Self> {
        let invalid = |reason: &str| Error::InvalidDenied {
            path: given.to_path_buf(),
            reason: reason.to_owned(),
        };
        if !given.is_absolute() {
            return Err(invalid("the path is relative"));
        }
        match std::fs::metadata(given) {
            Ok(metadata) if metadata.is_dir() => {
                let path =
                    std::fs::canonicalize(given).map_err(|error| invalid(&error.to_string()))?;
                Ok(Denied {
                    path,
                    identity: Some(Identity::of_metadata(&metadata)),
                })
            }
            Ok(_) => Err(invalid("it is not a directory")),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Denied {
                path: normalize(given),
                identity: None,
            }),
            Err(error) => Err(invalid(&error.to_string())),
        }
    }
}
