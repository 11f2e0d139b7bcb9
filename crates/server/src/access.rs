//! Who calls, and what they may reach.
//!
//! On a single user's Hearth every caller is the operator, who reaches everything. A
//! team server with users (`hearth serve --users`) also admits its users, by their API
//! token or their web login: a user reaches the sessions they own and those shared with
//! a team they are in (with their chats, turns, proposals and permission requests), the
//! projects owned by or shared with them, and the calendars granted to them. What is
//! not theirs reads as not found; what only the operator may do (providers, the audit
//! chain, the trash as a whole, the harnesses of the machine) is forbidden. The install
//! token stays the operator's.
//!
//! Every method declares in its `route!` what its params name ([`Access`]); dispatch
//! checks it before the handler runs. A method whose answer is a list narrows the list
//! itself, and takes the caller for that.

use std::collections::HashSet;
use std::sync::Arc;

use hearth_core::{ChatUri, Owner, ProjectId, ProposalId, Scope, SessionUri};
use hearth_protocol::{ErrorKind, RpcError};
use hearth_store::{Membership, Role, Stores};
use serde_json::Value;

use crate::backend::Shared;
use crate::edge::internal;

/// Who a request comes from.
#[derive(Clone, Debug)]
pub(crate) enum Principal {
    /// The holder of the install token (or its browser logins): everything.
    Operator,
    /// A user of a team server.
    User(Arc<UserView>),
}

/// A user as a request sees them: who, and in which teams.
#[derive(Clone, Debug)]
pub(crate) struct UserView {
    /// The user's id.
    pub id: String,
    /// The user's name.
    pub name: String,
    /// The teams they are in, with their role in each.
    pub teams: Vec<Membership>,
}

impl UserView {
    /// Whether something with this owner is the user's, or shared with one of their
    /// teams. What has no owner is the operator's.
    pub fn sees(&self, owner: Option<&Owner>) -> bool {
        owner.is_some_and(|owner| {
            owner.user == self.id
                || owner
                    .team
                    .as_deref()
                    .is_some_and(|team| self.teams.iter().any(|member| member.team == team))
        })
    }

    /// Whether the user is an approver of the team.
    fn approves_for(&self, team: &str) -> bool {
        self.teams
            .iter()
            .any(|member| member.team == team && member.role == Role::Approver)
    }
}

impl Principal {
    /// The user whose things a listing is narrowed to; `None` for the operator.
    pub fn viewer(&self) -> Option<&UserView> {
        match self {
            Self::Operator => None,
            Self::User(user) => Some(user),
        }
    }

    /// The user's id, for the audit log and proposals' deciders.
    pub fn user_id(&self) -> Option<String> {
        self.viewer().map(|user| user.id.clone())
    }

    /// Refuses a user: `what` is for the operator only.
    pub fn require_operator(&self, what: &str) -> Result<(), RpcError> {
        match self {
            Self::Operator => Ok(()),
            Self::User(_) => Err(forbidden(&format!(
                "{what} is for the server's operator only; ask them"
            ))),
        }
    }
}

