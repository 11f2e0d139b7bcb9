//! The key that seals audit rows: 32 random bytes in a file beside the database (mode
//! 0600), made on the first keyed append and never replaced. A row's hash is the
//! HMAC-SHA256 (RFC 2104, the `hmac` crate) under this key of the row's sequence number,
//! content, key id and the previous row's hash, so someone who can write the database
//! but not read the key cannot re-seal a row they changed.

use std::fs;
use std::io;
use std::path::Path;
use std::sync::OnceLock;

use hearth_store::{AuditRecord, AuditSealer, StoreError, StoreResult};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::json;
use sha2::Sha256;

use crate::canonical::sha256_hex;

/// Bytes in a key.
pub(crate) const KEY_BYTES: usize = 32;

/// What the key id is the HMAC of.
const KEY_ID_LABEL: &[u8] = b"hearth-audit-key-id";

/// Hex characters of the key id that are kept.
const KEY_ID_CHARS: usize = 16;

use hearth_fs::hex;

/// A loaded key.
#[derive(Clone)]
pub(crate) struct AuditKey {
    mac: Hmac<Sha256>,
    id: String,
}

impl std::fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl AuditKey {
    /// The key made of `bytes`, which must be [`KEY_BYTES`] long; `path` names the file
    /// in errors.
    fn from_bytes(bytes: &[u8], path: &Path) -> StoreResult<Self> {
        if bytes.len() != KEY_BYTES {
            return Err(StoreError::Decode {
                what: "audit key",
                detail: format!(
                    "{} holds {} bytes, not {KEY_BYTES}; restore the audit key from a backup of the data directory",
                    path.display(),
                    bytes.len()
                ),
            });
        }
        let mac = Hmac::<Sha256>::new_from_slice(bytes).map_err(|error| StoreError::Decode {
            what: "audit key",
            detail: format!("{}: {error}", path.display()),
        })?;
        let mut label = mac.clone();
        label.update(KEY_ID_LABEL);
        let mut id = hex(&label.finalize().into_bytes());
        id.truncate(KEY_ID_CHARS);
        Ok(Self { mac, id })
    }

    /// The key's id: the first 16 hex characters of its HMAC of `hearth-audit-key-id`.
    /// It names the key without revealing it.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// HMAC-SHA256, lower-case hex.
    fn mac_hex(&self, bytes: &[u8]) -> String {
        let mut mac = self.mac.clone();
        mac.update(bytes);
        hex(&mac.finalize().into_bytes())
    }
}

impl AuditSealer for AuditKey {
    fn key_id(&self) -> &str {
        &self.id
    }

    fn seal(&self, record: &AuditRecord) -> String {
        self.mac_hex(keyed_content(record).as_bytes())
    }
}

/// What a keyed row's HMAC covers: the JSON array `["hearth-audit-2", seq, at (ms since
/// the epoch), actor, kind, tool, argument_hash, proposal_id, decision, outcome, detail,
/// key_id, prev_hash]`, as compact JSON.
pub(crate) fn keyed_content(record: &AuditRecord) -> String {
    let entry = &record.entry;
    json!([
        "hearth-audit-2",
        record.seq,
        entry.at.timestamp_millis(),
        entry.actor,
        entry.kind,
        entry.tool,
        entry.argument_hash,
        entry.proposal_id,
        entry.decision,
        entry.outcome,
        entry.detail,
        record.key_id,
        record.prev_hash,
    ])
    .to_string()
}

/// The hash of a row written before rows were keyed: plain SHA-256 over its sequence
/// number, content and the previous hash.
pub(crate) fn plain_seal(record: &AuditRecord) -> String {
    let entry = &record.entry;
    let content = json!([
        "hearth-audit-1",
        record.seq,
        entry.at.timestamp_millis(),
        entry.actor,
        entry.kind,
        entry.tool,
        entry.argument_hash,
        entry.proposal_id,
        entry.decision,
        entry.outcome,
        entry.detail,
        record.prev_hash,
    ]);
    sha256_hex(content.to_string().as_bytes())
}

