//! SHA-256 in lower-case hex, for the audit log's before and after hashes.

pub(crate) use hearth_fs::{sha256_hex, sha256_hex_of};

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn known_digests() {
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(sha256_hex(b""), empty);
        assert_eq!(sha256_hex_of(&b""[..]).unwrap(), empty);
        assert_eq!(
            sha256_hex_of(&b"abc"[..]).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
