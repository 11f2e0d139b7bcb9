//! The event loop: harness events applied in the order they were emitted, and the
//! checkpoint ticker.

use std::sync::Weak;

use hearth_core::{
    Action, ChatSummary, ChatUri, HarnessEvent, HarnessResult, ResourceUri, ResponsePart, Signal,
    StopReason, TurnId, TurnOutcome, now,
};
use hearth_store::ChatRecord;
use tokio::sync::mpsc;

use crate::chats::InitialTurns;
use crate::host::{Host, Inner, upgrade};
use crate::state::HostState;
use crate::writer::WriteJob;

/// What the event loop processes, in order.
// Events are moved once through the queue; boxing the large one would cost an
// allocation per streamed chunk.
#[allow(clippy::large_enum_variant)]
pub(crate) enum HostEvent {
    /// Something a harness emitted.
    Harness(HarnessEvent),
    /// A host-started turn's `send` returned (queued after every event it emitted).
    SendFinished {
        chat: ChatUri,
        turn_id: TurnId,
        result: HarnessResult<TurnOutcome>,
    },
    /// An aborted turn did not stop within the grace period.
    AbortExpired { chat: ChatUri, turn_id: TurnId },
    /// Answer once every event queued before is applied.
    Barrier(tokio::sync::oneshot::Sender<()>),
}

