//! What Hearth does with what an agent sends: `session/update` notifications become
//! progress signals of the chat the session backs (or the replayed history, while a
//! session is reopened); requests go to the permission, file and terminal modules.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_client_protocol::v1::schema as acp;
use hearth_core::{
    ChatUri, OutputLimits, Signal, TOOL_TITLE_BYTES, ToolCallContent, ToolCallPart, ToolCallPatch,
    TurnId, UserMessage, append_bounded, cut_mark,
};

use crate::lines::Admission;
use crate::lines::Gate;
use crate::mapping;
use crate::shared::{Replayed, Route, Shared, TurnState};

/// Quiet time after which a turn the agent started on its own is over.
const AMBIENT_QUIET: Duration = Duration::from_secs(2);

/// Hearth's side of one connection.
#[derive(Clone)]
pub(crate) struct Handlers {
    pub shared: Arc<Shared>,
    pub gate: Gate,
}

impl Handlers {
    pub fn new(shared: Arc<Shared>, gate: Gate) -> Self {
        Self { shared, gate }
    }

    /// A `session/update` notification.
    pub async fn update(&self, notification: acp::SessionNotification, admission: Admission) {
        let session = notification.session_id.to_string();
        let routed = {
            let mut routes = self.shared.routes();
            match routes.get_mut(&session) {
                Some(route) => {
                    if let Some(capture) = &mut route.capture {
                        route.replayed_at = Some(Instant::now());
                        if is_agent_state(&notification.update) {
                            // The reopened session's route is made anew once the
                            // replay is over; it takes these then.
                            self.shared.keep_orphan(&session, notification.update);
                        } else {
                            capture_replay(capture, &notification.update);
                        }
                        None
                    } else {
                        let limits = &self.shared.options.output_limits;
                        Some((
                            route.chat.clone(),
                            signals(route, notification.update, limits),
                        ))
                    }
                }
                None => {
                    // A session whose answer is still on its way (updates can overtake
                    // it): kept until its route exists.
                    self.shared.keep_orphan(&session, notification.update);
                    None
                }
            }
        };
        if let Some((chat, (signals, ambient_started))) = routed {
            let terminals = crate::terminal_output::named(&signals);
            self.shared.signal(&chat, signals).await;
            for (turn_id, call_id, terminal) in terminals {
                crate::terminal_output::follow(&self.shared, &chat, turn_id, call_id, terminal);
            }
            if let Some(turn_id) = ambient_started {
                close_when_quiet(Arc::clone(&self.shared), chat, turn_id);
            }
        }
        drop(admission);
    }
}

/// Answers a request of the agent's.
pub(crate) fn respond<T: agent_client_protocol::JsonRpcResponse>(
    responder: agent_client_protocol::v1::Responder<T>,
    result: Result<T, agent_client_protocol::Error>,
) {
    let sent = match result {
        Ok(answer) => responder.respond(answer),
        Err(error) => responder.respond_with_error(error),
    };
    if let Err(error) = sent {
        tracing::debug!(%error, "could not answer the agent");
    }
}

/// Appends a replayed update to the captured history.
fn capture_replay(capture: &mut Vec<Replayed>, update: &acp::SessionUpdate) {
    match update {
        acp::SessionUpdate::UserMessageChunk(chunk) => {
            let text = mapping::block_text(&chunk.content);
            match capture.last_mut() {
                Some(last) if last.agent.is_empty() => last.user.push_str(&text),
                _ => capture.push(Replayed {
                    user: text,
                    agent: String::new(),
                }),
            }
        }
        acp::SessionUpdate::AgentMessageChunk(chunk) => {
            let text = mapping::block_text(&chunk.content);
            match capture.last_mut() {
                Some(last) => last.agent.push_str(&text),
                None => capture.push(Replayed {
                    user: String::new(),
                    agent: text,
                }),
            }
        }
        _ => {}
    }
}

/// The locations a call keeps in the turn's own record (what permissions need of it).
const RECORD_LOCATIONS: usize = 64;
/// The longest path a call keeps in the turn's own record (no file has a longer one).
const RECORD_PATH_BYTES: usize = 4096;

/// What the turn's own record keeps of a call: what permission requests about it need
/// (its status, kind, title, the files it names), not what it produced, so the record
/// stays small however much the agent sends (the host keeps, within its limits, what is
/// shown).
fn record_of(call: &ToolCallPart) -> ToolCallPart {
    let mut record = ToolCallPart::new(
        call.call_id.clone(),
        clipped(&call.name, TOOL_TITLE_BYTES),
        serde_json::Value::Null,
        call.status,
    );
    record.title = call
        .title
        .as_deref()
        .map(|title| clipped(title, TOOL_TITLE_BYTES));
    record.kind = call.kind;
    record.locations = call
        .locations
        .iter()
        .take(RECORD_LOCATIONS)
        .map(|location| hearth_core::ToolLocation {
            path: clipped(&location.path, RECORD_PATH_BYTES),
            line: location.line,
        })
        .collect();
    record.content = files_of(&call.content);
    record
}

