//! Scenario files: the documented example parses, mistakes name file, line and column.

use hearth_core::{PlanEntry, PlanStatus, StopReason, Usage};
use hearth_harness_replay::{
    DEMO_SCENARIO, Position, ReplayError, ReplayHarness, Scenario, ScenarioTurn, ScriptedSubagent,
    ScriptedToolCall, Step, StepKind, Streaming, ToolOutcome,
};
use pretty_assertions::assert_eq;
use serde_json::json;

/// The error text for a scenario.
fn error_of(yaml: &str) -> String {
    Scenario::from_yaml(yaml, "demo.yaml")
        .expect_err("the scenario should be refused")
        .to_string()
}

fn step(delay_ms: u64, kind: StepKind) -> Step {
    Step { delay_ms, kind }
}

#[test]
fn every_step_kind_parses_into_its_value() {
    let yaml = r#"
name: all
description: Every kind.
turns:
  - when: Hello
    steps:
      - text: Hi
        stream: words
        delay_ms: 5
      - reasoning: Hmm
      - tool_call: search
        id: s1
        arguments: { query: rust, limit: 3 }
        result: found
        status: failed
        delay_ms: 7
      - plan:
          - content: a
          - content: b
            status: in_progress
      - subagent: Helper
        prompt: help
        steps:
          - text: helped
      - error: oops
      - usage: { input_tokens: 3, cached_input_tokens: 1 }
      - stop: max_tokens
  - steps:
      - delay_ms: 9
        fail: down
"#;
    let scenario = Scenario::from_yaml(yaml, "all.yaml").unwrap();
    let expected = Scenario {
        name: "all".into(),
        description: Some("Every kind.".into()),
        turns: vec![
            ScenarioTurn {
                when: Some("Hello".into()),
                steps: vec![
                    step(
                        5,
                        StepKind::Text {
                            text: "Hi".into(),
                            stream: Streaming::Words,
                        },
                    ),
                    step(
                        0,
                        StepKind::Reasoning {
                            text: "Hmm".into(),
                            stream: Streaming::Whole,
                        },
                    ),
                    step(
                        7,
                        StepKind::ToolCall(ScriptedToolCall {
                            id: Some("s1".into()),
                            name: "search".into(),
                            arguments: json!({"query": "rust", "limit": 3}),
                            result: "found".into(),
                            status: ToolOutcome::Failed,
                        }),
                    ),
                    step(
                        0,
                        StepKind::Plan {
                            entries: vec![
                                PlanEntry {
                                    content: "a".into(),
                                    status: PlanStatus::Pending,
                                },
                                PlanEntry {
                                    content: "b".into(),
                                    status: PlanStatus::InProgress,
                                },
                            ],
                        },
                    ),
                    step(
                        0,
                        StepKind::Subagent(ScriptedSubagent {
                            title: "Helper".into(),
                            prompt: "help".into(),
                            steps: vec![step(
                                0,
                                StepKind::Text {
                                    text: "helped".into(),
                                    stream: Streaming::Whole,
                                },
                            )],
                        }),
                    ),
                    step(
                        0,
                        StepKind::Error {
                            message: "oops".into(),
                        },
                    ),
                    step(
                        0,
                        StepKind::Usage {
                            usage: Usage {
                                input_tokens: 3,
                                cached_input_tokens: 1,
                                ..Usage::default()
                            },
                        },
                    ),
                    step(
                        0,
                        StepKind::Stop {
                            reason: StopReason::MaxTokens,
                        },
                    ),
                ],
            },
            ScenarioTurn {
                when: None,
                steps: vec![step(
                    9,
                    StepKind::Fail {
                        message: "down".into(),
                    },
                )],
            },
        ],
    };
    assert_eq!(scenario, expected);
}

#[test]
fn an_unknown_step_kind_names_file_line_and_column() {
    let yaml = "\
name: demo
turns:
  - steps:
      - text: fine
  - steps:
      - txt: hi
";
    assert_eq!(
        error_of(yaml),
        "demo.yaml:6:9: unknown step kind `txt`; expected one of `text`, `reasoning`, \
         `tool_call`, `plan`, `subagent`, `error`, `fail`, `usage`, `stop`"
    );
    let error = Scenario::from_yaml(yaml, "demo.yaml").unwrap_err();
    assert_eq!(error.position(), Some(Position { line: 6, column: 9 }));
}

