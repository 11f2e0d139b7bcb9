//! A team server user's own credentials ([`UserCredentialStore`]) on both databases, with
//! statements both share (see [`super::statements`]): their model providers, and the
//! variables they run external agents with.
//!
//! The store keeps keys and variables only as the server sealed them: it cannot read
//! them, and hands them back only with their user and name, which the seal is bound to.

use futures::future::BoxFuture;
use hearth_core::Timestamp;

use super::check_name;
use crate::codec::{from_millis, to_millis};
use crate::error::{StoreError, StoreResult};
use crate::postgres::PgStore;
use crate::rows::Columns;
use crate::sqlite::SqliteStore;

/// One of a user's own model providers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserProvider {
    /// The user's id.
    pub user: String,
    /// The provider's name among the user's providers (letters, digits, `-`, `_`).
    pub name: String,
    /// The API it speaks: `openai` or `anthropic`.
    pub kind: String,
    /// Its base URL; `None` for the API's official endpoint.
    pub base_url: Option<String>,
    /// The model used when none is chosen.
    pub model: Option<String>,
    /// The key as the server sealed it; `None` for a provider that needs none.
    pub sealed_key: Option<String>,
    /// When it was added.
    pub created_at: Timestamp,
}

/// The variables one user runs an external agent with (their own sign-in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserAgent {
    /// The user's id.
    pub user: String,
    /// The agent's id among the server's external agents (`claude-code`).
    pub agent: String,
    /// The variables as the server sealed them.
    pub sealed_env: String,
    /// When they were set.
    pub created_at: Timestamp,
}

/// A team server user's own model providers and agents' variables.
pub trait UserCredentialStore: Send + Sync {
    /// Adds a provider to its user (`created_at` is set here and returned); a provider of
    /// that user with that name is a conflict.
    fn add_user_provider<'a>(
        &'a self,
        provider: &'a UserProvider,
    ) -> BoxFuture<'a, StoreResult<UserProvider>>;

    /// One provider of a user (by the user's id).
    fn user_provider<'a>(
        &'a self,
        user: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<UserProvider>>>;

    /// A user's providers by name; with `user` `None`, every user's.
    fn user_providers<'a>(
        &'a self,
        user: Option<&'a str>,
    ) -> BoxFuture<'a, StoreResult<Vec<UserProvider>>>;

    /// Removes a provider of a user; `false` when there was none.
    fn remove_user_provider<'a>(
        &'a self,
        user: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, StoreResult<bool>>;

    /// Sets (or replaces) the variables a user runs an agent with; `created_at` is set
    /// here and returned.
    fn set_user_agent<'a>(&'a self, agent: &'a UserAgent) -> BoxFuture<'a, StoreResult<UserAgent>>;

    /// The variables a user runs an agent with.
    fn user_agent<'a>(
        &'a self,
        user: &'a str,
        agent: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<UserAgent>>>;

    /// The agents a user has set variables for, by agent id.
    fn user_agents<'a>(&'a self, user: &'a str) -> BoxFuture<'a, StoreResult<Vec<UserAgent>>>;

    /// Forgets a user's variables for an agent; `false` when there were none.
    fn remove_user_agent<'a>(
        &'a self,
        user: &'a str,
        agent: &'a str,
    ) -> BoxFuture<'a, StoreResult<bool>>;
}

fn decode_agent(row: &impl Columns) -> StoreResult<UserAgent> {
    let get = |error: sqlx::Error| StoreError::Decode {
        what: "user agent",
        detail: error.to_string(),
    };
    Ok(UserAgent {
        user: row.text("user_id").map_err(get)?,
        agent: row.text("agent").map_err(get)?,
        sealed_env: row.text("sealed_env").map_err(get)?,
        created_at: from_millis(row.integer("created_at").map_err(get)?)?,
    })
}

fn decode(row: &impl Columns) -> StoreResult<UserProvider> {
    let get = |error: sqlx::Error| StoreError::Decode {
        what: "user provider",
        detail: error.to_string(),
    };
    Ok(UserProvider {
        user: row.text("user_id").map_err(get)?,
        name: row.text("name").map_err(get)?,
        kind: row.text("kind").map_err(get)?,
        base_url: row.text_or_null("base_url").map_err(get)?,
        model: row.text_or_null("model").map_err(get)?,
        sealed_key: row.text_or_null("sealed_key").map_err(get)?,
        created_at: from_millis(row.integer("created_at").map_err(get)?)?,
    })
}

fn check(provider: &UserProvider) -> StoreResult<()> {
    check_name("provider", &provider.name)?;
    if provider.name.contains('.') {
        return Err(StoreError::InvalidQuery(format!(
            "`{}` cannot be a provider name: use letters, digits, `-` and `_`",
            provider.name
        )));
    }
    if !matches!(provider.kind.as_str(), "openai" | "anthropic") {
        return Err(StoreError::InvalidQuery(format!(
            "`{}` is not a kind of provider: use openai or anthropic",
            provider.kind
        )));
    }
    Ok(())
}

