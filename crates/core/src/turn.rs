//! The turn model: a user message and the response as ordered parts.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{ProposalId, TurnId};
use crate::tool_call::{ToolCallContent, ToolKind, ToolLocation};

/// A point in time, UTC, millisecond precision in storage.
pub type Timestamp = DateTime<Utc>;

/// The current time truncated to whole milliseconds, so values survive storage unchanged.
pub fn now() -> Timestamp {
    let now = Utc::now();
    DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
}

/// What the user sent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserMessage {
    /// The prompt text.
    pub text: String,
    /// Files attached to the message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attachments: Vec<Attachment>,
    /// Context the user pointed at (notes, URLs, selections).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextReference>,
}

impl UserMessage {
    /// A plain text message.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }
}

/// A file attached to a user message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// Display name.
    pub name: String,
    /// MIME type.
    pub media_type: String,
    /// Where the content lives (a path or URL).
    pub uri: String,
}

/// A reference to context the user included.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextReference {
    /// Display label.
    pub label: String,
    /// What it points at.
    pub uri: String,
}

/// Why a turn ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model hit its output token limit.
    MaxTokens,
    /// The agent loop hit its step limit.
    StepLimit,
    /// The model refused.
    Refusal,
    /// The user aborted the turn; what streamed is kept.
    Aborted,
    /// The turn failed; the error is a response part.
    Error,
    /// The process stopped while the turn ran (crash, kill); what streamed is kept.
    Incomplete,
    /// A provider-specific reason Hearth does not know.
    Other(String),
}

impl StopReason {
    /// A short label for listings.
    pub fn label(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::MaxTokens => "max_tokens",
            Self::StepLimit => "step_limit",
            Self::Refusal => "refusal",
            Self::Aborted => "aborted",
            Self::Error => "error",
            Self::Incomplete => "incomplete",
            Self::Other(other) => other,
        }
    }
}

/// Token usage of a turn, and what the agent says about its context window and cost.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Completion tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Prompt tokens served from a cache.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_input_tokens: u64,
    /// Tokens spent on reasoning.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
    /// Tokens in the context window now, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_used: Option<u64>,
    /// The size of the context window in tokens, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_size: Option<u64>,
    /// What the conversation has cost so far, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

/// An amount spent, in a currency (an ISO 4217 code such as `USD`) or another unit
/// (such as `credits`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// The amount; always finite ([`Cost::new`] refuses others).
    pub amount: f64,
    /// Its unit.
    pub currency: String,
}

// Amounts are finite (see `Cost::new`; JSON has no NaN), so equality is reflexive.
impl Eq for Cost {}

impl Cost {
    /// A cost of `amount` in `currency`; `None` for an amount that is not a finite number.
    pub fn new(amount: f64, currency: impl Into<String>) -> Option<Self> {
        amount.is_finite().then(|| Self {
            amount,
            currency: currency.into(),
        })
    }
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl Usage {
    /// Adds another usage report (e.g. of a later step of an agent loop).
    pub fn accumulate(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        // The window and the cost are states, not amounts: the latest report holds.
        if other.context_used.is_some() {
            self.context_used = other.context_used;
        }
        if other.context_size.is_some() {
            self.context_size = other.context_size;
        }
        if other.cost.is_some() {
            self.cost.clone_from(&other.cost);
        }
    }
}

/// Lifecycle of a tool call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Announced, arguments may still be streaming.
    Pending,
    /// Executing.
    Running,
    /// Finished with a result.
    Completed,
    /// Finished with an error.
    Failed,
    /// Did not run (aborted, or refused before running).
    Cancelled,
}

/// What a tool call returned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Text given back to the model.
    pub content: String,
    /// Whether the content describes an error.
    #[serde(default)]
    pub is_error: bool,
}

