//! Who acts: an agent through its chat, the user through a user-facing API, or Hearth
//! itself.

use std::fmt;

use hearth_core::ChatUri;

/// The user, acting through a user-facing channel (`cli`, `server`, `web`).
///
/// Only the gate's user-facing methods take one: deciding on proposals and answering
/// permission requests. Code an agent reaches (a [`Toolbox`](hearth_core::Toolbox))
/// never holds one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserActor {
    via: String,
    /// On a team server, which user.
    user: Option<String>,
}

impl UserActor {
    /// The user acting through `via` (e.g. `cli`, `server`).
    pub fn new(via: impl Into<String>) -> Self {
        Self {
            via: via.into(),
            user: None,
        }
    }

    /// The same, naming which user of a team server acts (by user id).
    #[must_use]
    pub fn for_user(mut self, user: Option<String>) -> Self {
        self.user = user;
        self
    }

    /// The team server's user who acts, when one is named.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The user at the command line.
    pub fn cli() -> Self {
        Self::new("cli")
    }

    /// The channel the user acted through.
    pub fn via(&self) -> &str {
        &self.via
    }
}

/// Who did something the audit log records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Actor {
    /// An agent, identified by the chat it runs in.
    Agent(ChatUri),
    /// The user.
    User(UserActor),
    /// Hearth itself (expiring proposals, recovering interrupted applies).
    Hearth,
}

impl Actor {
    /// How the audit log names the actor: the chat URI, `user` (`user:<id>` for a team
    /// server's user) or `hearth`.
    pub fn audit_name(&self) -> String {
        match self {
            Self::Agent(chat) => chat.to_string(),
            Self::User(user) => match user.user() {
                Some(id) => format!("user:{id}"),
                None => "user".to_owned(),
            },
            Self::Hearth => "hearth".to_owned(),
        }
    }
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.audit_name())
    }
}

impl From<UserActor> for Actor {
    fn from(user: UserActor) -> Self {
        Self::User(user)
    }
}
