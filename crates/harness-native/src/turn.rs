//! The loop of one turn: model → tool calls → tool results → model, until a final
//! answer, the step limit, a failure or an abort — every delta streamed as a signal.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use hearth_core::{
    ChatContext, ChatUri, EventSink, HarnessError, OutputLimit, SessionUri, Signal, StopReason,
    ToolCallContext, ToolCallPart, ToolCallPatch, ToolCallStatus, ToolResult, TurnId, Usage,
    append_bounded, clip_text, cut_mark, new_id,
};
use hearth_llm::{
    CompletedToolCall, FinishReason, LlmError, Message, ModelRequest, StreamEvent, ToolCall,
    ToolSpec, parse_tool_arguments, repair_json,
};
use hearth_tools::with_permission_asker;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::{Inner, OfferedTools};
use crate::context::{DynamicContext, system_prompt};
use crate::conversation::{Role, TurnRecord};
use crate::outcome::Outcome;
use crate::permissions::TurnAsker;
use crate::task::TASK_TOOL;

/// How a loop ended, with the usage of its model calls.
pub(crate) enum Ended {
    /// The model answered, or the loop stopped (step limit, token limit, refusal).
    Stopped(StopReason, Option<Usage>),
    /// The user aborted; what streamed is kept.
    Aborted(Option<Usage>),
    /// A model call failed.
    Failed(HarnessError, Option<Usage>),
}

impl Ended {
    pub fn stop_reason(&self) -> StopReason {
        match self {
            Self::Stopped(reason, _) => reason.clone(),
            Self::Aborted(_) => StopReason::Aborted,
            Self::Failed(..) => StopReason::Error,
        }
    }

    pub fn usage(&self) -> Option<Usage> {
        match self {
            Self::Stopped(_, usage) | Self::Aborted(usage) | Self::Failed(_, usage) => {
                usage.clone()
            }
        }
    }
}

/// A tool call the model made, checked and ready to run.
pub(crate) struct PreparedCall {
    id: String,
    name: String,
    /// The arguments, or the error the model gets instead of running the tool.
    arguments: Result<Value, String>,
    /// The arguments as they go back into the history.
    recorded: Value,
}

/// What one model call ended with.
pub(crate) enum Step {
    Answered(Option<FinishReason>),
    Calls(Vec<PreparedCall>),
    Aborted,
    Failed(LlmError),
}

/// What one model call answered, as it streams.
struct Answer {
    /// What the turn's answer in the record may still take (`None`: an earlier call of
    /// the turn was cut already).
    room: Option<usize>,
    text: String,
    calls: Vec<PreparedCall>,
    finish: Option<FinishReason>,
    failure: Option<LlmError>,
}

/// The turn's answer in the record is bounded like the one shown: what a new call may
/// still add, `None` when an earlier call of the turn was cut already.
fn answer_room(record: &TurnRecord, answer_bytes: usize) -> Option<usize> {
    let answered: usize = record
        .messages
        .iter()
        .map(|message| match message {
            Message::Assistant { text, .. } => text.len(),
            _ => 0,
        })
        .sum();
    answer_bytes.checked_sub(answered)
}

/// Usage of the finished model calls of a loop and of the running one.
#[derive(Default)]
pub(crate) struct Tally {
    done: Option<Usage>,
    current: Option<Usage>,
}

impl Tally {
    fn total(&self) -> Option<Usage> {
        match (&self.done, &self.current) {
            (None, None) => None,
            (done, current) => {
                let mut total = done.clone().unwrap_or_default();
                total.accumulate(&current.clone().unwrap_or_default());
                Some(total)
            }
        }
    }

    fn end_call(&mut self) {
        self.done = self.total();
        self.current = None;
    }
}

/// `250 ms`, `1.5 s`.
fn short_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

/// One turn's loop in one chat.
#[derive(Clone)]
pub(crate) struct TurnLoop<'a> {
    pub inner: &'a Inner,
    pub sink: EventSink,
    pub session: SessionUri,
    pub chat: ChatUri,
    /// The host's facts for the chat the user addressed (scope, working directories,
    /// customizations); subagents inherit them.
    pub chat_context: ChatContext,
    pub turn_id: TurnId,
    pub model: String,
    pub system: String,
    pub tools: Vec<ToolSpec>,
    pub role: Role,
    pub cancel: CancellationToken,
}

