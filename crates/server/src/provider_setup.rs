//! `provider/add` and `provider/remove`: model providers set up from a client.
//!
//! 1. The id must be new: not in `config.toml` (providers or agents), not a harness
//!    this server runs.
//! 2. The provider is checked exactly as `hearth doctor` checks one, with the key it
//!    was given, before anything is written. A provider that does not answer is
//!    reported with the error and nothing is saved.
//! 3. A pasted key goes to a file of its own in the data directory (`keys/<id>.key`,
//!    mode 0600, in a 0700 folder); `config.toml` names that file, never the key. A
//!    variable's name is written as `api_key_env`.
//! 4. `config.toml` is changed as a document (`hearth_config::ConfigEdit`): comments,
//!    order and other entries kept, the result checked to read before it is written;
//!    one change at a time.
//! 5. The server's own copy of the configuration is replaced, so `provider/list` and
//!    `provider/test` show the change at once.
//! 6. Hearth's own agent over the new provider is made as at start
//!    ([`ProviderHarnesses`](crate::ProviderHarnesses)) and registered with the host, which
//!    tells the root's subscribers the new list of harnesses (`harnessesChanged`): chats
//!    can use it at once. `usableNow` says whether that worked; when it did not (a server
//!    without the maker, or a provider the agent cannot use), the provider is still saved
//!    and is used after a restart.

use std::path::PathBuf;

use hearth_config::{
    ConfigEdit, ConfigValue, Paths, ProviderConfig, ProviderKind, create_private_dir,
};
use hearth_llm::{CancellationToken, DiscoveryOptions, Environment, check_provider};
use hearth_protocol::{self as wire, ErrorKind, Method, RpcError};

use crate::access::{Access, Principal};
use crate::backend::Shared;
use crate::dispatch::{MethodTable, route};
use crate::edge::unavailable;
use crate::providers::{current_config, list_providers, test_result};

/// The folder of the data directory holding pasted keys.
const KEYS_FOLDER: &str = "keys";

/// One change of `config.toml` at a time: two requests never read the same file and
/// each write their own version of it.
static CONFIG_WRITES: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The setup methods.
pub(crate) fn register(table: &mut MethodTable) {
    // A user adds and removes their own providers; the operator, the server's.
    route!(table, wire::ProviderAdd => provider_add, Access::Open, with caller);
    route!(table, wire::ProviderRemove => provider_remove, Access::Open, with caller);
}

fn paths(shared: &Shared) -> Result<&Paths, RpcError> {
    shared
        .backend
        .paths
        .as_ref()
        .ok_or_else(|| unavailable("adding providers is not available in this server"))
}

fn invalid(message: String) -> RpcError {
    RpcError::new(ErrorKind::InvalidParams, message, false)
}

/// The shape of an id `config.toml` can hold as a bare key.
pub(crate) fn check_shape(id: &str) -> Result<(), RpcError> {
    let well_formed = !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !well_formed {
        return Err(invalid(format!(
            "`{id}` cannot name a provider: use 1 to 64 letters, digits, `-` or `_`"
        )));
    }
    Ok(())
}

/// Rule 1, and the id's shape.
fn check_id(shared: &Shared, id: &str) -> Result<(), RpcError> {
    check_shape(id)?;
    let config = current_config(shared);
    let taken = config.providers.contains_key(id)
        || config.agents.contains_key(id)
        || shared.host().agent(id).is_some();
    if taken {
        return Err(RpcError::new(
            ErrorKind::Conflict,
            format!("a provider or agent named `{id}` exists already; choose another name"),
            false,
        ));
    }
    Ok(())
}

/// Where a pasted key of `id` is kept.
fn key_file(paths: &Paths, id: &str) -> PathBuf {
    paths.home.join(KEYS_FOLDER).join(format!("{id}.key"))
}

fn trimmed(text: Option<String>) -> Option<String> {
    text.map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
}

