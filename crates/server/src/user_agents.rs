//! A team server user's own sign-in for the server's external agents: `agent/connect`
//! and `agent/disconnect`.
//!
//! - A user gives the variables an agent reads its credentials from (`ANTHROPIC_API_KEY`
//!   for Claude Code, `OPENAI_API_KEY` for Codex, …). They are sealed ([`KeySeal`],
//!   bound to the user and the agent) and kept in the store, so every node can run the
//!   agent for them.
//! - The agent then also runs as a harness of theirs, `<user id>_<agent>`, started with
//!   the base variables of the server's environment, the operator's `[agents.<id>] env`
//!   settings, the user's variables, and a home of their own (`users/<id>/home` in the
//!   data directory, with its config and data folders): never the server's keys (what
//!   `pass_env` passes) nor its sign-in files. A user cannot set the base variables
//!   (`HOME`, `PATH`, the XDG folders, …) nor Hearth's own.
//! - Who may run turns on it, and how nodes make it, is as for a user's own providers
//!   ([`crate::user_providers`]): only its user, made where needed, read again on use.

use std::collections::BTreeMap;
use std::sync::Arc;

use hearth_core::Harness;
use hearth_protocol::{self as wire, ErrorKind, Method, RpcError};
use hearth_store::UserAgent;

use crate::access::{Access, Principal, UserView, forbidden};
use crate::backend::Shared;
use crate::dispatch::{MethodTable, route};
use crate::edge::unavailable;
use crate::user_providers::{forget, harness_id, seal, store_error, stores};

/// The most variables one agent is given.
const MAX_VARIABLES: usize = 16;
/// The longest value of one variable.
const MAX_VALUE_BYTES: usize = 16 * 1024;

/// The agents' methods.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::AgentConnect => agent_connect, Access::Open, with caller);
    route!(table, wire::AgentDisconnect => agent_disconnect, Access::Open, with caller);
}

fn invalid(message: String) -> RpcError {
    RpcError::new(ErrorKind::InvalidParams, message, false)
}

/// The user calling, or the refusal of the operator (who configures agents in
/// `config.toml`).
fn user(caller: &Principal) -> Result<&UserView, RpcError> {
    caller.viewer().ok_or_else(|| {
        forbidden(
            "agent/connect and agent/disconnect are a team server user's; the operator sets an agent's variables in config.toml ([agents.<id>] env, pass_env)",
        )
    })
}

/// Refuses variables a user may not set, and more than an agent needs.
fn check_variables(env: &BTreeMap<String, String>) -> Result<(), RpcError> {
    if env.is_empty() || env.len() > MAX_VARIABLES {
        return Err(invalid(format!(
            "give 1 to {MAX_VARIABLES} variables, such as {{\"ANTHROPIC_API_KEY\": \"…\"}}"
        )));
    }
    for (name, value) in env {
        let well_formed = !name.is_empty()
            && name.len() <= 64
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !well_formed {
            return Err(invalid(format!(
                "`{name}` is not a variable's name: capital letters, digits and `_`"
            )));
        }
        if hearth_process::BASE_VARIABLES.contains(&name.as_str()) || name.starts_with("HEARTH_") {
            return Err(invalid(format!(
                "`{name}` is the server's to set (its base variables and Hearth's own); give the agent's credentials only"
            )));
        }
        if value.is_empty() || value.len() > MAX_VALUE_BYTES || value.contains('\0') {
            return Err(invalid(format!(
                "the value of `{name}` must be 1 to {MAX_VALUE_BYTES} bytes, without NUL"
            )));
        }
    }
    Ok(())
}

/// The label a user's agent variables are sealed under (apart from their providers').
fn sealed_as(agent: &str) -> String {
    format!("agent:{agent}")
}

