//! Reading one step. A step is a map whose one kind key carries the main value
//! (`text: Hello`) beside the kind's options (`delay_ms: 40`). It is read by hand so that
//! every mistake is reported at the key or value that is wrong, in words a scenario
//! author understands.

use std::fmt;

use hearth_core::{PlanEntry, PlanStatus, Usage};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use crate::parse::StepList;
use crate::scenario::{
    ScriptedSubagent, ScriptedToolCall, Step, StepKind, Streaming, ToolOutcome,
    stop_reason_from_name,
};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanEntryDef {
    content: String,
    #[serde(default)]
    status: PlanStatusDef,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "snake_case")]
enum PlanStatusDef {
    #[default]
    Pending,
    InProgress,
    Completed,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UsageDef {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cached_input_tokens: u64,
    #[serde(default)]
    reasoning_tokens: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum StreamDef {
    Whole,
    Words,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum StatusDef {
    Completed,
    Failed,
}

/// The kinds a step can have, as written in files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    Reasoning,
    ToolCall,
    Plan,
    Subagent,
    Error,
    Fail,
    Usage,
    Stop,
}

const KINDS: [(Kind, &str); 9] = [
    (Kind::Text, "text"),
    (Kind::Reasoning, "reasoning"),
    (Kind::ToolCall, "tool_call"),
    (Kind::Plan, "plan"),
    (Kind::Subagent, "subagent"),
    (Kind::Error, "error"),
    (Kind::Fail, "fail"),
    (Kind::Usage, "usage"),
    (Kind::Stop, "stop"),
];

/// Settings a step can have besides its kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Setting {
    DelayMs,
    Stream,
    Id,
    Arguments,
    Result,
    Status,
    Prompt,
    Steps,
}

const OPTIONS: [(Setting, &str); 8] = [
    (Setting::DelayMs, "delay_ms"),
    (Setting::Stream, "stream"),
    (Setting::Id, "id"),
    (Setting::Arguments, "arguments"),
    (Setting::Result, "result"),
    (Setting::Status, "status"),
    (Setting::Prompt, "prompt"),
    (Setting::Steps, "steps"),
];

impl Kind {
    fn name(self) -> &'static str {
        KINDS
            .iter()
            .find(|(kind, _)| *kind == self)
            .map_or("?", |(_, name)| name)
    }

    fn options(self) -> &'static [Setting] {
        match self {
            Self::Text | Self::Reasoning => &[Setting::DelayMs, Setting::Stream],
            Self::ToolCall => &[
                Setting::DelayMs,
                Setting::Id,
                Setting::Arguments,
                Setting::Result,
                Setting::Status,
            ],
            Self::Subagent => &[Setting::DelayMs, Setting::Prompt, Setting::Steps],
            Self::Plan | Self::Error | Self::Fail | Self::Usage | Self::Stop => &[Setting::DelayMs],
        }
    }
}

impl Setting {
    fn name(self) -> &'static str {
        OPTIONS
            .iter()
            .find(|(option, _)| *option == self)
            .map_or("?", |(_, name)| name)
    }
}

fn quoted_list(names: impl Iterator<Item = &'static str>) -> String {
    names
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn kind_list() -> String {
    quoted_list(KINDS.iter().map(|(_, name)| *name))
}

fn options_message(kind: Kind) -> String {
    format!(
        "a `{}` step takes {}",
        kind.name(),
        quoted_list(kind.options().iter().map(|option| option.name()))
    )
}

/// A key of a step map.
#[derive(Clone, Copy)]
enum Key {
    Kind(Kind),
    Option(Setting),
}

/// Reads one key of a step map, knowing the step's kind so far, so a wrong key is
/// reported where it is written.
struct KeySeed<'a> {
    kind: Option<Kind>,
    seen: &'a [Setting],
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a step kind ({}) or option", kind_list())
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
        if let Some((kind, name)) = KINDS.iter().find(|(_, name)| *name == key) {
            return match self.kind {
                Some(first) => Err(E::custom(format!(
                    "a step has one kind, but this one has `{}` and `{name}`; split it into two steps",
                    first.name()
                ))),
                None => Ok(Key::Kind(*kind)),
            };
        }
        if let Some((option, name)) = OPTIONS.iter().find(|(_, name)| *name == key) {
            if self.seen.contains(option) {
                return Err(E::custom(format!("`{name}` is given twice in one step")));
            }
            if let Some(kind) = self.kind
                && !kind.options().contains(option)
            {
                return Err(E::custom(format!(
                    "`{name}` is not an option of a `{}` step; {}",
                    kind.name(),
                    options_message(kind)
                )));
            }
            return Ok(Key::Option(*option));
        }
        Err(E::custom(match self.kind {
            None => format!("unknown step kind `{key}`; expected one of {}", kind_list()),
            Some(kind) => format!(
                "unknown option `{key}` of a `{}` step; {}",
                kind.name(),
                options_message(kind)
            ),
        }))
    }
}

/// What a step map held, before it is checked as a whole.
#[derive(Default)]
struct Slots {
    kind: Option<Kind>,
    main: Option<String>,
    plan: Option<Vec<PlanEntryDef>>,
    usage: Option<UsageDef>,
    seen: Vec<Setting>,
    delay_ms: Option<u64>,
    stream: Option<StreamDef>,
    id: Option<String>,
    arguments: Option<Value>,
    result: Option<String>,
    status: Option<StatusDef>,
    prompt: Option<String>,
    steps: Option<StepList>,
}

