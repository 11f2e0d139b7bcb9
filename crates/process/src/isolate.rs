//! Work on untrusted input in a child of Hearth's own binary, under limits.
//!
//! A parser of a hostile document can overflow its stack or ask for hundreds of
//! gigabytes; either aborts the process it runs in, and neither `catch_unwind` nor a
//! time-out can stop that. So such work runs as a child:
//! `<hearth> __isolated-job <job> <memory bytes> <cpu seconds> [arguments…]`, which
//! limits itself (address space, CPU time, no core files, no files written) before it
//! reads its input from stdin, and writes its output to stdout. The parent bounds the
//! wall time and the output, and turns the child's death into a [`JobError`] naming
//! how it died; the parent itself carries on.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use thiserror::Error;

use crate::env::ChildEnv;
use crate::run::{RunError, RunLimits, run_to_end};
use crate::spawn::{ExitReport, Launch, StderrTail};

/// The hidden subcommand of the `hearth` binary that runs one job.
pub const ISOLATED_JOB_SUBCOMMAND: &str = "__isolated-job";

/// One kind of job: its arguments and input in, its output (or why it failed) out.
pub type JobFn = fn(arguments: &[String], input: Vec<u8>) -> Result<Vec<u8>, String>;

/// Exit status of a job that failed on its own terms (its message is on stdout).
const FAILED: u8 = 3;
/// Exit status of a job that panicked.
const PANICKED: u8 = 4;
/// Exit status of a child started wrongly.
const USAGE: u8 = 2;

/// Bounds on one job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobLimits {
    /// Address space of the child, in bytes (`RLIMIT_AS`).
    pub memory_bytes: u64,
    /// CPU time of the child, in seconds (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Wall time before the child is killed.
    pub wall_time: Duration,
    /// Largest output read back; a child that writes more is killed.
    pub max_output_bytes: usize,
}

/// Default [`JobLimits::memory_bytes`]: 1 GiB.
pub const DEFAULT_JOB_MEMORY_BYTES: u64 = 1024 * 1024 * 1024;

impl Default for JobLimits {
    fn default() -> Self {
        Self {
            memory_bytes: DEFAULT_JOB_MEMORY_BYTES,
            cpu_seconds: 60,
            wall_time: Duration::from_secs(60),
            max_output_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Why a job gave no output.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum JobError {
    /// The child could not be started.
    #[error("cannot start the isolated converter: {0}")]
    Start(String),
    /// The job failed on its own terms.
    #[error("{0}")]
    Failed(String),
    /// The child died: its parser crashed, overflowed its stack, ran out of memory or
    /// CPU time. Nothing outside it was harmed.
    #[error("the converter {how}{stderr}")]
    Crashed {
        /// How it died, in words.
        how: String,
        /// Its last stderr lines, quoted.
        stderr: String,
    },
    /// It ran past the wall-time limit and was killed.
    #[error("took longer than {0:?} and was stopped")]
    TimedOut(Duration),
    /// It wrote more than the output limit and was killed.
    #[error("its output passed the {0}-byte limit and it was stopped")]
    OutputTooLarge(usize),
}

/// Starts jobs as children of one program (Hearth's own binary).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Isolator {
    program: PathBuf,
}

impl Isolator {
    /// Jobs run by `program` (which must dispatch [`ISOLATED_JOB_SUBCOMMAND`] to
    /// [`job_main`]).
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
        }
    }

    /// Jobs run by the binary of this process.
    pub fn current_exe() -> std::io::Result<Self> {
        std::env::current_exe().map(Self::new)
    }

    /// Runs `job` on `input` in a child under `limits`; its output, or why there is none.
    pub async fn run(
        &self,
        job: &str,
        arguments: &[String],
        input: Bytes,
        limits: &JobLimits,
    ) -> Result<Vec<u8>, JobError> {
        let launch = Launch::new(format!("isolated {job}"), &self.program)
            .args([
                ISOLATED_JOB_SUBCOMMAND.to_owned(),
                job.to_owned(),
                limits.memory_bytes.to_string(),
                limits.cpu_seconds.max(1).to_string(),
            ])
            .args(arguments.iter().cloned())
            .env(ChildEnv::minimal());
        let run_limits = RunLimits {
            wall_time: limits.wall_time,
            max_output_bytes: limits.max_output_bytes,
        };
        let finished = match run_to_end(&launch, Some(input), run_limits).await {
            Ok(finished) => finished,
            Err(RunError::Start(reason)) => return Err(JobError::Start(reason)),
            Err(RunError::TimedOut { limit, .. }) => return Err(JobError::TimedOut(limit)),
            Err(RunError::OutputTooLarge(limit)) => return Err(JobError::OutputTooLarge(limit)),
            Err(error @ RunError::Read(_)) => return Err(JobError::Failed(error.to_string())),
        };
        judge(finished.exit, finished.stdout, &finished.stderr, limits)
    }
}

