//! Confined reads.

use std::io::Read as _;
use std::path::Path;

use rustix::fd::AsFd;
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::error::{Error, Result};
use crate::kernel::{
    BENEATH, Identity, io_error, locate_beneath, one_regular_file, open_beneath, open_error, size,
};
use crate::roots::{Located, Roots};

impl Roots {
    /// Reads the regular file at `path` (absolute, inside a root); symlinks that stay
    /// beneath the root are followed. `Ok(None)` when it does not exist (what does
    /// exist of its path must still be inside the root and not denied).
    ///
    /// Refuses, naming the rule: paths outside the roots or leaving them through `..`
    /// or a symlink, Hearth's denied directories, anything but a regular file (a FIFO,
    /// device or socket is never opened for reading), files with more than one hard
    /// link, and files larger than `max_bytes` ([`Error::TooLarge`]).
    pub fn read(&self, path: &Path, max_bytes: u64) -> Result<Option<Vec<u8>>> {
        let located = self.locate(path)?;
        let root = located.root.directory.as_fd();
        // Located without opening it: nothing is opened for reading before it is known
        // to be a regular file.
        let handle = match locate_beneath(root, &located.relative) {
            Ok(handle) => handle,
            Err(Errno::NOENT) => {
                self.check_missing(&located, path)?;
                return Ok(None);
            }
            Err(errno) => return Err(open_error(errno, "open", path)),
        };
        let stat = rustix::fs::fstat(&handle).map_err(|errno| io_error(errno, "stat", path))?;
        self.check_not_denied(&located, handle.as_fd(), &stat, path)?;
        one_regular_file(&stat, path)?;
        let too_large = |size: u64| Error::TooLarge {
            path: path.to_path_buf(),
            size,
            limit: max_bytes,
        };
        if size(&stat) > max_bytes {
            return Err(too_large(size(&stat)));
        }
        // The same resolution again, now for reading; it must reach the same file.
        let opened = open_beneath(
            root,
            &located.relative,
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
            BENEATH,
        )
        .map_err(|errno| match errno {
            Errno::NOENT => Error::Changed {
                path: path.to_path_buf(),
            },
            other => open_error(other, "open", path),
        })?;
        let identity =
            Identity::of_fd(opened.as_fd()).map_err(|errno| io_error(errno, "stat", path))?;
        if identity != Identity::of(&stat) {
            return Err(Error::Changed {
                path: path.to_path_buf(),
            });
        }
        let expected = usize::try_from(size(&stat)).unwrap_or(0);
        let mut contents = Vec::with_capacity(expected);
        std::fs::File::from(opened)
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut contents)
            .map_err(|source| Error::Io {
                operation: "read",
                path: path.to_path_buf(),
                source,
            })?;
        let read = u64::try_from(contents.len()).unwrap_or(u64::MAX);
        if read > max_bytes {
            // The file grew after it was measured.
            return Err(too_large(read));
        }
        Ok(Some(contents))
    }

    /// For a missing file: the deepest directory of its path that exists must be
    /// beneath the root and not denied.
    fn check_missing(&self, located: &Located<'_>, path: &Path) -> Result<()> {
        for ancestor in located.relative.ancestors().skip(1) {
            let directory = match locate_beneath(located.root.directory.as_fd(), ancestor) {
                Ok(directory) => directory,
                Err(Errno::NOENT) => continue,
                Err(errno) => return Err(open_error(errno, "open", path)),
            };
            return self.check_directory_not_denied(located.root, directory.as_fd(), path);
        }
        Ok(())
    }
}
