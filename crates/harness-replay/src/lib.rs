//! The replay harness (provider id `replay`): a Hearth [`Harness`](hearth_core::Harness)
//! that plays scripted scenarios instead of calling a model. It serves tests and
//! benchmarks (deterministic, with delays scaled down to nothing) and the offline demo a
//! new user sees when no model provider is configured; its descriptor is marked `demo`.
//!
//! It owns each replay chat's conversation — the visible history (the host's turn ids, the
//! prompts, the answers), a side chat's hidden context, the model — and hands all of it
//! to the host as opaque `provider_data` after every turn, so a chat comes back from the
//! blob alone after a restart or eviction. It owns nothing else: URIs, the catalog and
//! persistence are the host's.
//!
//! # Scenario files
//!
//! A scenario is YAML (the full guide with a complete example is `SCENARIOS.md` beside
//! this crate's manifest):
//!
//! ```yaml
//! name: weather                # required; recorded in every chat's conversation
//! description: A short demo.   # optional
//! turns:
//!   - when: forecast           # optional: plays when the prompt contains this
//!     steps:                   # (case-insensitive); first match wins
//!       - text: Sunny all week.
//!   - steps:                   # turns without `when` play in order, cycling,
//!       - text: Hello there!   # by the chat's number of turns
//!         stream: words
//!         delay_ms: 40
//! ```
//!
//! A step is a map with exactly one **kind** key carrying its main value, plus options:
//!
//! | kind | value | options |
//! |---|---|---|
//! | `text` | answer text (`{{prompt}}` becomes the prompt) | `delay_ms`, `stream: whole \| words` |
//! | `reasoning` | reasoning text | `delay_ms`, `stream` |
//! | `tool_call` | tool name | `arguments` (any YAML), `result` (text), `status: completed \| failed`, `id`, `delay_ms` (how long it runs) |
//! | `plan` | list of `{content, status: pending \| in_progress \| completed}` | `delay_ms` |
//! | `subagent` | title of the spawned chat | `prompt` and `steps` (required), `delay_ms` |
//! | `error` | message of an error part; the turn goes on | `delay_ms` |
//! | `fail` | message; the turn ends and `send` returns a provider error | `delay_ms` |
//! | `usage` | `{input_tokens, output_tokens, cached_input_tokens, reasoning_tokens}`, added to the turn's total | `delay_ms` |
//! | `stop` | `end_turn`, `max_tokens`, `step_limit`, `refusal`, `error`, or any other text (a provider-specific reason) | `delay_ms` |
//!
//! `delay_ms` is waited before the step (before each word with `stream: words`), scaled by
//! [`ReplayHarness::with_delay_scale`]. `fail` and `stop` end the turn, so they must be the
//! last step. A turn whose steps end without either ends with `end_turn`.
//!
//! A `subagent` step shows on the parent as a `task` tool call (arguments `description`
//! and `prompt`), spawns a peer chat (`HarnessEvent::SpawnChat` with
//! `ChatOrigin::Tool { parent_chat, tool_call_id }`), plays its steps there as a turn the
//! harness started (`TurnStarted` … `TurnCompleted`, then `ProviderDataChanged` and
//! `EndChat`), and completes the call with the subagent's answer as its result.
//!
//! A file that is not valid YAML or breaks these rules is refused with its place:
//!
//! ```
//! use hearth_harness_replay::Scenario;
//!
//! let yaml = "name: demo\nturns:\n  - steps:\n      - txt: hi\n";
//! let error = Scenario::from_yaml(yaml, "demo.yaml").unwrap_err();
//! assert!(error
//!     .to_string()
//!     .starts_with("demo.yaml:4:9: unknown step kind `txt`; expected one of `text`"));
//! ```
//!
//! # Using it
//!
//! [`ReplayHarness::demo`] plays the built-in demo ([`DEMO_SCENARIO`]);
//! [`ReplayHarness::new`] a parsed [`Scenario`]; [`ReplayHarness::from_file`] a file;
//! [`ReplayHarness::from_env`] is what the `hearth` binary uses (a file, or
//! `HEARTH_REPLAY_SCENARIO`, or the demo; the delay scale from
//! `HEARTH_REPLAY_DELAY_SCALE`).

mod agent;
mod conversation;
mod error;
mod harness;
mod parse;
mod play;
mod scenario;
mod step_syntax;

pub use agent::{DELAY_SCALE_ENV, PROVIDER_ID, ReplayHarness, SCENARIO_ENV};
pub use error::{Position, ReplayError, Result};
pub use play::SUBAGENT_TOOL;
pub use scenario::{
    DEMO_SCENARIO, Scenario, ScenarioTurn, ScriptedSubagent, ScriptedToolCall, Step, StepKind,
    Streaming, ToolOutcome, stop_reason_from_name,
};
