//! Reading a file the user named anywhere except Hearth's own directories: a project's
//! source. Unlike [`Roots::read`](crate::Roots::read) there is no root to stay beneath
//! (a source may be any file, behind any symlink); what matters is where the file
//! really is. The rules, in the order they run:
//!
//! 1. [`Rule::FileKind`](crate::Rule::FileKind): only a regular file, located first without opening it
//!    (a FIFO or device is never opened), then opened and confirmed to be the same file.
//! 2. [`Rule::SingleLink`](crate::Rule::SingleLink): a file with more than one hard link is refused: another
//!    of its names may be inside a denied directory.
//! 3. [`Rule::NotDenied`](crate::Rule::NotDenied): the directory really holding the file (found from its
//!    canonical path and confirmed by device and inode) is walked up through `..` to
//!    the top of the file system; passing through a denied directory refuses the read.
//! 4. [`Rule::SizeCap`](crate::Rule::SizeCap): the read is capped.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use rustix::fd::AsFd;
use rustix::fs::{Mode, OFlags};

use crate::error::{Error, Result};
use crate::kernel::{
    Ancestry, Identity, ancestry, confirmed_parent, io_error, one_regular_file, size,
};

/// Reads the regular file at `path` (following symlinks), refusing it when it is
/// really inside one of the `denied` directories, has more than one hard link, or is
/// larger than `max_bytes`.
pub fn read_outside(path: &Path, denied: &[PathBuf], max_bytes: u64) -> Result<Vec<u8>> {
    let io = |source: std::io::Error, operation: &'static str| Error::Io {
        operation,
        path: path.to_path_buf(),
        source,
    };
    let located = rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())
        .map_err(|errno| io_error(errno, "open", path))?;
    let stat = rustix::fs::fstat(&located).map_err(|errno| io_error(errno, "stat", path))?;
    one_regular_file(&stat, path)?;
    let identity = Identity::of(&stat);
    let denied: Vec<Identity> = denied
        .iter()
        .filter_map(|directory| Identity::of_path(directory))
        .collect();
    if !denied.is_empty() {
        let canonical = std::fs::canonicalize(path).map_err(|source| io(source, "resolve"))?;
        let holder = confirmed_parent(&canonical, identity).ok_or_else(|| Error::Changed {
            path: path.to_path_buf(),
        })?;
        match ancestry(holder.as_fd(), None, &denied)
            .map_err(|errno| io_error(errno, "check the ancestry of", path))?
        {
            Ancestry::Denied(_) => {
                return Err(Error::Denied {
                    path: path.to_path_buf(),
                });
            }
            Ancestry::Root | Ancestry::Elsewhere => {}
        }
    }
    if size(&stat) > max_bytes {
        return Err(Error::TooLarge {
            path: path.to_path_buf(),
            size: size(&stat),
            limit: max_bytes,
        });
    }
    let opened = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|errno| io_error(errno, "open", path))?;
    let now = Identity::of_fd(opened.as_fd()).map_err(|errno| io_error(errno, "stat", path))?;
    if now != identity {
        return Err(Error::Changed {
            path: path.to_path_buf(),
        });
    }
    let mut contents = Vec::new();
    std::fs::File::from(opened)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut contents)
        .map_err(|source| io(source, "read"))?;
    let read = u64::try_from(contents.len()).unwrap_or(u64::MAX);
    if read > max_bytes {
        return Err(Error::TooLarge {
            path: path.to_path_buf(),
            size: read,
            limit: max_bytes,
        });
    }
    Ok(contents)
}
