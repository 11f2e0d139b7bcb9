//! Checking that a provider works (`hearth doctor`), and what to say when there is none.

use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::client::Protocol;
use crate::error::{LlmError, format_duration};
use crate::providers::{Discovery, KeyStatus, ProviderSource, ResolvedProvider};
use crate::request::{Message, ModelRequest};
use crate::retry::RetryPolicy;

/// How a provider was checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckMethod {
    /// Its model listing answered, and a one-token request to the model Hearth would
    /// use.
    ListedAndAsked {
        /// The model asked.
        model: String,
    },
    /// A one-token request to this model answered.
    OneTokenRequest {
        /// The model asked.
        model: String,
    },
}

/// The result of checking one provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    /// The provider answered.
    Ok {
        /// How it was asked.
        method: CheckMethod,
        /// How long the answer took.
        latency: Duration,
        /// Models it offers (empty for a one-token check).
        models: Vec<String>,
        /// Things worth fixing that do not stop it working.
        notes: Vec<String>,
    },
    /// The provider did not work.
    Failed {
        /// The exact error.
        error: String,
        /// What to do about it.
        fix: String,
    },
}

/// One provider's check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderCheck {
    /// The provider id.
    pub provider: String,
    /// Its base URL.
    pub base_url: String,
    /// What happened.
    pub outcome: CheckOutcome,
}

impl ProviderCheck {
    /// Whether the provider works.
    pub fn is_ok(&self) -> bool {
        matches!(self.outcome, CheckOutcome::Ok { .. })
    }
}

impl fmt::Display for ProviderCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.outcome {
            CheckOutcome::Ok {
                method,
                latency,
                models,
                notes,
            } => {
                let how = match method {
                    CheckMethod::ListedAndAsked { model } => format!(
                        "listed {} model(s), {model} answered a one-token request",
                        models.len()
                    ),
                    CheckMethod::OneTokenRequest { model } => {
                        format!("answered a one-token request to {model}")
                    }
                };
                write!(
                    f,
                    "ok      {} ({}): {how} in {}",
                    self.provider,
                    self.base_url,
                    format_duration(*latency)
                )?;
                for note in notes {
                    write!(f, "\n        note: {note}")?;
                }
                Ok(())
            }
            CheckOutcome::Failed { error, fix } => {
                write!(
                    f,
                    "FAILED  {} ({}): {error}\n        fix: {fix}",
                    self.provider, self.base_url
                )
            }
        }
    }
}

/// Checks every provider at once.
pub async fn check_providers(
    discovery: &Discovery,
    cancel: &CancellationToken,
) -> Vec<ProviderCheck> {
    futures::future::join_all(
        discovery
            .providers
            .iter()
            .map(|provider| check_provider(provider, cancel)),
    )
    .await
}

/// Checks one provider: lists its models, then sends a one-token request to the model
/// Hearth would use (its default model, else the one model it lists), so a provider
/// whose listing works but whose chat endpoint refuses fails here; where listing is not
/// offered, the one-token request alone. Never retries, so the answer is quick.
pub async fn check_provider(
    provider: &ResolvedProvider,
    cancel: &CancellationToken,
) -> ProviderCheck {
    let outcome = match run_check(provider, cancel).await {
        Ok(outcome) => outcome,
        Err(error) => CheckOutcome::Failed {
            fix: fix_for(&error, provider),
            error: error.to_string(),
        },
    };
    ProviderCheck {
        provider: provider.id.clone(),
        base_url: provider.base_url().to_owned(),
        outcome,
    }
}

