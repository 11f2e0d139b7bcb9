//! `provider/list` and `provider/test`: the model providers `hearth-llm` finds, checked
//! on request. Keys never leave the process: only where a key came from is reported.

use crate::access::{Access, Principal};
use crate::backend::Shared;
use crate::dispatch::{MethodTable, route};
use hearth_config::Config;
use hearth_llm::{
    CancellationToken, CheckMethod, CheckOutcome, DiscoveryOptions, Environment, KeyStatus,
    ProviderCheck, check_providers, discover_providers,
};
use hearth_protocol::{self as wire, Method};
use hearth_protocol::{
    ErrorKind, KeyState, ProviderInfo, ProviderListResponse, ProviderTestOutcome,
    ProviderTestResponse, ProviderTestResult, RpcError,
};

pub(crate) async fn list_providers(config: &Config) -> ProviderListResponse {
    let discovery = discover_providers(
        config,
        &Environment::process(),
        &DiscoveryOptions::default(),
    )
    .await;
    listed(discovery)
}

/// The providers `config` declares, resolved in `env` alone (no local Ollama looked for).
pub(crate) async fn list_providers_in(config: &Config, env: &Environment) -> ProviderListResponse {
    let options = DiscoveryOptions {
        detect_ollama: false,
        ..DiscoveryOptions::default()
    };
    listed(discover_providers(config, env, &options).await)
}

fn listed(discovery: hearth_llm::Discovery) -> ProviderListResponse {
    ProviderListResponse {
        providers: discovery
            .providers
            .iter()
            .map(|provider| ProviderInfo {
                id: provider.id.clone(),
                protocol: provider.protocol.to_string(),
                base_url: provider.base_url().to_owned(),
                base_url_source: provider.base_url_source.to_string(),
                default_model: provider.default_model.clone(),
                models: provider.models.clone(),
                source: provider.source.to_string(),
                key: match &provider.key {
                    KeyStatus::Found { from } => KeyState::Found { from: from.clone() },
                    KeyStatus::Missing { expected } => KeyState::Missing {
                        expected: expected.clone(),
                    },
                    KeyStatus::NotNeeded => KeyState::NotNeeded,
                },
            })
            .collect(),
        problems: discovery.problems,
    }
}

pub(crate) async fn test_providers(
    config: &Config,
    only: Option<&str>,
) -> Result<ProviderTestResponse, RpcError> {
    let mut discovery = discover_providers(
        config,
        &Environment::process(),
        &DiscoveryOptions::default(),
    )
    .await;
    if let Some(only) = only {
        discovery.providers.retain(|provider| provider.id == only);
        if discovery.providers.is_empty() {
            return Err(RpcError::new(
                ErrorKind::NotFound,
                format!("no provider `{only}` (see `provider/list`)"),
                false,
            ));
        }
    }
    let checks = check_providers(&discovery, &CancellationToken::new()).await;
    Ok(ProviderTestResponse {
        results: checks.into_iter().map(test_result).collect(),
    })
}

/// One provider's check on the wire.
pub(crate) fn test_result(check: ProviderCheck) -> ProviderTestResult {
    ProviderTestResult {
        provider: check.provider,
        base_url: check.base_url,
        outcome: match check.outcome {
            CheckOutcome::Ok {
                method,
                latency,
                models,
                notes,
            } => ProviderTestOutcome::Ok {
                method: match method {
                    CheckMethod::ListedAndAsked { model } => {
                        format!("listed its models; {model} answered a one-token request")
                    }
                    CheckMethod::OneTokenRequest { model } => {
                        format!("answered a one-token request to {model}")
                    }
                },
                latency_ms: u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
                models,
                notes,
            },
            CheckOutcome::Failed { error, fix } => ProviderTestOutcome::Failed { error, fix },
        },
    }
}

/// The configuration `provider/*` reads now.
pub(crate) fn current_config(shared: &Shared) -> Config {
    shared
        .config
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone()
}

/// The providers methods.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::ProviderList => provider_list, Access::Open, with caller);
    route!(table, wire::ProviderTest => provider_test, Access::Operator("testing the model providers"));
}

async fn provider_list(
    shared: &Shared,
    caller: &Principal,
    _params: <wire::ProviderList as Method>::Params,
) -> Result<<wire::ProviderList as Method>::Response, RpcError> {
    let listed = list_providers(&current_config(shared)).await;
    match caller.viewer() {
        Some(user) => crate::user_providers::list(shared, user, listed).await,
        None => Ok(listed),
    }
}

async fn provider_test(
    shared: &Shared,
    params: <wire::ProviderTest as Method>::Params,
) -> Result<<wire::ProviderTest as Method>::Response, RpcError> {
    test_providers(&current_config(shared), params.provider.as_deref()).await
}
