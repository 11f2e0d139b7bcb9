//! The `NativeHarness`: its constructors and settings, the tools it offers, and the table
//! of live chats with their running turns.

use std::sync::Arc;

use hearth_core::{
    Capabilities, ChatContext, ChatUri, HarnessData, HarnessDescriptor, HarnessId, Signal,
    ToolDescription, Toolbox, TurnId, now,
};
use hearth_harness::{ChatTable, RunId, SinkCell};
use hearth_llm::{Message, ModelClient, ResolvedProvider, ToolSpec};
use tokio_util::sync::CancellationToken;

use crate::context::ListedTool;
use crate::conversation::{Conversation, Role, TurnRecord};
use crate::error::{Error, Result};
use crate::permissions::PendingPermissions;
use crate::settings::AgentSettings;
use crate::task::{TASK_TOOL, task_tool};

/// What a turn starts from.
pub(crate) struct Started {
    /// The conversation before the turn.
    pub prior: Vec<Message>,
    /// The model to call.
    pub model: String,
    /// What kind of conversation it is.
    pub role: Role,
    /// Finished turns before this one.
    pub turn_count: usize,
    /// Whether the chat has a title.
    pub titled: bool,
}

/// The tools of one turn, for the model and for the system prompt.
pub(crate) struct OfferedTools {
    pub specs: Vec<ToolSpec>,
    pub listed: Vec<ListedTool>,
}

pub(crate) struct Inner {
    pub descriptor: HarnessDescriptor,
    pub client: Arc<dyn ModelClient>,
    pub default_model: Option<String>,
    /// The model the provider's listing chose when none is configured: its one model.
    pub listed_model: tokio::sync::OnceCell<String>,
    /// The context windows the provider's listing gave, when it was read.
    pub listed_windows: std::sync::OnceLock<std::collections::BTreeMap<String, u32>>,
    pub toolbox: Arc<dyn Toolbox>,
    pub settings: AgentSettings,
    /// Where events go.
    pub sink: SinkCell,
    /// The live chats.
    pub chats: ChatTable<Conversation>,
    /// Permission requests waiting for the user.
    pub permissions: PendingPermissions,
}

/// Hearth's own agent loop for one model provider: an [`Harness`](hearth_core::Harness) whose
/// provider id is the provider's (`openai`, `anthropic`, `ollama`, a config id).
///
/// It calls the model through an [`Arc<dyn ModelClient>`](ModelClient), offers the
/// [`Toolbox`]'s tools plus its own `task` tool, and keeps each chat's conversation in memory
/// and in the `provider_data` it hands to the host after every turn.
#[derive(Clone)]
pub struct NativeHarness {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for NativeHarness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeHarness")
            .field("provider", &self.inner.descriptor.id)
            .field("default_model", &self.inner.default_model)
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

impl NativeHarness {
    /// An agent for `provider`, calling `client`; `default_model` is used for chats that
    /// chose none.
    pub fn new(
        provider: HarnessId,
        client: Arc<dyn ModelClient>,
        default_model: Option<String>,
        toolbox: Arc<dyn Toolbox>,
        settings: AgentSettings,
    ) -> Self {
        let model = default_model.as_deref().unwrap_or("no default model");
        let descriptor = HarnessDescriptor {
            name: format!("Hearth agent ({provider})"),
            description: format!(
                "Hearth's own agent loop on the {} API of provider `{provider}` ({model})",
                client.protocol()
            ),
            id: provider,
            capabilities: Capabilities::forks_and_side_chats(),
            demo: false,
        };
        Self {
            inner: Arc::new(Inner {
                descriptor,
                client,
                default_model,
                listed_model: tokio::sync::OnceCell::new(),
                listed_windows: std::sync::OnceLock::new(),
                toolbox,
                settings,
                sink: SinkCell::new(),
                chats: ChatTable::new(),
                permissions: PendingPermissions::default(),
            }),
        }
    }

    /// An agent for a resolved provider: its id, a client with its settings, its default
    /// model.
    pub fn from_provider(
        provider: &ResolvedProvider,
        toolbox: Arc<dyn Toolbox>,
        settings: AgentSettings,
    ) -> Result<Self> {
        let unusable = |reason: String| Error::Provider {
            provider: provider.id.clone(),
            reason,
        };
        let id = HarnessId::parse(&provider.id).map_err(|error| unusable(error.to_string()))?;
        let client = provider
            .client()
            .map_err(|error| unusable(error.to_string()))?;
        // The provider's configured windows, unless the caller set some.
        let settings = if settings.context_windows == hearth_llm::ContextWindows::default() {
            settings.with_context_windows(provider.context_windows.clone())
        } else {
            settings
        };
        Ok(Self::new(
            id,
            client,
            provider.default_model.clone(),
            toolbox,
            settings,
        ))
    }

    /// The provider id.
    pub fn provider(&self) -> &HarnessId {
        &self.inner.descriptor.id
    }

    /// The model used when a chat chose none.
    pub fn default_model(&self) -> Option<&str> {
        self.inner.default_model.as_deref()
    }

    /// The settings.
    pub fn settings(&self) -> &AgentSettings {
        &self.inner.settings
    }
}

impl Inner {
    pub fn provider(&self) -> &str {
        self.descriptor.id.as_str()
    }

    /// The model of a chat: the host's choice, else the chat's, else the provider's
    /// (configured, or the one it lists).
    pub fn model_for(
        &self,
        context_model: Option<&str>,
        conversation: &Conversation,
    ) -> Result<String> {
        context_model
            .or(conversation.model.as_deref())
            .or(self.default_model.as_deref())
            .or(self.listed_model.get().map(String::as_str))
            .filter(|model| !model.trim().is_empty())
            .map(str::to_owned)
            .ok_or_else(|| Error::NoModel {
                provider: self.provider().to_owned(),
            })
    }

