//! Content fingerprints: what a staged change remembers of the file it targets.

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

/// The SHA-256 of `bytes`, in lower-case hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest.iter() {
        // Writing into a String cannot fail.
        if write!(out, "{byte:02x}").is_err() {
            break;
        }
    }
    out
}

/// The fingerprint of a file's content: `sha256:<hex>`.
pub(crate) fn content_fingerprint(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// The fingerprint recorded for a file that does not exist.
pub(crate) const ABSENT: &str = "absent";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_sha256() {
        assert_eq!(
            content_fingerprint(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
