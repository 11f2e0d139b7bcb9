//! Users of a team server: who they are (a name, and the OpenID identity they log in
//! with), the digests of their API tokens, the teams they are in and the roles they hold
//! on calendars and projects, and who owns a project. Sessions keep their owner in their
//! own row ([`SessionSummary::owner`](hearth_core::SessionSummary::owner)); listings and
//! searches narrow to what a user may see with [`SessionQuery::viewer`](crate::SessionQuery::viewer).
//!
//! The store does not authenticate anyone and does not decide who may do what: it keeps
//! the facts the server decides with. A token is kept only as the SHA-256 digest the
//! caller computed, never as the token itself.

mod credentials;
mod statements;

pub use credentials::{UserAgent, UserCredentialStore, UserProvider};

use std::collections::HashMap;
use std::str::FromStr;

use futures::future::BoxFuture;
use hearth_core::{Owner, ProjectId, SessionSummary, SessionUri, Timestamp};

use crate::error::{StoreError, StoreResult};

/// A user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserRecord {
    /// Their id: `u-` and 16 hexadecimal digits, never reused.
    pub id: String,
    /// Their name, unique (ignoring the case of letters): ASCII letters, digits, `-`,
    /// `_` and `.`, 1 to 64 of them.
    pub name: String,
    /// The OpenID provider they log in through, if they do.
    pub issuer: Option<String>,
    /// Who they are to that provider (its `sub` claim).
    pub subject: Option<String>,
    /// When they were made.
    pub created_at: Timestamp,
}

/// What a user may do in a team or on a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Sees and uses what is shared with the team, or the resource.
    Member,
    /// A member who also approves the changes proposed to it.
    Approver,
}

impl Role {
    /// The role as stored and shown: `member` or `approver`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Member => "member",
            Self::Approver => "approver",
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = StoreError;

    fn from_str(text: &str) -> StoreResult<Self> {
        match text {
            "member" => Ok(Self::Member),
            "approver" => Ok(Self::Approver),
            other => Err(StoreError::InvalidQuery(format!(
                "`{other}` is not a role: give `member` or `approver`"
            ))),
        }
    }
}

/// A user's place in a team.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Membership {
    /// The team's name.
    pub team: String,
    /// The user's role in it.
    pub role: Role,
}

/// The users of a team server, their tokens, teams and roles, and who owns a project.
/// Every method that takes a `user` accepts the user's id or, failing that, their name
/// (ignoring case), and fails with [`StoreError::NotFound`] for a user that does not
/// exist (except [`UserStore::remove_user`], which answers `false`). Names and team
/// names that break the rules fail with [`StoreError::InvalidQuery`] saying what is
/// allowed; a name already taken with [`StoreError::Conflict`].
pub trait UserStore: Send + Sync {
    /// A new user named `name` (ASCII letters, digits, `-`, `_`, `.`, 1..=64, and not of
    /// the form of a user id); their id is `u-` and 16 random hexadecimal digits.
    fn create_user<'a>(&'a self, name: &'a str) -> BoxFuture<'a, StoreResult<UserRecord>>;

    /// The user an OpenID identity logged in as before, or a new one named after `name`
    /// (cut down to the allowed characters, and made unique with a `-2`, `-3`… suffix
    /// when taken). Two nodes calling it at once for one identity get the same user.
    fn user_for_identity<'a>(
        &'a self,
        issuer: &'a str,
        subject: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, StoreResult<UserRecord>>;

    /// A user by id, or else by name (ignoring case).
    fn user<'a>(&'a self, id_or_name: &'a str) -> BoxFuture<'a, StoreResult<Option<UserRecord>>>;

    /// Every user, by name (ignoring case).
    fn users(&self) -> BoxFuture<'_, StoreResult<Vec<UserRecord>>>;

    /// Removes a user: their tokens, memberships and grants go with them; what they own
    /// stays, owned by a user id no one has. Returns whether there was such a user.
    fn remove_user<'a>(&'a self, user: &'a str) -> BoxFuture<'a, StoreResult<bool>>;

    /// Keeps an API token's digest (SHA-256, 64 hexadecimal digits, computed by the
    /// caller) for `user`, with a label saying what it is for.
    fn add_token<'a>(
        &'a self,
        user: &'a str,
        digest: &'a str,
        label: &'a str,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// The user whose token has this digest.
    fn user_by_token<'a>(
        &'a self,
        digest: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<UserRecord>>>;