/// A tool call inside a response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallPart {
    /// Call id, unique within the turn.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as given (after repair).
    pub arguments: Value,
    /// Where the call is in its lifecycle.
    pub status: ToolCallStatus,
    /// The result once finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ToolResult>,
    /// A title for people (external agents give one; Hearth's tools do not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What kind of work it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolKind>,
    /// The files it touches.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<ToolLocation>,
    /// What it produced: text, diffs, terminals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ToolCallContent>,
}

impl ToolCallPart {
    /// A call with a name, arguments and status, and no further details.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
        status: ToolCallStatus,
    ) -> Self {
        Self {
            call_id: call_id.into(),
            name: name.into(),
            arguments,
            status,
            result: None,
            title: None,
            kind: None,
            locations: Vec::new(),
            content: Vec::new(),
        }
    }
}

/// State of a plan entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanStatus {
    /// Not started.
    Pending,
    /// Under way.
    InProgress,
    /// Done.
    Completed,
}

/// One item of a plan or todo list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanEntry {
    /// What is to be done.
    pub content: String,
    /// How far along it is.
    pub status: PlanStatus,
}

/// What choosing a permission option means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOptionKind {
    /// Allow this once.
    AllowOnce,
    /// Allow this and later requests of the same kind.
    AllowAlways,
    /// Refuse this once.
    RejectOnce,
    /// Refuse this and later requests of the same kind.
    RejectAlways,
}

impl PermissionOptionKind {
    /// Whether the option allows.
    pub fn allows(self) -> bool {
        matches!(self, Self::AllowOnce | Self::AllowAlways)
    }
}

/// One choice offered by a permission request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionOption {
    /// Option id, sent back in the answer.
    pub id: String,
    /// Label shown to the user.
    pub label: String,
    /// What choosing it means, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<PermissionOptionKind>,
}

/// The outcome recorded for a permission request that was never answered because its
/// turn was aborted.
pub const PERMISSION_CANCELLED: &str = "cancelled";
/// The outcome recorded for a permission request whose agent went away unanswered (the
/// process running it stopped).
pub const PERMISSION_EXPIRED: &str = "expired";
/// The `via` of an answer nobody gave: the configured policy (or the lack of anyone who
/// could be asked) answered. It is never reported, or audited, as the user's.
pub const PERMISSION_BY_POLICY: &str = "policy";

/// One ordered piece of a response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponsePart {
    /// Answer text (markdown).
    Text {
        /// The text.
        text: String,
    },
    /// Visible reasoning.
    Reasoning {
        /// The text.
        text: String,
    },
    /// A tool call with its status and result.
    ToolCall(ToolCallPart),
    /// A plan or todo list (replaced as a whole on update).
    Plan {
        /// The entries.
        entries: Vec<PlanEntry>,
    },
    /// A staged change awaiting the user's approval.
    Proposal {
        /// The proposal.
        proposal_id: ProposalId,
        /// What it would do.
        summary: String,
    },
    /// A question to the user from an external agent.
    PermissionRequest {
        /// Request id.
        request_id: String,
        /// What is asked.
        title: String,
        /// The choices.
        options: Vec<PermissionOption>,
        /// The chosen option once answered ([`PERMISSION_CANCELLED`] or
        /// [`PERMISSION_EXPIRED`] when it never was).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<String>,
        /// The tool call the request is about.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
    },
    /// An error shown inside the response.
    Error {
        /// What failed and what to do.
        message: String,
    },
    /// A note from Hearth about the chat, not part of the agent's answer (its agent
    /// session could not be reopened and a new one took over, say).
    Notice {
        /// What happened.
        message: String,
    },
    /// Earlier turns of the chat were summarised so the conversation fits the model's
    /// context window: from here on the agent reads the summary instead of them. The
    /// turns themselves are kept, shown and searchable.
    Compaction {
        /// How many turns the summary stands for, when the agent says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turns: Option<u32>,
        /// The summary (empty while an agent is still writing it or keeps it to itself).
        #[serde(default)]
        summary: String,
    },
}

