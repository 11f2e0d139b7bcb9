//! Bounds on one conversion, the output cap, and where conversion runs.

use std::time::Duration;

use hearth_process::Isolator;

/// Where conversions run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Isolation {
    /// On a blocking thread of this process, under `catch_unwind` and the time limit.
    /// A stack overflow or a failed allocation in a parser ends the whole process, so
    /// this is for tests and benchmarks of the converters only: Hearth's commands and
    /// server convert in a child process.
    #[default]
    InProcess,
    /// In a child of Hearth's binary, limited in address space, CPU and wall time and
    /// output: whatever a hostile document does ends that child, and the conversion
    /// fails saying how.
    Child {
        /// Starts the children.
        isolator: Isolator,
        /// The child's address space, in bytes.
        memory_bytes: u64,
    },
}

impl Isolation {
    /// Conversions in children of `isolator` with the default memory limit (1 GiB).
    pub fn child(isolator: Isolator) -> Self {
        Self::Child {
            isolator,
            memory_bytes: hearth_process::DEFAULT_JOB_MEMORY_BYTES,
        }
    }
}

/// Bounds on one conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertLimits {
    /// Largest input accepted, in bytes; checked before anything is read.
    pub max_input_bytes: u64,
    /// Largest Markdown returned, in bytes; longer output is cut and marked truncated.
    pub max_output_bytes: usize,
    /// Time allowed for one conversion.
    pub time_limit: Duration,
    /// Where it runs.
    pub isolation: Isolation,
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
            isolation: Isolation::InProcess,
        }
    }
}
