//! The file helpers every part of Hearth shares, written once:
//!
//! - [`write_atomic`]: a file replaced (or created) durably — a temporary file in the
//!   target's directory, written and synced, renamed over the target, the directory
//!   synced — so a crash leaves the old content or the new, never a mix; a private
//!   file is created 0600 from the start, never narrowed afterwards. [`remove_durably`]
//!   is its counterpart for removal.
//! - [`sha256_hex`], [`sha256_hex_of`] and [`hex`]: digests as lower-case hex.
//!
//! It does not decide where files go or confine paths (`hearth-confine` does that for
//! agents' requests), and it never creates directories.

mod atomic;
mod digest;

pub use atomic::{
    FilePermissions, WriteMode, remove_durably, sync_directory, synced_temporary, write_atomic,
};
pub use digest::{hex, sha256_hex, sha256_hex_of};
