//! Browser logins: one-time login codes, and the browser sessions they are traded for.
//!
//! A browser session is a credential the page keeps in its origin's `localStorage` and
//! sends itself, in a header (or in its WebSocket's protocol offer): never a cookie, which
//! a browser would hand to every other port of the same host. It is not kept in memory:
//! it is `<expiry>.<nonce>.<seal>`, the seal an HMAC-SHA256 of the expiry and nonce under
//! a key derived from the token and the login key (`login.key` in the data directory,
//! 0600). So a session outlives a server restart; it ends at its expiry, when the login
//! key is replaced (`hearth login --revoke`, which also tells the running server), or
//! when the token file is replaced.
//!
//! A session a user logged in to (OpenID Connect, on a team server) names the user:
//! `<expiry>.<nonce>.<user>.<seal>`, the seal covering the user too, so changing the user
//! (or dropping it) breaks the seal. User ids are 1 to 64 of `A-Z a-z 0-9 _ -`. The login
//! code such a login ends with is bound to the user, and expires after a few minutes.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use tokio_util::sync::CancellationToken;

use crate::error::{Result, ServerError};
use crate::token::Secret;

/// The login key's file name in the data directory.
pub const LOGIN_KEY_FILE: &str = "login.key";

/// How long a browser stays logged in unless told otherwise.
pub const DEFAULT_LOGIN_LIFETIME: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// One-time login codes waiting to be used; the oldest goes first.
const MAX_LOGIN_CODES: usize = 8;

/// How long a login code bound to a user stays usable: the page trades it at once.
const USER_CODE_LIFETIME: Duration = Duration::from_secs(5 * 60);

/// The longest user id a browser session carries.
const MAX_USER_ID_BYTES: usize = 64;

/// Whether `text` is a user id a browser session can carry: 1 to 64 of `A-Z a-z 0-9 _ -`
/// (so it never contains the credential's `.` separator).
pub(crate) fn is_user_id(text: &str) -> bool {
    (1..=MAX_USER_ID_BYTES).contains(&text.len())
        && text
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
}

fn checked_user(user: &str) -> Result<&str> {
    if is_user_id(user) {
        Ok(user)
    } else {
        Err(ServerError::UserId(user.chars().take(80).collect()))
    }
}

/// Where a data directory keeps its login key.
pub fn login_key_file(home: &Path) -> PathBuf {
    home.join(LOGIN_KEY_FILE)
}

/// Replaces the login key file with a new random key (written beside it and renamed
/// over it, mode 0600): every browser session made under the old key ends. A running
/// server must also be told (`POST /auth/revoke`); it reads the key only at start.
pub fn rotate_login_key(path: &Path) -> Result<()> {
    write_key(path, &Secret::generate()?)
}

/// A browser session the guard accepted.
#[derive(Clone, Debug)]
pub(crate) struct BrowserSession {
    /// When it ends (seconds since the Unix epoch).
    pub expires_at: u64,
    /// The user who logged in (team server logins); `None` for a session made from a
    /// login code of the token's holder.
    pub user: Option<String>,
    /// Cancelled when the login key is replaced: open connections of the session close.
    pub revoked: CancellationToken,
}

/// The current login key, as the sealing state derived from it.
struct Keyed {
    sealer: Hmac<Sha256>,
    revoked: CancellationToken,
}

/// A one-time login code not used yet.
struct LoginCode {
    code: Secret,
}

/// What a user's login code starts with: `u.<expiry>.<nonce>.<user>.<seal>`, sealed
/// under the login key, so any node sharing the token and `login.key` takes a code
/// another node issued (a team server's OpenID Connect login may come back to any node
/// behind its load balancer). Each node takes one code once.
const USER_CODE_PREFIX: &str = "u.";

/// What a sealed value's seal is computed for, apart from every other kind.
const USER_CODE_PURPOSE: &str = "user-code";

