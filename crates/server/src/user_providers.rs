//! A team server user's own model providers: `provider/add`, `provider/remove` and
//! `provider/list` called by a user, and who may run turns on them.
//!
//! - A user's provider is theirs alone. Its key is pasted (the server's environment
//!   variables are the operator's), checked as `hearth doctor` checks a provider, sealed
//!   ([`KeySeal`]) and kept in the store, so every node of a team can use it. Nothing of
//!   the server's environment resolves it: no key variable, no base URL variable.
//! - Its base URL must reach only public addresses, or the networks the operator opened
//!   with `[server] user_provider_networks`: a user cannot make the server call into its
//!   own network. The check runs when the provider is added and whenever a node builds
//!   its harness.
//! - It runs as Hearth's own agent under the harness id `<user id>_<name>`. Only its user
//!   creates sessions on it, forks them, or sends, queues or compacts in their chats;
//!   anyone else (a member of a team the session is shared with, the operator) is
//!   refused, so the key is never spent for someone else.
//! - Each node builds the harness when first needed (the user connecting, or a request
//!   naming it), and reads the stored provider again on every use: a provider removed on
//!   one node is refused on all.
//! - A user sees their own providers' harnesses and the server's, never another user's.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use hearth_config::{Config, ProviderConfig, ProviderKind};
use hearth_core::{ChatUri, Harness, SessionUri};
use hearth_llm::Environment;
use hearth_protocol::{self as wire, ClientMethod, ErrorKind, Method, RpcError};
use hearth_store::{StoreError, Stores, UserProvider};
use serde_json::Value;

use crate::access::{Principal, UserView, forbidden};
use crate::backend::Shared;
use crate::edge::{internal, unavailable};
use crate::sealed::KeySeal;

/// What this node keeps of users' providers.
#[derive(Debug, Default)]
pub(crate) struct UserProviders {
    /// The data directory's seal, opened on first use.
    seal: OnceLock<Arc<KeySeal>>,
    /// The harnesses this node registered, with the stored provider's `created_at` they
    /// were made from (a provider removed and added again is made again).
    registered: Mutex<HashMap<String, hearth_core::Timestamp>>,
}

/// The harness id of `user`'s provider `name`.
pub(crate) fn harness_id(user: &str, name: &str) -> String {
    format!("{user}_{name}")
}

/// Length of a user id: `u-` and 16 hexadecimal digits.
const USER_ID_LEN: usize = 18;