    /// Forgets every token of `user`; returns how many there were.
    fn revoke_tokens<'a>(&'a self, user: &'a str) -> BoxFuture<'a, StoreResult<u64>>;

    /// Makes `user` a member of `team` with `role` (replacing an earlier role).
    fn join_team<'a>(
        &'a self,
        user: &'a str,
        team: &'a str,
        role: Role,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Takes `user` out of `team`; returns whether they were in it.
    fn leave_team<'a>(&'a self, user: &'a str, team: &'a str) -> BoxFuture<'a, StoreResult<bool>>;

    /// The teams `user` is in, by team name.
    fn memberships<'a>(&'a self, user: &'a str) -> BoxFuture<'a, StoreResult<Vec<Membership>>>;

    /// Gives `user` `role` on a resource (`calendar:<name>`, `project:<id>`).
    fn grant<'a>(
        &'a self,
        resource: &'a str,
        user: &'a str,
        role: Role,
    ) -> BoxFuture<'a, StoreResult<()>>;

    /// Takes a role on a resource back; returns whether `user` held it.
    fn revoke_grant<'a>(
        &'a self,
        resource: &'a str,
        user: &'a str,
        role: Role,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// The roles `user` holds on `resource`, member first.
    fn roles<'a>(
        &'a self,
        resource: &'a str,
        user: &'a str,
    ) -> BoxFuture<'a, StoreResult<Vec<Role>>>;

    /// Shares a live session with a team, or with nobody (`None`); returns the updated
    /// summary for the caller to publish, or `None` when there is no such session. A
    /// session that belongs to no user cannot be shared with a team.
    fn share_session<'a>(
        &'a self,
        session: &'a SessionUri,
        team: Option<&'a str>,
    ) -> BoxFuture<'a, StoreResult<Option<SessionSummary>>>;

    /// Records who a live project belongs to (and the team it is shared with), or that it
    /// belongs to no one; returns whether there is such a project.
    fn set_project_owner<'a>(
        &'a self,
        project: &'a ProjectId,
        owner: Option<&'a Owner>,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// Every project's owner, live or in the trash (projects without one are left out).
    fn project_owners(&self) -> BoxFuture<'_, StoreResult<HashMap<ProjectId, Owner>>>;
}

/// The most characters a user or team name has.
pub(crate) const MAX_NAME: usize = 64;

/// How a user id begins.
const ID_PREFIX: &str = "u-";

/// Whether `c` may be in a user or team name.
fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')
}

/// Whether `text` has the form of a user id (`u-` and 16 hexadecimal digits, any case),
/// which no name may have, so that an id and a name never mean two users.
fn has_id_form(text: &str) -> bool {
    text.len() == ID_PREFIX.len() + 16
        && text
            .get(..ID_PREFIX.len())
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case(ID_PREFIX))
        && text[ID_PREFIX.len()..]
            .chars()
            .all(|c| c.is_ascii_hexdigit())
}

/// Refuses a user name (`what` = "user") or team name that breaks the rules, saying which.
pub(crate) fn check_name(what: &str, name: &str) -> StoreResult<()> {
    if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(allowed) {
        return Err(StoreError::InvalidQuery(format!(
            "`{name}` cannot be a {what} name: use 1 to {MAX_NAME} ASCII letters, digits, `-`, `_` and `.`"
        )));
    }
    if what == "user" && has_id_form(name) {
        return Err(StoreError::InvalidQuery(format!(
            "`{name}` cannot be a user name: it has the form of a user id (`u-` and 16 hexadecimal digits); choose another"
        )));
    }
    Ok(())
}

/// A fresh user id: `u-` and 16 random hexadecimal digits.
pub(crate) fn new_user_id() -> StoreResult<String> {
    let mut bytes = [0_u8; 8];
    getrandom::fill(&mut bytes).map_err(|error| StoreError::Database {
        path: std::path::PathBuf::from("the system's random numbers"),
        detail: format!("no random user id could be made: {error}"),
    })?;
    Ok(format!("{ID_PREFIX}{}", crate::archive::hex(&bytes)))
}

/// What a name made from an identity does not begin or end with.
const EDGES: [char; 3] = ['-', '_', '.'];