/// The job's output, or its failure, from how the child ended.
fn judge(
    report: ExitReport,
    output: Vec<u8>,
    stderr: &StderrTail,
    limits: &JobLimits,
) -> Result<Vec<u8>, JobError> {
    match (report.code, report.signal) {
        (Some(0), None) => Ok(output),
        (Some(code), None) if code == i32::from(FAILED) => Err(JobError::Failed(
            String::from_utf8_lossy(&output).into_owned(),
        )),
        _ => Err(JobError::Crashed {
            how: death(report, stderr, limits),
            stderr: stderr.quoted(),
        }),
    }
}

/// How a child died, in words (from its signal and the runtime's last message).
fn death(report: ExitReport, stderr: &StderrTail, limits: &JobLimits) -> String {
    let said = |needle: &str| stderr.lines().iter().any(|line| line.contains(needle));
    let mib = limits.memory_bytes / (1024 * 1024);
    if said("overflowed its stack") {
        return "overflowed its stack (the document nests too deep)".to_owned();
    }
    if said("memory allocation of") || said("out of memory") {
        return format!("ran out of memory (it may use {mib} MiB)");
    }
    match (report.code, report.signal) {
        (Some(code), None) if code == i32::from(PANICKED) => {
            "crashed on it (the parser failed)".to_owned()
        }
        (_, Some(6)) => format!("aborted (out of memory past {mib} MiB, or a stack overflow)"),
        (_, Some(11)) => "crashed (a stack overflow or a bad memory access)".to_owned(),
        (_, Some(24)) => format!("used more than {} s of CPU time", limits.cpu_seconds),
        (_, Some(9)) => "was killed".to_owned(),
        _ => format!("ended abnormally ({report})"),
    }
}

/// The child's side: `arguments` are what follows [`ISOLATED_JOB_SUBCOMMAND`]. Limits
/// itself, reads its input, runs the job named, writes the output. Never returns to
/// the caller's main logic: its status is the process's.
#[allow(clippy::print_stderr)]
pub fn job_main(arguments: Vec<OsString>, jobs: &[(&str, JobFn)]) -> ExitCode {
    let arguments: Vec<String> = arguments
        .iter()
        .map(|argument| argument.to_string_lossy().into_owned())
        .collect();
    let (Some(name), Some(memory), Some(cpu)) = (
        arguments.first(),
        arguments.get(1).and_then(|value| value.parse::<u64>().ok()),
        arguments.get(2).and_then(|value| value.parse::<u64>().ok()),
    ) else {
        eprintln!(
            "usage: {ISOLATED_JOB_SUBCOMMAND} <job> <memory bytes> <cpu seconds> [arguments…]"
        );
        return ExitCode::from(USAGE);
    };
    let Some((_, job)) = jobs.iter().find(|(known, _)| known == name) else {
        eprintln!("{ISOLATED_JOB_SUBCOMMAND}: no job `{name}`");
        return ExitCode::from(USAGE);
    };
    if let Err(error) = limit_self(memory, cpu) {
        eprintln!("{ISOLATED_JOB_SUBCOMMAND}: cannot limit itself: {error}");
        return ExitCode::from(USAGE);
    }
    let mut input = Vec::new();
    if let Err(error) = std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut input) {
        eprintln!("{ISOLATED_JOB_SUBCOMMAND}: cannot read its input: {error}");
        return ExitCode::from(USAGE);
    }
    let rest = &arguments[3..];
    let (status, output) = match std::panic::catch_unwind(|| job(rest, input)) {
        Ok(Ok(output)) => (ExitCode::SUCCESS, output),
        Ok(Err(message)) => (ExitCode::from(FAILED), message.into_bytes()),
        Err(_) => (ExitCode::from(PANICKED), Vec::new()),
    };
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = std::io::Write::write_all(&mut stdout, &output)
        .and_then(|()| std::io::Write::flush(&mut stdout))
    {
        eprintln!("{ISOLATED_JOB_SUBCOMMAND}: cannot write its output: {error}");
        return ExitCode::from(USAGE);
    }
    status
}

/// Limits this process: address space, CPU time (a second more as the hard limit, so
/// SIGXCPU comes first), no core files, no files written, few descriptors.
fn limit_self(memory_bytes: u64, cpu_seconds: u64) -> std::io::Result<()> {
    use rustix::process::{Resource, Rlimit, setrlimit};
    let both = |value: u64| Rlimit {
        current: Some(value),
        maximum: Some(value),
    };
    setrlimit(Resource::As, both(memory_bytes))?;
    setrlimit(
        Resource::Cpu,
        Rlimit {
            current: Some(cpu_seconds),
            maximum: Some(cpu_seconds.saturating_add(1)),
        },
    )?;
    setrlimit(Resource::Core, both(0))?;
    setrlimit(Resource::Fsize, both(0))?;
    setrlimit(Resource::Nofile, both(32))?;
    Ok(())
}
