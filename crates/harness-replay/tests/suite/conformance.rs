//! The harness conformance suite, run against the replay harness through the real host.

use std::sync::Arc;

use hearth_core::{Harness, UserMessage};
use hearth_harness_replay::{ReplayHarness, Scenario};
use hearth_test_support::conformance::ConformanceSubject;

const SCENARIO: &str = r#"
name: conformance
turns:
  - when: slowly
    steps:
      - text: "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20"
        stream: words
        delay_ms: 100
  - steps:
      - reasoning: Short and sweet.
      - text: "A quick answer, streamed word by word."
        stream: words
"#;

pub struct Replay;

impl ConformanceSubject for Replay {
    fn agent(&self) -> Arc<dyn Harness> {
        let scenario = Scenario::from_yaml(SCENARIO, "conformance.yaml").unwrap();
        Arc::new(ReplayHarness::new(scenario).with_delay_scale(1.0))
    }

    fn provider(&self) -> String {
        "replay".into()
    }

    fn quick_prompt(&self) -> UserMessage {
        UserMessage::text("a quick question")
    }

    fn slow_prompt(&self) -> UserMessage {
        UserMessage::text("answer slowly please")
    }
}

hearth_test_support::conformance_suite!(Replay);