#[test]
fn step_mistakes_are_reported_where_they_are_written() {
    let cases = [
        (
            "name: x\nturns:\n  - steps:\n      - tool_call: t\n        stream: words\n",
            "demo.yaml:5:9: `stream` is not an option of a `tool_call` step; a `tool_call` step \
             takes `delay_ms`, `id`, `arguments`, `result`, `status`",
        ),
        (
            "name: x\nturns:\n  - steps:\n      - text: a\n        dealy_ms: 5\n",
            "demo.yaml:5:9: unknown option `dealy_ms` of a `text` step; a `text` step takes \
             `delay_ms`, `stream`",
        ),
        (
            "name: x\nturns:\n  - steps:\n      - text: a\n        reasoning: b\n",
            "demo.yaml:5:9: a step has one kind, but this one has `text` and `reasoning`; split \
             it into two steps",
        ),
        (
            "name: x\nturns:\n  - steps:\n      - text: a\n        delay_ms: 1\n        delay_ms: 2\n",
            "demo.yaml:6:9: `delay_ms` is given twice in one step",
        ),
        (
            "name: x\nturns:\n  - steps:\n      - delay_ms: 5\n",
            "demo.yaml:4:9: a step needs a kind: one of `text`, `reasoning`, `tool_call`, \
             `plan`, `subagent`, `error`, `fail`, `usage`, `stop` (e.g. `text: Hello`)",
        ),
        (
            "name: x\nturns:\n  - steps:\n      - prompt: p\n        text: a\n",
            "demo.yaml:4:9: `prompt` is not an option of a `text` step; a `text` step takes \
             `delay_ms`, `stream`",
        ),
        (
            "name: x\nturns:\n  - steps:\n      - subagent: s\n        prompt: p\n",
            "demo.yaml:4:9: a `subagent` step needs `prompt` (its task) and `steps` (its answer)",
        ),
        (
            "name: x\nturns:\n  - steps:\n      - stop: end_turn\n      - text: late\n",
            "demo.yaml:5:9: this step would never play: the `stop` step before it ends the turn, \
             so it must be the turn's last step",
        ),
        (
            "name: x\nturns:\n  - steps:\n      - text: a\n        delay_ms: soon\n",
            "demo.yaml:5:19: invalid type: string \"soon\", expected u64",
        ),
        (
            "name: x\nturns:\n  - steps:\n      - tool_call: t\n        status: done\n",
            "demo.yaml:5:17: unknown variant `done`, expected `completed` or `failed`",
        ),
        (
            "name: x\nturns:\n  - steps:\n      - hello\n",
            "demo.yaml:4:9: invalid type: string \"hello\", expected a step: a map with one kind \
             key (`text`, `reasoning`, `tool_call`, `plan`, `subagent`, `error`, `fail`, \
             `usage`, `stop`), e.g. `text: Hello`",
        ),
    ];
    for (yaml, expected) in cases {
        assert_eq!(error_of(yaml), expected, "for:\n{yaml}");
    }
}

#[test]
fn scenario_mistakes_are_reported_too() {
    assert_eq!(
        error_of("name: x\nturn: []\n"),
        "demo.yaml:2:1: unknown field `turn`, expected one of `name`, `description`, `turns`"
    );
    assert!(
        error_of("turns:\n  - steps: []\n").contains("missing field `name`"),
        "{}",
        error_of("turns:\n  - steps: []\n")
    );
    assert!(error_of("name: x\nturns: []\n").contains("at least one turn"));
    assert!(error_of("name: x\nturns:\n  - when: a\n").contains("missing field `steps`"));
}

#[test]
fn yaml_syntax_errors_name_the_line() {
    let yaml = "name: x\nturns:\n  - steps:\n      - text: \"unclosed\n";
    let error = Scenario::from_yaml(yaml, "broken.yaml").unwrap_err();
    assert_eq!(
        error.to_string(),
        "broken.yaml:5:1: found unexpected end of stream, while scanning a quoted scalar at 4:15"
    );
    assert_eq!(error.position(), Some(Position { line: 5, column: 1 }));

    let tabs = "name: x\nturns:\n\t- steps: []\n";
    let message = error_of(tabs);
    assert!(message.starts_with("demo.yaml:3:"), "{message}");
}

#[test]
fn files_are_named_in_errors() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("demo.yaml");
    std::fs::write(&path, "name: x\nturns:\n  - steps:\n      - txt: hi\n").unwrap();
    let message = Scenario::from_file(&path).unwrap_err().to_string();
    assert!(
        message.starts_with(&format!("{}:4:9: unknown step kind `txt`", path.display())),
        "{message}"
    );
    assert!(ReplayHarness::from_file(&path).is_err());

    let missing = directory.path().join("missing.yaml");
    let error = ReplayHarness::from_file(&missing).unwrap_err();
    assert!(matches!(error, ReplayError::Read { .. }));
    assert!(
        error.to_string().contains(&missing.display().to_string()),
        "{error}"
    );

    std::fs::write(&path, "name: x\nturns:\n  - steps:\n      - text: hi\n").unwrap();
    let agent = ReplayHarness::from_env(Some(&path)).unwrap();
    assert_eq!(agent.scenario().name, "x");
}

#[test]
fn the_documented_example_and_the_demo_parse() {
    let guide = include_str!("../../SCENARIOS.md");
    let start = guide.find("```yaml\n").expect("a yaml example") + "```yaml\n".len();
    let end = start + guide[start..].find("```").expect("the example's end");
    let example = Scenario::from_yaml(&guide[start..end], "SCENARIOS.md").unwrap();
    assert_eq!(example.name, "trip-planner");
    let kinds: std::collections::BTreeSet<&str> = example
        .turns
        .iter()
        .flat_map(|turn| &turn.steps)
        .map(|step| step.kind.name())
        .collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        vec![
            "error",
            "fail",
            "plan",
            "reasoning",
            "stop",
            "subagent",
            "text",
            "tool_call",
            "usage"
        ],
        "the example should show every step kind"
    );
    let demo = Scenario::from_yaml(DEMO_SCENARIO, "demo.yaml").unwrap();
    assert_eq!(demo, Scenario::demo());
    assert_eq!(ReplayHarness::demo().scenario(), &demo);
}
