//! File access confined to a set of root directories.
//!
//! An agent working for Hearth reads and writes files by absolute path and starts
//! terminals in directories. [`Roots`] holds a session's working directories ("roots")
//! and the directories that stay off limits even inside them (Hearth's own data
//! directory), and every path goes through it: [`Roots::read`], [`Roots::write`] and
//! [`Roots::directory`].
//!
//! Decisions are made by the kernel when it opens, not by checks on path strings. Each
//! root is opened once, and every path is resolved relative to that directory with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: a `..` or a symlink that leaves
//! the root fails the open itself, so a component swapped for a symlink between a check
//! and a use cannot lead outside. Without `openat2` (Linux before 5.6, or a sandbox that
//! blocks it) nothing is opened and [`Error::Unsupported`] says why.
//!
//! The rules, in the order they run (each refusal names its [`Rule`] and the path):
//!
//! 1. [`Rule::Absolute`]: relative paths are refused ([`Error::NotAbsolute`]).
//! 2. [`Rule::InsideRoots`]: the path, read lexically, is under a root; the longest
//!    matching root is chosen ([`Error::OutsideRoots`]). A path that passes outside its
//!    root with `..` before entering it is refused ([`Error::Escape`]).
//! 3. [`Rule::Beneath`]: the kernel resolves the rest of the path beneath the root;
//!    `..` or a symlink leaving it, including every absolute symlink, is refused
//!    ([`Error::Escape`]), and so are symlink loops ([`Error::SymlinkLoop`]). Symlinks
//!    that stay beneath the root are followed.
//! 4. [`Rule::NotDenied`]: what was opened is not in a denied directory, judged by
//!    walking from the opened directory (or the one holding the opened file) up through
//!    `..` to the root, comparing device and inode numbers ([`Error::Denied`]).
//! 5. [`Rule::NoSymlinkReplaced`]: a write's final component is not a symlink
//!    ([`Error::SymlinkTarget`]).
//! 6. [`Rule::FileKind`]: only regular files are read and written, only directories
//!    serve as directories ([`Error::NotRegularFile`], [`Error::NotDirectory`]). A path
//!    is located with `O_PATH` first, so a FIFO, device or socket is never opened.
//! 7. [`Rule::SingleLink`]: a file with more than one hard link is refused
//!    ([`Error::HardLinked`]); it may be the same inode as a file outside.
//! 8. [`Rule::SizeCap`]: reads are capped ([`Error::TooLarge`]).
//!
//! Writes are atomic: a temporary file `.<name>.hearth-tmp-<random>` is created beside
//! the target, written, synced and renamed over it, and the directory is synced; on
//! failure the old file is intact and the temporary file removed. [`Written`] reports
//! the SHA-256 of the content before and after, for the audit log.
//!
//! Roots are canonicalized once, at construction; a path may use the canonical
//! spelling of a root or the spelling it was given in. Absolute symlinks inside a root
//! are refused even when they point back into it, because the kernel cannot resolve
//! them beneath the root.
//!
//! [`read_outside`] reads a file the user named anywhere (a project's source), refusing
//! it when it really lies in one of Hearth's denied directories, whatever symlink or
//! hard link leads there.
//!
//! [`ConfinedDir`] is for a directory Hearth owns (its context cache): files beneath it
//! are reached by relative paths the kernel resolves with no symlink followed at all,
//! so a symlink planted there cannot lead a read, write or removal outside (see its
//! module for the rules).
//!
//! This crate does not decide which directories a session gets, ask the user for
//! approval, record the audit log, or confine what a terminal's commands do once
//! started: it confines the paths Hearth itself opens on an agent's behalf.

mod digest;
mod error;
mod kernel;
mod lexical;
mod outside;
mod read;
mod roots;
mod tree;
mod write;

pub use error::{Error, FileKind, Result, Rule};
pub use outside::read_outside;
pub use roots::Roots;
pub use tree::{ConfinedDir, DirEntry};
pub use write::Written;