/// What a login code traded in was for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Redeemed {
    /// The user it was bound to (its session carries them), if any.
    pub user: Option<String>,
}

/// Login codes and browser sessions.
pub(crate) struct Logins {
    token: Secret,
    key_file: Option<PathBuf>,
    lifetime: Duration,
    keyed: Mutex<Keyed>,
    codes: Mutex<Vec<LoginCode>>,
    /// Users' login codes this node took, by nonce, with when they stop working.
    used_user_codes: Mutex<HashMap<String, u64>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

impl Logins {
    /// Logins under `token` and the key in `key_file` (made when missing; replaced when
    /// it is not a key or other users can read it). Without a file the key lives in
    /// memory, and sessions end with the process.
    pub fn open(token: Secret, key_file: Option<PathBuf>, lifetime: Duration) -> Result<Self> {
        let key = match &key_file {
            Some(path) => load_or_create_key(path)?,
            None => Secret::generate()?,
        };
        let keyed = Mutex::new(keyed(&token, &key)?);
        Ok(Self {
            token,
            key_file,
            lifetime,
            keyed,
            codes: Mutex::new(Vec::new()),
            used_user_codes: Mutex::new(HashMap::new()),
        })
    }

    /// A new login code: the code exchange accepts it once.
    pub fn issue_code(&self) -> Result<Secret> {
        let code = Secret::generate()?;
        let mut codes = lock(&self.codes);
        if codes.len() >= MAX_LOGIN_CODES {
            codes.remove(0);
        }
        codes.push(LoginCode { code: code.clone() });
        Ok(code)
    }

    /// A new login code that starts a session of `user` (a user id, see
    /// [`is_user_id`]): the code exchange accepts it once, within a few minutes.
    pub fn issue_user_code(&self, user: &str) -> Result<Secret> {
        self.issue_user_code_at(user, unix_now())
    }

    fn issue_user_code_at(&self, user: &str, now: u64) -> Result<Secret> {
        let user = checked_user(user)?;
        let nonce = Secret::generate()?;
        let expires_at = now.saturating_add(USER_CODE_LIFETIME.as_secs());
        let body = format!("{expires_at}.{}.{user}", nonce.expose());
        Ok(Secret::from_trusted(format!(
            "{USER_CODE_PREFIX}{}",
            self.seal_value(USER_CODE_PURPOSE, &body)
        )))
    }

    /// The user a user's login code logs in, its nonce and when it stops working, when
    /// it was sealed under this login key and works at `now`.
    fn open_user_code(&self, candidate: &str, now: u64) -> Option<(String, String, u64)> {
        let sealed = candidate.strip_prefix(USER_CODE_PREFIX)?;
        let body = self.open_value(USER_CODE_PURPOSE, sealed)?;
        let mut parts = body.splitn(3, '.');
        let expires_at: u64 = parts.next()?.parse().ok()?;
        let nonce = parts.next()?;
        let user = parts.next()?;
        (now < expires_at && is_user_id(user))
            .then(|| (user.to_owned(), nonce.to_owned(), expires_at))
    }

    /// `body` (which holds no seal) sealed under the login key for `purpose`:
    /// `<body>.<seal>`. Any node sharing the token and `login.key` opens it.
    pub(crate) fn seal_value(&self, purpose: &str, body: &str) -> String {
        format!("{body}.{}", self.value_seal(purpose, body))
    }