async fn run_check(
    provider: &ResolvedProvider,
    cancel: &CancellationToken,
) -> Result<CheckOutcome, LlmError> {
    let mut options = provider.options.clone();
    options.retry = RetryPolicy::none();
    options.connect_timeout = options.connect_timeout.min(Duration::from_secs(5));
    options.idle_timeout = options.idle_timeout.min(Duration::from_secs(30));
    options.request_timeout = options.request_timeout.min(Duration::from_secs(30));
    let client = provider.client_with(options)?;
    let started = Instant::now();
    let listing = client.list_models(cancel.clone()).await;
    let latency = started.elapsed();
    match listing {
        Ok(models) => {
            let mut notes = Vec::new();
            if models.is_empty() && provider.id == "ollama" {
                notes.push("Ollama has no models yet: run `ollama pull llama3.2`".to_owned());
            }
            if let Some(model) = &provider.default_model
                && !models.is_empty()
                && !models.contains(model)
            {
                notes.push(format!(
                    "the default model `{model}` is not in the provider's list; set default_model in [providers.{}] of config.toml",
                    provider.id
                ));
            }
            let model = match (&provider.default_model, models.as_slice()) {
                (Some(model), _) => model.clone(),
                (None, [only]) => only.clone(),
                (None, []) => {
                    return Err(LlmError::InvalidRequest(
                        "the provider lists no models and no default model is set".into(),
                    ));
                }
                (None, several) => {
                    return Err(LlmError::InvalidRequest(format!(
                        "no model is chosen and the provider offers {}: {}",
                        several.len(),
                        list_models(several)
                    )));
                }
            };
            let request = ModelRequest::new(&model)
                .with_message(Message::user("ping"))
                .with_max_tokens(1);
            let asked = Instant::now();
            client.complete(request, cancel.clone()).await?;
            Ok(CheckOutcome::Ok {
                method: CheckMethod::ListedAndAsked { model },
                latency: latency + asked.elapsed(),
                models,
                notes,
            })
        }
        Err(error) if listing_unsupported(&error) => {
            let Some(model) = provider.default_model.clone() else {
                return Err(LlmError::InvalidRequest(format!(
                    "the model listing is not offered ({error}) and no default model is set to test with"
                )));
            };
            let request = ModelRequest::new(&model)
                .with_message(Message::user("ping"))
                .with_max_tokens(1);
            let started = Instant::now();
            client.complete(request, cancel.clone()).await?;
            Ok(CheckOutcome::Ok {
                method: CheckMethod::OneTokenRequest { model },
                latency: started.elapsed(),
                models: Vec::new(),
                notes: Vec::new(),
            })
        }
        Err(error) => Err(error),
    }
}

/// Up to ten model ids, then how many more.
fn list_models(models: &[String]) -> String {
    let shown: Vec<&str> = models.iter().take(10).map(String::as_str).collect();
    let more = models.len().saturating_sub(shown.len());
    if more == 0 {
        shown.join(", ")
    } else {
        format!("{} and {more} more", shown.join(", "))
    }
}

fn listing_unsupported(error: &LlmError) -> bool {
    matches!(error.status(), Some(404 | 405 | 501)) || matches!(error, LlmError::Decode { .. })
}

