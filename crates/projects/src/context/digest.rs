//! Hex digests naming the cache's files.

use md5::{Digest, Md5};

pub(crate) use hearth_fs::hex;

/// Hex MD5 of `bytes`: a file name derived from an identity, not a security check.
pub(crate) fn md5_hex(bytes: &[u8]) -> String {
    hex(&Md5::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_of_known_text() {
        assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }
}