/// One exchange: a user message and the response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// The turn's id.
    pub id: TurnId,
    /// What the user sent.
    pub user: UserMessage,
    /// The response, in order.
    #[serde(default)]
    pub parts: Vec<ResponsePart>,
    /// Token usage, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Why the turn ended; `None` while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    /// When the user sent it.
    pub started_at: Timestamp,
    /// When it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<Timestamp>,
}

impl Turn {
    /// Ends the turn with `reason`: tool calls still pending or running will never
    /// finish, so they are marked cancelled, and permission requests nobody answered are
    /// closed (cancelled, or expired when the process that ran the turn stopped).
    pub fn end(&mut self, reason: StopReason) {
        let unanswered = if reason == StopReason::Incomplete {
            PERMISSION_EXPIRED
        } else {
            PERMISSION_CANCELLED
        };
        self.stop_reason = Some(reason);
        for part in &mut self.parts {
            match part {
                ResponsePart::ToolCall(call)
                    if matches!(
                        call.status,
                        ToolCallStatus::Pending | ToolCallStatus::Running
                    ) =>
                {
                    call.status = ToolCallStatus::Cancelled;
                }
                ResponsePart::PermissionRequest { outcome, .. } if outcome.is_none() => {
                    *outcome = Some(unanswered.to_owned());
                }
                _ => {}
            }
        }
    }

    /// The permission requests of the turn nobody answered yet.
    pub fn unanswered_permissions(&self) -> impl Iterator<Item = &ResponsePart> {
        self.parts
            .iter()
            .filter(|part| matches!(part, ResponsePart::PermissionRequest { outcome: None, .. }))
    }

    /// A turn read back without a stop reason (its process stopped while it ran) is
    /// ended as [`StopReason::Incomplete`]; a finished turn is left as it is.
    pub fn settle_if_stale(&mut self) {
        if self.stop_reason.is_none() {
            self.end(StopReason::Incomplete);
        }
    }

    /// A turn that has just started.
    pub fn started(id: TurnId, user: UserMessage, started_at: Timestamp) -> Self {
        Self {
            id,
            user,
            parts: Vec::new(),
            usage: None,
            stop_reason: None,
            started_at,
            completed_at: None,
        }
    }

    /// Whether the turn is still running.
    pub fn is_running(&self) -> bool {
        self.stop_reason.is_none()
    }

