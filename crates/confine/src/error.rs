//! The crate's one error type, the rules that refuse a path, and the kinds of file a
//! refusal can name.

use std::fmt;
use std::io;
use std::path::PathBuf;

use rustix::fs::FileType;
use thiserror::Error;

/// Result of a confined operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The rules every path passes, numbered in the order they are checked. Every refusal
/// names exactly one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// 1. A path is absolute.
    Absolute,
    /// 2. A path lies, read lexically, under one of the roots (the longest matching root
    ///    is chosen), and does not pass outside that root with `..` on the way.
    InsideRoots,
    /// 3. The kernel resolves the path beneath its root (`openat2` with
    ///    `RESOLVE_BENEATH`): no `..`, absolute symlink or relative symlink leaves it, no
    ///    `/proc` magic link is followed, and symlink loops end in a refusal. Beneath a
    ///    [`ConfinedDir`](crate::ConfinedDir) no symlink is followed at all.
    Beneath,
    /// 4. What was opened is not inside one of Hearth's denied directories, judged by
    ///    the device and inode numbers of its ancestry, not by the path's text.
    NotDenied,
    /// 5. A write never replaces a symlink: the final component of a written path is a
    ///    regular file or nothing.
    NoSymlinkReplaced,
    /// 6. Only regular files are read and written, and only directories serve as
    ///    directories; FIFOs, devices and sockets are never opened for reading.
    FileKind,
    /// 7. A regular file with more than one hard link is neither read nor written: it
    ///    may be the same inode as a file outside the roots.
    SingleLink,
    /// 8. Reads are capped at the caller's size limit.
    SizeCap,
}

impl Rule {
    /// Every rule, in the order the checks run.
    pub const ALL: [Rule; 8] = [
        Rule::Absolute,
        Rule::InsideRoots,
        Rule::Beneath,
        Rule::NotDenied,
        Rule::NoSymlinkReplaced,
        Rule::FileKind,
        Rule::SingleLink,
        Rule::SizeCap,
    ];

    /// The rule's number: its position in the order the checks run, from 1.
    pub fn number(self) -> u8 {
        match self {
            Rule::Absolute => 1,
            Rule::InsideRoots => 2,
            Rule::Beneath => 3,
            Rule::NotDenied => 4,
            Rule::NoSymlinkReplaced => 5,
            Rule::FileKind => 6,
            Rule::SingleLink => 7,
            Rule::SizeCap => 8,
        }
    }

    /// A stable `snake_case` code for logs and the audit log.
    pub fn code(self) -> &'static str {
        match self {
            Rule::Absolute => "absolute",
            Rule::InsideRoots => "inside_roots",
            Rule::Beneath => "beneath",
            Rule::NotDenied => "not_denied",
            Rule::NoSymlinkReplaced => "no_symlink_replaced",
            Rule::FileKind => "file_kind",
            Rule::SingleLink => "single_link",
            Rule::SizeCap => "size_cap",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rule {} `{}`", self.number(), self.code())
    }
}

/// What kind of file a path turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A regular file.
    RegularFile,
    /// A directory.
    Directory,
    /// A symbolic link.
    Symlink,
    /// A named pipe.
    Fifo,
    /// A character device (`/dev/null`, a terminal).
    CharacterDevice,
    /// A block device (a disk).
    BlockDevice,
    /// A unix domain socket.
    Socket,
    /// Anything the kernel reports that is none of the above.
    Unknown,
}

impl From<FileType> for FileKind {
    fn from(file_type: FileType) -> Self {
        match file_type {
            FileType::RegularFile => FileKind::RegularFile,
            FileType::Directory => FileKind::Directory,
            FileType::Symlink => FileKind::Symlink,
            FileType::Fifo => FileKind::Fifo,
            FileType::CharacterDevice => FileKind::CharacterDevice,
            FileType::BlockDevice => FileKind::BlockDevice,
            FileType::Socket => FileKind::Socket,
            FileType::Unknown => FileKind::Unknown,
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FileKind::RegularFile => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Symlink => "a symlink",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::CharacterDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Socket => "a unix socket",
            FileKind::Unknown => "a file of unknown kind",
        })
    }
}

