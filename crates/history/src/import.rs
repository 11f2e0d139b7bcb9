//! The import: each native session becomes an external session of Hearth's store
//! (provenance: the agent, its id of the session, the file it came from, its folder),
//! with its turns; a session imported before gets only its new turns.

use std::path::PathBuf;

use hearth_core::{
    ChatOrigin, ChatSummary, ChatUri, ConversationId, HarnessData, HarnessId, Provenance,
    ResponsePart, Scope, SessionId, SessionSummary, SessionUri, StopReason, ToolCallPart,
    ToolCallStatus, Turn, TurnId, UserMessage,
};
use hearth_store::{ChatRecord, NewSession, Registration, Store};

use crate::error::{HistoryError, HistoryResult};
use crate::locate::StoreLocation;
use crate::model::{Agent, NativeSession, NativeTurn};
use crate::record::Record;

/// The `source` of an imported session in Hearth's registry (followed by the file).
pub const IMPORT_SOURCE: &str = "import";

/// Longest title made from a session's first message.
const TITLE_CHARS: usize = 80;

/// How a harness keeps a conversation: the import hands it the native session and its
/// turns and stores what it answers as the chat's provider data.
pub trait ConversationData: Send + Sync {
    /// The provider data of a chat that continues `session` (its agent's id of it,
    /// folder and title), holding `turns`.
    fn imported(
        &self,
        chat: &ChatUri,
        session: &NativeSession,
        turns: &[Turn],
    ) -> Result<HarnessData, String>;

    /// `data` with `turns` added after the turns it holds.
    fn with_turns(
        &self,
        chat: &ChatUri,
        data: &HarnessData,
        turns: &[Turn],
    ) -> Result<HarnessData, String>;
}

/// One agent store to import.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportSource {
    /// The store.
    pub location: StoreLocation,
    /// The agent Hearth runs it as: the provider of the sessions imported.
    pub provider: HarnessId,
    /// Other agents of Hearth reading the same store (both Claude adapters): a session
    /// one of them already has is not imported again.
    pub peers: Vec<HarnessId>,
}

/// What to import, and where the record of earlier imports is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportOptions {
    /// The stores.
    pub sources: Vec<ImportSource>,
    /// The record's file (in Hearth's data directory).
    pub record: PathBuf,
}

/// What importing one agent's store did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AgentReport {
    /// The agent (provider id).
    pub agent: String,
    /// The store's folder.
    pub store: PathBuf,
    /// Sessions in the store.
    pub found: u64,
    /// Sessions new to Hearth.
    pub imported: u64,
    /// Sessions that got new turns.
    pub updated: u64,
    /// Sessions left as they were: unchanged, deleted in Hearth, or Hearth's own.
    pub skipped: u64,
    /// What could not be read or imported: the file and what went wrong.
    pub errors: Vec<String>,
}

/// What became of one native session.
enum Outcome {
    Imported,
    Updated,
    Skipped,
}

/// Imports every source into `store`, reading only what changed since the record's last
/// import; returns a report per source. A store or session that fails is reported and
/// the rest go on; only a failure to keep the record is an error.
pub async fn import(
    store: &dyn Store,
    data: &dyn ConversationData,
    options: &ImportOptions,
) -> HistoryResult<Vec<AgentReport>> {
    let mut record = Record::load(&options.record);
    let mut reports = Vec::new();
    for source in &options.sources {
        reports.push(import_source(store, data, source, &mut record).await);
    }
    record.save(&options.record)?;
    Ok(reports)
}

async fn import_source(
    store: &dyn Store,
    data: &dyn ConversationData,
    source: &ImportSource,
    record: &mut Record,
) -> AgentReport {
    let mut report = AgentReport {
        agent: source.provider.to_string(),
        store: source.location.root.clone(),
        ..AgentReport::default()
    };
    let changed = |file: &std::path::Path| record.changed(file);
    let scan = crate::read_store(source.location.agent, &source.location, &changed).await;
    report
        .errors
        .extend(scan.problems.iter().map(ToString::to_string));
    let mut complete = report.errors.is_empty();
    for file in &scan.unchanged {
        let sessions = record.sessions(file);
        report.found += sessions;
        report.skipped += sessions;
    }
    for session in &scan.sessions {
        report.found += 1;
        match import_session(store, data, source, session).await {
            Ok(Outcome::Imported) => report.imported += 1,
            Ok(Outcome::Updated) => report.updated += 1,
            Ok(Outcome::Skipped) => report.skipped += 1,
            Err(error) => {
                complete = false;
                report.errors.push(error.to_string());
            }
        }
    }
    // A file is noted as read only when all of it went in: otherwise the next import
    // reads it again.
    for file in &scan.files {
        let sessions = scan
            .sessions
            .iter()
            .filter(|session| &session.source == file)
            .count();
        if complete || sessions == 0 {
            record.read(file, sessions as u64);
        }
    }
    report
}

fn encode_failed(session: &NativeSession, reason: String) -> HistoryError {
    HistoryError::Encode {
        agent: session.agent.id(),
        native_id: session.native_id.clone(),
        source_file: session.source.display().to_string(),
        reason,
    }
}