/// Whether `text` has the form of a user id: `u-` and 16 lowercase hexadecimal digits.
fn is_user_id(text: &str) -> bool {
    text.strip_prefix("u-").is_some_and(|hex| {
        hex.len() == 16
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The user and provider name of a harness id that is a user's provider (a user id is
/// of fixed length, so the first `_` after it ends it).
pub(crate) fn owner_of(harness: &str) -> Option<(&str, &str)> {
    let user = harness.get(..USER_ID_LEN)?;
    let name = harness.get(USER_ID_LEN..)?.strip_prefix('_')?;
    (is_user_id(user) && !name.is_empty()).then_some((user, name))
}

/// Whether `user` sees the harness: the server's, or their own.
pub(crate) fn shows(user: &UserView, harness: &str) -> bool {
    owner_of(harness).is_none_or(|(owner, _)| owner == user.id)
}

/// An environment with nothing in it: a user's provider is resolved from what they gave.
fn nothing() -> Environment {
    Environment::from_pairs(Vec::<(String, String)>::new())
}

fn invalid(message: String) -> RpcError {
    RpcError::new(ErrorKind::InvalidParams, message, false)
}

pub(crate) fn stores(shared: &Shared) -> Result<&Arc<dyn Stores>, RpcError> {
    shared
        .backend
        .accounts
        .as_ref()
        .ok_or_else(|| internal("a user called a server without users"))
}

pub(crate) fn store_error(error: &StoreError) -> RpcError {
    let kind = match error {
        StoreError::Conflict(_) => ErrorKind::Conflict,
        StoreError::NotFound { .. } => ErrorKind::NotFound,
        StoreError::InvalidQuery(_) => ErrorKind::InvalidParams,
        _ => ErrorKind::Internal,
    };
    RpcError::new(kind, error.to_string(), false)
}

fn registered(
    shared: &Shared,
) -> std::sync::MutexGuard<'_, HashMap<String, hearth_core::Timestamp>> {
    shared
        .user_providers
        .registered
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// The data directory's seal of users' keys.
pub(crate) fn seal(shared: &Shared) -> Result<Arc<KeySeal>, RpcError> {
    if let Some(seal) = shared.user_providers.seal.get() {
        return Ok(Arc::clone(seal));
    }
    let paths = shared
        .backend
        .paths
        .as_ref()
        .ok_or_else(|| unavailable("users' own providers are not available in this server"))?;
    let opened = KeySeal::open_in(&paths.home)
        .map_err(|error| RpcError::new(ErrorKind::Internal, error.to_string(), false))?;
    Ok(Arc::clone(
        shared.user_providers.seal.get_or_init(|| Arc::new(opened)),
    ))
}

/// The harness a request would run turns on, when it is one that may: the harness of a
/// new session, or of the session whose chat it sends, queues or compacts in.
fn spending_harness(method: ClientMethod, params: &Value) -> Option<String> {
    let field = |name: &str| params.get(name).and_then(Value::as_str);
    let of_session = |name: &str| {
        SessionUri::parse(field(name)?)
            .ok()
            .map(|session| session.harness().to_string())
    };
    let of_chat = || {
        ChatUri::parse(field("chat")?)
            .ok()
            .map(|chat| chat.session_ref().harness().to_string())
    };
    match method {
        ClientMethod::SessionCreate => field("harness")
            .or_else(|| field("provider"))
            .map(str::to_owned),
        ClientMethod::SessionFork | ClientMethod::ChatCreate => of_session("session"),
        ClientMethod::ChatSend
        | ClientMethod::ChatQueue
        | ClientMethod::ChatSetQueue
        | ClientMethod::ChatCompact => of_chat(),
        _ => None,
    }
}

/// The harness of the session or chat a request reads, when it is a user's provider:
/// this node needs it registered to load the chat for anyone who may see it.
fn read_harness(params: &Value) -> Option<String> {
    let field = |name: &str| params.get(name).and_then(Value::as_str);
    if let Some(chat) = field("chat").and_then(|text| ChatUri::parse(text).ok()) {
        return Some(chat.session_ref().harness().to_string());
    }
    field("session")
        .and_then(|text| SessionUri::parse(text).ok())
        .map(|session| session.harness().to_string())
}

/// Checks a request against users' providers, after its access was checked: a request
/// that would run turns on a user's provider is refused to anyone but that user, and
/// the provider's harness is made on this node when a request needs it.
pub(crate) async fn admit(
    shared: &Shared,
    caller: &Principal,
    method: ClientMethod,
    params: &Value,
) -> Result<(), RpcError> {
    if shared.backend.accounts.is_none() {
        return Ok(());
    }
    if let Some(harness) = spending_harness(method, params) {
        let Some((owner, name)) = owner_of(&harness) else {
            return unknown_to(shared, caller, &harness);
        };
        return match caller.viewer() {
            Some(user) if user.id == owner => ensure(shared, owner, name).await,
            Some(_) | None => Err(forbidden(&format!(
                "`{harness}` runs on another user's own key or sign-in, which only they use; start a session of your own on another harness"
            ))),
        };
    }
    if let Some(harness) = read_harness(params)
        && let Some((owner, name)) = owner_of(&harness)
        && let Err(error) = ensure(shared, owner, name).await
    {
        tracing::debug!(harness, error = %error.message, "a user's provider could not be made on this node");
    }
    Ok(())
}

/// Refuses a user a server harness this node does not run, naming only the harnesses
/// they see (the host's own refusal would list every user's).
fn unknown_to(shared: &Shared, caller: &Principal, harness: &str) -> Result<(), RpcError> {
    let Some(user) = caller.viewer() else {
        return Ok(());
    };
    let host = shared.host();
    if host.agent(harness).is_some() {
        return Ok(());
    }
    let offered: Vec<String> = host
        .descriptors()
        .into_iter()
        .map(|descriptor| descriptor.id.to_string())
        .filter(|id| shows(user, id))
        .collect();
    Err(RpcError::new(
        ErrorKind::NotFound,
        format!(
            "this server runs no harness `{harness}`; it offers: {}",
            offered.join(", ")
        ),
        false,
    ))
}

/// What a user's own harness is made from.
enum Stored {
    Provider(UserProvider),
    Agent(hearth_store::UserAgent),
}

/// The stored provider or agent variables of `user` named `name`.
async fn stored(shared: &Shared, user: &str, name: &str) -> Result<Option<Stored>, RpcError> {
    let stores = stores(shared)?;
    if let Some(provider) = stores
        .user_provider(user, name)
        .await
        .map_err(|error| store_error(&error))?
    {
        return Ok(Some(Stored::Provider(provider)));
    }
    Ok(stores
        .user_agent(user, name)
        .await
        .map_err(|error| store_error(&error))?
        .map(Stored::Agent))
}

/// Makes sure this node runs the harness of `user`'s provider or agent `name` as it is
/// stored now; one that is gone is taken out and reported not found.
pub(crate) async fn ensure(shared: &Shared, user: &str, name: &str) -> Result<(), RpcError> {
    let id = harness_id(user, name);
    let Some(stored) = stored(shared, user, name).await? else {
        forget(shared, &id);
        return Err(RpcError::new(
            ErrorKind::NotFound,
            format!(
                "there is no provider or agent `{name}` of yours any more; add it again (provider/add, agent/connect) or choose another harness"
            ),
            false,
        ));
    };
    let made_at = match &stored {
        Stored::Provider(provider) => provider.created_at,
        Stored::Agent(agent) => agent.created_at,
    };
    let current =
        registered(shared).get(&id) == Some(&made_at) && shared.host().agent(&id).is_some();
    if current {
        return Ok(());
    }
    let harness = match &stored {
        Stored::Provider(provider) => build(shared, provider).await?,
        Stored::Agent(agent) => crate::user_agents::build(shared, agent)?,
    };
    shared.host().register_harness(harness);
    registered(shared).insert(id, made_at);
    Ok(())
}

/// Makes every provider and agent of the user on this node (when they connect); one
/// that cannot be made is logged and left for when it is used, which says why.
pub(crate) async fn ensure_all(shared: &Shared, user: &str) {
    let Ok(stores) = stores(shared) else {
        return;
    };
    let names = match (
        stores.user_providers(Some(user)).await,
        stores.user_agents(user).await,
    ) {
        (Ok(providers), Ok(agents)) => providers
            .into_iter()
            .map(|provider| provider.name)
            .chain(agents.into_iter().map(|agent| agent.agent))
            .collect::<Vec<_>>(),
        (Err(error), _) | (_, Err(error)) => {
            tracing::warn!(user, %error, "cannot read a user's providers and agents");
            return;
        }
    };
    for name in names {
        if let Err(error) = ensure(shared, user, &name).await {
            tracing::warn!(user, name, error = %error.message, "a user's own harness could not be made");
        }
    }
}

/// Takes the harness of a removed provider out of this node.
pub(crate) fn forget(shared: &Shared, id: &str) {
    if registered(shared).remove(id).is_some() {
        shared.host().unregister_harness(id);
    }
}

/// The provider as configuration, its key opened.
fn provider_config(provider: &UserProvider, key: Option<String>) -> ProviderConfig {
    ProviderConfig {
        kind: Some(match provider.kind.as_str() {
            "anthropic" => ProviderKind::Anthropic,
            _ => ProviderKind::Openai,
        }),
        base_url: provider.base_url.clone(),
        default_model: provider.model.clone(),
        api_key: key,
        ..ProviderConfig::default()
    }
}

/// Hearth's own agent over the stored provider, its base URL checked again.
async fn build(shared: &Shared, provider: &UserProvider) -> Result<Arc<dyn Harness>, RpcError> {
    let maker = shared
        .backend
        .provider_harnesses
        .as_ref()
        .ok_or_else(|| unavailable("this server cannot run users' own providers"))?;
    if let Some(url) = &provider.base_url {
        check_base_url(shared, url).await?;
    }
    let key = match &provider.sealed_key {
        Some(sealed) => Some(
            seal(shared)?
                .open(&provider.user, &provider.name, sealed)
                .map_err(|message| RpcError::new(ErrorKind::Unavailable, message, false))?,
        ),
        None => None,
    };
    let id = harness_id(&provider.user, &provider.name);
    let mut config = Config::default();
    config
        .providers
        .insert(id.clone(), provider_config(provider, key));
    maker
        .harness(&config, &id, &nothing(), Some(resolver(shared)))
        .map_err(|message| RpcError::new(ErrorKind::Internal, message, false))
}

/// What a user's provider may reach: public addresses, and the networks the operator
/// opened (`[server] user_provider_networks`).
fn user_policy(shared: &Shared) -> hearth_fetch::FetchPolicy {
    let config = crate::providers::current_config(shared);
    config
        .server
        .user_provider_networks
        .unwrap_or_default()
        .iter()
        .filter_map(|text| match text.parse::<ipnet::IpNet>() {
            Ok(network) => Some(network),
            Err(error) => {
                tracing::warn!(network = text, %error, "[server] user_provider_networks has an entry that is not a network; ignored");
                None
            }
        })
        .fold(hearth_fetch::FetchPolicy::default(), hearth_fetch::FetchPolicy::opening)
}

/// The resolver of a user's provider's client: every connection's addresses are checked
/// again, so a name cannot be pointed at the server's own network after it was checked.
fn resolver(shared: &Shared) -> Arc<dyn reqwest::dns::Resolve> {
    hearth_fetch::checked_resolver(Arc::new(hearth_fetch::SystemResolver), user_policy(shared))
}

/// Refuses a base URL that is not HTTP(S), carries credentials, or reaches an address
/// that is not public (unless in a network the operator opened).
async fn check_base_url(shared: &Shared, url: &str) -> Result<(), RpcError> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|error| invalid(format!("`{url}` is not a URL ({error}); give the provider's base URL, such as https://api.example.com/v1")))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(invalid(format!(
            "`{url}` is not an http or https URL; give the provider's base URL"
        )));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(invalid(
            "a base URL carries no user name or password; paste the key as the key".to_owned(),
        ));
    }
    let host = parsed.host_str().unwrap_or_default();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addresses: Vec<IpAddr> = match host.trim_matches(['[', ']']).parse::<IpAddr>() {
        Ok(address) => vec![address],
        Err(_) => tokio::net::lookup_host((host, port))
            .await
            .map_err(|error| {
                invalid(format!(
                    "cannot find `{host}` ({error}); check the base URL"
                ))
            })?
            .map(|address| address.ip())
            .collect(),
    };
    let policy = user_policy(shared);
    for address in addresses {
        if let Err(rule) = policy.check_address(address) {
            return Err(invalid(format!(
                "`{url}` reaches {address}, which a user's provider may not ({rule}); use the provider's public address, or ask the operator to open its network in [server] user_provider_networks"
            )));
        }
    }
    Ok(())
}