async fn agent_connect(
    shared: &Shared,
    caller: &Principal,
    params: <wire::AgentConnect as Method>::Params,
) -> Result<<wire::AgentConnect as Method>::Response, RpcError> {
    let user = user(caller)?;
    let agent = params.agent.trim().to_owned();
    check_variables(&params.env)?;
    let id = harness_id(&user.id, &agent);
    if hearth_core::HarnessId::parse(&id).is_err() || shared.host().agent(&agent).is_none() {
        return Err(RpcError::new(
            ErrorKind::NotFound,
            format!("this server runs no external agent `{agent}`"),
            false,
        ));
    }
    let stores = stores(shared)?;
    if stores
        .user_provider(&user.id, &agent)
        .await
        .map_err(|error| store_error(&error))?
        .is_some()
    {
        return Err(RpcError::new(
            ErrorKind::Conflict,
            format!("a provider of yours is named `{agent}`: remove it first"),
            false,
        ));
    }
    let text = serde_json::to_string(&params.env)
        .map_err(|error| RpcError::new(ErrorKind::Internal, error.to_string(), false))?;
    let sealed_env = seal(shared)?
        .seal(&user.id, &sealed_as(&agent), &text)
        .map_err(|error| RpcError::new(ErrorKind::Internal, error.to_string(), false))?;
    let candidate = UserAgent {
        user: user.id.clone(),
        agent: agent.clone(),
        sealed_env,
        created_at: hearth_core::now(),
    };
    // An agent that cannot be run for them (not an external agent, not installed) is
    // refused before anything is kept.
    build(shared, &candidate)?;
    stores
        .set_user_agent(&candidate)
        .await
        .map_err(|error| store_error(&error))?;
    crate::user_providers::ensure(shared, &user.id, &agent).await?;
    Ok(wire::AgentConnectResponse { harness: id })
}

async fn agent_disconnect(
    shared: &Shared,
    caller: &Principal,
    params: <wire::AgentDisconnect as Method>::Params,
) -> Result<<wire::AgentDisconnect as Method>::Response, RpcError> {
    let user = user(caller)?;
    let agent = params.agent.trim();
    let removed = stores(shared)?
        .remove_user_agent(&user.id, agent)
        .await
        .map_err(|error| store_error(&error))?;
    if !removed {
        return Err(RpcError::new(
            ErrorKind::NotFound,
            format!("you have not connected the agent `{agent}`"),
            false,
        ));
    }
    let id = harness_id(&user.id, agent);
    forget(shared, &id);
    Ok(wire::AgentDisconnectResponse { harness: id })
}

/// The server's external agent run for the user the stored variables are of.
pub(crate) fn build(shared: &Shared, stored: &UserAgent) -> Result<Arc<dyn Harness>, RpcError> {
    let maker = shared
        .backend
        .provider_harnesses
        .as_ref()
        .ok_or_else(|| unavailable("this server cannot run users' own agents"))?;
    let paths =
        shared.backend.paths.as_ref().ok_or_else(|| {
            unavailable("this server has no data directory for its users' agents")
        })?;
    let opened = seal(shared)?
        .open(&stored.user, &sealed_as(&stored.agent), &stored.sealed_env)
        .map_err(|message| RpcError::new(ErrorKind::Unavailable, message, false))?;
    let env: BTreeMap<String, String> = serde_json::from_str(&opened)
        .map_err(|error| RpcError::new(ErrorKind::Internal, error.to_string(), false))?;
    let user_folder = crate::sessions::user_folder_in(&paths.home, &stored.user)
        .map_err(crate::edge::internal)?;
    let home = user_folder.join("home");
    hearth_config::create_private_dir(&home).map_err(|error| {
        crate::edge::internal(format!("cannot make {}: {error}", home.display()))
    })?;
    maker
        .user_agent(
            &stored.agent,
            &harness_id(&stored.user, &stored.agent),
            env.into_iter().collect(),
            &home,
        )
        .map_err(|message| RpcError::new(ErrorKind::Unavailable, message, false))
}
