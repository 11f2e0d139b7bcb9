//! A child run to its end: its input written, its stdout read up to a limit, all within
//! a time limit; a child past either limit is killed with its whole group before the
//! error returns, so nothing it started is left behind.

use std::time::Duration;

use bytes::Bytes;
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::spawn::{ExitReport, Launch, Process, StderrTail, spawn_failure};

/// How long a child may take and how much it may print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLimits {
    /// Wall time before the child is killed.
    pub wall_time: Duration,
    /// Largest stdout read back; a child that writes more is killed.
    pub max_output_bytes: usize,
}

/// A child that ran to its end (successfully or not: see [`exit`](Self::exit)).
#[derive(Debug)]
pub struct Finished {
    /// How it ended.
    pub exit: ExitReport,
    /// All it wrote to stdout.
    pub stdout: Vec<u8>,
    /// The last lines it wrote to stderr.
    pub stderr: StderrTail,
}

/// Why a child run to its end gave no [`Finished`].
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RunError {
    /// It could not be started (`no such program`, or the operating system's error).
    #[error("cannot start it: {0}")]
    Start(String),
    /// It ran past the wall-time limit and was killed with its group.
    #[error("it took longer than {limit:?} and was stopped{stderr}")]
    TimedOut {
        /// The limit.
        limit: Duration,
        /// Its last stderr lines, quoted ([`StderrTail::quoted`]).
        stderr: String,
    },
    /// It wrote more than the output limit and was killed with its group.
    #[error("its output passed the {0}-byte limit and it was stopped")]
    OutputTooLarge(usize),
    /// Its stdout could not be read.
    #[error("its output could not be read: {0}")]
    Read(String),
}

/// How long to wait, once a child ended, for the rest of its stderr (a process it left
/// behind may hold the pipe open).
const STDERR_AFTER_EXIT: Duration = Duration::from_secs(1);

/// Starts `launch`, writes `input` to its stdin (when piped; closed at once without
/// input), and waits for it to end within `limits`.
pub async fn run_to_end(
    launch: &Launch,
    input: Option<Bytes>,
    limits: RunLimits,
) -> Result<Finished, RunError> {
    let (process, pipes) =
        Process::spawn(launch).map_err(|error| RunError::Start(spawn_failure(&error)))?;
    if let (Some(mut stdin), Some(input)) = (pipes.stdin, input) {
        tokio::spawn(async move {
            // A child that died early closed the pipe: its exit says why.
            if let Err(error) = stdin.write_all(&input).await {
                tracing::debug!(%error, "a child did not take all its input");
            }
        });
    }
    let limit = limits.max_output_bytes;
    let mut stdout = Vec::new();
    let mut reader = pipes
        .stdout
        .take(u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1));
    let outcome = tokio::time::timeout(limits.wall_time, async {
        let read = reader.read_to_end(&mut stdout).await;
        // More than the limit: no need to wait for the rest.
        if stdout.len() > limit {
            return (read, None);
        }
        (read, Some(process.exited().await))
    })
    .await;
    let Ok((read, exit)) = outcome else {
        process.kill_and_wait().await;
        // Its stderr closed with its group: the tail holds all it wrote.
        process.stderr().finished(STDERR_AFTER_EXIT).await;
        return Err(RunError::TimedOut {
            limit: limits.wall_time,
            stderr: process.stderr().quoted(),
        });
    };
    let Some(exit) = exit else {
        process.kill_and_wait().await;
        return Err(RunError::OutputTooLarge(limit));
    };
    read.map_err(|error| RunError::Read(error.to_string()))?;
    // Its stderr closes as it ends; what it wrote last is what explains a failure.
    if !process.stderr().finished(STDERR_AFTER_EXIT).await {
        tracing::debug!(child = %process.name(), "its stderr stayed open after it ended");
    }
    Ok(Finished {
        exit,
        stdout,
        stderr: process.stderr().clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group;
    use crate::spawn::Stdin;
    use pretty_assertions::assert_eq;

    const LIMITS: RunLimits = RunLimits {
        wall_time: Duration::from_secs(30),
        max_output_bytes: 1024,
    };

    #[tokio::test]
    async fn a_child_is_run_to_its_end_with_its_input_output_and_stderr() {
        let launch = Launch::new("echoer", "/bin/sh").args([
            "-c",
            "read line; echo \"got $line\"; echo 'a warning' >&2; exit 4",
        ]);
        let finished = run_to_end(&launch, Some(Bytes::from_static(b"hello\n")), LIMITS)
            .await
            .unwrap();
        assert_eq!(finished.exit.code, Some(4));
        assert_eq!(finished.stdout, b"got hello\n");
        assert_eq!(finished.stderr.lines(), ["a warning"]);
    }

    #[tokio::test]
    async fn a_child_past_its_time_is_killed_with_its_group_and_its_stderr_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!(
            "echo $$ > {}; echo 'waiting for an unlock' >&2; sleep 60 & wait",
            pid_file.display()
        );
        let launch = Launch::new("hanger", "/bin/sh")
            .args(["-c", &script])
            .stdin(Stdin::Null);
        let limits = RunLimits {
            wall_time: Duration::from_secs(2),
            ..LIMITS
        };
        let error = run_to_end(&launch, None, limits).await.unwrap_err();
        assert_eq!(
            error,
            RunError::TimedOut {
                limit: limits.wall_time,
                stderr: "; its last lines on stderr:\n  waiting for an unlock".to_owned(),
            }
        );
        let group: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(!group::runs(group, None), "its group still runs");
    }

    #[tokio::test]
    async fn a_child_printing_too_much_is_killed() {
        let launch = Launch::new("talker", "/bin/sh")
            .args(["-c", "while :; do echo yes; done"])
            .stdin(Stdin::Null);
        let error = run_to_end(&launch, None, LIMITS).await.unwrap_err();
        assert_eq!(error, RunError::OutputTooLarge(1024));
    }

    #[tokio::test]
    async fn a_missing_program_is_named_as_such() {
        let launch = Launch::new("nothing", "/nonexistent/program");
        let error = run_to_end(&launch, None, LIMITS).await.unwrap_err();
        assert_eq!(error, RunError::Start("no such program".to_owned()));
    }
}
