//! Errors of the replay harness: unreadable or invalid scenarios and bad settings.

use std::fmt;
use std::io;
use std::path::PathBuf;

use hearth_core::HarnessError;
use thiserror::Error;

/// Where in a scenario file a problem is (1-based, as editors count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// What went wrong in the replay harness outside a chat operation.
#[derive(Debug, Error)]
pub enum ReplayError {
    /// A scenario file could not be read.
    #[error("cannot read replay scenario {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A scenario is not valid YAML or does not follow the scenario format.
    #[error("{}", located(file, *position, message))]
    Scenario {
        /// The file's name as given (or a label for text that came from elsewhere).
        file: String,
        /// Where, when the parser knows.
        position: Option<Position>,
        /// What is wrong and, where possible, what is expected instead.
        message: String,
    },
    /// A delay scale that is not a finite, non-negative number.
    #[error(
        "{source_name} must be a non-negative number (0 plays without delays, 1 at scripted speed), got `{value}`"
    )]
    DelayScale {
        /// Where the value came from (an environment variable's name).
        source_name: String,
        /// The value given.
        value: String,
    },
}

fn located(file: &str, position: Option<Position>, message: &str) -> String {
    match position {
        Some(position) => format!("{file}:{position}: {message}"),
        None => format!("{file}: {message}"),
    }
}

impl ReplayError {
    /// Where in its file a scenario error is, if known.
    pub fn position(&self) -> Option<Position> {
        match self {
            Self::Scenario { position, .. } => *position,
            Self::Read { .. } | Self::DelayScale { .. } => None,
        }
    }
}

/// Result of the replay harness's own operations.
pub type Result<T, E = ReplayError> = std::result::Result<T, E>;

impl From<ReplayError> for HarnessError {
    fn from(error: ReplayError) -> Self {
        HarnessError::invalid(error.to_string())
    }
}
