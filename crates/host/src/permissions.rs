//! Permission requests of external agents: host-held pending state that only the user
//! answers, listed across every loaded chat.

use hearth_core::{
    Action, ChatUri, PermissionAnswer, PermissionGrant, PermissionOption, ResourceUri,
    ResponsePart, ToolCallPart, TurnId,
};

use crate::error::{HostError, HostResult};
use crate::host::{Host, Inner};

/// A permission request nobody answered yet.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingPermission {
    /// The chat whose running turn asks.
    pub chat: ChatUri,
    /// The turn.
    pub turn_id: TurnId,
    /// The request's id.
    pub request_id: String,
    /// What is asked.
    pub title: String,
    /// The choices.
    pub options: Vec<PermissionOption>,
    /// The tool call it is about, as the turn shows it now.
    pub tool_call: Option<ToolCallPart>,
}

impl Host {
    /// Every standing answer ("allow for this chat") the harnesses hold, by chat.
    pub fn permission_grants(&self) -> Vec<PermissionGrant> {
        let mut grants: Vec<PermissionGrant> = self
            .inner
            .agents
            .all()
            .iter()
            .flat_map(|agent| agent.permission_grants())
            .collect();
        grants.sort_by(|a, b| (a.chat.to_string(), &a.id).cmp(&(b.chat.to_string(), &b.id)));
        grants
    }

    /// Revokes a standing answer; `false` when no harness holds it.
    pub fn revoke_permission_grant(&self, grant: &str) -> bool {
        self.inner
            .agents
            .all()
            .iter()
            .any(|agent| agent.revoke_permission_grant(grant))
    }

    /// Every unanswered permission request of the running turns, oldest chat first.
    pub fn pending_permissions(&self) -> Vec<PendingPermission> {
        let state = self.inner.lock();
        let mut pending = Vec::new();
        for (chat, entry) in &state.chats {
            let Some(turn) = entry.running_turn() else {
                continue;
            };
            for part in turn.unanswered_permissions() {
                if let ResponsePart::PermissionRequest {
                    request_id,
                    title,
                    options,
                    tool_call_id,
                    ..
                } = part
                {
                    let tool_call = tool_call_id.as_ref().and_then(|id| {
                        turn.parts.iter().find_map(|part| match part {
                            ResponsePart::ToolCall(call) if &call.call_id == id => {
                                Some(call.clone())
                            }
                            _ => None,
                        })
                    });
                    pending.push(PendingPermission {
                        chat: chat.clone(),
                        turn_id: turn.id.clone(),
                        request_id: request_id.clone(),
                        title: title.clone(),
                        options: options.clone(),
                        tool_call,
                    });
                }
            }
        }
        pending.sort_by(|a, b| {
            (a.chat.to_string(), &a.request_id).cmp(&(b.chat.to_string(), &b.request_id))
        });
        pending
    }

    /// Answers a permission request a chat's running turn raised, as the user through
    /// `answer.via`. The answer goes to the harness, then into the turn. A turn another
    /// node answers gets the answer there.
    pub async fn respond_permission(
        &self,
        chat: &ChatUri,
        request_id: &str,
        answer: &PermissionAnswer,
    ) -> HostResult<()> {
        match self.respond_permission_here(chat, request_id, answer).await {
            Err(HostError::NotFound { what, key }) => {
                let ask = hearth_store::HolderAsk::Answer {
                    chat: chat.clone(),
                    request_id: request_id.to_owned(),
                    option_id: answer.option_id.clone(),
                    by_policy: answer.via == hearth_core::PERMISSION_BY_POLICY,
                };
                if self.ask_answering_host(ask).await? {
                    Ok(())
                } else {
                    Err(HostError::NotFound { what, key })
                }
            }
            done => done,
        }
    }

    async fn respond_permission_here(
        &self,
        chat: &ChatUri,
        request_id: &str,
        answer: &PermissionAnswer,
    ) -> HostResult<()> {
        let option_id = answer.option_id.as_str();
        let turn_id = {
            let state = self.inner.lock();
            let entry = state.chat(chat)?;
            let running = entry
                .running
                .as_ref()
                .map(|running| running.turn_id.clone());
            let turn = running
                .as_ref()
                .and_then(|id| entry.state.turns.iter().rev().find(|turn| &turn.id == id));
            let request = turn.and_then(|turn| {
                turn.parts.iter().find_map(|part| match part {
                    ResponsePart::PermissionRequest {
                        request_id: id,
                        options,
                        outcome: None,
                        ..
                    } if id == request_id => Some(options),
                    _ => None,
                })
            });
            let Some(options) = request else {
                return Err(HostError::NotFound {
                    what: "pending permission request",
                    key: request_id.to_owned(),
                });
            };
            if !options.iter().any(|option| option.id == option_id) {
                let known: Vec<&str> = options.iter().map(|option| option.id.as_str()).collect();
                return Err(HostError::InvalidInput(format!(
                    "`{option_id}` is not an option of permission request `{request_id}` (options: {})",
                    known.join(", ")
                )));
            }
            running.ok_or_else(|| HostError::NotFound {
                what: "running turn",
                key: chat.to_string(),
            })?
        };
        let context = self.inner.context_for(chat)?;
        let agent = self.inner.agent_for(chat.session_ref())?;
        agent
            .respond_permission(&context, request_id, answer)
            .await
            .map_err(|error| Inner::agent_error(chat.harness(), error))?;
        let mut state = self.inner.lock();
        state.publish(
            ResourceUri::Chat(chat.clone()),
            Action::PermissionResolved {
                turn_id,
                request_id: request_id.to_owned(),
                outcome: option_id.to_owned(),
            },
        );
        if let Some(running) = state
            .chats
            .get_mut(chat)
            .and_then(|entry| entry.running.as_mut())
        {
            running.dirty = true;
        }
        Ok(())
    }
}
