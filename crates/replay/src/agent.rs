//! The `ReplayAgent`: its constructors and settings, and the table of live chats.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Duration;

use hearth_core::{
    AgentDescriptor, AgentError, AgentErrorKind, Capabilities, ChatUri, EventSink, MultipleChats,
    ProviderData, ProviderId, Turn, TurnId, now,
};
use tokio_util::sync::CancellationToken;

use crate::backing::Backing;
use crate::error::{ReplayError, Result};
use crate::scenario::Scenario;

/// The replay harness's provider id: the first segment of its session URIs.
pub const PROVIDER_ID: &str = "replay";
/// Environment variable with a delay scale for [`ReplayAgent::from_env`] (`0` plays
/// without delays, `1` at scripted speed, `10` ten times slower).
pub const DELAY_SCALE_ENV: &str = "HEARTH_REPLAY_DELAY_SCALE";
/// Environment variable with a scenario file for [`ReplayAgent::from_env`].
pub const SCENARIO_ENV: &str = "HEARTH_REPLAY_SCENARIO";

/// The longest single delay, whatever the scale (keeps absurd scales from overflowing).
const MAX_DELAY: Duration = Duration::from_secs(3600);

/// A turn running in a chat.
pub(crate) struct Run {
    /// Tells a finishing turn whether its chat is still the one it started in.
    pub id: u64,
    /// The running turn.
    pub turn_id: TurnId,
    /// Cancelled by `abort`, `dispose_chat` and `release_chat`.
    pub cancel: CancellationToken,
}

/// What a turn starts from.
pub(crate) struct Started {
    /// The run's id, for [`ReplayAgent::finish_run`].
    pub run: u64,
    /// Turns in the chat's history so far.
    pub turn_count: usize,
    /// The chat's model.
    pub model: Option<String>,
}

/// A live chat.
pub(crate) struct ChatEntry {
    pub backing: Backing,
    pub run: Option<Run>,
}

/// The replay harness: plays a [`Scenario`] as if a model answered. It is a demo — its
/// descriptor says so — and a deterministic harness for tests and benchmarks.
///
/// ```
/// use hearth_replay::ReplayAgent;
///
/// // The built-in demo, without delays (as tests and benchmarks want it).
/// let agent = ReplayAgent::demo().with_delay_scale(0.0);
/// assert_eq!(agent.scenario().name, "demo");
/// ```
pub struct ReplayAgent {
    pub(crate) descriptor: AgentDescriptor,
    pub(crate) scenario: Scenario,
    pub(crate) delay_scale: f64,
    pub(crate) sink: RwLock<EventSink>,
    pub(crate) chats: Mutex<HashMap<ChatUri, ChatEntry>>,
    runs: AtomicU64,
}

impl std::fmt::Debug for ReplayAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayAgent")
            .field("scenario", &self.scenario.name)
            .field("delay_scale", &self.delay_scale)
            .finish_non_exhaustive()
    }
}

/// The replay provider id. `replay` is a valid id (a unit test checks it).
fn provider_id() -> ProviderId {
    ProviderId::parse(PROVIDER_ID)
        .unwrap_or_else(|error| unreachable!("`{PROVIDER_ID}` is a valid provider id: {error}"))
}

/// Parses a delay scale: a finite, non-negative number.
pub(crate) fn parse_delay_scale(source_name: &str, text: &str) -> Result<f64> {
    match text.trim().parse::<f64>() {
        Ok(scale) if scale.is_finite() && scale >= 0.0 => Ok(scale),
        _ => Err(ReplayError::DelayScale {
            source_name: source_name.to_owned(),
            value: text.to_owned(),
        }),
    }
}

impl ReplayAgent {
    /// A harness that plays `scenario` at scripted speed.
    pub fn new(scenario: Scenario) -> Self {
        let descriptor = AgentDescriptor {
            id: provider_id(),
            name: "Replay (demo)".into(),
            description: format!(
                "Scripted answers from the replay scenario `{}`, not a model. Configure a model \
                 provider for real answers.",
                scenario.name
            ),
            capabilities: Capabilities {
                multiple_chats: Some(MultipleChats {
                    fork: true,
                    side_chat: true,
                }),
                multiple_working_directories: None,
            },
            demo: true,
        };
        Self {
            descriptor,
            scenario,
            delay_scale: 1.0,
            sink: RwLock::new(EventSink::discard()),
            chats: Mutex::new(HashMap::new()),
            runs: AtomicU64::new(0),
        }
    }

    /// The built-in demo scenario (`demo.yaml`), shown when no model provider is set up.
    pub fn demo() -> Self {
        Self::new(Scenario::demo())
    }

