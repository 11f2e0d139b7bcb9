//! Playing a scripted turn: steps become progress signals, delays wait (and give way to
//! an abort), a subagent spawns a chat of its own.

use futures::FutureExt;
use futures::future::BoxFuture;
use hearth_core::{
    ChatId, ChatOrigin, ChatUri, CreatedChat, EventSink, HarnessEvent, OutputLimits, PlanEntry,
    ResponsePart, SessionUri, Signal, StopReason, ToolCallPart, ToolCallPatch, ToolCallStatus,
    ToolResult, Turn, TurnBudget, TurnId, UserMessage, now,
};
use hearth_harness::RunId;
use tokio_util::sync::CancellationToken;

use crate::agent::ReplayHarness;
use crate::conversation::Conversation;
use crate::scenario::{ScriptedSubagent, ScriptedToolCall, Step, StepKind, Streaming, ToolOutcome};

/// The tool name under which a subagent shows in its parent's answer.
pub const SUBAGENT_TOOL: &str = "task";

/// How playing a list of steps ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ended {
    /// Every step played.
    Done,
    /// A `stop` step ended the turn.
    Stopped(StopReason),
    /// A `fail` step: the provider "failed" with this message.
    Failed(String),
    /// The turn was aborted.
    Aborted,
}

/// One turn being played in one chat, and the record of what it showed: what the host
/// shows of it, within the same output limits.
pub(crate) struct Stage {
    pub chat: ChatUri,
    pub turn: Turn,
    pub cancel: CancellationToken,
    calls: u32,
    budget: TurnBudget,
}

impl Stage {
    pub fn new(
        chat: ChatUri,
        turn_id: TurnId,
        user: UserMessage,
        cancel: CancellationToken,
        limits: OutputLimits,
    ) -> Self {
        Self {
            chat,
            turn: Turn::started(turn_id, user, now()),
            cancel,
            calls: 0,
            budget: TurnBudget::new(limits),
        }
    }

    /// Records what a signal shows, as much of it as the turn keeps.
    fn keep(&mut self, signal: &Signal) {
        let Some(admitted) = self.budget.admit(signal.clone()) else {
            return;
        };
        match admitted.signal {
            Signal::TextDelta { text, .. } => self.turn.push_text(&text),
            Signal::ReasoningDelta { text, .. } => self.turn.push_reasoning(&text),
            Signal::ToolCallStarted { call, .. } => {
                self.turn.parts.push(ResponsePart::ToolCall(call));
            }
            Signal::ToolCallUpdated {
                call_id,
                status,
                result,
                patch,
                ..
            } => {
                if let Some(call) = self.turn.tool_call_mut(&call_id) {
                    call.status = status;
                    if result.is_some() {
                        call.result = result;
                    }
                    patch.apply(call);
                }
            }
            Signal::Plan { entries, .. } => replace_plan(&mut self.turn, &entries),
            Signal::Error { message, .. } => {
                self.turn.parts.push(ResponsePart::Error { message });
            }
            _ => {}
        }
    }

    fn call_id(&mut self, scripted: Option<&str>) -> String {
        self.calls += 1;
        scripted.map_or_else(|| format!("call_{}", self.calls), str::to_owned)
    }

    /// Ends the record of the turn; returns its stop reason.
    pub fn finish(&mut self, ended: &Ended) -> StopReason {
        let reason = match ended {
            Ended::Done => StopReason::EndTurn,
            Ended::Stopped(reason) => reason.clone(),
            Ended::Failed(_) => StopReason::Error,
            Ended::Aborted => StopReason::Aborted,
        };
        // What the host adds when it ends a turn that passed its limits.
        if let Some(note) = self.budget.closing_note() {
            self.turn.push_text(&note);
        }
        self.turn.stop_reason = Some(reason.clone());
        self.turn.completed_at = Some(now());
        reason
    }
}

