//! What the harness and its connection handlers share: the chats, the route from each
//! agent session to its chat with the turn running in it, and the permission requests
//! waiting for the user.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use hearth_confine::Roots;
use hearth_core::{AgentChatState, ChatUri, Signal, ToolCallPart, TurnId};
use hearth_harness::{ChatTable, SinkCell};
use tokio::sync::oneshot;

use crate::conversation::AcpConversation;
use crate::grants::{Grant, Scope, ShownCommand};
use crate::options::AcpOptions;
use crate::spec::AgentSpec;
use crate::terminals::Terminals;

/// A tool call the user (or the policy) allowed in the running turn: what it covers
/// (see [`crate::grants`]).
#[derive(Clone, Debug)]
pub(crate) struct Allowed {
    /// The call as it was shown.
    pub scope: Scope,
    /// Runs it may still cover (a command allowed once covers one run); `None` when it
    /// covers every use in the turn (the files an edit named).
    pub uses_left: Option<u32>,
}

/// A turn running in an agent session.
#[derive(Debug)]
pub(crate) struct TurnState {
    /// The host's turn id.
    pub turn_id: TurnId,
    /// The tool calls announced so far.
    pub calls: HashMap<String, ToolCallPart>,
    /// Tool calls allowed so far.
    pub allowed: Vec<Allowed>,
    /// The answer text so far.
    pub answer: String,
    /// The agent's latest report of its context window and cost in this turn.
    pub usage: Option<hearth_core::Usage>,
}

impl TurnState {
    pub fn new(turn_id: TurnId) -> Self {
        Self {
            turn_id,
            calls: HashMap::new(),
            allowed: Vec::new(),
            answer: String::new(),
            usage: None,
        }
    }

    /// Whether a write of `path` is covered by a call allowed in this turn: one of a
    /// writing kind that named the file.
    pub fn allows_write(&self, path: &Path) -> bool {
        self.allowed
            .iter()
            .any(|allowed| allowed.scope.covers_write(path))
    }

    /// Whether running `command` is covered by a call allowed in this turn that showed
    /// it; a run allowed once is used up.
    pub fn take_command(&mut self, command: &ShownCommand, default_cwd: Option<&Path>) -> bool {
        let Some(allowed) = self.allowed.iter_mut().find(|allowed| {
            allowed.uses_left != Some(0) && allowed.scope.covers_command(command, default_cwd)
        }) else {
            return false;
        };
        if let Some(left) = &mut allowed.uses_left {
            *left -= 1;
        }
        true
    }
}

/// One exchange of a conversation the agent replays when it reopens it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Replayed {
    /// What the user said.
    pub user: String,
    /// What the agent answered.
    pub agent: String,
}

/// Where an agent session's traffic goes.
pub(crate) struct Route {
    /// The chat it backs.
    pub chat: ChatUri,
    /// The directories its file and terminal requests are confined to (`None` when they
    /// could not be opened: then every such request is refused).
    pub roots: Option<Roots>,
    /// Session directories agents may only read (inside the data directory, where
    /// Hearth keeps projects' context snapshots).
    pub read_only: Option<Roots>,
    /// The history the agent replays while the session is reopened.
    pub capture: Option<Vec<Replayed>>,
    /// When the agent last sent an update of that replay.
    pub replayed_at: Option<std::time::Instant>,
    /// The running turn.
    pub turn: Option<TurnState>,
    /// What the agent offers in the chat.
    pub agent_state: AgentChatState,
    /// The configuration option that holds the model, if the agent has one.
    pub model_option: Option<String>,
    /// The configuration option that holds the mode, if the agent has one.
    pub mode_option: Option<String>,
    /// What the user allowed or refused for the rest of the chat, exactly as shown.
    pub grants: Vec<Grant>,
    /// A turn the harness opened for what the agent said outside the user's turns.
    pub ambient: Option<TurnId>,
    /// When the agent last said something in that turn.
    pub ambient_touched: Option<std::time::Instant>,
    /// The summary of the agent's running compaction, as its chunks came.
    pub compaction_summary: String,
}

impl Route {
    pub fn new(chat: ChatUri, roots: Option<Roots>) -> Self {
        Self {
            chat,
            roots,
            read_only: None,
            capture: None,
            replayed_at: None,
            turn: None,
            agent_state: AgentChatState::default(),
            model_option: None,
            mode_option: None,
            grants: Vec::new(),
            ambient: None,
            ambient_touched: None,
            compaction_summary: String::new(),
        }
    }
}

/// The user's answer to a permission request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Answer {
    /// An option, chosen through `via`.
    Selected { option_id: String, via: String },
    /// Nobody will answer (the turn ended).
    Cancelled,
}

/// A permission request waiting for the user.
pub(crate) struct Waiting {
    pub chat: ChatUri,
    pub turn_id: TurnId,
    pub answer: oneshot::Sender<Answer>,
}