    /// A model's context window: configured for the model, else what the provider's
    /// listing said, else configured for the provider, else known or the default.
    pub fn context_window(&self, model: &str) -> u32 {
        let windows = &self.settings.context_windows;
        windows
            .models
            .get(model)
            .copied()
            .or_else(|| {
                self.listed_windows
                    .get()
                    .and_then(|listed| listed.get(model).copied())
            })
            .unwrap_or_else(|| windows.for_model(model))
            .max(1)
    }

    /// The tools offered in a chat at a subagent depth: the toolbox's (only those the
    /// user enabled, when the host says), then `task` while subagents may nest deeper.
    pub fn offered_tools(&self, context: &ChatContext, depth: u32) -> OfferedTools {
        let enabled = context
            .customizations
            .as_ref()
            .map(|customizations| customizations.enabled_tools.as_slice())
            .unwrap_or_default();
        let allowed = |name: &str| enabled.is_empty() || enabled.iter().any(|tool| tool == name);
        let mut descriptions: Vec<ToolDescription> = Vec::new();
        for tool in self.toolbox.tools_in(&context.session) {
            if tool.name == TASK_TOOL {
                tracing::warn!(
                    "a toolbox tool is named `{TASK_TOOL}`, which Hearth's agent uses for subagents; it is not offered"
                );
                continue;
            }
            if allowed(&tool.name) && descriptions.iter().all(|seen| seen.name != tool.name) {
                descriptions.push(tool);
            }
        }
        if depth < self.settings.max_subagent_depth && allowed(TASK_TOOL) {
            descriptions.push(task_tool());
        }
        OfferedTools {
            specs: descriptions
                .iter()
                .map(|tool| ToolSpec::new(&tool.name, &tool.description, tool.parameters.clone()))
                .collect(),
            listed: descriptions
                .into_iter()
                .map(|tool| ListedTool {
                    name: tool.name,
                    description: tool.description,
                    mutates: tool.mutates,
                })
                .collect(),
        }
    }

    /// Without a configured model, asks the provider which models it offers (once): a
    /// server that offers exactly one model (a local server, a proxy) is used with it;
    /// one that offers several is a clear error listing them.
    pub async fn discover_model(&self, context: &ChatContext) -> Result<()> {
        if context.model.is_some()
            || self.default_model.is_some()
            || self.listed_model.initialized()
        {
            return Ok(());
        }
        let chosen = self
            .chats
            .with(&context.chat, |entry| entry.conversation.model.is_some())
            .unwrap_or(false);
        if chosen {
            return Ok(());
        }
        let listed = self
            .client
            .list_models_detailed(CancellationToken::new())
            .await
            .map_err(|error| Error::NoModelListed {
                provider: self.provider().to_owned(),
                detail: error.to_string(),
            })?;
        let windows = listed
            .iter()
            .filter_map(|model| Some((model.id.clone(), model.context_window?)))
            .collect();
        if self.listed_windows.set(windows).is_err() {
            tracing::trace!("the listed context windows were set meanwhile");
        }
        let models: Vec<String> = listed.into_iter().map(|model| model.id).collect();
        match models.as_slice() {
            [only] => {
                // Another turn may have set it meanwhile: either way it is this model.
                if self.listed_model.set(only.clone()).is_err() {
                    tracing::trace!("the listed model was set meanwhile");
                }
                Ok(())
            }
            [] => Err(Error::NoModelListed {
                provider: self.provider().to_owned(),
                detail: "it lists no models".to_owned(),
            }),
            several => Err(Error::ModelToChoose {
                provider: self.provider().to_owned(),
                models: several
                    .iter()
                    .take(10)
                    .map(String::as_str)
                    .collect::<Vec<_>>()
                    .join(", "),
                more: several.len().saturating_sub(10),
            }),
        }
    }

    /// Marks a chat as running a turn, returning the run's id (for
    /// [`Inner::finish_run`]) and what the turn starts from; a chat that already runs one
    /// is busy, and one without a model does not start.
    pub fn start_run(
        &self,
        context: &ChatContext,
        turn_id: &TurnId,
        cancel: &CancellationToken,
    ) -> Result<(RunId, Started)> {
        self.chats
            .try_start_run(&context.chat, turn_id, cancel, |conversation| {
                Ok(Started {
                    model: self.model_for(context.model.as_deref(), conversation)?,
                    prior: conversation.model_messages(),
                    role: conversation.role,
                    turn_count: conversation.turns.len(),
                    titled: conversation.title.is_some(),
                })
            })
    }

    /// Records a finished turn in its chat's history and returns the new blob, unless the
    /// chat was disposed, released or replaced while the turn ran.
    pub fn finish_run(&self, chat: &ChatUri, run: RunId, turn: TurnRecord) -> Option<HarnessData> {
        let encoded = self.chats.finish_run(chat, run, |conversation| {
            conversation.turns.push(turn);
            conversation.updated_at = now();
            conversation.encode(chat)
        })?;
        encoded
            .inspect_err(
                |error| tracing::error!(%chat, %error, "could not record a chat's conversation"),
            )
            .ok()
    }

    /// Changes a held chat's conversation and tells the host the new blob.
    pub async fn update_conversation(
        &self,
        chat: &ChatUri,
        change: impl FnOnce(&mut Conversation),
    ) -> Result<()> {
        let provider_data = self.chats.with(chat, |entry| {
            change(&mut entry.conversation);
            entry.conversation.updated_at = now();
            entry.conversation.encode(chat)
        })??;
        self.sink
            .get()
            .progress(chat, Signal::ProviderDataChanged { provider_data })
            .await;
        Ok(())
    }
}