    /// The body of a value [`Logins::seal_value`] sealed for `purpose` under the present
    /// login key; `None` when the seal does not match.
    pub(crate) fn open_value<'a>(&self, purpose: &str, sealed: &'a str) -> Option<&'a str> {
        let (body, seal) = sealed.rsplit_once('.')?;
        Secret::from_trusted(self.value_seal(purpose, body))
            .matches(seal)
            .then_some(body)
    }

    fn value_seal(&self, purpose: &str, body: &str) -> String {
        let mut mac = lock(&self.keyed).sealer.clone();
        // Sessions' seals start with `session:`; no purpose is `session`.
        mac.update(format!("value:{purpose}:{body}").as_bytes());
        hearth_fs::hex(&mac.finalize().into_bytes())
    }

    /// Where `candidate` is among the codes not used yet. Every code is compared, so the
    /// time taken does not say which one matched.
    fn find_code(codes: &[LoginCode], candidate: &str) -> Option<usize> {
        let mut found = None;
        for (index, code) in codes.iter().enumerate() {
            if code.code.matches(candidate) {
                found = Some(index);
            }
        }
        found
    }

    /// Whether `candidate` is a login code not used yet (it stays usable).
    pub fn code_is_live(&self, candidate: &str) -> bool {
        if candidate.starts_with(USER_CODE_PREFIX) {
            return self
                .open_user_code(candidate, unix_now())
                .is_some_and(|(_, nonce, _)| !lock(&self.used_user_codes).contains_key(&nonce));
        }
        Self::find_code(&lock(&self.codes), candidate).is_some()
    }

    /// What `candidate` logs in, if it is a login code not used yet; it is used up.
    pub fn redeem_code(&self, candidate: &str) -> Option<Redeemed> {
        self.redeem_code_at(candidate, unix_now())
    }

    fn redeem_code_at(&self, candidate: &str, now: u64) -> Option<Redeemed> {
        if candidate.starts_with(USER_CODE_PREFIX) {
            let (user, nonce, expires_at) = self.open_user_code(candidate, now)?;
            let mut used = lock(&self.used_user_codes);
            used.retain(|_, ends| now < *ends);
            if used.insert(nonce, expires_at).is_some() {
                return None;
            }
            return Some(Redeemed { user: Some(user) });
        }
        let mut codes = lock(&self.codes);
        let index = Self::find_code(&codes, candidate)?;
        codes.remove(index);
        Some(Redeemed { user: None })
    }

    /// Starts a browser session now; returns its credential and when it ends.
    pub fn start_session(&self) -> Result<(Secret, u64)> {
        self.start_session_at(None, unix_now())
    }

    /// Starts a browser session of `user` (a user id, see [`is_user_id`]) now; returns
    /// its credential (which names the user, under the seal) and when it ends.
    pub fn start_user_session(&self, user: &str) -> Result<(Secret, u64)> {
        self.start_session_at(Some(checked_user(user)?), unix_now())
    }

    fn start_session_at(&self, user: Option<&str>, now: u64) -> Result<(Secret, u64)> {
        let nonce = Secret::generate()?;
        let expires_at = now.saturating_add(self.lifetime.as_secs());
        let seal = self.seal(expires_at, nonce.expose(), user);
        let credential = match user {
            Some(user) => format!("{expires_at}.{}.{user}.{seal}", nonce.expose()),
            None => format!("{expires_at}.{}.{seal}", nonce.expose()),
        };
        Ok((Secret::from_trusted(credential), expires_at))
    }

    /// The session a credential names, if it is sealed under the current key and has not
    /// expired.
    pub fn session(&self, credential: &str) -> Option<BrowserSession> {
        self.session_at(credential, unix_now())
    }

    fn session_at(&self, credential: &str, now: u64) -> Option<BrowserSession> {
        let parts: Vec<&str> = credential.splitn(5, '.').collect();
        let (expires, nonce, user, seal) = match parts[..] {
            [expires, nonce, seal] => (expires, nonce, None, seal),
            [expires, nonce, user, seal] if is_user_id(user) => (expires, nonce, Some(user), seal),
            _ => return None,
        };
        if expires.is_empty() || expires.len() > 20 || !expires.bytes().all(|b| b.is_ascii_digit())
        {
            return None;
        }
        let expires_at: u64 = expires.parse().ok()?;
        let (expected, revoked) = {
            let keyed = lock(&self.keyed);
            (
                Secret::from_trusted(seal_with(&keyed.sealer, expires_at, nonce, user)),
                keyed.revoked.clone(),
            )
        };
        if !expected.matches(seal) {
            return None;
        }
        // Past its end, or (the lifetime was shortened since) beyond the lifetime now.
        if now >= expires_at || expires_at > now.saturating_add(self.lifetime.as_secs()) {
            return None;
        }
        Some(BrowserSession {
            expires_at,
            user: user.map(str::to_owned),
            revoked,
        })
    }

    /// Ends every browser session: a new login key (written to its file first, so a
    /// restart keeps them ended), and the open connections of the old ones close.
    pub fn revoke(&self) -> Result<()> {
        let key = Secret::generate()?;
        if let Some(path) = &self.key_file {
            write_key(path, &key)?;
        }
        let fresh = keyed(&self.token, &key)?;
        let old = std::mem::replace(&mut *lock(&self.keyed), fresh);
        old.revoked.cancel();
        tracing::info!("every browser session was ended");
        Ok(())
    }

    fn seal(&self, expires_at: u64, nonce: &str, user: Option<&str>) -> String {
        seal_with(&lock(&self.keyed).sealer, expires_at, nonce, user)
    }
}