/// The state shared by the harness and its connection handlers.
pub(crate) struct Shared {
    pub spec: AgentSpec,
    pub options: AcpOptions,
    pub sink: SinkCell,
    pub chats: ChatTable<AcpConversation>,
    pub terminals: Terminals,
    routes: Mutex<HashMap<String, Route>>,
    /// Updates for sessions no route knows yet, by session.
    orphans: Mutex<HashMap<String, Vec<agent_client_protocol::v1::schema::SessionUpdate>>>,
    waiting: Mutex<HashMap<String, Waiting>>,
    next_id: AtomicU64,
}

impl Shared {
    pub fn new(spec: AgentSpec, options: AcpOptions) -> Self {
        Self {
            spec,
            options,
            sink: SinkCell::new(),
            chats: ChatTable::new(),
            terminals: Terminals::default(),
            routes: Mutex::new(HashMap::new()),
            orphans: Mutex::new(HashMap::new()),
            waiting: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
        }
    }

    /// The agent's id.
    pub fn agent(&self) -> &str {
        self.spec.id.as_str()
    }

    /// Tells the client how bringing the agent up goes.
    pub fn progress(&self, phase: crate::options::StartPhase) {
        if let Some(progress) = &self.options.progress {
            progress(&self.spec.id, phase);
        }
    }

    /// A fresh id for something of `kind` (a permission request, a tool call Hearth
    /// adds, a terminal).
    pub fn fresh_id(&self, kind: &str) -> String {
        format!(
            "hearth-{kind}-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// The status of a call of a chat's running turn, as the turn records it.
    pub fn call_status(
        &self,
        chat: &ChatUri,
        call_id: &str,
    ) -> Option<hearth_core::ToolCallStatus> {
        self.routes()
            .values()
            .find(|route| &route.chat == chat)
            .and_then(|route| route.turn.as_ref())
            .and_then(|turn| turn.calls.get(call_id))
            .map(|call| call.status)
    }

    pub fn routes(&self) -> MutexGuard<'_, HashMap<String, Route>> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn waiting(&self) -> MutexGuard<'_, HashMap<String, Waiting>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps an update for a session no route knows yet (a bounded number of sessions
    /// and updates; the rest is dropped with a note).
    pub fn keep_orphan(
        &self,
        session: &str,
        update: agent_client_protocol::v1::schema::SessionUpdate,
    ) {
        const SESSIONS: usize = 16;
        const UPDATES: usize = 64;
        let mut orphans = self.orphans.lock().unwrap_or_else(PoisonError::into_inner);
        if !orphans.contains_key(session) && orphans.len() >= SESSIONS {
            tracing::debug!(agent = %self.agent(), %session, "dropping an update for a session no chat uses");
            return;
        }
        let kept = orphans.entry(session.to_owned()).or_default();
        if kept.len() < UPDATES {
            kept.push(update);
        }
    }

    /// The updates kept for a session until its route existed.
    pub fn take_orphans(
        &self,
        session: &str,
    ) -> Vec<agent_client_protocol::v1::schema::SessionUpdate> {
        self.orphans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session)
            .unwrap_or_default()
    }

    /// The agent session that backs a chat.
    pub fn session_of(&self, chat: &ChatUri) -> Option<String> {
        self.routes()
            .iter()
            .find(|(_, route)| &route.chat == chat)
            .map(|(session, _)| session.clone())
    }

    /// Sends progress signals of a chat to the host, in order.
    pub async fn signal(&self, chat: &ChatUri, signals: Vec<Signal>) {
        let sink = self.sink.get();
        for signal in signals {
            sink.progress(chat, signal).await;
        }
    }

    /// Tells the user `message` in `turn_id` of a chat (a notice in the turn).
    pub async fn notice(&self, chat: &ChatUri, turn_id: &TurnId, message: String) {
        self.signal(
            chat,
            vec![Signal::Notice {
                turn_id: turn_id.clone(),
                message,
            }],
        )
        .await;
    }

    /// A fresh, unique id for a permission request.
    pub fn permission_id(&self) -> String {
        format!("permission-{}", hearth_core::new_id())
    }

    /// Answers every waiting permission request of a chat's turn as cancelled; returns
    /// their ids.
    pub fn cancel_waiting(&self, chat: &ChatUri, turn_id: &TurnId) -> Vec<String> {
        let mut waiting = self.waiting();
        let ids: Vec<String> = waiting
            .iter()
            .filter(|(_, entry)| &entry.chat == chat && &entry.turn_id == turn_id)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &ids {
            if let Some(entry) = waiting.remove(id)
                && entry.answer.send(Answer::Cancelled).is_err()
            {
                tracing::debug!(request = %id, "a permission request was already given up");
            }
        }
        ids
    }
}
