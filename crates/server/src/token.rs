//! The per-install token: 256 random bits, hex-encoded, in a file only the user can read.
//! Every request to the server carries it (or a browser session made from it). It is
//! compared in constant time and never logged: its `Debug` and `Display` are redacted.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use subtle::ConstantTimeEq;

use crate::error::{Result, ServerError};

/// Bytes of randomness in a token.
const TOKEN_BYTES: usize = 32;

/// A secret: a token or a browser-session id.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// 256 fresh random bits, hex-encoded.
    pub fn generate() -> Result<Self> {
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes).map_err(|error| ServerError::Random(error.to_string()))?;
        let mut text = String::with_capacity(TOKEN_BYTES * 2);
        for byte in bytes {
            text.push(char::from(HEX[usize::from(byte >> 4)]));
            text.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
        Ok(Self(text))
    }

    /// Whether `candidate` is this secret, in time independent of where they differ.
    pub fn matches(&self, candidate: &str) -> bool {
        self.0.as_bytes().ct_eq(candidate.as_bytes()).into()
    }

    /// A secret made by the server itself (a seal, a browser session).
    pub(crate) fn from_trusted(text: String) -> Self {
        Self(text)
    }

    /// The secret's text, for the one place that must send it (a header, a response).
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// A token given as text (64 hex digits: the install token or a team server user's
    /// API token); `None` when it is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        (text.len() == TOKEN_BYTES * 2 && text.bytes().all(|byte| HEX.contains(&byte)))
            .then(|| Self(text.to_owned()))
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Reads the token file, creating it (mode 0600, new random token) when missing. A file
/// that other users can read, or that does not hold a token, is refused with what to do.
pub fn load_or_create_token(path: &Path) -> Result<Secret> {
    match read_token(path) {
        Ok(token) => Ok(token),
        Err(ServerError::TokenMissing { .. }) => create_token(path),
        Err(error) => Err(error),
    }
}

/// Reads an existing token file (what clients do).
pub fn read_token(path: &Path) -> Result<Secret> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Err(ServerError::TokenMissing {
                path: path.to_path_buf(),
            });
        }
        Err(source) => return Err(token_io(path, source)),
    };
    check_private(path)?;
    Secret::parse(&text).ok_or_else(|| ServerError::TokenInvalid {
        path: path.to_path_buf(),
    })
}

fn create_token(path: &Path) -> Result<Secret> {
    if let Some(parent) = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
    {
        hearth_config::create_private_dir(parent).map_err(|source| token_io(parent, source))?;
    }
    let token = Secret::generate()?;
    let mut text = token.expose().as_bytes().to_vec();
    text.push(b'\n');
    // Written whole beside it and linked into place: a crash never leaves half a token.
    match hearth_fs::write_atomic(
        path,
        &text,
        hearth_fs::WriteMode::CreateNew,
        hearth_fs::FilePermissions::Private,
    ) {
        Ok(()) => {}
        // Another process made it first: use theirs.
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => return read_token(path),
        Err(source) => return Err(token_io(path, source)),
    }
    tracing::info!(path = %path.display(), "created the server token");
    Ok(token)
}

#[cfg(unix)]
fn check_private(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(path)
        .map_err(|source| token_io(path, source))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(ServerError::TokenExposed {
            path: path.to_path_buf(),
            mode: mode & 0o777,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_path: &Path) -> Result<()> {
    Ok(())
}

fn token_io(path: &Path, source: io::Error) -> ServerError {
    ServerError::TokenIo {
        path: PathBuf::from(path),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_private_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        let token = load_or_create_token(&path).unwrap();
        assert_eq!(token.expose().len(), 64);
        assert!(token.matches(token.expose()));
        assert!(!token.matches(&"0".repeat(64)));
        assert!(!token.matches(""));
        assert_eq!(load_or_create_token(&path).unwrap(), token);
        assert_eq!(
            format!("{token:?} {token}"),
            "Secret(<redacted>) <redacted>"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_token_other_users_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        load_or_create_token(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let error = load_or_create_token(&path).unwrap_err();
        assert!(error.to_string().contains("chmod 600"), "{error}");
    }

    #[test]
    fn a_file_without_a_token_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        fs::write(&path, "not a token").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        }
        let error = read_token(&path).unwrap_err();
        assert!(
            error.to_string().contains("does not hold a token"),
            "{error}"
        );
    }
}
