//! The `ReplayHarness`: its constructors and settings, and the table of live chats.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hearth_core::{
    Capabilities, ChatUri, HarnessData, HarnessDescriptor, HarnessError, HarnessId, OutputLimits,
    Turn, now,
};
use hearth_harness::{ChatTable, RunId, SinkCell, TableError};

use crate::conversation::Conversation;
use crate::error::{ReplayError, Result};
use crate::scenario::Scenario;

/// The replay harness's provider id: the first segment of its session URIs.
pub const PROVIDER_ID: &str = "replay";
/// Environment variable with a delay scale for [`ReplayHarness::from_env`] (`0` plays
/// without delays, `1` at scripted speed, `10` ten times slower).
pub const DELAY_SCALE_ENV: &str = "HEARTH_REPLAY_DELAY_SCALE";
/// Environment variable with a scenario file for [`ReplayHarness::from_env`].
pub const SCENARIO_ENV: &str = "HEARTH_REPLAY_SCENARIO";

/// The longest single delay, whatever the scale (keeps absurd scales from overflowing).
const MAX_DELAY: Duration = Duration::from_secs(3600);

/// What a turn starts from.
pub(crate) struct Started {
    /// Turns in the chat's history so far.
    pub turn_count: usize,
    /// The chat's model.
    pub model: Option<String>,
}

/// The replay harness: plays a [`Scenario`] as if a model answered. It is a demo — its
/// descriptor says so — and a deterministic harness for tests and benchmarks.
///
/// ```
/// use hearth_harness_replay::ReplayHarness;
///
/// // The built-in demo, without delays (as tests and benchmarks want it).
/// let agent = ReplayHarness::demo().with_delay_scale(0.0);
/// assert_eq!(agent.scenario().name, "demo");
/// ```
pub struct ReplayHarness {
    pub(crate) descriptor: HarnessDescriptor,
    pub(crate) scenario: Scenario,
    pub(crate) delay_scale: f64,
    pub(crate) output_limits: OutputLimits,
    pub(crate) sink: SinkCell,
    pub(crate) chats: ChatTable<Conversation>,
}

impl std::fmt::Debug for ReplayHarness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayHarness")
            .field("scenario", &self.scenario.name)
            .field("delay_scale", &self.delay_scale)
            .finish_non_exhaustive()
    }
}

/// The replay provider id. `replay` is a valid id (a unit test checks it).
fn provider_id() -> HarnessId {
    HarnessId::parse(PROVIDER_ID)
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

impl ReplayHarness {
    /// A harness that plays `scenario` at scripted speed.
    pub fn new(scenario: Scenario) -> Self {
        let descriptor = HarnessDescriptor {
            id: provider_id(),
            name: "Replay (demo)".into(),
            description: format!(
                "Scripted answers from the replay scenario `{}`, not a model. Configure a model \
                 provider for real answers.",
                scenario.name
            ),
            capabilities: Capabilities::forks_and_side_chats(),
            demo: true,
        };
        Self {
            descriptor,
            scenario,
            delay_scale: 1.0,
            output_limits: OutputLimits::default(),
            sink: SinkCell::new(),
            chats: ChatTable::new(),
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

    /// Sets how much of a played turn its record keeps (what the host keeps of it).
    #[must_use]
    pub fn with_output_limits(mut self, output_limits: OutputLimits) -> Self {
        self.output_limits = output_limits;
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

    /// Records a finished turn in its chat's history and returns the new blob, unless the
    /// chat was disposed, released or replaced while the turn ran.
    pub(crate) fn finish_run(&self, chat: &ChatUri, run: RunId, turn: Turn) -> Option<HarnessData> {
        let encoded = self.chats.finish_run(chat, run, |conversation| {
            conversation.history.push(turn);
            conversation.updated_at = now();
            conversation.encode(chat)
        })?;
        encoded
            .inspect_err(|error| {
                tracing::error!(%chat, %error, "could not record a replay chat's conversation");
            })
            .ok()
    }
}

/// The table's refusal in the replay harness's words.
pub(crate) fn table_error(error: TableError) -> HarnessError {
    match error {
        TableError::NotOpen { chat } => HarnessError::not_found(format!(
            "chat `{chat}` is not open in the replay harness (it was disposed or released, or \
             never created here); materialize it from its stored provider data first"
        )),
        TableError::Busy { .. } => HarnessError::from(error),
    }
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
        let agent = ReplayHarness::demo().with_delay_scale(0.5);
        assert_eq!(agent.scaled(100), Some(Duration::from_millis(50)));
        assert_eq!(agent.scaled(0), None);
        assert_eq!(
            ReplayHarness::demo().with_delay_scale(0.0).scaled(100),
            None
        );
        assert_eq!(
            ReplayHarness::demo().with_delay_scale(-3.0).delay_scale(),
            0.0
        );
        assert_eq!(
            ReplayHarness::demo()
                .with_delay_scale(f64::INFINITY)
                .scaled(1),
            Some(MAX_DELAY)
        );
    }
}
