//! Scenarios: what the replay harness plays, how a turn is chosen for a prompt, and
//! loading them from YAML with errors that name the file, line and column.

use std::path::Path;

use hearth_core::{PlanEntry, StopReason, Usage};
use serde_json::Value;

use crate::error::{Position, ReplayError, Result};
use crate::parse::ScenarioDef;

/// The built-in demo scenario's YAML source (`crates/harness-replay/demo.yaml`).
pub const DEMO_SCENARIO: &str = include_str!("../demo.yaml");

/// A scripted conversation: turns of steps, played one turn per prompt.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Short name, recorded in every chat's conversation.
    pub name: String,
    /// What the scenario shows.
    pub description: Option<String>,
    /// The turns, in file order.
    pub turns: Vec<ScenarioTurn>,
}

/// One scripted answer.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioTurn {
    /// Plays for prompts that contain this text (case-insensitive); `None` plays in
    /// order with the other unconditional turns.
    pub when: Option<String>,
    /// What the answer does, in order.
    pub steps: Vec<Step>,
}

/// One step of a scripted answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Milliseconds to wait before the step (before each word when streaming words; for
    /// a tool call, how long it runs). Scaled by the harness's delay scale.
    pub delay_ms: u64,
    /// What the step does.
    pub kind: StepKind,
}

/// What a step does.
#[derive(Clone, Debug, PartialEq)]
pub enum StepKind {
    /// Answer text.
    Text {
        /// The text; `{{prompt}}` is replaced by the prompt.
        text: String,
        /// In one piece or word by word.
        stream: Streaming,
    },
    /// Visible reasoning.
    Reasoning {
        /// The text; `{{prompt}}` is replaced by the prompt.
        text: String,
        /// In one piece or word by word.
        stream: Streaming,
    },
    /// A tool call with its result.
    ToolCall(ScriptedToolCall),
    /// A plan (replaces the turn's plan).
    Plan {
        /// The entries.
        entries: Vec<PlanEntry>,
    },
    /// A subagent: a spawned chat that runs its own steps; the parent sees a `task` tool
    /// call whose result is the subagent's answer.
    Subagent(ScriptedSubagent),
    /// An error shown in the answer; the turn goes on.
    Error {
        /// What failed.
        message: String,
    },
    /// The provider fails: the turn ends and `send` returns a provider error.
    Fail {
        /// The error's message.
        message: String,
    },
    /// Token usage (added to the turn's total).
    Usage {
        /// The usage of this step.
        usage: Usage,
    },
    /// The turn ends now with this stop reason.
    Stop {
        /// Why it ends.
        reason: StopReason,
    },
}

impl StepKind {
    /// The step kind's name in scenario files.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Text { .. } => "text",
            Self::Reasoning { .. } => "reasoning",
            Self::ToolCall(_) => "tool_call",
            Self::Plan { .. } => "plan",
            Self::Subagent(_) => "subagent",
            Self::Error { .. } => "error",
            Self::Fail { .. } => "fail",
            Self::Usage { .. } => "usage",
            Self::Stop { .. } => "stop",
        }
    }
}

/// How text is streamed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Streaming {
    /// One delta after the step's delay.
    #[default]
    Whole,
    /// One delta per word (with the whitespace after it), each after the step's delay.
    Words,
}

/// A scripted tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptedToolCall {
    /// The call id; generated (`call_1`, `call_2`, …) when `None`.
    pub id: Option<String>,
    /// Tool name.
    pub name: String,
    /// Arguments as JSON.
    pub arguments: Value,
    /// The result text.
    pub result: String,
    /// How the call ends.
    pub status: ToolOutcome,
}

/// How a scripted tool call ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolOutcome {
    /// With a result.
    #[default]
    Completed,
    /// With an error (the result is the error text).
    Failed,
}

/// A scripted subagent.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptedSubagent {
    /// Title of the spawned chat (also the `task` call's description).
    pub title: String,
    /// The prompt the subagent is given (its chat's first user message).
    pub prompt: String,
    /// What the subagent's answer does.
    pub steps: Vec<Step>,
}

/// The stop reason a scenario names: `end_turn`, `max_tokens`, `step_limit`, `refusal`
/// and `error` are known; any other text is a provider-specific reason.
pub fn stop_reason_from_name(name: &str) -> StopReason {
    match name {
        "end_turn" => StopReason::EndTurn,
        "max_tokens" => StopReason::MaxTokens,
        "step_limit" => StopReason::StepLimit,
        "refusal" => StopReason::Refusal,
        "error" => StopReason::Error,
        other => StopReason::Other(other.to_owned()),
    }
}

impl Scenario {
    /// Parses a scenario from YAML. `file` names the source in error messages
    /// (`demo.yaml:12:7: unknown step kind …`).
    pub fn from_yaml(text: &str, file: &str) -> Result<Self> {
        match serde_yaml_ng::from_str::<ScenarioDef>(text) {
            Ok(definition) => Ok(definition.into_scenario()),
            Err(error) => Err(scenario_error(file, &error)),
        }
    }