impl TurnLoop<'_> {
    /// The system prompt of a chat of this loop's session with these tools and role.
    pub fn subagent_system(&self, tools: &OfferedTools, role: Role) -> String {
        system_prompt(&DynamicContext {
            settings: &self.inner.settings,
            project: self.chat_context.scope.project_id(),
            instructions: self
                .chat_context
                .customizations
                .as_ref()
                .and_then(|customizations| customizations.instructions.as_deref()),
            tools: &tools.listed,
            role,
        })
    }

    pub(crate) async fn signal(&self, signal: Signal) {
        self.sink.progress(&self.chat, signal).await;
    }

    /// Runs the loop; `prior` is the conversation before the turn, `record` collects the
    /// turn's messages.
    pub fn run<'s>(
        &'s self,
        prior: &'s mut Vec<Message>,
        record: &'s mut TurnRecord,
    ) -> BoxFuture<'s, Ended> {
        Box::pin(async move {
            let limit = self.inner.settings.step_limit.max(1);
            let mut tally = Tally::default();
            for step in 1..=limit {
                match self.call_model(prior, record, &mut tally).await {
                    Step::Answered(finish) => {
                        let reason = match finish {
                            None | Some(FinishReason::ToolUse) => StopReason::EndTurn,
                            Some(finish) => finish.to_stop_reason(),
                        };
                        return Ended::Stopped(reason, tally.total());
                    }
                    Step::Aborted => return Ended::Aborted(tally.total()),
                    Step::Failed(error) => return Ended::Failed(error.into(), tally.total()),
                    Step::Calls(calls) if step == limit => {
                        self.skip(
                            record,
                            &calls,
                            &format!(
                                "Not run: this turn reached its limit of {limit} model calls. \
                                 Call the tool again in the next turn if it is still needed."
                            ),
                        )
                        .await;
                        return Ended::Stopped(StopReason::StepLimit, tally.total());
                    }
                    Step::Calls(calls) => {
                        if !self.run_calls(record, calls).await {
                            return Ended::Aborted(tally.total());
                        }
                    }
                }
            }
            Ended::Stopped(StopReason::StepLimit, tally.total())
        })
    }

    /// One model call, streamed; the answer is added to the record.
    pub(crate) async fn call_once(
        &self,
        prior: &[Message],
        record: &mut TurnRecord,
        tally: &mut Tally,
    ) -> Step {
        let request = self.request(prior, record);
        let estimate = hearth_llm::estimate_request_tokens(&request);
        let mut stream = self.inner.client.stream(request, self.cancel.clone());
        let mut answer = Answer {
            room: answer_room(record, self.inner.settings.output_limits.answer_bytes),
            text: String::new(),
            calls: Vec::new(),
            finish: None,
            failure: None,
        };
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => self.on_event(event, &mut answer, tally).await,
                Err(LlmError::Cancelled) => break,
                Err(error) => {
                    answer.failure = Some(error);
                    break;
                }
            }
        }
        // Dropping the stream closes the connection at once.
        drop(stream);
        if let Some(usage) = &tally.current {
            self.compactor().learn(estimate, usage.input_tokens);
        }
        tally.end_call();
        self.end_call(record, answer).await
    }

    /// The request of the next model call: the chat so far, then the turn so far.
    pub(crate) fn request(&self, prior: &[Message], record: &TurnRecord) -> ModelRequest {
        let mut messages = Vec::with_capacity(prior.len() + record.messages.len());
        messages.extend_from_slice(prior);
        messages.extend(record.messages.iter().cloned());
        ModelRequest {
            model: self.model.clone(),
            system: Some(self.system.clone()),
            messages,
            tools: self.tools.clone(),
            max_tokens: None,
            temperature: None,
        }
    }

    /// Shows one event of the model's stream and keeps what the record needs of it.
    async fn on_event(&self, event: StreamEvent, answer: &mut Answer, tally: &mut Tally) {
        match event {
            StreamEvent::Retrying {
                attempt,
                delay,
                reason,
            } => {
                self.signal(Signal::Error {
                    turn_id: self.turn_id.clone(),
                    message: format!(
                        "{reason}; retrying in {} (retry {attempt})",
                        short_duration(delay)
                    ),
                })
                .await;
            }
            StreamEvent::TextDelta { text: delta } if !delta.is_empty() => {
                if let Some(room) = answer.room {
                    let limits = self.inner.settings.output_limits;
                    append_bounded(&mut answer.text, &delta, room, || {
                        cut_mark("the answer", &limits)
                    });
                }
                self.signal(Signal::TextDelta {
                    turn_id: self.turn_id.clone(),
                    text: delta,
                })
                .await;
            }
            StreamEvent::ReasoningDelta { text: delta } if !delta.is_empty() => {
                self.signal(Signal::ReasoningDelta {
                    turn_id: self.turn_id.clone(),
                    text: delta,
                })
                .await;
            }
            StreamEvent::ToolCallCompleted(call) => {
                let call = self.prepare(call);
                self.signal(Signal::ToolCallStarted {
                    turn_id: self.turn_id.clone(),
                    call: ToolCallPart::new(
                        call.id.clone(),
                        call.name.clone(),
                        call.recorded.clone(),
                        ToolCallStatus::Running,
                    ),
                })
                .await;
                answer.calls.push(call);
            }
            StreamEvent::Usage(usage) => {
                tally.current = Some(usage);
                if let Some(usage) = tally.total() {
                    self.signal(Signal::Usage {
                        turn_id: self.turn_id.clone(),
                        usage,
                    })
                    .await;
                }
            }
            StreamEvent::Finished { reason } => answer.finish = Some(reason),
            StreamEvent::TextDelta { .. }
            | StreamEvent::ReasoningDelta { .. }
            | StreamEvent::ToolCallStarted { .. }
            | StreamEvent::ToolCallDelta { .. } => {}
        }
    }

    /// Adds a model call's answer to the record; what the loop does next.
    async fn end_call(&self, record: &mut TurnRecord, answer: Answer) -> Step {
        let Answer {
            text,
            calls,
            finish,
            failure,
            ..
        } = answer;
        let tool_calls: Vec<ToolCall> = calls
            .iter()
            .map(|call| ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.recorded.clone(),
            })
            .collect();
        if !text.is_empty() || !tool_calls.is_empty() {
            record
                .messages
                .push(Message::Assistant { text, tool_calls });
        }
        if self.cancel.is_cancelled() {
            self.skip(record, &calls, "Not run: the user stopped the turn.")
                .await;
            return Step::Aborted;
        }
        if let Some(error) = failure {
            self.skip(record, &calls, "Not run: the model call failed.")
                .await;
            return Step::Failed(error);
        }
        if calls.is_empty() {
            Step::Answered(finish)
        } else {
            Step::Calls(calls)
        }
    }

    /// Checks a call: a tool that exists, arguments repaired and valid for its schema.
    fn prepare(&self, call: CompletedToolCall) -> PreparedCall {
        let id = if call.id.trim().is_empty() {
            format!("call_{}", new_id())
        } else {
            call.id
        };
        let as_recorded = |raw: &str| {
            repair_json(raw)
                .map_or_else(|| Value::String(raw.to_owned()), |repaired| repaired.value)
        };
        let Some(spec) = self.tools.iter().find(|tool| tool.name == call.name) else {
            // The toolbox answers unknown names itself, so the attempt is on record too.
            let recorded = as_recorded(&call.arguments);
            return PreparedCall {
                arguments: Ok(recorded.clone()),
                recorded,
                id,
                name: call.name,
            };
        };
        match parse_tool_arguments(spec, &call.arguments) {
            Ok(arguments) => {
                if arguments.repaired {
                    tracing::debug!(tool = %call.name, "repaired the arguments of a tool call");
                }
                PreparedCall {
                    recorded: arguments.value.clone(),
                    arguments: Ok(arguments.value),
                    id,
                    name: call.name,
                }
            }
            Err(error) => PreparedCall {
                recorded: as_recorded(&call.arguments),
                arguments: Err(error.message),
                id,
                name: call.name,
            },
        }
    }

    /// Runs the calls in order; `false` when the turn was aborted meanwhile.
    async fn run_calls(&self, record: &mut TurnRecord, calls: Vec<PreparedCall>) -> bool {
        for (index, call) in calls.iter().enumerate() {
            if self.cancel.is_cancelled() {
                self.skip(
                    record,
                    &calls[index..],
                    "Not run: the user stopped the turn.",
                )
                .await;
                return false;
            }
            let outcome = match &call.arguments {
                Err(message) => Outcome::failed(message.clone()),
                Ok(arguments) if call.name == TASK_TOOL => self.run_task(&call.id, arguments).await,
                Ok(arguments) => self.call_toolbox(call, arguments.clone()).await,
            };
            self.report(record, &call.id, outcome).await;
        }
        !self.cancel.is_cancelled()
    }

    async fn call_toolbox(&self, call: &PreparedCall, arguments: Value) -> Outcome {
        let context = ToolCallContext {
            session: self.session.clone(),
            chat: self.chat.clone(),
            turn_id: self.turn_id.clone(),
            call_id: call.id.clone(),
            scope: self.chat_context.scope.clone(),
            working_directories: self.chat_context.working_directories.clone(),
        };
        let asker = Arc::new(TurnAsker {
            pending: self.inner.permissions.clone(),
            sink: self.sink.clone(),
            turn_id: self.turn_id.clone(),
        });
        let called = with_permission_asker(
            asker,
            self.inner.toolbox.call(&context, &call.name, arguments),
        );
        tokio::select! {
            outcome = called => {
                Outcome::from_toolbox(outcome)
            }
            () = self.cancel.cancelled() => {
                Outcome::cancelled("Stopped: the user stopped the turn while the tool ran.")
            }
        }
    }

    /// Shows a call's result and adds it to the record.
    async fn report(&self, record: &mut TurnRecord, call_id: &str, outcome: Outcome) {
        self.signal(Signal::ToolCallUpdated {
            turn_id: self.turn_id.clone(),
            call_id: call_id.to_owned(),
            status: outcome.status,
            result: Some(ToolResult {
                content: outcome.content.clone(),
                is_error: outcome.is_error,
            }),
            patch: ToolCallPatch::default(),
        })
        .await;
        if let Some(proposal) = outcome.proposal {
            self.signal(Signal::ProposalStaged {
                turn_id: self.turn_id.clone(),
                proposal_id: proposal.id,
                summary: proposal.summary,
            })
            .await;
        }
        // The model reads back what is shown: a result cut at the same limit.
        let mut content = outcome.content;
        clip_text(
            &mut content,
            self.inner.settings.output_limits.tool_result_bytes,
            OutputLimit::ToolResultBytes,
        );
        record.messages.push(Message::ToolResult {
            call_id: call_id.to_owned(),
            content,
            is_error: outcome.is_error,
        });
    }

    /// Answers calls that will not run, so the history stays one the model accepts.
    async fn skip(&self, record: &mut TurnRecord, calls: &[PreparedCall], why: &str) {
        for call in calls {
            self.report(record, &call.id, Outcome::cancelled(why)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn usage_adds_up_over_model_calls() {
        let mut tally = Tally::default();
        assert_eq!(tally.total(), None);
        let usage = |input, output| Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        };
        tally.current = Some(usage(10, 1));
        tally.current = Some(usage(10, 5));
        tally.end_call();
        tally.current = Some(usage(20, 2));
        assert_eq!(tally.total(), Some(usage(30, 7)));
        tally.end_call();
        tally.end_call();
        assert_eq!(tally.total(), Some(usage(30, 7)));
        assert_eq!(short_duration(Duration::from_millis(250)), "250 ms");
        assert_eq!(short_duration(Duration::from_millis(1500)), "1.5 s");
    }
}