async fn provider_add(
    shared: &Shared,
    caller: &Principal,
    params: <wire::ProviderAdd as Method>::Params,
) -> Result<<wire::ProviderAdd as Method>::Response, RpcError> {
    if let Some(user) = caller.viewer() {
        return crate::user_providers::add(shared, user, params).await;
    }
    let paths = paths(shared)?;
    let id = params.id.trim().to_owned();
    check_id(shared, &id)?;
    let (candidate, kind_name) = candidate(&params)?;
    // Rule 2: the check `hearth doctor` runs, on the provider as given, alone.
    let test = match check_alone(&id, candidate, &Environment::process(), None).await {
        Ok(test) => test,
        Err(test) => return Ok(wire::ProviderAddResponse::Failed { test }),
    };
    let config = save_provider(paths, &id, kind_name, &params).await?;
    // Rule 5.
    *shared
        .config
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = config.clone();
    let listed = list_providers(&config).await;
    let Some(info) = listed.providers.into_iter().find(|info| info.id == id) else {
        return Err(RpcError::new(
            ErrorKind::Internal,
            format!(
                "provider `{id}` was saved in {} but is not listed: {}",
                paths.config_file.display(),
                listed.problems.join("; ")
            ),
            false,
        ));
    };
    Ok(wire::ProviderAddResponse::Added {
        test,
        provider: Box::new(info),
        usable_now: register_harness(shared, &config, &id),
    })
}

/// Rule 6: whether the provider's harness now runs in this server.
fn register_harness(shared: &Shared, config: &hearth_config::Config, id: &str) -> bool {
    let Some(maker) = &shared.backend.provider_harnesses else {
        return false;
    };
    match maker.harness(config, id, &Environment::process(), None) {
        Ok(harness) => {
            if shared.host().register_harness(harness).is_some() {
                tracing::warn!(
                    provider = id,
                    "a harness with the new provider's id was replaced"
                );
            }
            true
        }
        Err(error) => {
            tracing::warn!(provider = id, %error, "the provider was saved but cannot be used until the server restarts");
            false
        }
    }
}

/// The provider as the form gives it (its key in the entry itself, to be checked), with
/// its kind's name in config.toml; a key that cannot be used is refused.
pub(crate) fn candidate(
    params: &<wire::ProviderAdd as Method>::Params,
) -> Result<(ProviderConfig, &'static str), RpcError> {
    let (kind, kind_name) = match params.kind {
        wire::ProviderKindParam::Openai => (ProviderKind::Openai, "openai"),
        wire::ProviderKindParam::Anthropic => (ProviderKind::Anthropic, "anthropic"),
    };
    let mut candidate = ProviderConfig {
        kind: Some(kind),
        base_url: trimmed(params.base_url.clone()),
        default_model: trimmed(params.model.clone()),
        ..ProviderConfig::default()
    };
    match &params.key {
        wire::ProviderKeyParam::Pasted { key } if key.trim().is_empty() => {
            return Err(invalid(
                "the pasted key is empty; paste the key, or name the variable that holds it"
                    .to_owned(),
            ));
        }
        wire::ProviderKeyParam::Pasted { key } => candidate.api_key = Some(key.trim().to_owned()),
        wire::ProviderKeyParam::Environment { variable } => {
            let variable = variable.trim();
            let valid = !variable.is_empty()
                && variable
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(invalid(format!(
                    "`{variable}` is not an environment variable's name (letters, digits and `_`)"
                )));
            }
            candidate.api_key_env = Some(variable.to_owned());
        }
        wire::ProviderKeyParam::None => {}
    }
    Ok((candidate, kind_name))
}

/// The check `hearth doctor` runs, on the provider alone: its result when it answered
/// (`Ok`), or when it did not (`Err`).
pub(crate) async fn check_alone(
    id: &str,
    candidate: ProviderConfig,
    env: &Environment,
    resolver: Option<std::sync::Arc<dyn reqwest::dns::Resolve>>,
) -> Result<wire::ProviderTestResult, wire::ProviderTestResult> {
    let base_url = candidate.base_url.clone().unwrap_or_default();
    let mut alone = hearth_config::Config::default();
    alone.providers.insert(id.to_owned(), candidate);
    let discovery = hearth_llm::discover_providers(
        &alone,
        env,
        &DiscoveryOptions {
            detect_ollama: false,
            ..DiscoveryOptions::default()
        },
    )
    .await;
    let Some(provider) = discovery.get(id) else {
        return Err(wire::ProviderTestResult {
            provider: id.to_owned(),
            base_url,
            outcome: wire::ProviderTestOutcome::Failed {
                error: discovery.problems.join("; "),
                fix: "correct the base URL and try again".to_owned(),
            },
        });
    };
    let mut provider = provider.clone();
    provider.options.resolver = resolver;
    let check = check_provider(&provider, &CancellationToken::new()).await;
    let passed = check.is_ok();
    let test = test_result(check);
    if passed { Ok(test) } else { Err(test) }
}

