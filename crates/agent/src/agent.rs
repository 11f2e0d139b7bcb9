//! The `NativeAgent`: its constructors and settings, the tools it offers, and the table
//! of live chats with their running turns.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

use hearth_core::{
    AgentDescriptor, Capabilities, ChatContext, ChatUri, EventSink, MultipleChats, ProviderData,
    ProviderId, Signal, ToolDescription, Toolbox, TurnId, now,
};
use hearth_llm::{Message, ModelClient, ResolvedProvider, ToolSpec};
use tokio_util::sync::CancellationToken;

use crate::backing::{Backing, Role, TurnRecord};
use crate::context::ListedTool;
use crate::error::{Error, Result};
use crate::settings::AgentSettings;
use crate::task::{TASK_TOOL, task_tool};

/// A turn running in a chat.
pub(crate) struct Run {
    /// Tells a finishing turn whether its chat is still the one it started in.
    pub id: u64,
    /// The running turn.
    pub turn_id: TurnId,
    /// Cancelled by `abort`, `dispose_chat` and `release_chat`.
    pub cancel: CancellationToken,
}

/// A live chat.
pub(crate) struct ChatEntry {
    pub backing: Backing,
    pub run: Option<Run>,
    /// Cancels background work of the chat (title generation) when it goes away.
    pub background: CancellationToken,
}

impl ChatEntry {
    pub fn new(backing: Backing) -> Self {
        Self {
            backing,
            run: None,
            background: CancellationToken::new(),
        }
    }
}

/// What a turn starts from.
pub(crate) struct Started {
    /// The run's id, for [`Inner::finish_run`].
    pub run: u64,
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
    pub descriptor: AgentDescriptor,
    pub client: Arc<dyn ModelClient>,
    pub default_model: Option<String>,
    pub toolbox: Arc<dyn Toolbox>,
    pub settings: AgentSettings,
    sink: RwLock<EventSink>,
    chats: Mutex<HashMap<ChatUri, ChatEntry>>,
    runs: AtomicU64,
}

