//! Hearth's own agent loop: the native harness for bring-your-own-key model providers.
//!
//! A [`NativeHarness`] is one Hearth [`Harness`](hearth_core::Harness) per resolved model
//! provider (provider id `openai`, `anthropic`, `ollama` or a `config.toml` id). Each turn
//! it runs the loop — model → tool calls → tool results → model — until the model gives
//! its final answer, the step limit is reached ([`StopReason::StepLimit`]) or the user
//! aborts ([`StopReason::Aborted`], keeping what streamed). Every delta is streamed to the
//! host as a [`Signal`]: text, reasoning, tool calls with their results, staged proposals,
//! usage, retries and errors.
//!
//! Each turn the model is told, in the system prompt, the current date, time and weekday,
//! the user's time zone and 12/24-hour preference ([`AgentSettings`]), the scope's
//! instructions when the session is in a project, and the tools it may call. Tools come
//! from a [`Toolbox`](hearth_core::Toolbox) — the approval gate is behind it, so mutating
//! tools only stage proposals — plus the agent's own `task` tool ([`TASK_TOOL`]), which
//! runs a subagent in a chat of its own (announced to the host with
//! [`HarnessEvent::SpawnChat`](hearth_core::HarnessEvent::SpawnChat) before any of its events)
//! and returns its final answer; subagents nest only to
//! [`AgentSettings::max_subagent_depth`]. Tool arguments are repaired and checked against
//! the tool's schema; arguments that still do not fit are answered with an error the model
//! can act on, and the tool does not run.
//!
//! Chats can be forked at any turn, side chats see a source's context up to a turn without
//! its visible history, the model can be switched per chat, and a chat gets a generated
//! title after its first turn. A chat's conversation (its model messages per turn, hidden
//! context, model, title) is handed to the host as opaque `provider_data` after every
//! turn, so a chat continues with its full history after a restart.
//!
//! A chat longer than the model's context window is compacted: before a request would
//! not fit, its older turns are summarised by the model and the summary is sent instead
//! of them (the turns stay in the chat); a provider's context-length refusal compacts and
//! retries once; `compact` does it on demand. See the `compaction` module for the rules.
//!
//! Owns: the loop, the dynamic context, the `task` tool, each chat's conversation. Does not
//! own: the model clients (`hearth-llm`), the tools and the approval gate (the
//! `Toolbox` it is given), URIs, the chat catalog or persistence (the host).
//!
//! [`StopReason::StepLimit`]: hearth_core::StopReason::StepLimit
//! [`StopReason::Aborted`]: hearth_core::StopReason::Aborted
//! [`Signal`]: hearth_core::Signal

mod agent;
mod compaction;
mod context;
mod conversation;
mod error;
mod fit;
mod harness;
mod on_demand;
mod outcome;
mod permissions;
mod settings;
mod task;
mod title;
mod toolbox;
mod turn;

pub use agent::NativeHarness;
pub use error::{Error, Result};
pub use settings::{
    AgentSettings, Clock, DEFAULT_MAX_SUBAGENT_DEPTH, DEFAULT_STEP_LIMIT, UserTimeZone,
};
pub use task::TASK_TOOL;
pub use toolbox::NoTools;
