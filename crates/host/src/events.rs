//! The event loop: harness events applied in the order they were emitted, and the
//! checkpoint ticker.

use std::sync::Weak;

use hearth_core::{
    Action, AgentEvent, AgentResult, ChatSummary, ChatUri, ResourceUri, ResponsePart, Signal,
    StopReason, TurnId, TurnOutcome, now,
};
use hearth_store::ChatRecord;
use tokio::sync::mpsc;

use crate::chats::InitialTurns;
use crate::host::{Host, Inner, upgrade};
use crate::writer::WriteJob;

/// What the event loop processes, in order.
// Events are moved once through the queue; boxing the large one would cost an
// allocation per streamed chunk.
#[allow(clippy::large_enum_variant)]
pub(crate) enum HostEvent {
    /// Something a harness emitted.
    Agent(AgentEvent),
    /// A host-started turn's `send` returned (queued after every event it emitted).
    SendFinished {
        chat: ChatUri,
        turn_id: TurnId,
        result: AgentResult<TurnOutcome>,
    },
    /// An aborted turn did not stop within the grace period.
    AbortExpired { chat: ChatUri, turn_id: TurnId },
    /// Answer once every event queued before is applied.
    Barrier(tokio::sync::oneshot::Sender<()>),
}

impl Host {
    pub(crate) async fn handle_event(&self, event: HostEvent) {
        match event {
            HostEvent::Agent(AgentEvent::Progress { chat, signal }) => {
                self.handle_signal(&chat, signal)
            }
            HostEvent::Agent(AgentEvent::SpawnChat {
                chat,
                origin,
                title,
                backing,
            }) => {
                let at = now();
                let record = ChatRecord {
                    summary: ChatSummary {
                        uri: chat.clone(),
                        origin,
                        title,
                        model: backing.model,
                        created_at: at,
                        updated_at: at,
                    },
                    provider_data: Some(backing.provider_data),
                    backing: backing.backing,
                    draft: None,
                    queued: Vec::new(),
                };
                if let Err(error) = self.add_chat(record, InitialTurns::Empty).await {
                    tracing::error!(%chat, %error, "could not add a spawned chat to its session");
                }
            }
            HostEvent::Agent(AgentEvent::EndChat { chat }) => {
                tracing::debug!(%chat, "spawned chat ended")
            }
            HostEvent::Agent(AgentEvent::DiscoverChats { provider, chats }) => {
                self.register_discovered(&provider, chats).await;
            }
            HostEvent::SendFinished {
                chat,
                turn_id,
                result,
            } => {
                let (stop_reason, usage, error) = match result {
                    Ok(outcome) => (outcome.stop_reason, outcome.usage, None),
                    Err(error) => (
                        StopReason::Error,
                        None,
                        Some(format!("{}: {error}", chat.provider())),
                    ),
                };
                self.complete_turn(&chat, &turn_id, stop_reason, usage, error);
            }
            HostEvent::AbortExpired { chat, turn_id } => {
                self.complete_turn(&chat, &turn_id, StopReason::Aborted, None, None);
            }
            HostEvent::Barrier(done) => {
                if done.send(()).is_err() {
                    tracing::trace!("barrier waiter went away");
                }
            }
        }
    }