    /// All answer text of the response, concatenated.
    pub fn response_text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|part| match part {
                ResponsePart::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// Appends answer text, extending the last part when it is text.
    pub fn push_text(&mut self, delta: &str) {
        if let Some(ResponsePart::Text { text }) = self.parts.last_mut() {
            text.push_str(delta);
        } else {
            self.parts.push(ResponsePart::Text {
                text: delta.to_owned(),
            });
        }
    }

    /// Appends reasoning text, extending the last part when it is reasoning.
    pub fn push_reasoning(&mut self, delta: &str) {
        if let Some(ResponsePart::Reasoning { text }) = self.parts.last_mut() {
            text.push_str(delta);
        } else {
            self.parts.push(ResponsePart::Reasoning {
                text: delta.to_owned(),
            });
        }
    }

    /// The tool call with this id, if any.
    pub fn tool_call_mut(&mut self, call_id: &str) -> Option<&mut ToolCallPart> {
        self.parts.iter_mut().rev().find_map(|part| match part {
            ResponsePart::ToolCall(call) if call.call_id == call_id => Some(call),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn usage_stored_before_the_window_and_cost_still_reads() {
        let old: Usage =
            serde_json::from_value(serde_json::json!({"input_tokens": 3, "output_tokens": 4}))
                .unwrap();
        assert_eq!(
            old,
            Usage {
                input_tokens: 3,
                output_tokens: 4,
                ..Usage::default()
            }
        );
        // What is not reported is not written either.
        assert_eq!(
            serde_json::to_value(&old).unwrap(),
            serde_json::json!({"input_tokens": 3, "output_tokens": 4})
        );
        assert_eq!(Cost::new(f64::NAN, "USD"), None);
    }

    #[test]
    fn accumulated_usage_adds_tokens_and_keeps_the_latest_window_and_cost() {
        let mut total = Usage {
            input_tokens: 1,
            context_used: Some(10),
            context_size: Some(100),
            cost: Cost::new(0.5, "USD"),
            ..Usage::default()
        };
        total.accumulate(&Usage {
            input_tokens: 2,
            context_used: Some(20),
            ..Usage::default()
        });
        assert_eq!(
            total,
            Usage {
                input_tokens: 3,
                context_used: Some(20),
                context_size: Some(100),
                cost: Cost::new(0.5, "USD"),
                ..Usage::default()
            }
        );
    }

    fn call(id: &str, status: ToolCallStatus) -> ResponsePart {
        ResponsePart::ToolCall(ToolCallPart::new(id, "web_fetch", Value::Null, status))
    }

    fn permission(id: &str, outcome: Option<&str>) -> ResponsePart {
        ResponsePart::PermissionRequest {
            request_id: id.into(),
            title: "Write a.txt?".into(),
            options: Vec::new(),
            outcome: outcome.map(str::to_owned),
            tool_call_id: None,
        }
    }

    #[test]
    fn ending_closes_unanswered_permission_requests() {
        let mut aborted = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        aborted.parts = vec![permission("a", None), permission("b", Some("allow"))];
        assert_eq!(aborted.unanswered_permissions().count(), 1);
        aborted.end(StopReason::Aborted);
        assert_eq!(
            aborted.parts,
            vec![
                permission("a", Some(PERMISSION_CANCELLED)),
                permission("b", Some("allow"))
            ]
        );
        let mut stale = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        stale.parts = vec![permission("a", None)];
        stale.settle_if_stale();
        assert_eq!(stale.parts, vec![permission("a", Some(PERMISSION_EXPIRED))]);
        assert_eq!(stale.unanswered_permissions().count(), 0);
    }

    #[test]
    fn a_stale_turn_ends_incomplete_with_its_unfinished_calls_cancelled() {
        let mut turn = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        turn.parts = vec![
            call("a", ToolCallStatus::Running),
            call("b", ToolCallStatus::Pending),
            call("c", ToolCallStatus::Completed),
            call("d", ToolCallStatus::Failed),
        ];
        turn.settle_if_stale();
        assert_eq!(turn.stop_reason, Some(StopReason::Incomplete));
        assert_eq!(
            turn.parts,
            vec![
                call("a", ToolCallStatus::Cancelled),
                call("b", ToolCallStatus::Cancelled),
                call("c", ToolCallStatus::Completed),
                call("d", ToolCallStatus::Failed),
            ]
        );
        // A finished turn is left alone.
        let mut done = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        done.parts = vec![call("a", ToolCallStatus::Running)];
        done.stop_reason = Some(StopReason::EndTurn);
        done.settle_if_stale();
        assert_eq!(done.parts, vec![call("a", ToolCallStatus::Running)]);
    }

    #[test]
    fn deltas_extend_the_last_part_of_the_same_kind() {
        let mut turn = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        turn.push_reasoning("think");
        turn.push_reasoning("ing");
        turn.push_text("Hel");
        turn.push_text("lo");
        turn.push_reasoning("more");
        assert_eq!(
            turn.parts,
            vec![
                ResponsePart::Reasoning {
                    text: "thinking".into()
                },
                ResponsePart::Text {
                    text: "Hello".into()
                },
                ResponsePart::Reasoning {
                    text: "more".into()
                },
            ]
        );
        assert_eq!(turn.response_text(), "Hello");
    }

    #[test]
    fn parts_serialize_tagged() {
        let part = ResponsePart::Text { text: "x".into() };
        assert_eq!(
            serde_json::to_value(&part).unwrap(),
            serde_json::json!({"type": "text", "text": "x"})
        );
        let reason = StopReason::Other("weird".into());
        let json = serde_json::to_string(&reason).unwrap();
        assert_eq!(serde_json::from_str::<StopReason>(&json).unwrap(), reason);
    }
}