/// Rules 3 and 4: the key file, then config.toml naming it (one change at a time); a
/// failed save removes the key file it wrote. Returns the configuration as saved.
async fn save_provider(
    paths: &hearth_config::Paths,
    id: &str,
    kind_name: &'static str,
    params: &<wire::ProviderAdd as Method>::Params,
) -> Result<hearth_config::Config, RpcError> {
    let mut entries: Vec<(&str, ConfigValue)> = vec![("kind", ConfigValue::from(kind_name))];
    if let Some(url) = trimmed(params.base_url.clone()) {
        entries.push(("base_url", ConfigValue::from(url)));
    }
    if let Some(model) = trimmed(params.model.clone()) {
        entries.push(("default_model", ConfigValue::from(model)));
    }
    let not_saved = |error: String| {
        RpcError::new(
            ErrorKind::Internal,
            format!("{error}; nothing was saved"),
            false,
        )
    };
    let _writing = CONFIG_WRITES.lock().await;
    let mut edit =
        ConfigEdit::open(&paths.config_file).map_err(|error| not_saved(error.to_string()))?;
    if edit.has("providers", id) {
        return Err(RpcError::new(
            ErrorKind::Conflict,
            format!("config.toml declares a provider `{id}` already; choose another name"),
            false,
        ));
    }
    let written_key = match &params.key {
        wire::ProviderKeyParam::Pasted { key } => {
            let path = key_file(paths, id);
            write_key(&path, key.trim())?;
            entries.push((
                "api_key_file",
                ConfigValue::from(path.display().to_string()),
            ));
            Some(path)
        }
        wire::ProviderKeyParam::Environment { variable } => {
            entries.push(("api_key_env", ConfigValue::from(variable.trim())));
            None
        }
        wire::ProviderKeyParam::None => None,
    };
    edit.set_table("providers", id, entries);
    edit.save().map_err(|error| {
        if let Some(path) = written_key
            && let Err(remove) = std::fs::remove_file(&path)
        {
            tracing::warn!(path = %path.display(), %remove, "could not remove a key file of a provider that was not saved");
        }
        not_saved(error.to_string())
    })
}

/// Writes a pasted key to its own file (0600) in the keys folder (0700).
fn write_key(path: &std::path::Path, key: &str) -> Result<(), RpcError> {
    let failed = |error: std::io::Error| {
        RpcError::new(
            ErrorKind::Internal,
            format!(
                "cannot write the key file {}: {error}; nothing was saved",
                path.display()
            ),
            false,
        )
    };
    if let Some(folder) = path.parent() {
        create_private_dir(folder).map_err(failed)?;
    }
    hearth_fs::write_atomic(
        path,
        format!("{key}\n").as_bytes(),
        hearth_fs::WriteMode::Replace,
        hearth_fs::FilePermissions::Private,
    )
    .map_err(failed)
}

async fn provider_remove(
    shared: &Shared,
    caller: &Principal,
    params: <wire::ProviderRemove as Method>::Params,
) -> Result<<wire::ProviderRemove as Method>::Response, RpcError> {
    if let Some(user) = caller.viewer() {
        return crate::user_providers::remove(shared, user, params).await;
    }
    let paths = paths(shared)?;
    let id = params.id.trim().to_owned();
    let _writing = CONFIG_WRITES.lock().await;
    let mut edit = ConfigEdit::open(&paths.config_file)
        .map_err(|error| RpcError::new(ErrorKind::Internal, error.to_string(), false))?;
    if !edit.remove_table("providers", &id) {
        return Err(RpcError::new(
            ErrorKind::NotFound,
            format!(
                "config.toml declares no provider `{id}` ({}); only providers declared there can be removed here",
                paths.config_file.display()
            ),
            false,
        ));
    }
    let before = current_config(shared);
    let config = edit
        .save()
        .map_err(|error| RpcError::new(ErrorKind::Internal, error.to_string(), false))?;
    *shared
        .config
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = config;
    // Only a key file Hearth wrote (in its keys folder) is deleted with the provider.
    let own = key_file(paths, &id);
    let key_file_removed = before
        .providers
        .get(&id)
        .and_then(|provider| provider.api_key_file.as_ref())
        .is_some_and(|path| *path == own)
        && match std::fs::remove_file(&own) {
            Ok(()) => true,
            Err(error) => {
                tracing::warn!(path = %own.display(), %error, "could not remove a removed provider's key file");
                false
            }
        };
    Ok(wire::ProviderRemoveResponse {
        id,
        key_file_removed,
    })
}
