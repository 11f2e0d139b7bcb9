//! How the agent behaves: step limit, the user's time zone and clock, subagent depth,
//! titles, and the clock it reads (fixed in tests).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use hearth_config::{ClockFormat, Config};
use hearth_core::OutputLimits;
use hearth_llm::ContextWindows;

/// Model calls per turn before the loop stops, when `[agent] step_limit` is unset.
pub const DEFAULT_STEP_LIMIT: u32 = 25;
/// How deep subagents may nest: a chat the user started is depth 0, a subagent it spawns
/// depth 1, and so on; the `task` tool is offered only below this depth.
pub const DEFAULT_MAX_SUBAGENT_DEPTH: u32 = 2;

/// The user's time zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserTimeZone {
    /// An IANA zone (`Europe/Berlin`).
    Named(Tz),
    /// The system's local time, whose zone name is unknown (only its offset is).
    SystemLocal,
}

/// Whether this process has not yet warned that `name` is no time zone: the configuration
/// is read by several parts of one command, and the user needs to hear it once.
fn first_warning_about(name: &str) -> bool {
    static WARNED: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    match WARNED.lock() {
        Ok(mut warned) => warned.insert(name.to_owned()),
        // A panic elsewhere while holding the lock: warning again is the lesser harm.
        Err(_) => true,
    }
}

impl UserTimeZone {
    /// The zone from `[defaults] time_zone`, else the system's.
    pub fn from_config(config: &Config) -> Self {
        match config.defaults.time_zone.as_deref().map(str::trim) {
            Some(name) if !name.is_empty() => match name.parse::<Tz>() {
                Ok(zone) => Self::Named(zone),
                Err(_) => {
                    if first_warning_about(name) {
                        tracing::warn!(
                            "[defaults] time_zone = \"{name}\" in config.toml is not an IANA time \
                             zone name (like \"Europe/Berlin\"); using the system's time zone"
                        );
                    }
                    Self::system()
                }
            },
            _ => Self::system(),
        }
    }

    /// The system's zone: `TZ`, else `/etc/timezone`, else the target of
    /// `/etc/localtime`; the local offset when none names a zone.
    pub fn system() -> Self {
        let from_env = std::env::var("TZ")
            .ok()
            .and_then(|value| value.trim().trim_start_matches(':').parse::<Tz>().ok());
        let from_file = || {
            std::fs::read_to_string("/etc/timezone")
                .ok()
                .and_then(|text| text.trim().parse::<Tz>().ok())
        };
        let from_link = || {
            std::fs::read_link(Path::new("/etc/localtime"))
                .ok()
                .and_then(|target| {
                    let target = target.to_string_lossy().into_owned();
                    let (_, name) = target.split_once("zoneinfo/")?;
                    name.parse::<Tz>().ok()
                })
        };
        from_env
            .or_else(from_file)
            .or_else(from_link)
            .map_or(Self::SystemLocal, Self::Named)
    }
}

/// Where the agent reads the current time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The system clock.
    System,
    /// Always this instant (tests, reproducible prompts).
    Fixed(DateTime<Utc>),
}

impl Clock {
    /// The current time.
    pub fn now(&self) -> DateTime<Utc> {
        match self {
            Self::System => Utc::now(),
            Self::Fixed(at) => *at,
        }
    }
}

/// The 12/24-hour preference the system's locale suggests (`LC_ALL`, `LC_TIME`, `LANG`):
/// 12 hours for the locales that write times that way, else 24.
pub fn system_clock_format() -> ClockFormat {
    let locale = ["LC_ALL", "LC_TIME", "LANG"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|value| !value.is_empty()))
        .unwrap_or_default();
    let twelve = [
        "en_US", "en_CA", "en_AU", "en_NZ", "en_PH", "en_IN", "es_US",
    ];
    if twelve.iter().any(|prefix| locale.starts_with(prefix)) {
        ClockFormat::Hours12
    } else {
        ClockFormat::Hours24
    }
}