/// The sealing state of a login key: HMAC-SHA256 keyed with HMAC-SHA256(token, key), so
/// a new token or a new key each unseal every session.
fn keyed(token: &Secret, key: &Secret) -> Result<Keyed> {
    let unkeyable = || ServerError::Random("cannot key the browser-session seal".to_owned());
    let mut derive =
        Hmac::<Sha256>::new_from_slice(token.expose().as_bytes()).map_err(|_| unkeyable())?;
    derive.update(b"hearth browser login key:");
    derive.update(key.expose().as_bytes());
    let derived = derive.finalize().into_bytes();
    let sealer = Hmac::<Sha256>::new_from_slice(&derived).map_err(|_| unkeyable())?;
    Ok(Keyed {
        sealer,
        revoked: CancellationToken::new(),
    })
}

/// The seal of a session: the user (when there is one) is sealed after a marker no
/// session without a user has, and a user id has no `:`, so no two sessions share a text.
fn seal_with(sealer: &Hmac<Sha256>, expires_at: u64, nonce: &str, user: Option<&str>) -> String {
    let mut mac = sealer.clone();
    mac.update(format!("session:{expires_at}:{nonce}").as_bytes());
    if let Some(user) = user {
        mac.update(format!(":user:{user}").as_bytes());
    }
    hearth_fs::hex(&mac.finalize().into_bytes())
}