macro_rules! user_provider_store_by_statements {
    ($store:ty) => {
        impl UserCredentialStore for $store {
            fn add_user_provider<'a>(
                &'a self,
                provider: &'a UserProvider,
            ) -> BoxFuture<'a, StoreResult<UserProvider>> {
                Box::pin(async move {
                    check(provider)?;
                    let created_at = from_millis(to_millis(&hearth_core::now()))?;
                    let inserted = sqlx::query(
                        "INSERT INTO user_providers
                         (user_id, name, kind, base_url, model, sealed_key, created_at)
                         SELECT id, $2, $3, $4, $5, $6, $7 FROM users WHERE id = $1
                         ON CONFLICT DO NOTHING",
                    )
                    .bind(&provider.user)
                    .bind(&provider.name)
                    .bind(&provider.kind)
                    .bind(provider.base_url.as_deref())
                    .bind(provider.model.as_deref())
                    .bind(provider.sealed_key.as_deref())
                    .bind(to_millis(&created_at))
                    .execute(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    if inserted.rows_affected() == 0 {
                        return Err(match self.user_provider(&provider.user, &provider.name).await? {
                            Some(_) => StoreError::Conflict(format!(
                                "you have a provider named `{}` already; choose another name, or remove it first",
                                provider.name
                            )),
                            None => StoreError::NotFound {
                                what: "user",
                                key: provider.user.clone(),
                            },
                        });
                    }
                    Ok(UserProvider {
                        created_at,
                        ..provider.clone()
                    })
                })
            }

            fn user_provider<'a>(
                &'a self,
                user: &'a str,
                name: &'a str,
            ) -> BoxFuture<'a, StoreResult<Option<UserProvider>>> {
                Box::pin(async move {
                    let row = sqlx::query(
                        "SELECT user_id, name, kind, base_url, model, sealed_key, created_at
                         FROM user_providers WHERE user_id = $1 AND name = $2",
                    )
                    .bind(user)
                    .bind(name)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    row.as_ref().map(decode).transpose()
                })
            }

            fn user_providers<'a>(
                &'a self,
                user: Option<&'a str>,
            ) -> BoxFuture<'a, StoreResult<Vec<UserProvider>>> {
                Box::pin(async move {
                    let rows = sqlx::query(
                        "SELECT user_id, name, kind, base_url, model, sealed_key, created_at
                         FROM user_providers WHERE $1 IS NULL OR user_id = $1",
                    )
                    .bind(user)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    let mut providers = rows.iter().map(decode).collect::<StoreResult<Vec<_>>>()?;
                    // The same order on both databases, whatever their collations.
                    providers.sort_by(|a, b| (&a.user, &a.name).cmp(&(&b.user, &b.name)));
                    Ok(providers)
                })
            }

            fn remove_user_provider<'a>(
                &'a self,
                user: &'a str,
                name: &'a str,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(async move {
                    let done =
                        sqlx::query("DELETE FROM user_providers WHERE user_id = $1 AND name = $2")
                            .bind(user)
                            .bind(name)
                            .execute(&self.pool)
                            .await
                            .map_err(|e| self.error(e))?;
                    Ok(done.rows_affected() > 0)
                })
            }

            fn set_user_agent<'a>(
                &'a self,
                agent: &'a UserAgent,
            ) -> BoxFuture<'a, StoreResult<UserAgent>> {
                Box::pin(async move {
                    check_name("agent", &agent.agent)?;
                    let created_at = from_millis(to_millis(&hearth_core::now()))?;
                    let done = sqlx::query(
                        "INSERT INTO user_agents (user_id, agent, sealed_env, created_at)
                         SELECT id, $2, $3, $4 FROM users WHERE id = $1
                         ON CONFLICT (user_id, agent) DO UPDATE
                         SET sealed_env = excluded.sealed_env, created_at = excluded.created_at",
                    )
                    .bind(&agent.user)
                    .bind(&agent.agent)
                    .bind(&agent.sealed_env)
                    .bind(to_millis(&created_at))
                    .execute(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    if done.rows_affected() == 0 {
                        return Err(StoreError::NotFound {
                            what: "user",
                            key: agent.user.clone(),
                        });
                    }
                    Ok(UserAgent {
                        created_at,
                        ..agent.clone()
                    })
                })
            }

            fn user_agent<'a>(
                &'a self,
                user: &'a str,
                agent: &'a str,
            ) -> BoxFuture<'a, StoreResult<Option<UserAgent>>> {
                Box::pin(async move {
                    let row = sqlx::query(
                        "SELECT user_id, agent, sealed_env, created_at FROM user_agents
                         WHERE user_id = $1 AND agent = $2",
                    )
                    .bind(user)
                    .bind(agent)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    row.as_ref().map(decode_agent).transpose()
                })
            }

            fn user_agents<'a>(
                &'a self,
                user: &'a str,
            ) -> BoxFuture<'a, StoreResult<Vec<UserAgent>>> {
                Box::pin(async move {
                    let rows = sqlx::query(
                        "SELECT user_id, agent, sealed_env, created_at FROM user_agents
                         WHERE user_id = $1",
                    )
                    .bind(user)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(|e| self.error(e))?;
                    let mut agents = rows.iter().map(decode_agent).collect::<StoreResult<Vec<_>>>()?;
                    agents.sort_by(|a, b| a.agent.cmp(&b.agent));
                    Ok(agents)
                })
            }

            fn remove_user_agent<'a>(
                &'a self,
                user: &'a str,
                agent: &'a str,
            ) -> BoxFuture<'a, StoreResult<bool>> {
                Box::pin(async move {
                    let done =
                        sqlx::query("DELETE FROM user_agents WHERE user_id = $1 AND agent = $2")
                            .bind(user)
                            .bind(agent)
                            .execute(&self.pool)
                            .await
                            .map_err(|e| self.error(e))?;
                    Ok(done.rows_affected() > 0)
                })
            }
        }
    };
}

user_provider_store_by_statements!(SqliteStore);
user_provider_store_by_statements!(PgStore);