    /// A harness that plays the scenario in a YAML file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        Scenario::from_file(path).map(Self::new)
    }

    /// The harness as the `hearth` binary sets it up: the scenario file given, else the
    /// one named by `HEARTH_REPLAY_SCENARIO`, else the demo; the delay scale from
    /// `HEARTH_REPLAY_DELAY_SCALE` when set.
    pub fn from_env(scenario: Option<&Path>) -> Result<Self> {
        let path = scenario.map(Path::to_path_buf).or_else(|| {
            std::env::var_os(SCENARIO_ENV)
                .filter(|value| !value.is_empty())
                .map(PathBuf::from)
        });
        let agent = match path {
            Some(path) => Self::from_file(path)?,
            None => Self::demo(),
        };
        let scale = match std::env::var(DELAY_SCALE_ENV) {
            Ok(value) if !value.trim().is_empty() => parse_delay_scale(DELAY_SCALE_ENV, &value)?,
            Ok(_) | Err(std::env::VarError::NotPresent) => 1.0,
            Err(std::env::VarError::NotUnicode(value)) => {
                return Err(ReplayError::DelayScale {
                    source_name: DELAY_SCALE_ENV.to_owned(),
                    value: value.to_string_lossy().into_owned(),
                });
            }
        };
        Ok(agent.with_delay_scale(scale))
    }

    /// Scales every scripted delay: `0.0` plays without waiting (tests, benchmarks),
    /// `1.0` at scripted speed, `2.0` twice as slow. Negative or non-numbers mean `0.0`.
    #[must_use]
    pub fn with_delay_scale(mut self, scale: f64) -> Self {
        self.delay_scale = if scale.is_nan() || scale < 0.0 {
            tracing::warn!(
                scale,
                "a delay scale must be non-negative; playing without delays"
            );
            0.0
        } else {
            scale
        };
        self
    }

    /// The scenario it plays.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The delay scale.
    pub fn delay_scale(&self) -> f64 {
        self.delay_scale
    }

    /// A scripted delay, scaled; `None` when there is nothing to wait for.
    pub(crate) fn scaled(&self, delay_ms: u64) -> Option<Duration> {
        if delay_ms == 0 || self.delay_scale <= 0.0 {
            return None;
        }
        let seconds = delay_ms as f64 / 1000.0 * self.delay_scale;
        Some(Duration::try_from_secs_f64(seconds).map_or(MAX_DELAY, |delay| delay.min(MAX_DELAY)))
    }

    pub(crate) fn sink(&self) -> EventSink {
        self.sink
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, HashMap<ChatUri, ChatEntry>> {
        self.chats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn next_run(&self) -> u64 {
        self.runs.fetch_add(1, Ordering::Relaxed)
    }

    /// Marks a chat as running a turn; a chat that already runs one is busy.
    pub(crate) fn start_run(
        &self,
        chat: &ChatUri,
        turn_id: &TurnId,
        cancel: &CancellationToken,
    ) -> hearth_core::AgentResult<Started> {
        let id = self.next_run();
        let mut chats = self.lock();
        let entry = chats.get_mut(chat).ok_or_else(|| not_open(chat))?;
        if let Some(run) = &entry.run {
            return Err(AgentError::new(
                AgentErrorKind::Busy,
                format!(
                    "chat `{chat}` is already running turn `{}`; wait for it to finish or abort it",
                    run.turn_id
                ),
            ));
        }
        entry.run = Some(Run {
            id,
            turn_id: turn_id.clone(),
            cancel: cancel.clone(),
        });
        Ok(Started {
            run: id,
            turn_count: entry.backing.history.len(),
            model: entry.backing.model.clone(),
        })
    }

    /// Adds a chat the harness spawned, already running its first turn.
    pub(crate) fn add_running(
        &self,
        chat: &ChatUri,
        backing: Backing,
        turn_id: &TurnId,
        cancel: &CancellationToken,
    ) -> u64 {
        let id = self.next_run();
        let run = Run {
            id,
            turn_id: turn_id.clone(),
            cancel: cancel.clone(),
        };
        self.lock().insert(
            chat.clone(),
            ChatEntry {
                backing,
                run: Some(run),
            },
        );
        id
    }

    /// Records a finished turn in its chat's history and returns the new blob, unless the
    /// chat was disposed, released or replaced while the turn ran.
    pub(crate) fn finish_run(&self, chat: &ChatUri, run: u64, turn: Turn) -> Option<ProviderData> {
        let mut chats = self.lock();
        let entry = chats
            .get_mut(chat)
            .filter(|entry| entry.run.as_ref().is_some_and(|current| current.id == run))?;
        entry.run = None;
        entry.backing.history.push(turn);
        entry.backing.updated_at = now();
        match entry.backing.encode(chat) {
            Ok(data) => Some(data),
            Err(error) => {
                tracing::error!(%chat, %error, "could not record a replay chat's backing");
                None
            }
        }
    }
}

/// The error for a chat the harness does not hold.
pub(crate) fn not_open(chat: &ChatUri) -> AgentError {
    AgentError::not_found(format!(
        "chat `{chat}` is not open in the replay harness (it was disposed or released, or never \
         created here); materialize it from its stored provider data first"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_provider_id_is_valid() {
        assert_eq!(provider_id().as_str(), "replay");
    }

    #[test]
    fn delay_scales_parse_and_scale() {
        assert_eq!(parse_delay_scale("X", "0").unwrap(), 0.0);
        assert_eq!(parse_delay_scale("X", " 2.5 ").unwrap(), 2.5);
        for bad in ["-1", "fast", "NaN", "inf", ""] {
            let error = parse_delay_scale("HEARTH_REPLAY_DELAY_SCALE", bad).unwrap_err();
            assert!(
                error
                    .to_string()
                    .starts_with("HEARTH_REPLAY_DELAY_SCALE must be"),
                "{error}"
            );
        }
        let agent = ReplayAgent::demo().with_delay_scale(0.5);
        assert_eq!(agent.scaled(100), Some(Duration::from_millis(50)));
        assert_eq!(agent.scaled(0), None);
        assert_eq!(ReplayAgent::demo().with_delay_scale(0.0).scaled(100), None);
        assert_eq!(
            ReplayAgent::demo().with_delay_scale(-3.0).delay_scale(),
            0.0
        );
        assert_eq!(
            ReplayAgent::demo()
                .with_delay_scale(f64::INFINITY)
                .scaled(1),
            Some(MAX_DELAY)
        );
    }
}
