//! The agent's process, started through [`hearth_process`]: in a process group of its
//! own (so it and everything it starts can be stopped together), with a minimal
//! environment (Hearth's keys and passwords are not the agent's), its stderr drained
//! continuously with the last lines kept for error messages, and its exit watched.
//!
//! When Hearth gives the path of its own binary, the agent runs under Hearth's small
//! supervisor ([`supervise`](crate::supervise)), which stops the whole group when Hearth
//! dies, even by `kill -9`; without it, the group is stopped when Hearth stops it or
//! drops it.

use std::path::PathBuf;

use hearth_process::{ChildEnv, ExitReport, Process, spawn_failure};
use tokio::process::{ChildStdin, ChildStdout};

use crate::error::{Error, Result};

/// How to start an agent process.
#[derive(Clone, Debug)]
pub(crate) struct Launch {
    /// The agent's program.
    pub command: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment.
    pub env: ChildEnv,
    /// Hearth's binary, to run the agent under its supervisor.
    pub supervisor: Option<PathBuf>,
    /// The directory the process starts in.
    pub directory: PathBuf,
}

/// A running (or ended) agent process. Dropping it stops its process group.
pub(crate) struct AgentProcess {
    agent: String,
    process: Process,
}

/// The agent's protocol pipes.
pub(crate) struct Pipes {
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
}

impl AgentProcess {
    /// Starts the agent.
    pub fn spawn(agent: &str, launch: &Launch) -> Result<(Self, Pipes)> {
        let spawn_error = |reason: String| Error::Spawn {
            agent: agent.to_owned(),
            command: launch.command.display().to_string(),
            reason,
        };
        let started = match &launch.supervisor {
            Some(hearth) => hearth_process::Launch::new(agent, hearth).args([
                crate::supervise::SUBCOMMAND.into(),
                std::process::id().to_string().into(),
                "--".into(),
                launch.command.clone().into_os_string(),
            ]),
            None => hearth_process::Launch::new(agent, &launch.command),
        }
        .args(launch.args.iter().cloned())
        .env(launch.env.clone())
        .directory(&launch.directory);
        let (process, pipes) =
            Process::spawn(&started).map_err(|error| spawn_error(spawn_failure(&error)))?;
        let Some(stdin) = pipes.stdin else {
            return Err(spawn_error("its stdin could not be opened".to_owned()));
        };
        Ok((
            Self {
                agent: agent.to_owned(),
                process,
            },
            Pipes {
                stdin,
                stdout: pipes.stdout,
            },
        ))
    }

    /// The process id Hearth started (and its process group).
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// The stderr tail, quoted for an error message.
    pub fn stderr(&self) -> String {
        self.process.stderr().quoted()
    }

    /// How it ended, if it has.
    pub fn exit_report(&self) -> Option<ExitReport> {
        self.process.exit_report()
    }

    /// Waits until it ends.
    pub async fn exited(&self) -> ExitReport {
        self.process.exited().await
    }

    /// The error for a process that stopped: its exit status and stderr tail.
    pub fn stopped_error(&self) -> Error {
        Error::Exited {
            agent: self.agent.clone(),
            status: self
                .exit_report()
                .map(|report| format!(" ({report})"))
                .unwrap_or_default(),
            stderr: self.stderr(),
        }
    }

    /// Stops the process and everything in its group.
    pub fn kill(&self) {
        self.process.kill();
    }

    /// Stops the process and everything in its group gracefully: asks them to end
    /// (SIGTERM), gives them [`hearth_process::STOP_GRACE`] to save what they keep, then kills what is
    /// left.
    pub async fn stop(&self) {
        self.process.stop().await;
    }

    /// Resident memory of every process in its group, in KiB.
    pub fn tree_rss_kib(&self) -> u64 {
        self.process.tree_rss_kib()
    }
}
