//! Content fingerprints: what a staged change remembers of the events it touches (their
//! text in an iCalendar file, or their note), and digests of what it writes.

use sha2::{Digest, Sha256};

use hearth_fs::hex;
pub(crate) use hearth_fs::sha256_hex;

/// The fingerprint of a file's content: `sha256:<hex>`.
pub fn content_fingerprint(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// The fingerprint of a list of texts, each length-prefixed so that no two different
/// lists share one: `sha256:<hex>`.
pub fn parts_fingerprint<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    format!("sha256:{}", hex(&hasher.finalize()))
}

/// The fingerprint recorded for a file or event that does not exist.
pub const ABSENT: &str = "absent";

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

    #[test]
    fn digests_tell_lists_apart_however_their_texts_are_cut() {
        let of = |parts: &[&str]| parts_fingerprint(parts.iter().map(|p| p.as_bytes()));
        assert_ne!(of(&["ab", "c"]), of(&["a", "bc"]));
        assert_ne!(of(&["ab"]), of(&["ab", ""]));
        assert_eq!(of(&["ab", "c"]), of(&["ab", "c"]));
    }
}
