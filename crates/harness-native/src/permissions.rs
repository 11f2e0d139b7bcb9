//! Permission requests of Hearth's own agent: a tool call that needs the user's answer
//! (an MCP tool that is not read-only) raises a host-held request in the turn and waits;
//! the user's answer arrives through [`Harness::respond_permission`](hearth_core::Harness).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use hearth_core::{
    ChatUri, EventSink, PERMISSION_CANCELLED, PermissionAnswer, Signal, ToolCallContext, TurnId,
    new_id,
};
use hearth_tools::{PermissionAsker, PermissionQuestion, PermissionReply};
use tokio::sync::oneshot;

/// A request waiting for the user.
struct Waiting {
    chat: ChatUri,
    options: Vec<hearth_core::PermissionOption>,
    answer: oneshot::Sender<PermissionReply>,
}

/// The requests of every chat of the agent that wait for the user, by request id.
#[derive(Clone, Default)]
pub(crate) struct PendingPermissions {
    waiting: Arc<Mutex<HashMap<String, Waiting>>>,
}

impl PendingPermissions {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Waiting>> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Delivers the user's answer; `false` when `chat` has no such request waiting or the
    /// option is not one it offered.
    pub fn answer(&self, chat: &ChatUri, request_id: &str, answer: &PermissionAnswer) -> bool {
        let mut waiting = self.lock();
        let offered = waiting.get(request_id).and_then(|entry| {
            (&entry.chat == chat)
                .then(|| {
                    entry
                        .options
                        .iter()
                        .find(|option| option.id == answer.option_id)
                })
                .flatten()
                .map(|option| option.kind)
        });
        let Some(kind) = offered else {
            return false;
        };
        let Some(entry) = waiting.remove(request_id) else {
            return false;
        };
        entry
            .answer
            .send(PermissionReply {
                option_id: answer.option_id.clone(),
                kind,
                via: answer.via.clone(),
            })
            .is_ok()
    }
}

/// Removes a request when its call stops waiting (answered, or the turn was stopped).
struct Forget<'a> {
    pending: &'a PendingPermissions,
    request_id: String,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.pending.lock().remove(&self.request_id);
    }
}

/// Asks on behalf of one turn: the request goes into the turn as it streams.
pub(crate) struct TurnAsker {
    pub pending: PendingPermissions,
    pub sink: EventSink,
    pub turn_id: TurnId,
}

impl PermissionAsker for TurnAsker {
    fn ask<'a>(
        &'a self,
        call: &'a ToolCallContext,
        question: PermissionQuestion,
    ) -> BoxFuture<'a, Option<PermissionReply>> {
        Box::pin(async move {
            let request_id = format!("perm_{}", new_id());
            let (sender, receiver) = oneshot::channel();
            self.pending.lock().insert(
                request_id.clone(),
                Waiting {
                    chat: call.chat.clone(),
                    options: question.options.clone(),
                    answer: sender,
                },
            );
            let _forget = Forget {
                pending: &self.pending,
                request_id: request_id.clone(),
            };
            self.sink
                .progress(
                    &call.chat,
                    Signal::PermissionRequested {
                        turn_id: self.turn_id.clone(),
                        request_id: request_id.clone(),
                        title: question.title,
                        options: question.options,
                        tool_call_id: Some(call.call_id.clone()),
                    },
                )
                .await;
            match receiver.await {
                Ok(reply) => Some(reply),
                Err(_) => {
                    self.sink
                        .progress(
                            &call.chat,
                            Signal::PermissionResolved {
                                turn_id: self.turn_id.clone(),
                                request_id,
                                outcome: PERMISSION_CANCELLED.to_owned(),
                            },
                        )
                        .await;
                    None
                }
            }
        })
    }
}
