//! The `task` tool: a subagent in a chat of its own, whose final answer is the result.

use hearth_core::{
    ChatId, ChatOrigin, ChatUri, CreatedChat, HarnessData, HarnessEvent, Signal, StopReason,
    ToolCallStatus, ToolDescription, TurnId, UserMessage,
};
use hearth_harness::RunId;
use serde_json::{Value, json};

use crate::conversation::{Conversation, Role, TurnRecord};
use crate::outcome::Outcome;
use crate::turn::{Ended, TurnLoop};

/// The name of the agent's own subagent tool.
pub const TASK_TOOL: &str = "task";

/// The `task` tool as offered to the model.
pub(crate) fn task_tool() -> ToolDescription {
    ToolDescription {
        name: TASK_TOOL.to_owned(),
        description: "Hands a self-contained task to a subagent, which works on it in a \
            conversation of its own with the same tools and returns its final answer. Use it \
            for research or multi-step work whose details need not stay in this conversation."
            .to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "description": "A short title of the task (3 to 6 words)."
                },
                "prompt": {
                    "type": "string",
                    "description": "The task itself: everything the subagent needs to know, and what to report back."
                }
            },
            "required": ["description", "prompt"],
            "additionalProperties": false
        }),
        mutates: false,
    }
}

fn text_argument(arguments: &Value, name: &str) -> String {
    arguments
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_owned()
}

impl TurnLoop<'_> {
    /// Runs a subagent: spawns its chat (announced before any of its events), runs a
    /// turn there with its own loop, ends the chat, and returns its final answer.
    pub(crate) async fn run_task(&self, call_id: &str, arguments: &Value) -> Outcome {
        let depth = self.role.depth() + 1;
        if depth > self.inner.settings.max_subagent_depth {
            return Outcome::failed(format!(
                "The `{TASK_TOOL}` tool is not available here: subagents may nest only {} deep. \
                 Do the task yourself.",
                self.inner.settings.max_subagent_depth
            ));
        }
        let description = text_argument(arguments, "description");
        let child = ChatUri::peer(&self.session, ChatId::generate());
        let child_turn = TurnId::generate();
        let cancel = self.cancel.child_token();
        let role = Role::Subagent { depth };
        let title = (!description.is_empty()).then_some(description);
        let conversation = Conversation::fresh(
            self.inner.provider(),
            Some(self.model.clone()),
            title.clone(),
            role,
        );
        let provider_data = match conversation.encode(&child) {
            Ok(data) => data,
            Err(error) => return Outcome::failed(error.to_string()),
        };
        let run = self
            .inner
            .chats
            .add_running(&child, conversation, &child_turn, &cancel);
        self.spawn_child(&child, call_id, title, provider_data)
            .await;
        let user = UserMessage::text(text_argument(arguments, "prompt"));
        self.sink
            .progress(
                &child,
                Signal::TurnStarted {
                    turn_id: child_turn.clone(),
                    user: user.clone(),
                },
            )
            .await;
        let tools = self.inner.offered_tools(&self.chat_context, depth);
        let subagent = TurnLoop {
            chat: child.clone(),
            turn_id: child_turn.clone(),
            role,
            cancel,
            system: self.subagent_system(&tools, role),
            tools: tools.specs,
            ..self.clone()
        };
        let mut record = TurnRecord::new(child_turn, user);
        let ended = subagent.run(&mut Vec::new(), &mut record).await;
        let answer = self.end_child(&child, run, record, &ended).await;
        task_outcome(ended, answer)
    }

    /// Announces the subagent's chat, before any of its events.
    async fn spawn_child(
        &self,
        child: &ChatUri,
        call_id: &str,
        title: Option<String>,
        provider_data: HarnessData,
    ) {
        self.sink
            .send(HarnessEvent::SpawnChat {
                chat: child.clone(),
                origin: ChatOrigin::Tool {
                    parent_chat: self.chat.clone(),
                    tool_call_id: call_id.to_owned(),
                },
                title,
                created: CreatedChat {
                    provider_data,
                    conversation: None,
                    model: Some(self.model.clone()),
                    agent: None,
                },
            })
            .await;
    }

    /// Completes the subagent's turn, records it, and ends its chat; returns its final
    /// answer.
    async fn end_child(
        &self,
        child: &ChatUri,
        run: RunId,
        mut record: TurnRecord,
        ended: &Ended,
    ) -> String {
        let child_turn = record.id.clone();
        let stop_reason = ended.stop_reason();
        if let Ended::Failed(error, _) = ended {
            self.sink
                .progress(
                    child,
                    Signal::Error {
                        turn_id: child_turn.clone(),
                        message: error.message.clone(),
                    },
                )
                .await;
        }
        let usage = ended.usage();
        record.finish(stop_reason.clone(), usage.clone());
        let answer = record.final_text();
        self.sink
            .progress(
                child,
                Signal::TurnCompleted {
                    turn_id: child_turn,
                    stop_reason,
                    usage,
                },
            )
            .await;
        if let Some(provider_data) = self.inner.finish_run(child, run, record) {
            self.sink
                .progress(child, Signal::ProviderDataChanged { provider_data })
                .await;
        }
        self.sink
            .send(HarnessEvent::EndChat {
                chat: child.clone(),
            })
            .await;
        answer
    }
}

/// What the `task` tool answers, from how the subagent's loop ended and its final
/// answer.
fn task_outcome(ended: Ended, answer: String) -> Outcome {
    match ended {
        Ended::Aborted(_) => Outcome {
            content: format!("The subagent was stopped before it finished. {answer}")
                .trim_end()
                .to_owned(),
            is_error: true,
            status: ToolCallStatus::Cancelled,
            proposal: None,
        },
        Ended::Failed(error, _) => Outcome::failed(format!("The subagent failed: {error}")),
        Ended::Stopped(StopReason::EndTurn, _) if !answer.is_empty() => Outcome::ok(answer),
        Ended::Stopped(StopReason::EndTurn, _) => {
            Outcome::ok("The subagent finished without an answer.")
        }
        Ended::Stopped(reason, _) => Outcome::ok(format!(
            "The subagent stopped early ({}). Its last answer: {answer}",
            reason.label()
        )),
    }
}