/// Checks what a user asks to add: a name free among theirs, a pasted key (or none),
/// and a base URL they may reach; returns the key.
async fn checked_request(
    shared: &Shared,
    user: &UserView,
    name: &str,
    params: &<wire::ProviderAdd as Method>::Params,
) -> Result<Option<String>, RpcError> {
    crate::provider_setup::check_shape(name)?;
    if hearth_core::HarnessId::parse(&harness_id(&user.id, name)).is_err() {
        return Err(invalid(format!(
            "`{name}` cannot name a provider of yours: use 1 to 45 lower-case letters, digits, `-` or `_`"
        )));
    }
    let key = match &params.key {
        wire::ProviderKeyParam::Environment { .. } => {
            return Err(invalid(
                "the server's environment variables are its operator's; paste your own key"
                    .to_owned(),
            ));
        }
        wire::ProviderKeyParam::Pasted { key } => Some(key.trim().to_owned()),
        wire::ProviderKeyParam::None => None,
    };
    if let Some(url) = params
        .base_url
        .as_deref()
        .map(str::trim)
        .filter(|url| !url.is_empty())
    {
        check_base_url(shared, url).await?;
    }
    let connected = stores(shared)?
        .user_agent(&user.id, name)
        .await
        .map_err(|error| store_error(&error))?;
    if connected.is_some() {
        return Err(RpcError::new(
            ErrorKind::Conflict,
            format!("you connected an agent named `{name}`: choose another name"),
            false,
        ));
    }
    Ok(key)
}