fn key_io(path: &Path, source: io::Error) -> ServerError {
    ServerError::LoginKeyIo {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads the login key, making a new one when the file is missing, does not hold a key,
/// or can be read by other users (a key others may know is replaced, which only logs
/// browsers out).
fn load_or_create_key(path: &Path) -> Result<Secret> {
    match crate::token::read_token(path) {
        Ok(key) => Ok(key),
        Err(ServerError::TokenMissing { .. }) => {
            let key = Secret::generate()?;
            write_key(path, &key)?;
            Ok(key)
        }
        Err(ServerError::TokenInvalid { .. } | ServerError::TokenExposed { .. }) => {
            tracing::warn!(
                path = %path.display(),
                "the login key was not a private key file; replaced it (browsers log in again)"
            );
            let key = Secret::generate()?;
            write_key(path, &key)?;
            Ok(key)
        }
        Err(ServerError::TokenIo { source, .. }) => Err(key_io(path, source)),
        Err(error) => Err(error),
    }
}

/// Writes `key` to `path` atomically: a private file beside it, synced, renamed over it,
/// and the directory synced.
fn write_key(path: &Path, key: &Secret) -> Result<()> {
    let parent = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    hearth_config::create_private_dir(parent).map_err(|source| key_io(parent, source))?;
    let mut text = key.expose().as_bytes().to_vec();
    text.push(b'\n');
    hearth_fs::write_atomic(
        path,
        &text,
        hearth_fs::WriteMode::Replace,
        hearth_fs::FilePermissions::Private,
    )
    .map_err(|source| key_io(path, source))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const DAY: u64 = 24 * 60 * 60;

    fn logins(token: &Secret, key_file: Option<PathBuf>) -> Logins {
        Logins::open(token.clone(), key_file, Duration::from_secs(30 * DAY)).unwrap()
    }

    #[test]
    fn a_session_outlives_the_server_but_not_its_key_or_token() {
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join(LOGIN_KEY_FILE);
        let token = Secret::generate().unwrap();
        let (credential, _) = logins(&token, Some(key_file.clone()))
            .start_session()
            .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&key_file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Another server on the same token and key (a restart) knows the session.
        let restarted = logins(&token, Some(key_file.clone()));
        assert!(restarted.session(credential.expose()).is_some());
        // A new token logs every browser out.
        let replaced = logins(&Secret::generate().unwrap(), Some(key_file.clone()));
        assert!(replaced.session(credential.expose()).is_none());
        // So does a new key, also for a server started afterwards.
        rotate_login_key(&key_file).unwrap();
        assert!(
            logins(&token, Some(key_file))
                .session(credential.expose())
                .is_none()
        );
    }

    #[test]
    fn revoking_ends_sessions_at_once_and_closes_their_connections() {
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join(LOGIN_KEY_FILE);
        let token = Secret::generate().unwrap();
        let logins = logins(&token, Some(key_file.clone()));
        let before = fs::read_to_string(&key_file).unwrap();
        let (credential, _) = logins.start_session().unwrap();
        let session = logins.session(credential.expose()).unwrap();
        assert!(!session.revoked.is_cancelled());
        logins.revoke().unwrap();
        assert!(session.revoked.is_cancelled());
        assert!(logins.session(credential.expose()).is_none());
        assert_ne!(fs::read_to_string(&key_file).unwrap(), before);
        // A session started afterwards works, here and after a restart.
        let (fresh, _) = logins.start_session().unwrap();
        assert!(logins.session(fresh.expose()).is_some());
        assert!(
            self::logins(&token, Some(key_file))
                .session(fresh.expose())
                .is_some()
        );
    }

    #[test]
    fn a_session_ends_at_its_expiry() {
        let logins = logins(&Secret::generate().unwrap(), None);
        let now = 1_900_000_000;
        let (credential, expires_at) = logins.start_session_at(None, now).unwrap();
        assert_eq!(expires_at, now + 30 * DAY);
        assert!(logins.session_at(credential.expose(), now).is_some());
        assert!(
            logins
                .session_at(credential.expose(), expires_at - 1)
                .is_some()
        );
        assert!(logins.session_at(credential.expose(), expires_at).is_none());
        assert!(
            logins
                .session_at(credential.expose(), expires_at + DAY)
                .is_none()
        );
        // A session sealed to end beyond the lifetime (the lifetime was shortened) ends.
        let shorter = Logins {
            lifetime: Duration::from_secs(DAY),
            ..logins
        };
        assert!(shorter.session_at(credential.expose(), now).is_none());
        assert!(
            shorter
                .session_at(credential.expose(), expires_at - DAY + 1)
                .is_some()
        );
    }

    #[test]
    fn a_forged_or_altered_credential_is_refused() {
        let token = Secret::generate().unwrap();
        let logins = logins(&token, None);
        let (credential, _) = logins.start_session().unwrap();
        assert!(logins.session(credential.expose()).is_some(), "control");
        let (expires, rest) = credential.expose().split_once('.').unwrap();
        let (nonce, seal) = rest.split_once('.').unwrap();
        let mut altered = seal.to_owned();
        let last = if altered.ends_with('0') { "1" } else { "0" };
        altered.replace_range(altered.len() - 1.., last);
        let later: u64 = expires.parse::<u64>().unwrap() + 1;
        for forged in [
            format!("{expires}.{nonce}.{altered}"),
            format!("{later}.{nonce}.{seal}"),
            format!("{expires}.{}.{seal}", "0".repeat(64)),
            format!("{expires}.{nonce}.{seal}.x"),
            format!("+{expires}.{nonce}.{seal}"),
            format!("{nonce}.{seal}"),
            String::new(),
            "..".to_owned(),
            token.expose().to_owned(),
        ] {
            assert!(logins.session(&forged).is_none(), "{forged}");
        }
    }

    #[test]
    fn a_user_session_names_its_user_under_the_seal() {
        let token = Secret::generate().unwrap();
        let logins = logins(&token, None);
        let (credential, expires_at) = logins.start_user_session("u-alice_1").unwrap();
        let parts: Vec<&str> = credential.expose().split('.').collect();
        assert_eq!(parts.len(), 4, "{credential:?}");
        assert_eq!(parts[0], expires_at.to_string());
        assert_eq!(parts[2], "u-alice_1");
        let session = logins.session(credential.expose()).unwrap();
        assert_eq!(session.user.as_deref(), Some("u-alice_1"));
        assert_eq!(session.expires_at, expires_at);
        // A session without a user keeps the three-part form, and names nobody.
        let (plain, _) = logins.start_session().unwrap();
        assert_eq!(plain.expose().split('.').count(), 3);
        assert_eq!(logins.session(plain.expose()).unwrap().user, None);
        // It ends like any other session.
        assert!(logins.session_at(credential.expose(), expires_at).is_none());
    }

    #[test]
    fn a_tampered_user_breaks_the_seal() {
        let token = Secret::generate().unwrap();
        let logins = logins(&token, None);
        let (credential, _) = logins.start_user_session("alice").unwrap();
        let (plain, _) = logins.start_session().unwrap();
        assert!(logins.session(credential.expose()).is_some(), "control");
        let [expires, nonce, user, seal] = credential.expose().split('.').collect::<Vec<_>>()[..]
        else {
            panic!("four parts: {credential:?}");
        };
        let (plain_expires, plain_rest) = plain.expose().split_once('.').unwrap();
        let (plain_nonce, plain_seal) = plain_rest.split_once('.').unwrap();
        for forged in [
            format!("{expires}.{nonce}.bob.{seal}"),
            format!("{expires}.{nonce}.alicf.{seal}"),
            format!("{expires}.{nonce}.{user}x.{seal}"),
            // Dropping the user, or adding one to a session without a user.
            format!("{expires}.{nonce}.{seal}"),
            format!("{plain_expires}.{plain_nonce}.alice.{plain_seal}"),
            // Not a user id: refused before the seal is looked at.
            format!("{expires}.{nonce}.al ice.{seal}"),
            format!("{expires}.{nonce}..{seal}"),
            format!("{expires}.{nonce}.{user}.{seal}.x"),
        ] {
            assert!(logins.session(&forged).is_none(), "{forged}");
        }
    }

    #[test]
    fn only_user_ids_are_sealed_into_sessions() {
        let logins = logins(&Secret::generate().unwrap(), None);
        for user in ["a", "A-z_09", &"x".repeat(64)] {
            assert!(logins.start_user_session(user).is_ok(), "{user}");
            assert!(logins.issue_user_code(user).is_ok(), "{user}");
        }
        for user in ["", "a.b", "a b", "a:b", "é", "a/b", &"x".repeat(65)] {
            let error = logins.start_user_session(user).unwrap_err();
            assert!(matches!(error, ServerError::UserId(_)), "{user}: {error}");
            assert!(error.to_string().contains("not a user id"), "{error}");
            assert!(logins.issue_user_code(user).is_err(), "{user}");
        }
    }

    #[test]
    fn a_user_login_code_works_once_per_node_on_any_node_and_expires() {
        let token = Secret::generate().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join(LOGIN_KEY_FILE);
        let logins = logins(&token, Some(key_file.clone()));
        let now = unix_now();
        let code = logins.issue_user_code_at("alice", now).unwrap();
        let plain = logins.issue_code().unwrap();
        assert!(code.expose().starts_with(USER_CODE_PREFIX));
        assert!(logins.code_is_live(code.expose()));
        let alice = Some(Redeemed {
            user: Some("alice".to_owned()),
        });
        assert_eq!(logins.redeem_code_at(code.expose(), now), alice);
        assert_eq!(logins.redeem_code_at(code.expose(), now), None, "used up");
        assert!(!logins.code_is_live(code.expose()));
        // Another node with the same token and login key takes a code this one issued.
        let other_node = self::logins(&token, Some(key_file));
        let issued_here = logins.issue_user_code_at("bob", now).unwrap();
        assert_eq!(
            other_node.redeem_code_at(issued_here.expose(), now),
            Some(Redeemed {
                user: Some("bob".to_owned())
            })
        );
        // A server with another key, a tampered code, or an old one: nothing.
        let stranger = self::logins(&token, None);
        let fresh = logins.issue_user_code_at("carol", now).unwrap();
        assert_eq!(stranger.redeem_code_at(fresh.expose(), now), None);
        let tampered = fresh.expose().replace("carol", "alice");
        assert_eq!(logins.redeem_code_at(&tampered, now), None);
        let after = now + USER_CODE_LIFETIME.as_secs();
        assert_eq!(logins.redeem_code_at(fresh.expose(), after), None);
        // A code without a user works until used, whenever.
        assert_eq!(
            logins.redeem_code_at(plain.expose(), after),
            Some(Redeemed { user: None })
        );
    }

    #[test]
    fn a_sealed_value_opens_only_for_its_purpose_and_key() {
        let token = Secret::generate().unwrap();
        let logins = logins(&token, None);
        let sealed = logins.seal_value("oidc", "state.nonce");
        assert_eq!(logins.open_value("oidc", &sealed), Some("state.nonce"));
        assert_eq!(logins.open_value("other", &sealed), None);
        assert_eq!(logins.open_value("oidc", "state.nonce.00"), None);
        assert_eq!(self::logins(&token, None).open_value("oidc", &sealed), None);
    }

    #[test]
    fn a_login_code_works_once() {
        let logins = logins(&Secret::generate().unwrap(), None);
        let code = logins.issue_code().unwrap();
        assert_eq!(logins.redeem_code(&"0".repeat(64)), None);
        assert!(logins.code_is_live(code.expose()));
        assert!(
            logins.code_is_live(code.expose()),
            "looking does not use it"
        );
        assert_eq!(
            logins.redeem_code(code.expose()),
            Some(Redeemed { user: None })
        );
        assert!(!logins.code_is_live(code.expose()));
        assert_eq!(logins.redeem_code(code.expose()), None, "used up");
        // Only the newest few stay valid.
        let codes: Vec<_> = (0..=MAX_LOGIN_CODES)
            .map(|_| logins.issue_code().unwrap())
            .collect();
        assert_eq!(logins.redeem_code(codes[0].expose()), None);
        assert!(
            logins
                .redeem_code(codes[MAX_LOGIN_CODES].expose())
                .is_some()
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_key_file_others_can_read_is_replaced() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let key_file = dir.path().join(LOGIN_KEY_FILE);
        let token = Secret::generate().unwrap();
        let (credential, _) = logins(&token, Some(key_file.clone()))
            .start_session()
            .unwrap();
        fs::set_permissions(&key_file, fs::Permissions::from_mode(0o644)).unwrap();
        let reopened = logins(&token, Some(key_file.clone()));
        assert!(reopened.session(credential.expose()).is_none());
        let mode = fs::metadata(&key_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