/// What the user should do about a failed check.
pub fn fix_for(error: &LlmError, provider: &ResolvedProvider) -> String {
    let id = &provider.id;
    let section = match provider.source {
        ProviderSource::ConfigFile => format!("[providers.{id}] in config.toml"),
        ProviderSource::Environment { ref variables } => variables.join(" / "),
        ProviderSource::DetectedOllama { .. } => "OLLAMA_HOST".to_owned(),
    };
    let key_origin = match &provider.key {
        KeyStatus::Found { from } => from.clone(),
        KeyStatus::Missing { expected } => expected.clone(),
        KeyStatus::NotNeeded => format!("the key settings in {section}"),
    };
    match error {
        LlmError::MissingApiKey { variable, .. } => format!(
            "export {variable}=<your key> (or set api_key_env in [providers.{id}] of config.toml)"
        ),
        LlmError::RateLimited { .. } => "the provider is rate limiting this key: wait, or check the plan and billing".to_owned(),
        LlmError::Api(api) => match api.status {
            Some(401) => format!("the API key was rejected: check {key_origin} (create a new key in the provider's console if needed)"),
            Some(403) => format!("the key has no access to this API or model: check its permissions, project and region ({key_origin})"),
            Some(404) if api.message.to_ascii_lowercase().contains("model") => format!(
                "the provider does not offer model `{}`: choose one it lists, and set default_model in {section}",
                provider.default_model.as_deref().unwrap_or("?")
            ),
            Some(404) => format!("nothing answers at this path: check base_url in {section} (OpenAI-compatible servers usually end in /v1)"),
            Some(408 | 429) => "the provider is rate limiting or out of quota for this key: wait, or check the plan and billing".to_owned(),
            Some(status) if status >= 500 => "the provider has a problem right now: try again later".to_owned(),
            _ => format!("read the provider's message above; the request settings are in {section}"),
        },
        LlmError::Connect { .. } => match &provider.source {
            ProviderSource::DetectedOllama { .. } => "start Ollama (`ollama serve`)".to_owned(),
            ProviderSource::Environment { variables } => {
                let place = variables
                    .iter()
                    .find(|variable| variable.ends_with("_BASE_URL"))
                    .map_or_else(
                        || "the provider's base URL".to_owned(),
                        |variable| format!("${variable}"),
                    );
                format!("nothing answers at {}: start the server, or correct {place}", provider.base_url())
            }
            ProviderSource::ConfigFile => format!("nothing answers at {}: start the server, or correct base_url in {section}", provider.base_url()),
        },
        LlmError::Timeout { .. } => format!(
            "the provider did not answer in time: check the network, or raise connect_timeout_secs / idle_timeout_secs in [providers.{id}]"
        ),
        LlmError::Decode { .. } | LlmError::Incomplete { .. } | LlmError::Disconnected { .. } => format!(
            "the server at {} does not answer like the {} API: check kind and base_url in {section}",
            provider.base_url(),
            match provider.protocol {
                Protocol::OpenAiChat => "OpenAI Chat Completions",
                Protocol::AnthropicMessages => "Anthropic Messages",
            }
        ),
        LlmError::Redirect { .. } => format!("put the final address into {section}"),
        LlmError::InvalidRequest(message) if message.starts_with("no model is chosen") => format!(
            "pass --model, or set default_model in {}",
            match provider.source {
                ProviderSource::ConfigFile => section,
                _ => format!("a [providers.{id}] section of config.toml"),
            }
        ),
        LlmError::InvalidRequest(_) => format!("correct {section}"),
        LlmError::Cancelled => "the check was cancelled".to_owned(),
        LlmError::ToolArguments(_) => String::new(),
    }
}

/// What to tell a user who has no provider: every way to add one, and the offline demo.
pub fn no_provider_help(config_path: &Path) -> String {
    format!(
        "No model provider is set up, so Hearth has no model to talk to.\n\
         \n\
         Add one of these, then run `hearth doctor` to check it:\n\
         \n\
         \x20 OpenAI, or any OpenAI-compatible server (OpenRouter, LM Studio, vLLM, llama.cpp):\n\
         \x20     export OPENAI_API_KEY=sk-...\n\
         \x20     export OPENAI_BASE_URL=https://openrouter.ai/api/v1   # only for servers other than OpenAI\n\
         \n\
         \x20 Anthropic:\n\
         \x20     export ANTHROPIC_API_KEY=sk-ant-...\n\
         \x20     export ANTHROPIC_BASE_URL=https://...   # only for a proxy or gateway\n\
         \n\
         \x20 A local Ollama: start it (`ollama serve`) and pull a model (`ollama pull llama3.2`).\n\
         \x20     Hearth finds it at 127.0.0.1:11434, or where OLLAMA_HOST points.\n\
         \n\
         \x20 Or describe the provider in {config}:\n\
         \n\
         \x20     [providers.openai]\n\
         \x20     kind = \"openai\"                  # or \"anthropic\"\n\
         \x20     api_key_env = \"OPENAI_API_KEY\"   # the variable holding the key\n\
         \x20     default_model = \"gpt-4.1-mini\"\n\
         \x20     # base_url = \"http://127.0.0.1:1234/v1\"   # for a local server\n\
         \n\
         To try Hearth offline without any provider, run the scripted demo:\n\
         \n\
         \x20     hearth run --provider replay \"say hello\"\n",
        config = config_path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_names_every_way_to_add_a_provider() {
        let help = no_provider_help(Path::new("/home/u/.config/hearth/config.toml"));
        for needle in [
            "/home/u/.config/hearth/config.toml",
            "OPENAI_API_KEY",
            "OPENAI_BASE_URL",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "OLLAMA_HOST",
            "hearth run --provider replay",
            "hearth doctor",
            "[providers.openai]",
        ] {
            assert!(help.contains(needle), "missing {needle}:\n{help}");
        }
    }
}