/// What a method's params name that the caller must be allowed to reach.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Access {
    /// Nothing of anyone's: every caller.
    Open,
    /// The session in this field.
    Session(&'static str),
    /// The chat in this field (through its session).
    Chat(&'static str),
    /// The project in this field.
    Project(&'static str),
    /// The proposal in this field, to approve or reject: it must be seen, and the user
    /// must be its approver.
    Decide(&'static str),
    /// The operator only.
    Operator(&'static str),
    /// The handler narrows its answer (or refuses) itself: it takes the caller.
    Narrowed,
}

/// A refusal of something the caller may not do.
pub(crate) fn forbidden(message: &str) -> RpcError {
    RpcError::new(ErrorKind::Forbidden, message, false)
}

/// What a user may not reach reads as not found: they learn nothing of it.
fn hidden(what: &str, key: &str) -> RpcError {
    RpcError::new(ErrorKind::NotFound, format!("no {what} `{key}`"), false)
}

/// Checks that the caller may make a request naming what `params` names.
pub(crate) async fn check(
    shared: &Shared,
    caller: &Principal,
    access: Access,
    params: &Value,
) -> Result<(), RpcError> {
    let Principal::User(user) = caller else {
        return Ok(());
    };
    let field = |name: &'static str| params.get(name).and_then(Value::as_str).unwrap_or("");
    match access {
        Access::Open | Access::Narrowed => Ok(()),
        Access::Operator(what) => caller.require_operator(what),
        Access::Session(name) => {
            let text = field(name);
            match SessionUri::parse(text) {
                Ok(session) => see_session(shared, user, &session).await,
                // Malformed: the handler says what is wrong with it.
                Err(_) => Ok(()),
            }
        }
        Access::Chat(name) => {
            let text = field(name);
            match ChatUri::parse(text) {
                Ok(chat) => see_chat(shared, user, &chat).await,
                Err(_) => Ok(()),
            }
        }
        Access::Project(name) => {
            let text = field(name);
            match ProjectId::parse(text) {
                Ok(project) => see_project(shared, user, &project).await,
                Err(_) => Ok(()),
            }
        }
        Access::Decide(name) => decide_proposal(shared, user, field(name)).await,
    }
}

/// The team server's store of users, sessions and proposals.
fn stores(shared: &Shared) -> Result<&Arc<dyn Stores>, RpcError> {
    shared
        .backend
        .accounts
        .as_ref()
        .ok_or_else(|| internal("a user called a server without users"))
}

/// Whether the user may reach the session (what is not theirs reads as not found).
pub(crate) async fn see_session(
    shared: &Shared,
    user: &UserView,
    session: &SessionUri,
) -> Result<(), RpcError> {
    if sees_session(shared, user, session).await? {
        Ok(())
    } else {
        Err(hidden("session", &session.to_string()))
    }
}

/// Whether the user may reach the chat: its session is theirs or their team's.
pub(crate) async fn see_chat(
    shared: &Shared,
    user: &UserView,
    chat: &ChatUri,
) -> Result<(), RpcError> {
    if sees_session(shared, user, chat.session_ref()).await? {
        Ok(())
    } else {
        Err(hidden("chat", &chat.to_string()))
    }
}

async fn sees_session(
    shared: &Shared,
    user: &UserView,
    session: &SessionUri,
) -> Result<bool, RpcError> {
    Ok(visible_session(shared, user, session).await?.is_some())
}

/// The session's summary when the user may reach it.
async fn visible_session(
    shared: &Shared,
    user: &UserView,
    session: &SessionUri,
) -> Result<Option<hearth_core::SessionSummary>, RpcError> {
    let summary = stores(shared)?
        .session(session)
        .await
        .map_err(|error| internal(error.to_string()))?;
    Ok(summary.filter(|summary| user.sees(summary.owner.as_ref())))
}

/// The items whose session the caller may reach (all of them for the operator); an item
/// naming no session is the operator's.
pub(crate) async fn keep_visible<T>(
    shared: &Shared,
    caller: &Principal,
    items: Vec<T>,
    session_of: impl Fn(&T) -> Option<SessionUri>,
) -> Result<Vec<T>, RpcError> {
    let Principal::User(user) = caller else {
        return Ok(items);
    };
    let mut seen: std::collections::HashMap<SessionUri, bool> = std::collections::HashMap::new();
    let mut kept = Vec::with_capacity(items.len());
    for item in items {
        let Some(session) = session_of(&item) else {
            continue;
        };
        let visible = match seen.get(&session) {
            Some(visible) => *visible,
            None => {
                let visible = sees_session(shared, user, &session).await?;
                seen.insert(session, visible);
                visible
            }
        };
        if visible {
            kept.push(item);
        }
    }
    Ok(kept)
}

/// Every session the user may reach (their list, whole), by URI.
pub(crate) async fn visible_sessions(
    shared: &Shared,
    user: &UserView,
) -> Result<HashSet<String>, RpcError> {
    let stores = stores(shared)?;
    let mut shown = HashSet::new();
    let mut cursor = None;
    loop {
        let query = hearth_store::SessionQuery {
            cursor,
            limit: 500,
            viewer: Some(user.id.clone()),
            ..hearth_store::SessionQuery::default()
        };
        let page = stores
            .list_sessions(&query)
            .await
            .map_err(|error| internal(error.to_string()))?;
        shown.extend(page.sessions.iter().map(|session| session.uri.to_string()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(shown),
        }
    }
}

/// The projects the user may reach.
pub(crate) async fn visible_projects(
    shared: &Shared,
    user: &UserView,
) -> Result<HashSet<ProjectId>, RpcError> {
    let owners = stores(shared)?
        .project_owners()
        .await
        .map_err(|error| internal(error.to_string()))?;
    Ok(owners
        .into_iter()
        .filter(|(_, owner)| user.sees(Some(owner)))
        .map(|(project, _)| project)
        .collect())
}

async fn see_project(
    shared: &Shared,
    user: &UserView,
    project: &ProjectId,
) -> Result<(), RpcError> {
    if visible_projects(shared, user).await?.contains(project) {
        Ok(())
    } else {
        Err(hidden("project", project.as_str()))
    }
}

/// The proposal and its session, when the user may reach that session.
async fn see_proposal(
    shared: &Shared,
    user: &UserView,
    id: &str,
) -> Result<Option<(hearth_store::ProposalRecord, hearth_core::SessionSummary)>, RpcError> {
    let Ok(id) = ProposalId::parse(id) else {
        return Ok(None);
    };
    let record = stores(shared)?
        .proposal(&id)
        .await
        .map_err(|error| internal(error.to_string()))?;
    let Some(record) = record else {
        return Ok(None);
    };
    match visible_session(shared, user, &record.session).await? {
        Some(session) => Ok(Some((record, session))),
        None => Err(hidden("proposal", id.as_str())),
    }
}

/// Approving or rejecting needs the approver role on what the proposal changes: the
/// calendar its payload names, else the project its session belongs to (its owner
/// approves too); a change of neither is its session owner's (or their team's
/// approvers') to decide.
async fn decide_proposal(shared: &Shared, user: &UserView, id: &str) -> Result<(), RpcError> {
    let Some((record, session)) = see_proposal(shared, user, id).await? else {
        return Ok(());
    };
    let stores = stores(shared)?;
    let roles = |resource: String| async move {
        stores
            .roles(&resource, &user.id)
            .await
            .map_err(|error| internal(error.to_string()))
    };
    if let Some(calendar) = payload_calendar(&record.payload) {
        return if roles(format!("calendar:{calendar}"))
            .await?
            .contains(&Role::Approver)
        {
            Ok(())
        } else {
            Err(forbidden(&format!(
                "approving changes to calendar `{calendar}` needs the approver role on it; ask the server's operator (`hearth users grant {} approver calendar:{calendar}`)",
                user.name
            )))
        };
    }
    if let Scope::Project {
        project_id: project,
    } = &session.scope
    {
        let owned = stores
            .project_owners()
            .await
            .map_err(|error| internal(error.to_string()))?
            .get(project)
            .is_some_and(|owner| owner.user == user.id);
        if owned
            || roles(format!("project:{project}"))
                .await?
                .contains(&Role::Approver)
        {
            return Ok(());
        }
        return Err(forbidden(&format!(
            "approving changes in project `{project}` needs the approver role on it; ask the server's operator (`hearth users grant {} approver project:{project}`)",
            user.name
        )));
    }
    let owner = session.owner.as_ref();
    if owner.is_some_and(|owner| owner.user == user.id)
        || owner
            .and_then(|owner| owner.team.as_deref())
            .is_some_and(|team| user.approves_for(team))
    {
        Ok(())
    } else {
        Err(forbidden(
            "only the session's owner, or an approver of the team it is shared with, decides its proposals",
        ))
    }
}

/// The calendar a proposal's payload names (calendar changes name theirs).
fn payload_calendar(payload: &str) -> Option<String> {
    let value: Value = serde_json::from_str(payload).ok()?;
    value.get("calendar")?.as_str().map(str::to_owned)
}

/// Whether the user may see the calendar: any role on it.
pub(crate) async fn sees_calendar(
    shared: &Shared,
    user: &UserView,
    calendar: &str,
) -> Result<bool, RpcError> {
    let roles = stores(shared)?
        .roles(&format!("calendar:{calendar}"), &user.id)
        .await
        .map_err(|error| internal(error.to_string()))?;
    Ok(!roles.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> UserView {
        UserView {
            id: "u-alice".into(),
            name: "alice".into(),
            teams: vec![Membership {
                team: "design".into(),
                role: Role::Member,
            }],
        }
    }

    #[test]
    fn a_user_sees_their_own_and_their_teams_only() {
        let user = alice();
        assert!(user.sees(Some(&Owner::user("u-alice"))));
        assert!(user.sees(Some(&Owner {
            user: "u-bob".into(),
            team: Some("design".into()),
        })));
        assert!(!user.sees(Some(&Owner::user("u-bob"))));
        assert!(!user.sees(Some(&Owner {
            user: "u-bob".into(),
            team: Some("sales".into()),
        })));
        assert!(!user.sees(None), "the operator's things are not a user's");
        assert!(!user.approves_for("design"));
    }

    #[test]
    fn a_calendar_change_names_its_calendar() {
        assert_eq!(
            payload_calendar(r#"{"format":2,"calendar":"work","summary":"x"}"#).as_deref(),
            Some("work")
        );
        assert_eq!(payload_calendar(r#"{"path":"notes.md"}"#), None);
        assert_eq!(payload_calendar("not json"), None);
    }
}