/// Splits text into words, each with the whitespace after it (leading whitespace stays
/// with the first word), so the pieces join back into the text.
pub(crate) fn words(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    let mut seen_word = false;
    for (index, c) in text.char_indices() {
        if c.is_whitespace() {
            in_space = true;
        } else {
            if in_space && seen_word {
                pieces.push(&text[start..index]);
                start = index;
            }
            in_space = false;
            seen_word = true;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Plays steps for one harness call.
pub(crate) struct Player<'a> {
    pub agent: &'a ReplayHarness,
    pub sink: EventSink,
    pub session: SessionUri,
    pub model: Option<String>,
}

impl Player<'_> {
    /// Waits a scaled delay; `false` when the turn was aborted first.
    async fn wait(&self, delay_ms: u64, cancel: &CancellationToken) -> bool {
        if cancel.is_cancelled() {
            return false;
        }
        let Some(delay) = self.agent.scaled(delay_ms) else {
            return true;
        };
        tokio::select! {
            () = cancel.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }

    async fn signal(&self, chat: &ChatUri, signal: Signal) {
        self.sink.progress(chat, signal).await;
    }

    /// Plays steps into a stage until they end, fail, stop or are aborted.
    pub fn play<'s>(&'s self, stage: &'s mut Stage, steps: &'s [Step]) -> BoxFuture<'s, Ended> {
        async move {
            for step in steps {
                let ended = self.step(stage, step).await;
                if ended != Ended::Done {
                    return ended;
                }
            }
            Ended::Done
        }
        .boxed()
    }

    async fn step(&self, stage: &mut Stage, step: &Step) -> Ended {
        let turn_id = stage.turn.id.clone();
        match &step.kind {
            StepKind::Text { text, stream } | StepKind::Reasoning { text, stream } => {
                let reasoning = matches!(step.kind, StepKind::Reasoning { .. });
                let text = text.replace("{{prompt}}", &stage.turn.user.text);
                let pieces = match stream {
                    Streaming::Words => words(&text),
                    Streaming::Whole => vec![text.as_str()],
                };
                for piece in pieces {
                    if !self.wait(step.delay_ms, &stage.cancel).await {
                        return Ended::Aborted;
                    }
                    if piece.is_empty() {
                        continue;
                    }
                    let (turn_id, text) = (turn_id.clone(), piece.to_owned());
                    let signal = if reasoning {
                        Signal::ReasoningDelta { turn_id, text }
                    } else {
                        Signal::TextDelta { turn_id, text }
                    };
                    stage.keep(&signal);
                    self.signal(&stage.chat, signal).await;
                }
                Ended::Done
            }
            StepKind::ToolCall(call) => self.tool_call(stage, call, step.delay_ms).await,
            StepKind::Subagent(subagent) => {
                if !self.wait(step.delay_ms, &stage.cancel).await {
                    return Ended::Aborted;
                }
                self.subagent(stage, subagent).await
            }
            kind => {
                if !self.wait(step.delay_ms, &stage.cancel).await {
                    return Ended::Aborted;
                }
                self.instant(stage, kind).await
            }
        }
    }

    /// Steps that show at once: plan, error, fail, usage, stop.
    async fn instant(&self, stage: &mut Stage, kind: &StepKind) -> Ended {
        let turn_id = stage.turn.id.clone();
        match kind {
            StepKind::Plan { entries } => {
                let signal = Signal::Plan {
                    turn_id,
                    entries: entries.clone(),
                };
                stage.keep(&signal);
                self.signal(&stage.chat, signal).await;
                Ended::Done
            }
            StepKind::Error { message } => {
                let signal = Signal::Error {
                    turn_id,
                    message: message.clone(),
                };
                stage.keep(&signal);
                self.signal(&stage.chat, signal).await;
                Ended::Done
            }
            StepKind::Fail { message } => {
                // The error part reaches the host through `send`'s result, not a signal.
                stage.turn.parts.push(ResponsePart::Error {
                    message: message.clone(),
                });
                Ended::Failed(message.clone())
            }
            StepKind::Usage { usage } => {
                let total = stage.turn.usage.get_or_insert_with(Default::default);
                total.accumulate(usage);
                let usage = total.clone();
                self.signal(&stage.chat, Signal::Usage { turn_id, usage })
                    .await;
                Ended::Done
            }
            StepKind::Stop { reason } => Ended::Stopped(reason.clone()),
            StepKind::Text { .. }
            | StepKind::Reasoning { .. }
            | StepKind::ToolCall(_)
            | StepKind::Subagent(_) => Ended::Done,
        }
    }

    async fn start_call(
        &self,
        stage: &mut Stage,
        call_id: &str,
        name: &str,
        arguments: serde_json::Value,
    ) {
        let signal = Signal::ToolCallStarted {
            turn_id: stage.turn.id.clone(),
            call: ToolCallPart::new(call_id, name, arguments, ToolCallStatus::Running),
        };
        stage.keep(&signal);
        self.signal(&stage.chat, signal).await;
    }

    async fn update_call(
        &self,
        stage: &mut Stage,
        call_id: &str,
        status: ToolCallStatus,
        result: Option<ToolResult>,
    ) {
        let signal = Signal::ToolCallUpdated {
            turn_id: stage.turn.id.clone(),
            call_id: call_id.to_owned(),
            status,
            result,
            patch: ToolCallPatch::default(),
        };
        stage.keep(&signal);
        self.signal(&stage.chat, signal).await;
    }

    /// A tool call: announced, running for the step's delay, then finished.
    async fn tool_call(&self, stage: &mut Stage, call: &ScriptedToolCall, delay_ms: u64) -> Ended {
        if stage.cancel.is_cancelled() {
            return Ended::Aborted;
        }
        let call_id = stage.call_id(call.id.as_deref());
        self.start_call(stage, &call_id, &call.name, call.arguments.clone())
            .await;
        if !self.wait(delay_ms, &stage.cancel).await {
            self.update_call(stage, &call_id, ToolCallStatus::Cancelled, None)
                .await;
            return Ended::Aborted;
        }
        let (status, is_error) = match call.status {
            ToolOutcome::Completed => (ToolCallStatus::Completed, false),
            ToolOutcome::Failed => (ToolCallStatus::Failed, true),
        };
        let result = ToolResult {
            content: call.result.clone(),
            is_error,
        };
        self.update_call(stage, &call_id, status, Some(result))
            .await;
        Ended::Done
    }

    /// A subagent: a `task` call on the parent; a spawned chat (in the host's catalog
    /// before any of its events) that plays the subagent's steps as its own turn; the
    /// call's result is the subagent's answer.
    async fn subagent(&self, stage: &mut Stage, subagent: &ScriptedSubagent) -> Ended {
        let call_id = stage.call_id(None);
        let arguments = serde_json::json!({
            "description": subagent.title,
            "prompt": subagent.prompt,
        });
        self.start_call(stage, &call_id, SUBAGENT_TOOL, arguments)
            .await;
        let child = match self.spawn_subagent(stage, &call_id, subagent).await {
            Ok(child) => child,
            Err(message) => {
                let result = ToolResult {
                    content: message,
                    is_error: true,
                };
                self.update_call(stage, &call_id, ToolCallStatus::Failed, Some(result))
                    .await;
                return Ended::Done;
            }
        };
        let (status, result) = self.run_subagent(child, subagent).await;
        self.update_call(stage, &call_id, status, Some(result))
            .await;
        if stage.cancel.is_cancelled() {
            return Ended::Aborted;
        }
        Ended::Done
    }

    /// Adds the subagent's chat to the agent's table, already running, and announces it
    /// to the host as spawned by the `call_id` call; fails with the message for the call
    /// when the chat's conversation cannot be encoded.
    async fn spawn_subagent(
        &self,
        stage: &Stage,
        call_id: &str,
        subagent: &ScriptedSubagent,
    ) -> Result<SubagentChat, String> {
        let chat = ChatUri::peer(&self.session, ChatId::generate());
        let turn_id = TurnId::generate();
        let cancel = stage.cancel.child_token();
        let conversation = Conversation::fresh(
            &self.agent.scenario.name,
            self.model.clone(),
            Some(subagent.title.clone()),
        );
        let provider_data = conversation.encode(&chat).map_err(|error| error.message)?;
        let run = self
            .agent
            .chats
            .add_running(&chat, conversation, &turn_id, &cancel);
        self.sink
            .send(HarnessEvent::SpawnChat {
                chat: chat.clone(),
                origin: ChatOrigin::Tool {
                    parent_chat: stage.chat.clone(),
                    tool_call_id: call_id.to_owned(),
                },
                title: Some(subagent.title.clone()),
                created: CreatedChat {
                    provider_data,
                    conversation: None,
                    model: self.model.clone(),
                    agent: None,
                },
            })
            .await;
        Ok(SubagentChat {
            chat,
            turn_id,
            cancel,
            run,
        })
    }

    /// Plays the subagent's steps as its chat's turn, completes the turn and ends the
    /// chat; returns the status and result of the parent's call.
    async fn run_subagent(
        &self,
        child: SubagentChat,
        subagent: &ScriptedSubagent,
    ) -> (ToolCallStatus, ToolResult) {
        let SubagentChat {
            chat,
            turn_id,
            cancel,
            run,
        } = child;
        let user = UserMessage::text(subagent.prompt.clone());
        self.signal(
            &chat,
            Signal::TurnStarted {
                turn_id: turn_id.clone(),
                user: user.clone(),
            },
        )
        .await;
        let mut stage = Stage::new(
            chat.clone(),
            turn_id.clone(),
            user,
            cancel,
            self.agent.output_limits,
        );
        let ended = self.play(&mut stage, &subagent.steps).await;
        if let Ended::Failed(message) = &ended {
            let message = message.clone();
            let turn_id = turn_id.clone();
            self.signal(&chat, Signal::Error { turn_id, message }).await;
        }
        let stop_reason = stage.finish(&ended);
        let usage = stage.turn.usage.clone();
        let answer = stage.turn.response_text();
        self.signal(
            &chat,
            Signal::TurnCompleted {
                turn_id,
                stop_reason: stop_reason.clone(),
                usage,
            },
        )
        .await;
        if let Some(provider_data) = self.agent.finish_run(&chat, run, stage.turn) {
            self.signal(&chat, Signal::ProviderDataChanged { provider_data })
                .await;
        }
        self.sink.send(HarnessEvent::EndChat { chat }).await;
        subagent_outcome(&ended, &stop_reason, answer)
    }
}

