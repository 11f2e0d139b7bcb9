//! [`UserStore`] on both databases. Its statements use only what SQLite and PostgreSQL
//! share — numbered `$N` parameters, `ON CONFLICT`, `RETURNING`, `lower()` — so one text
//! of each serves both, and [`user_store_by_statements`] writes the implementation once;
//! orders that would differ between the databases' collations are made here instead.

use std::collections::{HashMap, HashSet};

use futures::future::BoxFuture;
use hearth_core::{Owner, ProjectId, SessionSummary, SessionUri, Timestamp, now};

use super::{
    Membership, Role, UserRecord, UserStore, check_name, check_resource, checked_digest,
    names_beginning, new_user_id, numbered_name, sanitised_name,
};
use crate::codec::{from_millis, parse_id, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::rows::{Columns, decode_owner, decode_user};
use crate::sqlite::SqliteStore;

/// How many names [`UserStore::user_for_identity`] tries for a new user before it gives
/// up: more than that many taken at once means something else is wrong.
const NAME_ATTEMPTS: usize = 32;

/// Whether an insert failed on a uniqueness rule.
fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

/// Now, to the millisecond a row keeps.
fn now_stored() -> StoreResult<Timestamp> {
    from_millis(to_millis(&now()))
}

/// The error of a name taken by another user.
fn name_taken(name: &str) -> StoreError {
    StoreError::Conflict(format!(
        "a user named `{name}` already exists (names differing only in case count as the same); choose another name"
    ))
}

/// Users in name order (letters' case folded, then as written), the same on both databases.
fn by_name(mut users: Vec<UserRecord>) -> Vec<UserRecord> {
    users.sort_by(|a, b| {
        (a.name.to_ascii_lowercase(), &a.name).cmp(&(b.name.to_ascii_lowercase(), &b.name))
    });
    users
}

/// A stored role, or a decoding error naming it.
fn decode_role(text: &str) -> StoreResult<Role> {
    text.parse().map_err(|_| StoreError::Decode {
        what: "role",
        detail: format!("`{text}` is not a role"),
    })
}

/// A row of `projects` (`id`, `owner`, `team`) as an owned project.
fn decode_project_owner(row: &impl Columns) -> StoreResult<Option<(ProjectId, Owner)>> {
    let get = |error: sqlx::Error| StoreError::Decode {
        what: "project owner",
        detail: error.to_string(),
    };
    let id = row.text("id").map_err(get)?;
    let id = parse_id("project id", &id, ProjectId::parse)?;
    Ok(decode_owner(row, &get)?.map(|owner| (id, owner)))
}

/// The next name to try for a new user named after `base`, from `number` on: one not in
/// `taken` (lower case) and allowed; advances `number` past it.
fn next_free_name(base: &str, number: &mut u32, taken: &HashSet<String>) -> String {
    loop {
        let name = numbered_name(base, *number);
        *number += 1;
        if !taken.contains(&name.to_ascii_lowercase()) && check_name("user", &name).is_ok() {
            return name;
        }
    }
}

/// Implements [`UserStore`] for a store type with a `pool` and an `error` method, with the
/// statements both databases share.
macro_rules! user_store_by_statements {
    ($store:ty) => {
        impl $store {
            /// A user by id, or else by name (ignoring case).
            async fn find_user(&self, id_or_name: &str) -> StoreResult<Option<UserRecord>> {
                let rows = sqlx::query(
                    "SELECT id, name, issuer, subject, created_at FROM users
                     WHERE id = $1 OR lower(name) = $2",
                )
                .bind(id_or_name)
                .bind(id_or_name.to_ascii_lowercase())
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
                let mut users = rows.iter().map(decode_user).collect::<StoreResult<Vec<_>>>()?;
                users.sort_by_key(|user| user.id != id_or_name);
                Ok(users.into_iter().next())
            }

            /// The id of `user` (an id, or else a name); `NotFound` when there is none.
            async fn user_id_of(&self, user: &str) -> StoreResult<String> {
                match self.find_user(user).await? {
                    Some(found) => Ok(found.id),
                    None => Err(StoreError::NotFound {
                        what: "user",
                        key: user.to_owned(),
                    }),
                }
            }

            /// The user an OpenID identity belongs to.
            async fn identity_user(
                &self,
                issuer: &str,
                subject: &str,
            ) -> StoreResult<Option<UserRecord>> {
                let row = sqlx::query(
                    "SELECT id, name, issuer, subject, created_at FROM users
                     WHERE issuer = $1 AND subject = $2",
                )
                .bind(issuer)
                .bind(subject)
                .fetch_optional(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
                row.as_ref().map(decode_user).transpose()
            }

            /// The names (lower case) that begin with `base`, ignoring case.
            async fn names_beginning_with(&self, base: &str) -> StoreResult<HashSet<String>> {
                let names: Vec<String> = sqlx::query_scalar(
                    "SELECT lower(name) FROM users WHERE lower(name) LIKE $1 ESCAPE '\\'",
                )
                .bind(names_beginning(base))
                .fetch_all(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
                Ok(names.into_iter().collect())
            }

            /// Inserts `user` unless its id, name or identity is taken; whether it did.
            async fn insert_user_if_free(&self, user: &UserRecord) -> StoreResult<bool> {
                let inserted: Option<String> = sqlx::query_scalar(
                    "INSERT INTO users (id, name, issuer, subject, created_at)
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING id",
                )
                .bind(&user.id)
                .bind(&user.name)
                .bind(user.issuer.as_deref())
                .bind(user.subject.as_deref())
                .bind(to_millis(&user.created_at))
                .fetch_optional(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
                Ok(inserted.is_some())
            }

            /// See [`UserStore::user_for_identity`]: the identity's user, or a new one
            /// under the first free name; a node that loses a race for the identity
            /// reads the winner's user.
            async fn user_for_identity_impl(
                &self,
                issuer: &str,
                subject: &str,
                name: &str,
            ) -> StoreResult<UserRecord> {
                if let Some(user) = self.identity_user(issuer, subject).await? {
                    return Ok(user);
                }
                let base = sanitised_name(name);
                let taken = self.names_beginning_with(&base).await?;
                let mut number = 1;
                for _ in 0..NAME_ATTEMPTS {
                    let user = UserRecord {
                        id: new_user_id()?,
                        name: next_free_name(&base, &mut number, &taken),
                        issuer: Some(issuer.to_owned()),
                        subject: Some(subject.to_owned()),
                        created_at: now_stored()?,
                    };
                    if self.insert_user_if_free(&user).await? {
                        return Ok(user);
                    }
                    // Another node made this identity's user, or took the name.
                    if let Some(user) = self.identity_user(issuer, subject).await? {
                        return Ok(user);
                    }
                }
                Err(StoreError::Conflict(format!(
                    "no free user name like `{base}` was found in {NAME_ATTEMPTS} tries for the identity `{subject}` of {issuer}; retry the login"
                )))
            }

            /// See [`UserStore::share_session`].
            async fn share_session_impl(
                &self,
                session: &SessionUri,
                team: Option<&str>,
            ) -> StoreResult<Option<SessionSummary>> {
                if let Some(team) = team {
                    check_name("team", team)?;
                }
                let Some(summary) = self.session_impl(session).await? else {
                    return Ok(None);
                };
                if summary.owner.is_none() && team.is_some() {
                    return Err(StoreError::InvalidQuery(format!(
                        "session {session} belongs to no user, so it cannot be shared with a team; only a user's session can be"
                    )));
                }
                sqlx::query(
                    "UPDATE sessions SET team = $1
                     WHERE uri = $2 AND deleted_at IS NULL AND owner IS NOT NULL",
                )
                .bind(team)
                .bind(session.to_string())
                .execute(&self.pool)
                .await
                .map_err(|e| self.error(e))?;
                self.announce_summary(session).await?;
                self.session_impl(session).await
            }
        }

        impl UserStore for $store {
            fn create_user<'a>(&'a self, name: &'a str) -> BoxFuture<'a, StoreResult<UserRecord>> {
                Box::pin(async move {
                    check_name("user", name)?;
                    let user = UserRecord {
                        id: new_user_id()?,
                        name: name.to_owned(),
                        issuer: None,
                        subject: None,
                        created_at: now_stored()?,
                    };
                    sqlx::query(
                        "INSERT INTO users (id, name, created_at) VALUES ($1, $2, $3)",
                    )
                    .bind(&user.id)
                    .bind(&user.name)
                    .bind(to_millis(&user.created_at))
                    .execute(&self.pool)
                    .await
                    .map_err(|error| {
                        if is_unique_violation(&error) {
                            name_taken(name)
                        } else {
                            self.error(error)
                        }
                    })?;
                    Ok(user)
                })
            }

            fn user_for_identity<'a>(
                &'a self,
                issuer: &'a str,
                subject: &'a str,
                name: &'a str,
            ) -> BoxFuture<'a, StoreResult<UserRecord>> {
                Box::pin(self.user_for_identity_impl(issuer, subject, name))
            }

            fn user<'a>(
                &'a self,
                id_or_name: &'a str,
            ) -> BoxFuture<'a, StoreResult<Option<UserRecord>>> {
                Box::pin(self.find_user(id_or_name))
            }

            fn users(&self) -> BoxFuture<'_, StoreResult<Vec<UserRecord>>> {
                Box::pin(async move {
                    let rows =
                        sqlx::query("SELECT id, name, issuer, subject, created_at FROM users")
                            .fetch_all(&self.pool)
                            .await
                            .map_err(|e| self.error(e))?;
                    Ok(by_name(rows.iter().map(decode_user).collect::<StoreResult<_>>()?))
                })
            }

            fn remove_user<'a>(&'a self, user: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(async move {
                    let Some(found) = self.find_user(user).await? else {
                        return Ok(false);
                    };
                    let done = sqlx::query("DELETE FROM users WHERE id = $1")
                        .bind(&found.id)
                        .execute(&self.pool)
                        .await
                        .map_err(|e| self.error(e))?;
                    Ok(done.rows_affected() > 0)
                })
            }

            fn add_token<'a>(
                &'a self,
                user: &'a str,
                digest: &'a str,
                label: &'a str,
            ) -> BoxFuture<'a, StoreResult<()>> {
                Box::pin(async move {
                    let digest = checked_digest(digest)?;
                    let id = self.user_id_of(user).await?;
                    sqlx::query(
                        "INSERT INTO user_tokens (digest, user_id, label, created_at)
                         VALUES ($1, $2, $3, $4)",
                    )
                    .bind(&digest)
                    .bind(&id)
                    .bind(label)
                    .bind(to_millis(&now()))
                    .execute(&self.pool)
                    .await
                    .map_err(|error| {
                        if is_unique_violation(&error) {
                            StoreError::Conflict(
                                "a token with this digest is already kept; make a new token"
                                    .to_owned(),
                            )
                        } else {
                            self.error(error)
                        }
                    })?;
                    Ok(())
                })
            }

            fn user_by_token<'a>(
                &'a self,
                digest: &'a str,
            ) -> BoxFuture<'a, StoreResult<Option<UserRecord>>> {
                Box::pin(async move {
                    let Ok(digest) = checked_digest(digest) else {
                        return Ok(None);
                    };
                    let row = sqlx::query(
                        "SELECT u.id, u.name, u.issuer, u.subject, u.created_at
                         FROM user_tokens t JOIN users u ON u.id = t.user_id WHERE t.digest = $1",
                    )
                    .bind(digest)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    row.as_ref().map(decode_user).transpose()
                })
            }

            fn revoke_tokens<'a>(&'a self, user: &'a str) -> BoxFuture<'a, StoreResult<u64>> {
                Box::pin(async move {
                    let id = self.user_id_of(user).await?;
                    let done = sqlx::query("DELETE FROM user_tokens WHERE user_id = $1")
                        .bind(&id)
                        .execute(&self.pool)
                        .await
                        .map_err(|e| self.error(e))?;
                    Ok(done.rows_affected())
                })
            }

            fn join_team<'a>(
                &'a self,
                user: &'a str,
                team: &'a str,
                role: Role,
            ) -> BoxFuture<'a, StoreResult<()>> {
                Box::pin(async move {
                    check_name("team", team)?;
                    let id = self.user_id_of(user).await?;
                    sqlx::query(
                        "INSERT INTO team_members (team, user_id, role) VALUES ($1, $2, $3)
                         ON CONFLICT (team, user_id) DO UPDATE SET role = excluded.role",
                    )
                    .bind(team)
                    .bind(&id)
                    .bind(role.as_str())
                    .execute(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    Ok(())
                })
            }

            fn leave_team<'a>(
                &'a self,
                user: &'a str,
                team: &'a str,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(async move {
                    let id = self.user_id_of(user).await?;
                    let done =
                        sqlx::query("DELETE FROM team_members WHERE team = $1 AND user_id = $2")
                            .bind(team)
                            .bind(&id)
                            .execute(&self.pool)
                            .await
                            .map_err(|e| self.error(e))?;
                    Ok(done.rows_affected() > 0)
                })
            }

            fn memberships<'a>(
                &'a self,
                user: &'a str,
            ) -> BoxFuture<'a, StoreResult<Vec<Membership>>> {
                Box::pin(async move {
                    let id = self.user_id_of(user).await?;
                    let rows: Vec<(String, String)> =
                        sqlx::query_as("SELECT team, role FROM team_members WHERE user_id = $1")
                            .bind(&id)
                            .fetch_all(&self.pool)
                            .await
                            .map_err(|e| self.error(e))?;
                    let mut memberships = rows
                        .into_iter()
                        .map(|(team, role)| Ok(Membership { team, role: decode_role(&role)? }))
                        .collect::<StoreResult<Vec<_>>>()?;
                    memberships.sort_by(|a, b| a.team.cmp(&b.team));
                    Ok(memberships)
                })
            }

            fn grant<'a>(
                &'a self,
                resource: &'a str,
                user: &'a str,
                role: Role,
            ) -> BoxFuture<'a, StoreResult<()>> {
                Box::pin(async move {
                    check_resource(resource)?;
                    let id = self.user_id_of(user).await?;
                    sqlx::query(
                        "INSERT INTO grants (resource, user_id, role) VALUES ($1, $2, $3)
                         ON CONFLICT DO NOTHING",
                    )
                    .bind(resource)
                    .bind(&id)
                    .bind(role.as_str())
                    .execute(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    Ok(())
                })
            }

            fn revoke_grant<'a>(
                &'a self,
                resource: &'a str,
                user: &'a str,
                role: Role,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(async move {
                    let id = self.user_id_of(user).await?;
                    let done = sqlx::query(
                        "DELETE FROM grants WHERE resource = $1 AND user_id = $2 AND role = $3",
                    )
                    .bind(resource)
                    .bind(&id)
                    .bind(role.as_str())
                    .execute(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    Ok(done.rows_affected() > 0)
                })
            }

            fn roles<'a>(
                &'a self,
                resource: &'a str,
                user: &'a str,
            ) -> BoxFuture<'a, StoreResult<Vec<Role>>> {
                Box::pin(async move {
                    let id = self.user_id_of(user).await?;
                    let roles: Vec<String> = sqlx::query_scalar(
                        "SELECT role FROM grants WHERE resource = $1 AND user_id = $2",
                    )
                    .bind(resource)
                    .bind(&id)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    let mut roles = roles
                        .iter()
                        .map(|role| decode_role(role))
                        .collect::<StoreResult<Vec<_>>>()?;
                    roles.sort();
                    Ok(roles)
                })
            }

            fn share_session<'a>(
                &'a self,
                session: &'a SessionUri,
                team: Option<&'a str>,
            ) -> BoxFuture<'a, StoreResult<Option<SessionSummary>>> {
                Box::pin(self.share_session_impl(session, team))
            }

            fn set_project_owner<'a>(
                &'a self,
                project: &'a ProjectId,
                owner: Option<&'a Owner>,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(async move {
                    if let Some(team) = owner.and_then(|owner| owner.team.as_deref()) {
                        check_name("team", team)?;
                    }
                    let done = sqlx::query(
                        "UPDATE projects SET owner = $1, team = $2
                         WHERE id = $3 AND deleted_at IS NULL",
                    )
                    .bind(owner.map(|owner| owner.user.as_str()))
                    .bind(owner.and_then(|owner| owner.team.as_deref()))
                    .bind(project.as_str())
                    .execute(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    Ok(done.rows_affected() > 0)
                })
            }

            fn project_owners(&self) -> BoxFuture<'_, StoreResult<HashMap<ProjectId, Owner>>> {
                Box::pin(async move {
                    let rows =
                        sqlx::query("SELECT id, owner, team FROM projects WHERE owner IS NOT NULL")
                            .fetch_all(&self.pool)
                            .await
                            .map_err(|e| self.error(e))?;
                    let mut owners = HashMap::with_capacity(rows.len());
                    for row in &rows {
                        if let Some((id, owner)) = decode_project_owner(row)? {
                            owners.insert(id, owner);
                        }
                    }
                    Ok(owners)
                })
            }
        }
    };
}

user_store_by_statements!(SqliteStore);
user_store_by_statements!(PgStore);