/// What went wrong with a confined file operation. Refusals (see [`Error::rule`]) name
/// the path asked for and the rule that refused it.
#[derive(Debug, Error)]
pub enum Error {
    /// The path is relative.
    #[error(
        "refused `{}` ({}): the path is relative; give an absolute path inside the session's working directories",
        path.display(),
        Rule::Absolute
    )]
    NotAbsolute {
        /// The path asked for.
        path: PathBuf,
    },
    /// The path is not under any root.
    #[error(
        "refused `{}` ({}): the path is outside the session's working directories ({})",
        path.display(),
        Rule::InsideRoots,
        list(roots)
    )]
    OutsideRoots {
        /// The path asked for.
        path: PathBuf,
        /// The roots it was compared with.
        roots: Vec<PathBuf>,
    },
    /// The path leaves its root through `..` or a symlink.
    #[error(
        "refused `{}` ({}): the path leaves its working directory through `..` or a symlink pointing outside it (absolute symlinks always count as leaving)",
        path.display(),
        Rule::Beneath
    )]
    Escape {
        /// The path asked for.
        path: PathBuf,
    },
    /// Resolving the path met a symlink loop, or too many symlinks.
    #[error(
        "refused `{}` ({}): resolving the path meets a symlink loop or too many nested symlinks",
        path.display(),
        Rule::Beneath
    )]
    SymlinkLoop {
        /// The path asked for.
        path: PathBuf,
    },
    /// The path reaches one of Hearth's denied directories.
    #[error(
        "refused `{}` ({}): the path is inside Hearth's own data directory, which is off limits",
        path.display(),
        Rule::NotDenied
    )]
    Denied {
        /// The path asked for.
        path: PathBuf,
    },
    /// The path passes through a symlink where none is followed (beneath a
    /// [`ConfinedDir`](crate::ConfinedDir)).
    #[error(
        "refused `{}` ({}): the path passes through a symlink, and Hearth follows none in this directory; remove the symlink",
        path.display(),
        Rule::Beneath
    )]
    ThroughSymlink {
        /// The path asked for.
        path: PathBuf,
    },
    /// A write names a symlink as its final component.
    #[error(
        "refused `{}` ({}): the path is a symlink, and Hearth does not replace symlinks; write to the file it points to instead",
        path.display(),
        Rule::NoSymlinkReplaced
    )]
    SymlinkTarget {
        /// The path asked for.
        path: PathBuf,
    },
    /// A file operation named something that is not a regular file.
    #[error(
        "refused `{}` ({}): the path is {kind}, not a regular file",
        path.display(),
        Rule::FileKind
    )]
    NotRegularFile {
        /// The path asked for.
        path: PathBuf,
        /// What the path turned out to be.
        kind: FileKind,
    },
    /// A directory was asked for, and the path is something else.
    #[error(
        "refused `{}` ({}): the path is {kind}, not a directory",
        path.display(),
        Rule::FileKind
    )]
    NotDirectory {
        /// The path asked for.
        path: PathBuf,
        /// What the path turned out to be.
        kind: FileKind,
    },
    /// The file has more than one hard link.
    #[error(
        "refused `{}` ({}): the file has {links} hard links, so it may also be a file outside the working directories",
        path.display(),
        Rule::SingleLink
    )]
    HardLinked {
        /// The path asked for.
        path: PathBuf,
        /// The file's link count.
        links: u64,
    },
    /// The file is larger than the read limit.
    #[error(
        "refused `{}` ({}): the file has at least {size} bytes, more than the limit of {limit}; read a smaller file",
        path.display(),
        Rule::SizeCap
    )]
    TooLarge {
        /// The path asked for.
        path: PathBuf,
        /// The file's size as seen (at least this many bytes).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The file or a directory on its path changed while Hearth was checking it.
    #[error(
        "`{}` changed while Hearth was checking it (it was moved, replaced or swapped for a symlink); try again",
        path.display()
    )]
    Changed {
        /// The path asked for.
        path: PathBuf,
    },
    /// The kernel cannot confine path resolution.
    #[error(
        "Hearth cannot confine file access here: {reason}; it needs Linux 5.6 or newer with openat2 allowed, and refuses file access without it"
    )]
    Unsupported {
        /// What was missing.
        reason: String,
    },
    /// A root given to [`Roots::new`](crate::Roots::new) cannot be used.
    #[error("cannot use `{}` as a working directory: {reason}", path.display())]
    InvalidRoot {
        /// The root as given.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A denied directory given to [`Roots::new`](crate::Roots::new) cannot be used.
    #[error("cannot deny `{}`: {reason}", path.display())]
    InvalidDenied {
        /// The directory as given.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A root lies inside (or is) one of Hearth's denied directories.
    #[error(
        "cannot use `{}` as a working directory: it is inside Hearth's own data directory `{}`; choose a directory outside it",
        root.display(),
        denied.display()
    )]
    RootDenied {
        /// The root, canonical.
        root: PathBuf,
        /// The denied directory it is inside.
        denied: PathBuf,
    },
    /// An operating system call failed.
    #[error("could not {operation} `{}`: {source}", path.display())]
    Io {
        /// What was being done ("open", "read", "rename over", …).
        operation: &'static str,
        /// The path asked for.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// The rule that refused the path, for refusals; `None` for failures.
    pub fn rule(&self) -> Option<Rule> {
        match self {
            Error::NotAbsolute { .. } => Some(Rule::Absolute),
            Error::OutsideRoots { .. } => Some(Rule::InsideRoots),
            Error::Escape { .. } | Error::SymlinkLoop { .. } | Error::ThroughSymlink { .. } => {
                Some(Rule::Beneath)
            }
            Error::Denied { .. } => Some(Rule::NotDenied),
            Error::SymlinkTarget { .. } => Some(Rule::NoSymlinkReplaced),
            Error::NotRegularFile { .. } | Error::NotDirectory { .. } => Some(Rule::FileKind),
            Error::HardLinked { .. } => Some(Rule::SingleLink),
            Error::TooLarge { .. } => Some(Rule::SizeCap),
            Error::Changed { .. }
            | Error::Unsupported { .. }
            | Error::InvalidRoot { .. }
            | Error::InvalidDenied { .. }
            | Error::RootDenied { .. }
            | Error::Io { .. } => None,
        }
    }

    /// Whether the same call may succeed when repeated unchanged.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Changed { .. } => true,
            Error::Io { source, .. } => source.kind() == io::ErrorKind::Interrupted,
            Error::NotAbsolute { .. }
            | Error::OutsideRoots { .. }
            | Error::Escape { .. }
            | Error::SymlinkLoop { .. }
            | Error::ThroughSymlink { .. }
            | Error::Denied { .. }
            | Error::SymlinkTarget { .. }
            | Error::NotRegularFile { .. }
            | Error::NotDirectory { .. }
            | Error::HardLinked { .. }
            | Error::TooLarge { .. }
            | Error::Unsupported { .. }
            | Error::InvalidRoot { .. }
            | Error::InvalidDenied { .. }
            | Error::RootDenied { .. } => false,
        }
    }
}

/// Paths for a message: `` `a`, `b` ``.
fn list(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths
        .iter()
        .map(|path| format!("`{}`", path.display()))
        .collect();
    shown.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_numbered_in_the_order_they_run() {
        let numbers: Vec<u8> = Rule::ALL.iter().map(|rule| rule.number()).collect();
        assert_eq!(numbers, (1..=8).collect::<Vec<u8>>());
    }

    #[test]
    fn a_refusal_names_its_rule_and_path() {
        let error = Error::Escape {
            path: PathBuf::from("/work/project/link/secret"),
        };
        let message = error.to_string();
        assert!(message.contains("rule 3 `beneath`"), "{message}");
        assert!(message.contains("/work/project/link/secret"), "{message}");
        assert_eq!(error.rule(), Some(Rule::Beneath));
    }
}