    pub(crate) fn handle_signal(&self, chat: &ChatUri, signal: Signal) {
        let mut state = self.inner.lock();
        if !state.chats.contains_key(chat) {
            tracing::debug!(%chat, "dropping a signal for a chat not in the catalog");
            return;
        }
        let resource = ResourceUri::Chat(chat.clone());
        let (turn_id, action, bytes) = match signal {
            Signal::TurnStarted { turn_id, user } => {
                drop(state);
                self.start_harness_turn(chat, turn_id, user);
                return;
            }
            Signal::TurnCompleted {
                turn_id,
                stop_reason,
                usage,
            } => {
                drop(state);
                self.complete_turn(chat, &turn_id, stop_reason, usage, None);
                return;
            }
            Signal::TitleChanged { title } => {
                self.retitle(&mut state, chat, title);
                return;
            }
            Signal::ProviderDataChanged { provider_data } => {
                let mut epoch = None;
                if let Some(entry) = state.chats.get_mut(chat) {
                    entry.provider_data = Some(provider_data.clone());
                    epoch = entry.lease_epoch;
                }
                self.inner.queue(WriteJob::ProviderData {
                    chat: chat.clone(),
                    provider_data,
                    epoch,
                });
                return;
            }
            Signal::TextDelta { turn_id, text } => {
                let bytes = text.len();
                (turn_id.clone(), Action::TextDelta { turn_id, text }, bytes)
            }
            Signal::ReasoningDelta { turn_id, text } => {
                let bytes = text.len();
                (
                    turn_id.clone(),
                    Action::ReasoningDelta { turn_id, text },
                    bytes,
                )
            }
            Signal::AgentStateChanged { state: agent } => {
                state.publish(resource, Action::AgentStateChanged { state: agent });
                return;
            }
            Signal::ToolCallStarted { turn_id, call } => (
                turn_id.clone(),
                Action::ToolCallStarted { turn_id, call },
                0,
            ),
            Signal::ToolCallUpdated {
                turn_id,
                call_id,
                status,
                result,
                patch,
            } => (
                turn_id.clone(),
                Action::ToolCallUpdated {
                    turn_id,
                    call_id,
                    status,
                    result,
                    patch,
                },
                0,
            ),
            Signal::Plan { turn_id, entries } => {
                (turn_id.clone(), Action::PlanUpdated { turn_id, entries }, 0)
            }
            Signal::ProposalStaged {
                turn_id,
                proposal_id,
                summary,
            } => {
                let part = ResponsePart::Proposal {
                    proposal_id,
                    summary,
                };
                (turn_id.clone(), Action::PartAdded { turn_id, part }, 0)
            }
            Signal::PermissionRequested {
                turn_id,
                request_id,
                title,
                options,
                tool_call_id,
            } => {
                let part = ResponsePart::PermissionRequest {
                    request_id,
                    title,
                    options,
                    outcome: None,
                    tool_call_id,
                };
                (turn_id.clone(), Action::PartAdded { turn_id, part }, 0)
            }
            Signal::PermissionResolved {
                turn_id,
                request_id,
                outcome,
            } => (
                turn_id.clone(),
                Action::PermissionResolved {
                    turn_id,
                    request_id,
                    outcome,
                },
                0,
            ),
            Signal::Error { turn_id, message } => {
                let part = ResponsePart::Error { message };
                (turn_id.clone(), Action::PartAdded { turn_id, part }, 0)
            }
            Signal::Usage { turn_id, usage } => {
                (turn_id.clone(), Action::UsageUpdated { turn_id, usage }, 0)
            }
        };
        let Some(running) = state
            .chats
            .get_mut(chat)
            .and_then(|entry| entry.running.as_mut())
        else {
            tracing::debug!(%chat, "dropping a signal for a turn that is not running");
            return;
        };
        if running.turn_id != turn_id {
            tracing::debug!(%chat, %turn_id, "dropping a signal for another turn");
            return;
        }
        running.dirty = true;
        running.bytes_since_save += bytes.max(1);
        state.publish(resource, action);
        self.checkpoint_if_large(&mut state, chat);
    }
}

/// Applies harness events in the order they were emitted.
pub(crate) async fn run_events(inner: Weak<Inner>, mut receiver: mpsc::Receiver<HostEvent>) {
    while let Some(event) = receiver.recv().await {
        let Some(host) = upgrade(&inner) else { return };
        host.handle_event(event).await;
    }
}

/// Checkpoints running turns at the configured interval and renews their chats' leases.
pub(crate) async fn run_ticker(inner: Weak<Inner>) {
    let interval = match upgrade(&inner) {
        Some(host) => host.inner.config.checkpoint_interval,
        None => return,
    };
    let mut ticker = tokio::time::interval(interval / 2);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        ticker.tick().await;
        let Some(host) = upgrade(&inner) else { return };
        host.checkpoint_due();
        host.renew_leases_due();
    }
}