/// The key in `path`; `None` when there is no such file.
pub(crate) fn read(path: &Path) -> StoreResult<Option<AuditKey>> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) if error.kind() == io::ErrorKind::PermissionDenied => {
            return Err(StoreError::Decode {
                what: "audit key",
                detail: format!(
                    "{}: {error}; give the user who runs Hearth read access to it",
                    path.display()
                ),
            });
        }
        Err(error) => return Err(StoreError::from_io(path, &error)),
    };
    warn_if_shared(path);
    AuditKey::from_bytes(&bytes, path).map(Some)
}

/// Notes a key file that others than its owner may read (they could re-seal rows).
#[cfg(unix)]
fn warn_if_shared(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    if let Ok(metadata) = fs::metadata(path)
        && metadata.permissions().mode() & 0o077 != 0
    {
        tracing::warn!(
            "{} can be read by other users, who could then forge audit entries; run `chmod 600 {}`",
            path.display(),
            path.display()
        );
    }
}

#[cfg(not(unix))]
fn warn_if_shared(_path: &Path) {}

/// Opens a new file for writing, readable by its owner only.
pub(crate) fn private_options() -> fs::OpenOptions {
    let mut options = fs::OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options
}

/// Makes a new key in `path`, or reads the one another process made first: the key is
/// written whole to a temporary file and linked into place, so no reader ever sees a
/// partial key and an existing key is never replaced.
pub(crate) fn create(path: &Path) -> StoreResult<AuditKey> {
    let mut bytes = [0_u8; KEY_BYTES];
    getrandom::fill(&mut bytes).map_err(|error| StoreError::Database {
        path: path.to_path_buf(),
        detail: format!("no random bytes for a new audit key: {error}"),
    })?;
    let key = AuditKey::from_bytes(&bytes, path)?;
    let directory = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(directory).map_err(|error| StoreError::from_io(directory, &error))?;
    // Written whole beside it and linked into place: no reader sees a partial key, and
    // an existing key is never replaced.
    let linked = hearth_fs::write_atomic(
        path,
        &bytes,
        hearth_fs::WriteMode::CreateNew,
        hearth_fs::FilePermissions::Private,
    );
    match linked {
        Ok(()) => {
            tracing::info!("made a new audit key in {}", path.display());
            Ok(key)
        }
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            read(path)?.ok_or_else(|| {
                StoreError::Conflict(format!(
                    "{} appeared and vanished while Hearth made the audit key; retry",
                    path.display()
                ))
            })
        }
        Err(error) => Err(StoreError::from_io(path, &error)),
    }
}

/// The key of a log whose database lives in memory only: random, shared by every log
/// in this process, gone when it ends (as the database is).
pub(crate) fn ephemeral() -> StoreResult<AuditKey> {
    static KEY: OnceLock<Option<AuditKey>> = OnceLock::new();
    let path = Path::new(":memory:");
    KEY.get_or_init(|| {
        let mut bytes = [0_u8; KEY_BYTES];
        match getrandom::fill(&mut bytes) {
            Ok(()) => AuditKey::from_bytes(&bytes, path).ok(),
            Err(error) => {
                tracing::error!("no random bytes for the audit key: {error}");
                None
            }
        }
    })
    .clone()
    .ok_or_else(|| StoreError::Database {
        path: path.to_path_buf(),
        detail: "no random bytes for the audit key".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4231, test case 2: the HMAC construction is the standard one.
    #[test]
    fn hmac_matches_rfc_4231() {
        let mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
        let key = AuditKey {
            mac,
            id: String::new(),
        };
        assert_eq!(
            key.mac_hex(b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_key_is_made_once_with_owner_only_access_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.key");
        assert!(read(&path).unwrap().is_none());
        let made = create(&path).unwrap();
        let again = create(&path).unwrap();
        assert_eq!(again.id(), made.id(), "an existing key is never replaced");
        assert_eq!(read(&path).unwrap().unwrap().id(), made.id());
        assert_eq!(fs::read(&path).unwrap().len(), KEY_BYTES);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [std::ffi::OsString::from("audit.key")]);
    }

    #[test]
    fn a_key_of_the_wrong_size_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.key");
        fs::write(&path, [1_u8; 31]).unwrap();
        let error = read(&path).unwrap_err().to_string();
        assert!(error.contains("31 bytes, not 32"), "{error}");
    }
}