/// Hearth's own agent loop for one model provider: an [`Agent`](hearth_core::Agent) whose
/// provider id is the provider's (`openai`, `anthropic`, `ollama`, a config id).
///
/// It calls the model through an [`Arc<dyn ModelClient>`](ModelClient), offers the
/// [`Toolbox`]'s tools plus its own `task` tool, and keeps each chat's backing in memory
/// and in the `provider_data` it hands to the host after every turn.
#[derive(Clone)]
pub struct NativeAgent {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for NativeAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeAgent")
            .field("provider", &self.inner.descriptor.id)
            .field("default_model", &self.inner.default_model)
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

impl NativeAgent {
    /// An agent for `provider`, calling `client`; `default_model` is used for chats that
    /// chose none.
    pub fn new(
        provider: ProviderId,
        client: Arc<dyn ModelClient>,
        default_model: Option<String>,
        toolbox: Arc<dyn Toolbox>,
        settings: AgentSettings,
    ) -> Self {
        let model = default_model.as_deref().unwrap_or("no default model");
        let descriptor = AgentDescriptor {
            name: format!("Hearth agent ({provider})"),
            description: format!(
                "Hearth's own agent loop on the {} API of provider `{provider}` ({model})",
                client.protocol()
            ),
            id: provider,
            capabilities: Capabilities {
                multiple_chats: Some(MultipleChats {
                    fork: true,
                    side_chat: true,
                }),
                multiple_working_directories: None,
            },
            demo: false,
        };
        Self {
            inner: Arc::new(Inner {
                descriptor,
                client,
                default_model,
                toolbox,
                settings,
                sink: RwLock::new(EventSink::discard()),
                chats: Mutex::new(HashMap::new()),
                runs: AtomicU64::new(0),
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
        let id = ProviderId::parse(&provider.id).map_err(|error| unusable(error.to_string()))?;
        let client = provider
            .client()
            .map_err(|error| unusable(error.to_string()))?;
        Ok(Self::new(
            id,
            client,
            provider.default_model.clone(),
            toolbox,
            settings,
        ))
    }

    /// The provider id.
    pub fn provider(&self) -> &ProviderId {
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
    pub fn sink(&self) -> EventSink {
        self.sink
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn attach(&self, sink: EventSink) {
        *self.sink.write().unwrap_or_else(PoisonError::into_inner) = sink;
    }

    pub fn lock(&self) -> MutexGuard<'_, HashMap<ChatUri, ChatEntry>> {
        self.chats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn provider(&self) -> &str {
        self.descriptor.id.as_str()
    }

    fn next_run(&self) -> u64 {
        self.runs.fetch_add(1, Ordering::Relaxed)
    }

    /// The model of a chat: the host's choice, else the chat's, else the provider's.
    pub fn model_for(&self, context_model: Option<&str>, backing: &Backing) -> Result<String> {
        context_model
            .or(backing.model.as_deref())
            .or(self.default_model.as_deref())
            .filter(|model| !model.trim().is_empty())
            .map(str::to_owned)
            .ok_or_else(|| Error::NoModel {
                provider: self.provider().to_owned(),
            })
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
        for tool in self.toolbox.tools() {
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

    /// Marks a chat as running a turn; a chat that already runs one is busy.
    pub fn start_run(
        &self,
        context: &ChatContext,
        turn_id: &TurnId,
        cancel: &CancellationToken,
    ) -> Result<Started> {
        let id = self.next_run();
        let chat = &context.chat;
        let mut chats = self.lock();
        let entry = chats
            .get_mut(chat)
            .ok_or_else(|| Error::NotOpen { chat: chat.clone() })?;
        if let Some(run) = &entry.run {
            return Err(Error::Busy {
                chat: chat.clone(),
                turn: run.turn_id.clone(),
            });
        }
        let model = self.model_for(context.model.as_deref(), &entry.backing)?;
        entry.run = Some(Run {
            id,
            turn_id: turn_id.clone(),
            cancel: cancel.clone(),
        });
        Ok(Started {
            run: id,
            prior: entry.backing.model_messages(),
            model,
            role: entry.backing.role,
            turn_count: entry.backing.turns.len(),
            titled: entry.backing.title.is_some(),
        })
    }

    /// Adds a chat the agent spawned, already running its first turn.
    pub fn add_running(
        &self,
        chat: &ChatUri,
        backing: Backing,
        turn_id: &TurnId,
        cancel: &CancellationToken,
    ) -> u64 {
        let id = self.next_run();
        let mut entry = ChatEntry::new(backing);
        entry.run = Some(Run {
            id,
            turn_id: turn_id.clone(),
            cancel: cancel.clone(),
        });
        self.lock().insert(chat.clone(), entry);
        id
    }

    /// Records a finished turn in its chat's history and returns the new blob, unless the
    /// chat was disposed, released or replaced while the turn ran.
    pub fn finish_run(&self, chat: &ChatUri, run: u64, turn: TurnRecord) -> Option<ProviderData> {
        let mut chats = self.lock();
        let entry = chats
            .get_mut(chat)
            .filter(|entry| entry.run.as_ref().is_some_and(|current| current.id == run))?;
        entry.run = None;
        entry.backing.turns.push(turn);
        entry.backing.updated_at = now();
        match entry.backing.encode(chat) {
            Ok(data) => Some(data),
            Err(error) => {
                tracing::error!(%chat, %error, "could not record a chat's backing");
                None
            }
        }
    }

    /// Changes a held chat's backing and tells the host the new blob.
    pub async fn update_backing(
        &self,
        chat: &ChatUri,
        change: impl FnOnce(&mut Backing),
    ) -> Result<()> {
        let provider_data = {
            let mut chats = self.lock();
            let entry = chats
                .get_mut(chat)
                .ok_or_else(|| Error::NotOpen { chat: chat.clone() })?;
            change(&mut entry.backing);
            entry.backing.updated_at = now();
            entry.backing.encode(chat)?
        };
        self.sink()
            .progress(chat, Signal::ProviderDataChanged { provider_data })
            .await;
        Ok(())
    }

    /// Forgets a chat's live state, stopping its turn and background work.
    pub fn forget(&self, chat: &ChatUri) {
        if let Some(entry) = self.lock().remove(chat) {
            entry.background.cancel();
            if let Some(run) = entry.run {
                run.cancel.cancel();
            }
        }
    }
}
