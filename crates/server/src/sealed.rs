//! Keys users give a team server, sealed before they reach the database.
//!
//! A user's provider key is sealed with AES-256-GCM under a key derived from the data
//! directory's `provider-keys.key` (64 hexadecimal digits, mode 0600, made on first use
//! and never replaced: a new one would leave every sealed key unreadable). The seal is
//! bound to whose key it is (user and provider name as associated data), so a sealed
//! value copied to another user's row does not open. The database, its dumps and its
//! replicas hold only sealed keys; the nodes of a team share `provider-keys.key` as
//! they share `login.key`.
//!
//! A sealed key is `v1.` and the base64 of a 96-bit random nonce followed by the
//! ciphertext and its tag.

use std::path::{Path, PathBuf};

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest as _, Sha256};

use crate::error::{Result, ServerError};

/// The sealing key's file name in the data directory.
pub const PROVIDER_KEYS_FILE: &str = "provider-keys.key";

/// What a sealed value starts with.
const VERSION: &str = "v1.";

/// What the file's secret is stretched with, so the same secret used for anything else
/// would give another key.
const LABEL: &[u8] = b"hearth user provider keys v1\0";

/// Seals and opens users' keys.
pub(crate) struct KeySeal {
    key: LessSafeKey,
    file: PathBuf,
}

impl std::fmt::Debug for KeySeal {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("KeySeal")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

/// Whose key a sealed value is: the associated data it is bound to.
fn bound_to(user: &str, name: &str) -> Vec<u8> {
    format!("{user}\0{name}").into_bytes()
}

impl KeySeal {
    /// The seal of the data directory `home`: its key file read, or made when missing.
    /// A key file other users can read is refused with what to do (it is not replaced).
    pub fn open_in(home: &Path) -> Result<Self> {
        let file = home.join(PROVIDER_KEYS_FILE);
        let secret = crate::token::load_or_create_token(&file)?;
        let mut hasher = Sha256::new();
        hasher.update(LABEL);
        hasher.update(secret.expose().as_bytes());
        let derived = hasher.finalize();
        let key = UnboundKey::new(&AES_256_GCM, &derived)
            .map_err(|_| ServerError::Random("cannot make the sealing key".to_owned()))?;
        Ok(Self {
            key: LessSafeKey::new(key),
            file,
        })
    }

    /// `secret` sealed for `user`'s provider `name`.
    pub fn seal(&self, user: &str, name: &str, secret: &str) -> Result<String> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|error| ServerError::Random(error.to_string()))?;
        let mut sealed = secret.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(bound_to(user, name)),
                &mut sealed,
            )
            .map_err(|_| ServerError::Random("cannot seal the key".to_owned()))?;
        let mut whole = nonce.to_vec();
        whole.extend_from_slice(&sealed);
        Ok(format!("{VERSION}{}", STANDARD.encode(whole)))
    }

    /// The secret sealed for `user`'s provider `name`, or why it cannot be opened (said
    /// to the user as is).
    pub fn open(
        &self,
        user: &str,
        name: &str,
        sealed: &str,
    ) -> std::result::Result<String, String> {
        let cannot = || {
            format!(
                "the key of your provider `{name}` cannot be opened on this server: it was sealed under another {} (the servers of a team share that file); add the provider again",
                self.file.display()
            )
        };
        let bytes = sealed
            .strip_prefix(VERSION)
            .and_then(|text| STANDARD.decode(text).ok())
            .filter(|bytes| bytes.len() > NONCE_LEN)
            .ok_or_else(cannot)?;
        let (nonce, ciphertext) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| cannot())?;
        let mut opened = ciphertext.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(bound_to(user, name)), &mut opened)
            .map_err(|_| cannot())?;
        String::from_utf8(plain.to_vec()).map_err(|_| cannot())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_sealed_key_opens_only_for_its_owner_and_under_its_key_file() {
        let home = tempfile::tempdir().unwrap();
        let seal = KeySeal::open_in(home.path()).unwrap();
        let sealed = seal
            .seal("u-0123456789abcdef", "mine", "sk-secret")
            .unwrap();
        assert!(sealed.starts_with("v1.") && !sealed.contains("sk-secret"));
        assert_ne!(
            sealed,
            seal.seal("u-0123456789abcdef", "mine", "sk-secret")
                .unwrap()
        );
        assert_eq!(
            seal.open("u-0123456789abcdef", "mine", &sealed).unwrap(),
            "sk-secret"
        );
        // Another user's or provider's row does not open it.
        assert!(seal.open("u-fedcba9876543210", "mine", &sealed).is_err());
        assert!(seal.open("u-0123456789abcdef", "other", &sealed).is_err());
        // The same file opens it again (a restarted node); another file does not.
        let again = KeySeal::open_in(home.path()).unwrap();
        assert_eq!(
            again.open("u-0123456789abcdef", "mine", &sealed).unwrap(),
            "sk-secret"
        );
        let elsewhere = tempfile::tempdir().unwrap();
        let other = KeySeal::open_in(elsewhere.path()).unwrap();
        let refused = other
            .open("u-0123456789abcdef", "mine", &sealed)
            .unwrap_err();
        assert!(refused.contains(PROVIDER_KEYS_FILE), "{refused}");
        for garbage in ["", "v1.", "v1.!!", "v2.AAAA", &sealed[..sealed.len() - 4]] {
            assert!(seal.open("u-0123456789abcdef", "mine", garbage).is_err());
        }
        let mode = std::fs::metadata(home.path().join(PROVIDER_KEYS_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_key_file_others_can_read_is_refused_not_replaced() {
        let home = tempfile::tempdir().unwrap();
        KeySeal::open_in(home.path()).unwrap();
        let file = home.path().join(PROVIDER_KEYS_FILE);
        let before = std::fs::read_to_string(&file).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = KeySeal::open_in(home.path()).unwrap_err();
        assert!(error.to_string().contains(PROVIDER_KEYS_FILE), "{error}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    }
}
