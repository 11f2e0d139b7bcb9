//! Bounds on one conversion, and the output cap.

use std::time::Duration;

/// Bounds on one conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertLimits {
    /// Largest input accepted, in bytes; checked before anything is read.
    pub max_input_bytes: u64,
    /// Largest Markdown returned, in bytes; longer output is cut and marked truncated.
    pub max_output_bytes: usize,
    /// Time allowed for one conversion.
    pub time_limit: Duration,
}

/// Default [`ConvertLimits::max_input_bytes`]: 100 MiB.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 100 * 1024 * 1024;
/// Default [`ConvertLimits::max_output_bytes`]: 8 MiB.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 8 * 1024 * 1024;
/// Default [`ConvertLimits::time_limit`]: one minute.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(60);

impl Default for ConvertLimits {
    fn default() -> Self {
        Self {
            max_input_bytes: DEFAULT_MAX_INPUT_BYTES,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            time_limit: DEFAULT_TIME_LIMIT,
        }
    }
}