/// `provider/add` by a user: their own provider, checked, sealed and stored.
pub(crate) async fn add(
    shared: &Shared,
    user: &UserView,
    params: <wire::ProviderAdd as Method>::Params,
) -> Result<<wire::ProviderAdd as Method>::Response, RpcError> {
    let name = params.id.trim().to_owned();
    let key = checked_request(shared, user, &name, &params).await?;
    let (candidate, kind) = crate::provider_setup::candidate(&params)?;
    let id = harness_id(&user.id, &name);
    let empty = nothing();
    let checked =
        crate::provider_setup::check_alone(&id, candidate.clone(), &empty, Some(resolver(shared)));
    let test = match checked.await {
        Ok(test) => test,
        Err(test) => return Ok(wire::ProviderAddResponse::Failed { test }),
    };
    let sealed_key = match &key {
        Some(key) => Some(
            seal(shared)?
                .seal(&user.id, &name, key)
                .map_err(|error| RpcError::new(ErrorKind::Internal, error.to_string(), false))?,
        ),
        None => None,
    };
    let stored = stores(shared)?
        .add_user_provider(&UserProvider {
            user: user.id.clone(),
            name: name.clone(),
            kind: kind.to_owned(),
            base_url: candidate.base_url.clone(),
            model: candidate.default_model.clone(),
            sealed_key,
            created_at: hearth_core::now(),
        })
        .await
        .map_err(|error| store_error(&error))?;
    let usable_now = match ensure(shared, &user.id, &name).await {
        Ok(()) => true,
        Err(error) => {
            tracing::warn!(provider = id, error = %error.message, "a user's provider was saved but cannot be used yet");
            false
        }
    };
    Ok(wire::ProviderAddResponse::Added {
        test,
        provider: Box::new(info(&stored).await),
        usable_now,
    })
}