/// The diffs of some content, as the files they change (their texts left out).
fn files_of(content: &[ToolCallContent]) -> Vec<ToolCallContent> {
    content
        .iter()
        .filter_map(|item| match item {
            ToolCallContent::Diff { path, .. } => Some(ToolCallContent::Diff {
                path: clipped(path, RECORD_PATH_BYTES),
                old_text: None,
                new_text: String::new(),
            }),
            _ => None,
        })
        .take(RECORD_LOCATIONS)
        .collect()
}

fn clipped(text: &str, limit: usize) -> String {
    text[..text.floor_char_boundary(limit)].to_owned()
}

/// Applies an update to the turn's record of a call, keeping only what the record keeps.
fn record_update(
    record: &mut ToolCallPart,
    status: hearth_core::ToolCallStatus,
    patch: &ToolCallPatch,
) {
    record.status = status;
    ToolCallPatch {
        title: patch.title.clone(),
        kind: patch.kind,
        locations: patch.locations.clone(),
        content: patch.content.as_deref().map(files_of),
        arguments: None,
    }
    .apply(record);
    let kept = record_of(record);
    *record = kept;
}

/// Records a call the turn did not know, while the turn keeps fewer than
/// `tool_calls`; whether it did.
fn record_new(turn: &mut TurnState, call: &ToolCallPart, limits: &OutputLimits) -> bool {
    if turn.calls.len() >= limits.tool_calls {
        return false;
    }
    turn.calls.insert(call.call_id.clone(), record_of(call));
    true
}

/// The signals of an update, and the id of a turn the agent started on its own when
/// this update opened one.
fn signals(
    route: &mut Route,
    update: acp::SessionUpdate,
    limits: &OutputLimits,
) -> (Vec<Signal>, Option<TurnId>) {
    let mut signals = Vec::new();
    if apply_agent_state(route, &update) {
        signals.push(Signal::AgentStateChanged {
            state: route.agent_state.clone(),
        });
        return (signals, None);
    }
    if let acp::SessionUpdate::SessionInfoUpdate(info) = &update {
        if let Some(title) = info.title.value() {
            signals.push(Signal::TitleChanged {
                title: title.clone(),
            });
        }
        return (signals, None);
    }
    let Some((turn_id, ambient_started)) = turn_of_update(route, &update, &mut signals) else {
        return (signals, None);
    };
    if route.turn.is_none() {
        touch_ambient(route);
    }
    if let Some(compaction) = crate::compaction::compaction_signals(route, &turn_id, &update) {
        signals.extend(compaction);
        return (signals, ambient_started);
    }
    let turn = route.turn.as_mut();
    let signal = match update {
        acp::SessionUpdate::AgentMessageChunk(chunk) => {
            let text = mapping::block_text(&chunk.content);
            if let Some(turn) = turn {
                append_bounded(&mut turn.answer, &text, limits.answer_bytes, || {
                    cut_mark("the answer", limits)
                });
            }
            Some(Signal::TextDelta { turn_id, text })
        }
        acp::SessionUpdate::AgentThoughtChunk(chunk) => Some(Signal::ReasoningDelta {
            turn_id,
            text: mapping::block_text(&chunk.content),
        }),
        acp::SessionUpdate::ToolCall(call) => Some(call_started(turn, turn_id, &call, limits)),
        acp::SessionUpdate::ToolCallUpdate(update) => {
            Some(call_updated(turn, turn_id, &update, limits))
        }
        acp::SessionUpdate::Plan(plan) => Some(Signal::Plan {
            turn_id,
            entries: mapping::plan(&plan),
        }),
        acp::SessionUpdate::UsageUpdate(update) => {
            let usage = mapping::window(&update);
            if let Some(turn) = turn {
                turn.usage = Some(usage.clone());
            }
            Some(Signal::Usage { turn_id, usage })
        }
        _ => None,
    };
    signals.extend(signal);
    (signals, ambient_started)
}

/// The turn an update belongs to: the running one, or the one the agent started on its
/// own; when neither runs and the update is worth a turn, a new turn of the agent's own
/// (its start pushed to `signals`, its id also returned second). `None` when the update
/// is dropped.
fn turn_of_update(
    route: &mut Route,
    update: &acp::SessionUpdate,
    signals: &mut Vec<Signal>,
) -> Option<(TurnId, Option<TurnId>)> {
    match (&route.turn, &route.ambient) {
        (Some(turn), _) => Some((turn.turn_id.clone(), None)),
        (None, Some(ambient)) => Some((ambient.clone(), None)),
        (None, None) => {
            if !matters_outside_a_turn(update) {
                return None;
            }
            // The agent speaks outside the user's turns: recorded as a turn of its own.
            let turn_id = TurnId::generate();
            signals.push(Signal::TurnStarted {
                turn_id: turn_id.clone(),
                user: UserMessage::text(""),
            });
            route.ambient = Some(turn_id.clone());
            Some((turn_id.clone(), Some(turn_id)))
        }
    }
}