/// `name` cut down to a user name's characters: any other character becomes `-`, runs
/// of `-` become one, and `-`, `_`, `.` are trimmed from the ends; `user` when nothing
/// is left. At most [`MAX_NAME`] characters.
pub(crate) fn sanitised_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(MAX_NAME));
    for c in name.chars() {
        let c = if allowed(c) { c } else { '-' };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    let trimmed = out.trim_matches(EDGES);
    let cut = trimmed[..trimmed.len().min(MAX_NAME)].trim_end_matches(EDGES);
    if cut.is_empty() {
        "user".to_owned()
    } else {
        cut.to_owned()
    }
}

/// The `number`th name tried for `base`: `base` itself first, then `base-2`, `base-3`…
/// (`base` shortened so that the whole fits in [`MAX_NAME`]).
pub(crate) fn numbered_name(base: &str, number: u32) -> String {
    if number <= 1 {
        return base.to_owned();
    }
    let suffix = format!("-{number}");
    let keep = base.len().min(MAX_NAME - suffix.len());
    format!("{}{suffix}", &base[..keep])
}

/// A token digest as stored: 64 hexadecimal digits, lower case; refuses anything else
/// (a token itself must never be kept).
pub(crate) fn checked_digest(digest: &str) -> StoreResult<String> {
    if digest.len() != 64 || !digest.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(StoreError::InvalidQuery(
            "a token is kept as its SHA-256 digest: give 64 hexadecimal digits, not the token"
                .to_owned(),
        ));
    }
    Ok(digest.to_ascii_lowercase())
}

/// Refuses a resource name that is empty, longer than 1024 bytes or holds control
/// characters.
pub(crate) fn check_resource(resource: &str) -> StoreResult<()> {
    if resource.is_empty() || resource.len() > 1024 || resource.chars().any(char::is_control) {
        return Err(StoreError::InvalidQuery(format!(
            "`{}` cannot be a resource: give one like `calendar:<name>` or `project:<id>` (at most 1024 bytes, no control characters)",
            resource.escape_debug()
        )));
    }
    Ok(())
}

/// A `LIKE … ESCAPE '\'` pattern of the names that begin with `base` (lower case).
pub(crate) fn names_beginning(base: &str) -> String {
    format!(
        "{}%",
        crate::sessions::escape_like(&base.to_ascii_lowercase())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rules_and_never_look_like_ids() {
        for good in ["alice", "A.b_c-9", &"x".repeat(64)] {
            check_name("user", good).unwrap();
        }
        for bad in ["", "al ice", "ålice", "a/b", &"x".repeat(65)] {
            let error = check_name("user", bad).unwrap_err().to_string();
            assert!(error.contains("ASCII letters, digits"), "{error}");
        }
        let id = new_user_id().unwrap();
        assert!(has_id_form(&id), "{id}");
        assert_ne!(id, new_user_id().unwrap());
        let error = check_name("user", &id.to_ascii_uppercase()).unwrap_err();
        assert!(error.to_string().contains("form of a user id"), "{error}");
        // A team may be named anything a user may, id form included.
        check_name("team", &id).unwrap();
    }

    #[test]
    fn names_from_an_identity_are_sanitised_and_numbered_within_the_length() {
        assert_eq!(sanitised_name("Alice Smith"), "Alice-Smith");
        assert_eq!(sanitised_name("  bob@example.com "), "bob-example.com");
        assert_eq!(sanitised_name("Zoë   Ünal"), "Zo-nal");
        assert_eq!(sanitised_name("--._"), "user");
        assert_eq!(sanitised_name("日本"), "user");
        let long = sanitised_name(&"a".repeat(100));
        assert_eq!(long.len(), MAX_NAME);
        assert_eq!(numbered_name("alice", 1), "alice");
        assert_eq!(numbered_name("alice", 2), "alice-2");
        let numbered = numbered_name(&long, 12);
        assert_eq!(numbered.len(), MAX_NAME);
        assert!(numbered.ends_with("a-12"), "{numbered}");
        check_name("user", &numbered).unwrap();
    }

    #[test]
    fn digests_roles_and_resources_are_checked() {
        let digest = "AB".repeat(32);
        assert_eq!(checked_digest(&digest).unwrap(), "ab".repeat(32));
        assert!(checked_digest("hearth_secret_token").is_err());
        assert_eq!("approver".parse::<Role>().unwrap(), Role::Approver);
        assert_eq!(Role::Member.as_str(), "member");
        assert!("owner".parse::<Role>().is_err());
        check_resource("calendar:work").unwrap();
        assert!(check_resource("").is_err());
        assert!(check_resource("calendar:\nwork").is_err());
        assert_eq!(names_beginning("A_b%"), "a\\_b\\%%");
    }
}
