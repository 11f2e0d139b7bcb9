//! `hearth users`: a team server's users (`hearth serve --users`), kept in its store —
//! their API tokens, the teams they are in, and the roles they hold on calendars and
//! projects. Run by the operator on a node (or any machine with the store's URL).

use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Subcommand;
use hearth_core::{Owner, ProjectId, SessionUri};
use hearth_store::{Role, Stores, UserRecord};
use serde_json::json;

use crate::toolbox::{json_line, write_out};
use hearth_app::App;

/// `hearth users` subcommands.
#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Add a user and print their first API token (shown once).
    Add {
        /// Their name (letters, digits, `-`, `_`, `.`).
        name: String,
        /// Put them in this team too.
        #[arg(long)]
        team: Option<String>,
        /// Their role in that team: `member` (default) or `approver`.
        #[arg(long, default_value = "member")]
        role: String,
    },
    /// List the users, with their teams.
    List {
        /// One JSON object per user.
        #[arg(long)]
        json: bool,
    },
    /// Print a new API token for a user (shown once; their other tokens keep working).
    Token {
        /// The user's name or id.
        user: String,
        /// What the token is for (shown nowhere else).
        #[arg(long, default_value = "cli")]
        label: String,
    },
    /// End every API token of a user.
    Revoke {
        /// The user's name or id.
        user: String,
    },
    /// Remove a user (their tokens, teams and roles go; what they own stays).
    Remove {
        /// The user's name or id.
        user: String,
    },
    /// Put a user in a team (or change their role in it), or take them out (`--leave`).
    Team {
        /// The user's name or id.
        user: String,
        /// The team.
        team: String,
        /// `member` or `approver` (approvers decide the proposals of the team's sessions).
        #[arg(long, default_value = "member")]
        role: String,
        /// Take them out of the team instead.
        #[arg(long)]
        leave: bool,
    },
    /// Give a user a role on a calendar or project: `calendar:<name>` or
    /// `project:<id>` (`member` sees it; `approver` also decides its proposals).
    Grant {
        /// The user's name or id.
        user: String,
        /// `member` or `approver`.
        role: String,
        /// `calendar:<name>` or `project:<id>`.
        resource: String,
        /// Take the role back instead.
        #[arg(long)]
        revoke: bool,
    },
    /// Give a project to a user (and share it with a team): they see it, start sessions
    /// in it and approve its changes.
    Project {
        /// The project's id.
        project: String,
        /// The user's name or id.
        user: String,
        /// Share it with this team too.
        #[arg(long)]
        team: Option<String>,
    },
    /// Share a session with a team (its members see it and may use it), or with nobody
    /// (`--private`).
    Share {
        /// The session's URI.
        session: String,
        /// The team.
        #[arg(long, required_unless_present = "private")]
        team: Option<String>,
        /// Share it with nobody.
        #[arg(long)]
        private: bool,
    },
}