async fn import_session(
    store: &dyn Store,
    data: &dyn ConversationData,
    source: &ImportSource,
    session: &NativeSession,
) -> HistoryResult<Outcome> {
    let invalid = |reason: String| encode_failed(session, reason);
    let id = SessionId::parse(&session.native_id).map_err(|error| invalid(error.to_string()))?;
    let conversation =
        ConversationId::parse(&session.native_id).map_err(|error| invalid(error.to_string()))?;
    for provider in std::iter::once(&source.provider).chain(&source.peers) {
        let uri = SessionUri::new(provider.clone(), id.clone());
        if store.is_tombstoned(&uri).await? {
            return Ok(Outcome::Skipped);
        }
        if store.session(&uri).await?.is_some() {
            return add_new_turns(store, data, &uri, session).await;
        }
    }
    for provider in std::iter::once(&source.provider).chain(&source.peers) {
        // A conversation behind one of Hearth's own chats is Hearth's already.
        if store.is_conversation(provider, &conversation).await? {
            return Ok(Outcome::Skipped);
        }
    }
    let uri = SessionUri::new(source.provider.clone(), id);
    register(store, data, &uri, &conversation, session).await
}

/// The title of an imported session: the store's, else its first message's first line.
fn title(session: &NativeSession) -> Option<String> {
    if let Some(title) = session
        .title
        .as_ref()
        .filter(|title| !title.trim().is_empty())
    {
        return Some(title.clone());
    }
    let first = session
        .turns
        .first()?
        .user
        .lines()
        .find(|line| !line.trim().is_empty())?;
    let mut title: String = first.trim().chars().take(TITLE_CHARS).collect();
    if title.len() < first.trim().len() {
        title.push('…');
    }
    Some(title)
}

async fn register(
    store: &dyn Store,
    data: &dyn ConversationData,
    uri: &SessionUri,
    conversation: &ConversationId,
    session: &NativeSession,
) -> HistoryResult<Outcome> {
    let chat = ChatUri::default_for(uri);
    let turns: Vec<Turn> = session.turns.iter().map(to_turn).collect();
    let provider_data = data
        .imported(&chat, session, &turns)
        .map_err(|reason| encode_failed(session, reason))?;
    let title = title(session);
    let summary = SessionSummary {
        uri: uri.clone(),
        harness: uri.harness().clone(),
        title: title.clone(),
        provenance: Provenance::External,
        source: format!("{IMPORT_SOURCE} {}", session.source.display()),
        scope: Scope::Global,
        model: None,
        working_directories: session.folder.clone().into_iter().collect(),
        started_at: session.started_at,
        updated_at: session.updated_at,
        pinned: false,
        archived: false,
        owner: None,
    };
    let record = ChatRecord {
        summary: ChatSummary {
            uri: chat.clone(),
            origin: ChatOrigin::User,
            title,
            model: None,
            created_at: session.started_at,
            updated_at: session.updated_at,
        },
        provider_data: Some(provider_data),
        conversation: Some(conversation.clone()),
        draft: None,
        queued: Vec::new(),
    };
    let new = NewSession {
        summary,
        default_chat: record,
    };
    if store.register_discovered(&new).await? != Registration::Added {
        return Ok(Outcome::Skipped);
    }
    store
        .mark_conversation(uri.harness(), conversation, &chat)
        .await?;
    for turn in &turns {
        store.insert_turn(&chat, turn).await?;
    }
    Ok(Outcome::Imported)
}

/// Adds the native turns after those Hearth holds of the session (in its default chat).
async fn add_new_turns(
    store: &dyn Store,
    data: &dyn ConversationData,
    uri: &SessionUri,
    session: &NativeSession,
) -> HistoryResult<Outcome> {
    let chat = ChatUri::default_for(uri);
    let held = store.turns(&chat).await?.len();
    if session.turns.len() <= held {
        return Ok(Outcome::Skipped);
    }
    let new: Vec<Turn> = session.turns[held..].iter().map(to_turn).collect();
    let chats = store.chats(uri).await?;
    let Some(default) = chats.iter().find(|record| record.summary.uri == chat) else {
        return Ok(Outcome::Skipped);
    };
    if let Some(existing) = &default.provider_data {
        let updated = data
            .with_turns(&chat, existing, &new)
            .map_err(|reason| encode_failed(session, reason))?;
        store.set_provider_data(&chat, &updated).await?;
    }
    for turn in &new {
        store.insert_turn(&chat, turn).await?;
    }
    if let Some(mut summary) = store.session(uri).await? {
        summary.updated_at = summary.updated_at.max(session.updated_at);
        store.update_session(&summary).await?;
    }
    Ok(Outcome::Updated)
}

/// A native exchange as a finished turn of Hearth: the answer text, then each tool call
/// the agent made, by name, with its summary as the title.
pub(crate) fn to_turn(native: &NativeTurn) -> Turn {
    let mut turn = Turn::started(
        TurnId::generate(),
        UserMessage::text(native.user.clone()),
        native.at,
    );
    if !native.answer.is_empty() {
        turn.parts.push(ResponsePart::Text {
            text: native.answer.clone(),
        });
    }
    for (index, summary) in native.tools.iter().enumerate() {
        let name = summary
            .split_once(": ")
            .map_or(summary.as_str(), |(name, _)| name);
        let mut call = ToolCallPart::new(
            format!("imported-{index}"),
            name,
            serde_json::Value::Null,
            ToolCallStatus::Completed,
        );
        call.title = Some(summary.clone());
        turn.parts.push(ResponsePart::ToolCall(call));
    }
    turn.stop_reason = Some(StopReason::EndTurn);
    turn.completed_at = Some(native.at);
    turn
}

/// The agent a provider id reads the store of, if any.
pub fn agent_of(provider: &HarnessId) -> Option<Agent> {
    Agent::from_id(provider.as_str())
}