    /// Reads and parses a scenario file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ReplayError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_yaml(&text, &path.display().to_string())
    }

    /// The built-in demo: a short scripted answer that says it is a demo and how to
    /// configure a real model provider.
    pub fn demo() -> Self {
        match Self::from_yaml(DEMO_SCENARIO, "demo.yaml") {
            Ok(scenario) => scenario,
            Err(error) => {
                // The file ships with the crate and a test parses it; this is a last resort.
                tracing::error!(%error, "the built-in demo scenario is invalid");
                Self {
                    name: "demo".into(),
                    description: None,
                    turns: vec![ScenarioTurn {
                        when: None,
                        steps: vec![Step {
                            delay_ms: 0,
                            kind: StepKind::Text {
                                text: "This is Hearth's scripted demo. Configure a model provider \
                                       to get real answers."
                                    .into(),
                                stream: Streaming::Whole,
                            },
                        }],
                    }],
                }
            }
        }
    }

    /// The turn that answers a prompt: the first turn whose `when` the prompt contains
    /// (ignoring case); otherwise the unconditional turns in order, cycling, by how many
    /// turns the chat already has. `None` when nothing fits.
    pub fn select(&self, prompt: &str, turn_count: usize) -> Option<&ScenarioTurn> {
        let prompt = prompt.to_lowercase();
        let matched = self.turns.iter().find(|turn| {
            turn.when
                .as_ref()
                .is_some_and(|when| prompt.contains(&when.to_lowercase()))
        });
        if matched.is_some() {
            return matched;
        }
        let unconditional: Vec<&ScenarioTurn> = self
            .turns
            .iter()
            .filter(|turn| turn.when.is_none())
            .collect();
        if unconditional.is_empty() {
            return None;
        }
        unconditional.get(turn_count % unconditional.len()).copied()
    }
}

/// A scenario error from the YAML parser: `file:line:column: message`, without the
/// parser's own "at line … column …" suffix and field path prefix.
fn scenario_error(file: &str, error: &serde_yaml_ng::Error) -> ReplayError {
    let position = error.location().map(|location| Position {
        line: location.line(),
        column: location.column(),
    });
    let mut message = error.to_string();
    if let Some(position) = position {
        let suffix = format!(" at line {} column {}", position.line, position.column);
        if let Some(at) = message.find(&suffix) {
            message.replace_range(at..at + suffix.len(), "");
        }
    }
    ReplayError::Scenario {
        file: file.to_owned(),
        position,
        message: short_positions(strip_field_path(&message)),
    }
}

/// Rewrites the parser's other positions (`… at line 4 column 15`) as `… at 4:15`.
fn short_positions(message: &str) -> String {
    const AT_LINE: &str = " at line ";
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(AT_LINE) {
        let after = &rest[at + AT_LINE.len()..];
        let line_digits = after.chars().take_while(char::is_ascii_digit).count();
        let column = after[line_digits..].strip_prefix(" column ");
        let column_digits = column.map_or(0, |column| {
            column.chars().take_while(char::is_ascii_digit).count()
        });
        match column {
            Some(column) if line_digits > 0 && column_digits > 0 => {
                out.push_str(&rest[..at]);
                out.push_str(" at ");
                out.push_str(&after[..line_digits]);
                out.push(':');
                out.push_str(&column[..column_digits]);
                rest = &column[column_digits..];
            }
            _ => {
                out.push_str(&rest[..at + AT_LINE.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Drops a leading field path (`turns[0].steps[1]: `): the line and column say where.
fn strip_field_path(message: &str) -> &str {
    match message.split_once(": ") {
        Some((path, rest))
            if !path.is_empty()
                && path
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']')) =>
        {
            rest
        }
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn text_turn(when: Option<&str>, text: &str) -> ScenarioTurn {
        ScenarioTurn {
            when: when.map(str::to_owned),
            steps: vec![Step {
                delay_ms: 0,
                kind: StepKind::Text {
                    text: text.into(),
                    stream: Streaming::Whole,
                },
            }],
        }
    }

    #[test]
    fn the_demo_parses() {
        let scenario = Scenario::from_yaml(DEMO_SCENARIO, "demo.yaml").unwrap();
        assert_eq!(scenario.name, "demo");
        assert_eq!(Scenario::demo(), scenario);
    }

    #[test]
    fn when_matches_case_insensitively_before_ordered_turns() {
        let scenario = Scenario {
            name: "s".into(),
            description: None,
            turns: vec![
                text_turn(None, "first"),
                text_turn(Some("Weather"), "sunny"),
                text_turn(None, "second"),
            ],
        };
        assert_eq!(
            scenario.select("what's the WEATHER?", 0),
            Some(&scenario.turns[1])
        );
        assert_eq!(scenario.select("hi", 0), Some(&scenario.turns[0]));
        assert_eq!(scenario.select("hi", 1), Some(&scenario.turns[2]));
        assert_eq!(scenario.select("hi", 2), Some(&scenario.turns[0]));
        let only_when = Scenario {
            turns: vec![text_turn(Some("x"), "x")],
            ..scenario
        };
        assert_eq!(only_when.select("nothing", 0), None);
    }

    #[test]
    fn stop_reasons_map_known_names() {
        assert_eq!(stop_reason_from_name("end_turn"), StopReason::EndTurn);
        assert_eq!(stop_reason_from_name("max_tokens"), StopReason::MaxTokens);
        assert_eq!(stop_reason_from_name("refusal"), StopReason::Refusal);
        assert_eq!(stop_reason_from_name("error"), StopReason::Error);
        assert_eq!(
            stop_reason_from_name("content_filter"),
            StopReason::Other("content_filter".into())
        );
    }

    #[test]
    fn other_positions_are_shortened() {
        assert_eq!(
            short_positions("end of stream, while scanning a scalar at line 4 column 15"),
            "end of stream, while scanning a scalar at 4:15"
        );
        assert_eq!(
            short_positions("at line x at line 3"),
            "at line x at line 3"
        );
        assert_eq!(short_positions("plain"), "plain");
    }

    #[test]
    fn field_paths_are_stripped_but_prose_is_kept() {
        assert_eq!(strip_field_path("turns[0].steps[1]: bad"), "bad");
        assert_eq!(
            strip_field_path("invalid type: string"),
            "invalid type: string"
        );
        assert_eq!(
            strip_field_path("missing field `name`"),
            "missing field `name`"
        );
    }
}