/// How a user's provider is listed (its key only said to be kept).
async fn info(provider: &UserProvider) -> wire::ProviderInfo {
    let id = harness_id(&provider.user, &provider.name);
    let mut config = Config::default();
    // A stand-in key: the listing says only that there is one.
    let key = provider.sealed_key.as_ref().map(|_| "sealed".to_owned());
    config
        .providers
        .insert(id.clone(), provider_config(provider, key));
    let listed = crate::providers::list_providers_in(&config, &nothing()).await;
    let mut info = listed
        .providers
        .into_iter()
        .find(|info| info.id == id)
        .unwrap_or_else(|| wire::ProviderInfo {
            id: id.clone(),
            protocol: provider.kind.clone(),
            base_url: provider.base_url.clone().unwrap_or_default(),
            base_url_source: String::new(),
            default_model: provider.model.clone(),
            models: Vec::new(),
            source: String::new(),
            key: wire::KeyState::NotNeeded,
        });
    info.source = "your own provider".to_owned();
    if provider.sealed_key.is_some() {
        info.key = wire::KeyState::Found {
            from: "your key, sealed by the server".to_owned(),
        };
    }
    info
}

/// `provider/list` by a user: the server's providers, then their own.
pub(crate) async fn list(
    shared: &Shared,
    user: &UserView,
    mut listed: wire::ProviderListResponse,
) -> Result<wire::ProviderListResponse, RpcError> {
    let own = stores(shared)?
        .user_providers(Some(&user.id))
        .await
        .map_err(|error| store_error(&error))?;
    listed.providers.retain(|info| shows(user, &info.id));
    for provider in &own {
        listed.providers.push(info(provider).await);
    }
    Ok(listed)
}

/// `provider/remove` by a user: one of their own providers (by its name or harness id).
pub(crate) async fn remove(
    shared: &Shared,
    user: &UserView,
    params: <wire::ProviderRemove as Method>::Params,
) -> Result<<wire::ProviderRemove as Method>::Response, RpcError> {
    let given = params.id.trim();
    let name = match owner_of(given) {
        Some((owner, name)) if owner == user.id => name,
        Some(_) => given,
        None => given,
    };
    let removed = stores(shared)?
        .remove_user_provider(&user.id, name)
        .await
        .map_err(|error| store_error(&error))?;
    if !removed {
        return Err(RpcError::new(
            ErrorKind::NotFound,
            format!("you have no provider `{given}`"),
            false,
        ));
    }
    forget(shared, &harness_id(&user.id, name));
    Ok(wire::ProviderRemoveResponse {
        id: harness_id(&user.id, name),
        key_file_removed: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_harness_is_a_users_only_with_their_whole_id_before_its_name() {
        let id = harness_id("u-0123456789abcdef", "my_lab-2");
        assert_eq!(id, "u-0123456789abcdef_my_lab-2");
        assert!(hearth_core::HarnessId::parse(&id).is_ok());
        assert_eq!(owner_of(&id), Some(("u-0123456789abcdef", "my_lab-2")));
        for server_harness in [
            "openai",
            "u-0123456789abcdef",
            "u-0123456789abcdef_",
            "u-0123456789abcdeg_x",
            "u-0123456789ABCDEF_x",
            "u-0123456789abcde_x",
            "claude-code",
        ] {
            assert_eq!(owner_of(server_harness), None, "{server_harness}");
        }
    }
}