/// How a [`NativeHarness`](crate::NativeHarness) behaves.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentSettings {
    /// Model calls per turn before the loop stops with `StopReason::StepLimit`.
    pub step_limit: u32,
    /// The user's time zone, told to the model each turn.
    pub time_zone: UserTimeZone,
    /// The user's 12/24-hour preference, told to the model each turn.
    pub clock_format: ClockFormat,
    /// How deep subagents may nest (see [`DEFAULT_MAX_SUBAGENT_DEPTH`]).
    pub max_subagent_depth: u32,
    /// Whether a chat gets a generated title after its first turn (one short extra model
    /// call).
    pub generate_titles: bool,
    /// Where the current time comes from.
    pub clock: Clock,
    /// How much of the model's answer and of tool results a turn keeps (in what the
    /// model reads back as well as in what is shown).
    pub output_limits: OutputLimits,
    /// The context windows of the provider's models: earlier turns are summarised before
    /// a request would not fit (see [`ContextWindows::for_model`] for the default).
    pub context_windows: ContextWindows,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            step_limit: DEFAULT_STEP_LIMIT,
            time_zone: UserTimeZone::system(),
            clock_format: system_clock_format(),
            max_subagent_depth: DEFAULT_MAX_SUBAGENT_DEPTH,
            generate_titles: true,
            clock: Clock::System,
            output_limits: OutputLimits::default(),
            context_windows: ContextWindows::default(),
        }
    }
}

impl AgentSettings {
    /// Settings from `config.toml`: `[agent] step_limit`, `[defaults] time_zone` and
    /// `clock`; the system's zone and clock where those are unset.
    pub fn from_config(config: &Config) -> Self {
        Self {
            step_limit: config.agent.step_limit.unwrap_or(DEFAULT_STEP_LIMIT).max(1),
            time_zone: UserTimeZone::from_config(config),
            clock_format: config.defaults.clock.unwrap_or_else(system_clock_format),
            max_subagent_depth: DEFAULT_MAX_SUBAGENT_DEPTH,
            generate_titles: true,
            clock: Clock::System,
            output_limits: OutputLimits::default(),
            context_windows: ContextWindows::default(),
        }
    }

    /// Sets the context windows of the provider's models.
    #[must_use]
    pub fn with_context_windows(mut self, context_windows: ContextWindows) -> Self {
        self.context_windows = context_windows;
        self
    }

    /// Sets the step limit (at least 1).
    #[must_use]
    pub fn with_step_limit(mut self, step_limit: u32) -> Self {
        self.step_limit = step_limit.max(1);
        self
    }

    /// Sets the user's time zone.
    #[must_use]
    pub fn with_time_zone(mut self, time_zone: UserTimeZone) -> Self {
        self.time_zone = time_zone;
        self
    }

    /// Sets the 12/24-hour preference.
    #[must_use]
    pub fn with_clock_format(mut self, clock_format: ClockFormat) -> Self {
        self.clock_format = clock_format;
        self
    }

    /// Sets how deep subagents may nest.
    #[must_use]
    pub fn with_max_subagent_depth(mut self, depth: u32) -> Self {
        self.max_subagent_depth = depth;
        self
    }

    /// Turns title generation on or off.
    #[must_use]
    pub fn with_titles(mut self, generate_titles: bool) -> Self {
        self.generate_titles = generate_titles;
        self
    }

    /// Sets the clock.
    #[must_use]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Sets how much of the model's answer and of tool results a turn keeps.
    #[must_use]
    pub fn with_output_limits(mut self, output_limits: OutputLimits) -> Self {
        self.output_limits = output_limits;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn config_sets_limit_zone_and_clock() {
        let config = Config::parse(
            "[agent]\nstep_limit = 3\n[defaults]\ntime_zone = \"Asia/Tokyo\"\nclock = \"12h\"\n",
            Path::new("config.toml"),
        )
        .unwrap();
        let settings = AgentSettings::from_config(&config);
        assert_eq!(settings.step_limit, 3);
        assert_eq!(settings.time_zone, UserTimeZone::Named(Tz::Asia__Tokyo));
        assert_eq!(settings.clock_format, ClockFormat::Hours12);
        assert_eq!(settings.max_subagent_depth, DEFAULT_MAX_SUBAGENT_DEPTH);
    }

    #[test]
    fn defaults_and_bad_zones_fall_back() {
        let settings = AgentSettings::from_config(&Config::default());
        assert_eq!(settings.step_limit, DEFAULT_STEP_LIMIT);
        assert_eq!(settings.time_zone, UserTimeZone::system());
        let config = Config::parse(
            "[defaults]\ntime_zone = \"Mars/Olympus\"\n",
            Path::new("config.toml"),
        )
        .unwrap();
        assert_eq!(UserTimeZone::from_config(&config), UserTimeZone::system());
        assert_eq!(AgentSettings::default().with_step_limit(0).step_limit, 1);
    }
}