/// A subagent's chat, spawned and running its one turn.
struct SubagentChat {
    chat: ChatUri,
    turn_id: TurnId,
    cancel: CancellationToken,
    run: RunId,
}

/// The parent call's status and result for a subagent whose turn `ended` with
/// `stop_reason` and `answer`.
fn subagent_outcome(
    ended: &Ended,
    stop_reason: &StopReason,
    answer: String,
) -> (ToolCallStatus, ToolResult) {
    let (status, result) = match (ended, stop_reason) {
        (Ended::Aborted, _) => (ToolCallStatus::Cancelled, answer),
        (Ended::Failed(message), _) => (ToolCallStatus::Failed, message.clone()),
        (_, StopReason::Error) => (ToolCallStatus::Failed, answer),
        _ => (ToolCallStatus::Completed, answer),
    };
    let result = ToolResult {
        content: result,
        is_error: status == ToolCallStatus::Failed,
    };
    (status, result)
}

/// Replaces the turn's plan, or adds one (as the host's reducer does).
fn replace_plan(turn: &mut Turn, entries: &[PlanEntry]) {
    let existing = turn.parts.iter_mut().find_map(|part| match part {
        ResponsePart::Plan { entries } => Some(entries),
        _ => None,
    });
    match existing {
        Some(existing) => *existing = entries.to_vec(),
        None => turn.parts.push(ResponsePart::Plan {
            entries: entries.to_vec(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn words_join_back_into_the_text() {
        assert_eq!(
            words("Hello big  world\n"),
            vec!["Hello ", "big  ", "world\n"]
        );
        assert_eq!(words("  lead"), vec!["  lead"]);
        assert_eq!(words(""), Vec::<&str>::new());
        assert_eq!(words("one"), vec!["one"]);
        let text = "Sätze mit  Ümlauten\tund\nso.";
        assert_eq!(words(text).concat(), text);
    }
}