/// Runs `hearth users …`.
pub async fn users(app: &App, command: UsersCommand) -> anyhow::Result<ExitCode> {
    let store = app.open_store().await?;
    let store = store.as_ref();
    match command {
        UsersCommand::Add { name, team, role } => {
            let role = parse_role(&role)?;
            let user = store.create_user(&name).await?;
            if let Some(team) = team {
                store.join_team(&user.id, &team, role).await?;
            }
            let token = new_token(store, &user, "first").await?;
            write_out(&format!(
                "Added {} ({}). Their API token (shown once; they set HEARTH_TOKEN to it):\n{token}\n",
                user.name, user.id
            ))?;
        }
        UsersCommand::List { json } => list(store, json).await?,
        UsersCommand::Token { user, label } => {
            let user = find(store, &user).await?;
            let token = new_token(store, &user, &label).await?;
            write_out(&format!("{token}\n"))?;
        }
        UsersCommand::Revoke { user } => {
            let user = find(store, &user).await?;
            let ended = store.revoke_tokens(&user.id).await?;
            write_out(&format!("Ended {ended} token(s) of {}.\n", user.name))?;
        }
        UsersCommand::Remove { user } => {
            let user = find(store, &user).await?;
            store.remove_user(&user.id).await?;
            write_out(&format!("Removed {}.\n", user.name))?;
        }
        UsersCommand::Team {
            user,
            team,
            role,
            leave,
        } => team_command(store, &user, &team, &role, leave).await?,
        UsersCommand::Grant {
            user,
            role,
            resource,
            revoke,
        } => grant(store, &user, &role, &resource, revoke).await?,
        UsersCommand::Project {
            project,
            user,
            team,
        } => give_project(store, &project, &user, team).await?,
        UsersCommand::Share {
            session,
            team,
            private,
        } => share(store, &session, if private { None } else { team }).await?,
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_role(text: &str) -> anyhow::Result<Role> {
    match text {
        "member" => Ok(Role::Member),
        "approver" => Ok(Role::Approver),
        other => bail!("`{other}` is not a role: use `member` or `approver`"),
    }
}

async fn find(store: &dyn Stores, user: &str) -> anyhow::Result<UserRecord> {
    match store.user(user).await? {
        Some(found) => Ok(found),
        None => bail!("there is no user `{user}` (`hearth users list` shows them)"),
    }
}

/// A new API token for `user`: only its digest is kept.
async fn new_token(store: &dyn Stores, user: &UserRecord, label: &str) -> anyhow::Result<String> {
    let token = hearth_server::Secret::generate().context("making a token")?;
    let digest = hearth_fs::sha256_hex(token.expose().as_bytes());
    store.add_token(&user.id, &digest, label).await?;
    Ok(token.expose().to_owned())
}

async fn list(store: &dyn Stores, json: bool) -> anyhow::Result<()> {
    let mut out = String::new();
    for user in store.users().await? {
        let teams = store.memberships(&user.id).await?;
        if json {
            let teams: Vec<_> = teams
                .iter()
                .map(|member| json!({ "team": member.team, "role": member.role.as_str() }))
                .collect();
            json_line(&json!({
                "id": user.id,
                "name": user.name,
                "issuer": user.issuer,
                "teams": teams,
            }))?;
        } else {
            let teams: Vec<String> = teams
                .iter()
                .map(|member| format!("{} ({})", member.team, member.role.as_str()))
                .collect();
            out.push_str(&format!(
                "{:<20} {:<20} {}\n",
                user.name,
                user.id,
                if teams.is_empty() {
                    "-".to_owned()
                } else {
                    teams.join(", ")
                }
            ));
        }
    }
    if out.is_empty() && !json {
        out.push_str("No users yet: `hearth users add NAME` adds one.\n");
    }
    write_out(&out)
}

async fn team_command(
    store: &dyn Stores,
    user: &str,
    team: &str,
    role: &str,
    leave: bool,
) -> anyhow::Result<()> {
    let user = find(store, user).await?;
    if leave {
        let left = store.leave_team(&user.id, team).await?;
        let said = if left {
            format!("{} left {team}.\n", user.name)
        } else {
            format!("{} was not in {team}.\n", user.name)
        };
        return write_out(&said);
    }
    let role = parse_role(role)?;
    store.join_team(&user.id, team, role).await?;
    write_out(&format!(
        "{} is a {} of {team}.\n",
        user.name,
        role.as_str()
    ))
}

async fn grant(
    store: &dyn Stores,
    user: &str,
    role: &str,
    resource: &str,
    revoke: bool,
) -> anyhow::Result<()> {
    let user = find(store, user).await?;
    let role = parse_role(role)?;
    if !(resource.starts_with("calendar:") || resource.starts_with("project:")) {
        bail!(
            "`{resource}` is not a calendar or project: write `calendar:<name>` or `project:<id>`"
        );
    }
    if revoke {
        let taken = store.revoke_grant(resource, &user.id, role).await?;
        let said = if taken {
            format!(
                "{} is no longer a {} of {resource}.\n",
                user.name,
                role.as_str()
            )
        } else {
            format!("{} was not a {} of {resource}.\n", user.name, role.as_str())
        };
        return write_out(&said);
    }
    store.grant(resource, &user.id, role).await?;
    write_out(&format!(
        "{} is a {} of {resource}.\n",
        user.name,
        role.as_str()
    ))
}

async fn give_project(
    store: &dyn Stores,
    project: &str,
    user: &str,
    team: Option<String>,
) -> anyhow::Result<()> {
    let project = ProjectId::parse(project)
        .with_context(|| format!("`{project}` is not a project id (`hearth projects list`)"))?;
    let user = find(store, user).await?;
    let owner = Owner {
        user: user.id.clone(),
        team,
    };
    if !store.set_project_owner(&project, Some(&owner)).await? {
        bail!("there is no project `{project}` (`hearth projects list` shows them)");
    }
    write_out(&format!("Project {project} is {}'s.\n", user.name))
}

async fn share(store: &dyn Stores, session: &str, team: Option<String>) -> anyhow::Result<()> {
    let uri = SessionUri::parse(session)
        .with_context(|| format!("`{session}` is not a session URI (`hearth sessions list`)"))?;
    match store.share_session(&uri, team.as_deref()).await? {
        Some(_) => write_out(&match team {
            Some(team) => format!("Session {uri} is shared with {team}.\n"),
            None => format!("Session {uri} is shared with nobody.\n"),
        }),
        None => bail!("there is no session `{uri}`"),
    }
}