/// The signal of a call the agent announced, recorded in the turn.
fn call_started(
    turn: Option<&mut TurnState>,
    turn_id: TurnId,
    call: &acp::ToolCall,
    limits: &OutputLimits,
) -> Signal {
    let part = mapping::tool_call(call);
    if let Some(turn) = turn {
        match turn.calls.get_mut(&part.call_id) {
            Some(record) => *record = record_of(&part),
            None => {
                record_new(turn, &part, limits);
            }
        }
    }
    Signal::ToolCallStarted {
        turn_id,
        call: part,
    }
}

/// The signal of an update of a call, applied to the turn's record of it; an update of
/// a call the turn does not know announces it.
fn call_updated(
    turn: Option<&mut TurnState>,
    turn_id: TurnId,
    update: &acp::ToolCallUpdate,
    limits: &OutputLimits,
) -> Signal {
    let id = update.tool_call_id.to_string();
    let known = turn
        .as_ref()
        .and_then(|turn| turn.calls.get(&id))
        .map(|call| call.status);
    if let Some(current) = known {
        let (status, result, patch) = mapping::tool_call_update(update, current);
        if let Some(record) = turn.and_then(|turn| turn.calls.get_mut(&id)) {
            record_update(record, status, &patch);
        }
        return Signal::ToolCallUpdated {
            turn_id,
            call_id: id,
            status,
            result,
            patch,
        };
    }
    let part = mapping::tool_call_from_update(update);
    let recorded = match turn {
        Some(turn) => record_new(turn, &part, limits),
        None => true,
    };
    if recorded {
        return Signal::ToolCallStarted {
            turn_id,
            call: part,
        };
    }
    // A call past the turn's limit: the host drops its updates (and counts them).
    let (status, result, patch) = mapping::tool_call_update(update, part.status);
    Signal::ToolCallUpdated {
        turn_id,
        call_id: id,
        status,
        result,
        patch,
    }
}

/// Whether an update is about what the agent offers (commands, mode, settings).
fn is_agent_state(update: &acp::SessionUpdate) -> bool {
    matches!(
        update,
        acp::SessionUpdate::AvailableCommandsUpdate(_)
            | acp::SessionUpdate::CurrentModeUpdate(_)
            | acp::SessionUpdate::ConfigOptionUpdate(_)
    )
}

/// Takes an update of what the agent offers (commands, mode, settings) into the route;
/// whether it was one.
pub(crate) fn apply_agent_state(route: &mut Route, update: &acp::SessionUpdate) -> bool {
    match update {
        acp::SessionUpdate::AvailableCommandsUpdate(update) => {
            route.agent_state.commands = mapping::commands(&update.available_commands);
        }
        acp::SessionUpdate::CurrentModeUpdate(update) => {
            if let Some(modes) = &mut route.agent_state.modes {
                modes.current = update.current_mode_id.to_string();
            }
        }
        acp::SessionUpdate::ConfigOptionUpdate(update) => {
            if let Some((id, models)) =
                mapping::config_choice(&update.config_options, mapping::Setting::Model)
            {
                route.model_option = Some(id);
                route.agent_state.models = Some(models);
            }
            if let Some((id, modes)) =
                mapping::config_choice(&update.config_options, mapping::Setting::Mode)
            {
                route.mode_option = Some(id);
                route.agent_state.modes = Some(modes);
            }
        }
        _ => return false,
    }
    true
}

/// Whether an update outside a turn is worth a turn of its own (what the agent says and
/// does; not an echo of the user).
fn matters_outside_a_turn(update: &acp::SessionUpdate) -> bool {
    matches!(
        update,
        acp::SessionUpdate::AgentMessageChunk(_)
            | acp::SessionUpdate::AgentThoughtChunk(_)
            | acp::SessionUpdate::ToolCall(_)
            | acp::SessionUpdate::ToolCallUpdate(_)
            | acp::SessionUpdate::Plan(_)
            | acp::SessionUpdate::CompactionUpdate(_)
            | acp::SessionUpdate::CompactionSummaryChunk(_)
    )
}

fn touch_ambient(route: &mut Route) {
    route.ambient_touched = Some(Instant::now());
}

/// Ends a turn the agent started on its own once it has been quiet for a while.
fn close_when_quiet(shared: Arc<Shared>, chat: ChatUri, turn_id: TurnId) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(AMBIENT_QUIET).await;
            let done = {
                let mut routes = shared.routes();
                let Some(route) = routes.values_mut().find(|route| route.chat == chat) else {
                    return;
                };
                if route.ambient.as_ref() != Some(&turn_id) {
                    return;
                }
                let quiet = route
                    .ambient_touched
                    .is_none_or(|touched| touched.elapsed() >= AMBIENT_QUIET);
                if quiet {
                    route.ambient = None;
                }
                quiet
            };
            if done {
                end_ambient(&shared, &chat, turn_id).await;
                return;
            }
        }
    });
}

/// Ends a turn the agent started on its own.
pub(crate) async fn end_ambient(shared: &Shared, chat: &ChatUri, turn_id: TurnId) {
    shared
        .signal(
            chat,
            vec![Signal::TurnCompleted {
                turn_id,
                stop_reason: hearth_core::StopReason::EndTurn,
                usage: None,
            }],
        )
        .await;
}