/// One step, read by hand (see the module docs).
pub(crate) struct StepDef(pub Step);

impl<'de> Deserialize<'de> for StepDef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(StepVisitor)
    }
}

struct StepVisitor;

impl<'de> Visitor<'de> for StepVisitor {
    type Value = StepDef;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a step: a map with one kind key ({}), e.g. `text: Hello`",
            kind_list()
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StepDef, A::Error> {
        let mut slots = Slots::default();
        while let Some(key) = map.next_key_seed(KeySeed {
            kind: slots.kind,
            seen: &slots.seen,
        })? {
            match key {
                Key::Kind(kind) => {
                    slots.kind = Some(kind);
                    match kind {
                        Kind::Plan => slots.plan = Some(map.next_value()?),
                        Kind::Usage => slots.usage = Some(map.next_value()?),
                        _ => slots.main = Some(map.next_value()?),
                    }
                }
                Key::Option(option) => {
                    slots.seen.push(option);
                    match option {
                        Setting::DelayMs => slots.delay_ms = Some(map.next_value()?),
                        Setting::Stream => slots.stream = Some(map.next_value()?),
                        Setting::Id => slots.id = Some(map.next_value()?),
                        Setting::Arguments => slots.arguments = Some(map.next_value()?),
                        Setting::Result => slots.result = Some(map.next_value()?),
                        Setting::Status => slots.status = Some(map.next_value()?),
                        Setting::Prompt => slots.prompt = Some(map.next_value()?),
                        Setting::Steps => slots.steps = Some(map.next_value()?),
                    }
                }
            }
        }
        build_step(slots).map(StepDef).map_err(de::Error::custom)
    }
}

/// Checks a step map as a whole and builds the step.
fn build_step(slots: Slots) -> Result<Step, String> {
    let kind = checked_kind(&slots)?;
    let delay_ms = slots.delay_ms.unwrap_or(0);
    Ok(Step {
        delay_ms,
        kind: step_kind(kind, slots)?,
    })
}

/// The step's kind, once the map is known to have one and only options that kind takes.
fn checked_kind(slots: &Slots) -> Result<Kind, String> {
    let Some(kind) = slots.kind else {
        return Err(format!(
            "a step needs a kind: one of {} (e.g. `text: Hello`)",
            kind_list()
        ));
    };
    if let Some(option) = slots
        .seen
        .iter()
        .find(|option| !kind.options().contains(option))
    {
        return Err(format!(
            "`{}` is not an option of a `{}` step; {}",
            option.name(),
            kind.name(),
            options_message(kind)
        ));
    }
    Ok(kind)
}

/// What a step of `kind` does, built from its main value and options.
fn step_kind(kind: Kind, slots: Slots) -> Result<StepKind, String> {
    let main = slots.main.unwrap_or_default();
    let stream = match slots.stream {
        Some(StreamDef::Words) => Streaming::Words,
        Some(StreamDef::Whole) | None => Streaming::Whole,
    };
    Ok(match kind {
        Kind::Text => StepKind::Text { text: main, stream },
        Kind::Reasoning => StepKind::Reasoning { text: main, stream },
        Kind::ToolCall => StepKind::ToolCall(ScriptedToolCall {
            id: slots.id,
            name: main,
            arguments: slots
                .arguments
                .unwrap_or_else(|| Value::Object(serde_json::Map::new())),
            result: slots.result.unwrap_or_default(),
            status: match slots.status {
                Some(StatusDef::Failed) => ToolOutcome::Failed,
                Some(StatusDef::Completed) | None => ToolOutcome::Completed,
            },
        }),
        Kind::Plan => StepKind::Plan {
            entries: plan_entries(slots.plan.unwrap_or_default()),
        },
        Kind::Subagent => {
            let (Some(prompt), Some(steps)) = (slots.prompt, slots.steps) else {
                return Err(
                    "a `subagent` step needs `prompt` (its task) and `steps` (its answer)".into(),
                );
            };
            StepKind::Subagent(ScriptedSubagent {
                title: main,
                prompt,
                steps: steps.0,
            })
        }
        Kind::Error => StepKind::Error { message: main },
        Kind::Fail => StepKind::Fail { message: main },
        Kind::Usage => StepKind::Usage {
            usage: step_usage(slots.usage),
        },
        Kind::Stop => StepKind::Stop {
            reason: stop_reason_from_name(main.trim()),
        },
    })
}

/// A `plan` step's entries as the turn holds them.
fn plan_entries(entries: Vec<PlanEntryDef>) -> Vec<PlanEntry> {
    entries
        .into_iter()
        .map(|entry| PlanEntry {
            content: entry.content,
            status: match entry.status {
                PlanStatusDef::Pending => PlanStatus::Pending,
                PlanStatusDef::InProgress => PlanStatus::InProgress,
                PlanStatusDef::Completed => PlanStatus::Completed,
            },
        })
        .collect()
}

/// A `usage` step's token counts; a step without them reports zero of each.
fn step_usage(usage: Option<UsageDef>) -> Usage {
    let usage = usage.unwrap_or(UsageDef {
        input_tokens: 0,
        output_tokens: 0,
        cached_input_tokens: 0,
        reasoning_tokens: 0,
    });
    Usage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cached_input_tokens: usage.cached_input_tokens,
        reasoning_tokens: usage.reasoning_tokens,
        ..Usage::default()
    }
}