impl Host {
    pub(crate) async fn handle_event(&self, event: HostEvent) {
        match event {
            HostEvent::Harness(HarnessEvent::Progress { chat, signal }) => {
                self.handle_signal(&chat, signal)
            }
            HostEvent::Harness(HarnessEvent::SpawnChat {
                chat,
                origin,
                title,
                created,
            }) => {
                let at = now();
                let record = ChatRecord {
                    summary: ChatSummary {
                        title,
                        model: created.model,
                        ..ChatSummary::new(chat.clone(), origin, at)
                    },
                    provider_data: Some(created.provider_data),
                    conversation: created.conversation,
                    draft: None,
                    queued: Vec::new(),
                };
                if let Err(error) = self.add_chat(record, InitialTurns::Empty).await {
                    tracing::error!(%chat, %error, "could not add a spawned chat to its session");
                }
            }
            HostEvent::Harness(HarnessEvent::EndChat { chat }) => {
                tracing::debug!(%chat, "spawned chat ended")
            }
            HostEvent::Harness(HarnessEvent::DiscoverChats {
                provider,
                chats,
                peers,
            }) => {
                self.register_discovered(&provider, chats, peers).await;
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
                        Some(format!("{}: {error}", chat.harness())),
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
        // Signals about the chat, and those that start or end a turn.
        let signal = match signal {
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
                let epoch = state.chats.get_mut(chat).and_then(|entry| {
                    entry.provider_data = Some(provider_data.clone());
                    entry.lease_epoch
                });
                self.inner.queue(WriteJob::HarnessData {
                    chat: chat.clone(),
                    provider_data,
                    epoch,
                });
                return;
            }
            Signal::ConversationChanged { conversation } => {
                self.inner.queue(WriteJob::MarkConversation {
                    chat: chat.clone(),
                    conversation,
                });
                return;
            }
            Signal::AgentStateChanged { state: agent } => {
                state.publish(resource, Action::AgentStateChanged { state: agent });
                return;
            }
            signal => signal,
        };
        // The rest belong to the running turn, and pass through its budget first.
        let Some(running) = state
            .chats
            .get_mut(chat)
            .and_then(|entry| entry.running.as_mut())
        else {
            tracing::debug!(%chat, "dropping a signal for a turn that is not running");
            return;
        };
        if turn_of(&signal) != Some(&running.turn_id) {
            tracing::debug!(%chat, "dropping a signal for another turn");
            return;
        }
        let Some(admitted) = running.budget.admit(signal) else {
            return;
        };
        let Some(action) = action_of(admitted.signal) else {
            return;
        };
        running.dirty = true;
        running.size += admitted.bytes;
        running.bytes_since_save += admitted.bytes;
        publish_turn_action(&mut state, resource, action);
        self.checkpoint_if_large(&mut state, chat);
    }
}

/// Publishes an action of a running turn; a proposal it stages is also announced to the
/// root, where whoever shows proposals (a page, a badge) hears of it.
fn publish_turn_action(state: &mut HostState, resource: ResourceUri, action: Action) {
    let staged = staged_proposal(&action);
    state.publish(resource, action);
    if let Some(proposal_id) = staged {
        state.publish(ResourceUri::Root, Action::ProposalChanged { proposal_id });
    }
}

/// The proposal an action stages, when it adds one to a turn.
fn staged_proposal(action: &Action) -> Option<String> {
    match action {
        Action::PartAdded {
            part: ResponsePart::Proposal { proposal_id, .. },
            ..
        } => Some(proposal_id.to_string()),
        _ => None,
    }
}

/// The turn a signal belongs to, for those that belong to one.
fn turn_of(signal: &Signal) -> Option<&TurnId> {
    match signal {
        Signal::TurnStarted { turn_id, .. }
        | Signal::TextDelta { turn_id, .. }
        | Signal::ReasoningDelta { turn_id, .. }
        | Signal::ToolCallStarted { turn_id, .. }
        | Signal::ToolCallUpdated { turn_id, .. }
        | Signal::Plan { turn_id, .. }
        | Signal::ProposalStaged { turn_id, .. }
        | Signal::PermissionRequested { turn_id, .. }
        | Signal::PermissionResolved { turn_id, .. }
        | Signal::Error { turn_id, .. }
        | Signal::Notice { turn_id, .. }
        | Signal::Compacted { turn_id, .. }
        | Signal::Usage { turn_id, .. }
        | Signal::TurnCompleted { turn_id, .. } => Some(turn_id),
        Signal::TitleChanged { .. }
        | Signal::ProviderDataChanged { .. }
        | Signal::ConversationChanged { .. }
        | Signal::AgentStateChanged { .. } => None,
    }
}

/// The action that shows a signal of a running turn.
fn action_of(signal: Signal) -> Option<Action> {
    Some(match signal {
        Signal::TextDelta { turn_id, text } => Action::TextDelta { turn_id, text },
        Signal::ReasoningDelta { turn_id, text } => Action::ReasoningDelta { turn_id, text },
        Signal::ToolCallStarted { turn_id, call } => Action::ToolCallStarted { turn_id, call },
        Signal::ToolCallUpdated {
            turn_id,
            call_id,
            status,
            result,
            patch,
        } => Action::ToolCallUpdated {
            turn_id,
            call_id,
            status,
            result,
            patch,
        },
        Signal::Plan { turn_id, entries } => Action::PlanUpdated { turn_id, entries },
        Signal::ProposalStaged {
            turn_id,
            proposal_id,
            summary,
        } => Action::PartAdded {
            turn_id,
            part: ResponsePart::Proposal {
                proposal_id,
                summary,
            },
        },
        Signal::PermissionRequested {
            turn_id,
            request_id,
            title,
            options,
            tool_call_id,
        } => Action::PartAdded {
            turn_id,
            part: ResponsePart::PermissionRequest {
                request_id,
                title,
                options,
                outcome: None,
                tool_call_id,
            },
        },
        Signal::PermissionResolved {
            turn_id,
            request_id,
            outcome,
        } => Action::PermissionResolved {
            turn_id,
            request_id,
            outcome,
        },
        Signal::Error { turn_id, message } => Action::PartAdded {
            turn_id,
            part: ResponsePart::Error { message },
        },
        Signal::Notice { turn_id, message } => Action::PartAdded {
            turn_id,
            part: ResponsePart::Notice { message },
        },
        Signal::Compacted {
            turn_id,
            turns,
            summary,
        } => Action::PartAdded {
            turn_id,
            part: ResponsePart::Compaction { turns, summary },
        },
        Signal::Usage { turn_id, usage } => Action::UsageUpdated { turn_id, usage },
        Signal::TurnStarted { .. }
        | Signal::TurnCompleted { .. }
        | Signal::TitleChanged { .. }
        | Signal::ProviderDataChanged { .. }
        | Signal::ConversationChanged { .. }
        | Signal::AgentStateChanged { .. } => return None,
    })
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
