//! The agent's process: started in a process group of its own (so it and everything it
//! starts can be stopped together), its stderr drained continuously with the last lines
//! kept for error messages, and its exit watched.
//!
//! When Hearth gives the path of its own binary, the agent runs under Hearth's small
//! supervisor ([`supervise`](crate::supervise)), which stops the whole group when Hearth
//! dies, even by `kill -9`; without it, the group is stopped when Hearth stops it or
//! drops it.

use std::collections::VecDeque;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::error::{Error, Result};

/// Lines of stderr kept for messages.
const STDERR_LINES: usize = 40;
/// Longest stderr line kept, in bytes.
const STDERR_LINE_BYTES: usize = 1024;
/// Lines of stderr quoted in an error message.
const QUOTED_LINES: usize = 8;
/// How long an agent asked to stop (SIGTERM) may take to end before it is killed: time
/// to save what it keeps (Claude Code writes its transcripts in batches and loses the
/// last one, often the last turn, to an immediate SIGKILL).
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(3);
/// How often a stopping group is looked at.
pub(crate) const STOP_POLL: Duration = Duration::from_millis(20);

/// How to start an agent process.
#[derive(Clone, Debug)]
pub(crate) struct Launch {
    /// The agent's program.
    pub command: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Environment added to Hearth's.
    pub env: Vec<(String, String)>,
    /// Hearth's binary, to run the agent under its supervisor.
    pub supervisor: Option<PathBuf>,
    /// The directory the process starts in.
    pub directory: PathBuf,
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ExitReport {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
}

impl fmt::Display for ExitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.signal) {
            (_, Some(signal)) => write!(f, "killed by signal {signal}"),
            // The supervisor reports an agent killed by a signal as 128 + the signal.
            (Some(code), None) if code > 128 && code < 160 => {
                write!(f, "exit status {code}, killed by signal {}", code - 128)
            }
            (Some(code), None) => write!(f, "exit status {code}"),
            (None, None) => f.write_str("unknown exit status"),
        }
    }
}

impl From<std::process::ExitStatus> for ExitReport {
    fn from(status: std::process::ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        Self {
            code: status.code(),
            signal: status.signal(),
        }
    }
}

/// The last lines an agent wrote to stderr.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The last lines, joined, for an error message: `; its last words on stderr: …`.
    pub fn quoted(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let quoted: Vec<&str> = lines
            .iter()
            .rev()
            .take(QUOTED_LINES)
            .rev()
            .map(String::as_str)
            .filter(|line| !line.trim().is_empty())
            .collect();
        if quoted.is_empty() {
            String::new()
        } else {
            format!("; its last lines on stderr:\n  {}", quoted.join("\n  "))
        }
    }
}

/// A running (or ended) agent process. Dropping it stops its process group.
pub(crate) struct AgentProcess {
    agent: String,
    /// The process Hearth started (the agent, or its supervisor); also its group id.
    pid: u32,
    stderr: StderrTail,
    exit: watch::Receiver<Option<ExitReport>>,
    /// Set while Hearth stops the agent: the rest of its group then gets its grace
    /// when the agent ends first.
    stopping: Arc<AtomicBool>,
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
        let mut command = match &launch.supervisor {
            Some(hearth) => {
                let mut command = Command::new(hearth);
                command
                    .arg(crate::supervise::SUBCOMMAND)
                    .arg(std::process::id().to_string())
                    .arg("--")
                    .arg(&launch.command);
                command
            }
            None => Command::new(&launch.command),
        };
        command
            .args(&launch.args)
            .envs(launch.env.iter().map(|(key, value)| (key, value)))
            .current_dir(&launch.directory)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|error| {
            spawn_error(if error.kind() == std::io::ErrorKind::NotFound {
                "no such program".to_owned()
            } else {
                error.to_string()
            })
        })?;
        let pid = child
            .id()
            .ok_or_else(|| spawn_error("it exited at once".to_owned()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(spawn_error("its pipes could not be opened".to_owned()));
        };
        let tail = StderrTail::default();
        let kept = tail.clone();
        let name = agent.to_owned();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            loop {
                line.clear();
                match reader.read_until(b'\n', &mut line).await {
                    Ok(0) => break,
                    Ok(_) => {
                        let text = String::from_utf8_lossy(&line);
                        let text = text.trim_end();
                        tracing::debug!(agent = %name, "stderr: {text}");
                        kept.push(cut(text, STDERR_LINE_BYTES));
                    }
                    Err(error) => {
                        tracing::debug!(agent = %name, %error, "stopped reading stderr");
                        break;
                    }
                }
            }
        });
        let (exited, exit) = watch::channel(None);
        let stopping = Arc::new(AtomicBool::new(false));
        let stopping_seen = Arc::clone(&stopping);
        let name = agent.to_owned();
        tokio::spawn(async move {
            let report = match child.wait().await {
                Ok(status) => ExitReport::from(status),
                Err(error) => {
                    tracing::warn!(agent = %name, %error, "could not wait for the agent process");
                    ExitReport {
                        code: None,
                        signal: None,
                    }
                }
            };
            tracing::debug!(agent = %name, %report, "agent process ended");
            // Whatever the agent left running in its group goes with it (at once, unless
            // Hearth is stopping the group, which ends it after its grace).
            if !stopping_seen.load(Ordering::SeqCst) {
                kill_group(pid);
            }
            exited.send_replace(Some(report));
        });
        Ok((
            Self {
                agent: agent.to_owned(),
                pid,
                stderr: tail,
                exit,
                stopping,
            },
            Pipes { stdin, stdout },
        ))
    }

    /// The process id Hearth started (and its process group).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The stderr tail, quoted for an error message.
    pub fn stderr(&self) -> String {
        self.stderr.quoted()
    }

    /// How it ended, if it has.
    pub fn exit_report(&self) -> Option<ExitReport> {
        *self.exit.borrow()
    }

    /// Waits until it ends.
    pub async fn exited(&self) -> ExitReport {
        let mut exit = self.exit.clone();
        loop {
            if let Some(report) = *exit.borrow_and_update() {
                return report;
            }
            if exit.changed().await.is_err() {
                return ExitReport {
                    code: None,
                    signal: None,
                };
            }
        }
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
        kill_group(self.pid);
    }

    /// Stops the process and everything in its group gracefully: asks them to end
    /// (SIGTERM), gives them [`STOP_GRACE`] to save what they keep, then kills what is
    /// left.
    pub async fn stop(&self) {
        if self.exit_report().is_none() {
            self.stopping.store(true, Ordering::SeqCst);
            signal_group(self.pid, rustix::process::Signal::TERM);
            let deadline = tokio::time::Instant::now() + STOP_GRACE;
            while group_runs(self.pid, None) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(STOP_POLL).await;
            }
        }
        self.kill();
        // SIGKILL is delivered asynchronously: wait (bounded) until the group is gone,
        // so that a stopped agent has no process left when this returns.
        let deadline = tokio::time::Instant::now() + STOP_GRACE;
        while group_runs(self.pid, None) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(STOP_POLL).await;
        }
    }

    /// Resident memory of every process in its group, in KiB.
    pub fn tree_rss_kib(&self) -> u64 {
        group_rss_kib(self.pid)
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        if self.exit_report().is_none() {
            self.kill();
        }
    }
}

/// Sends SIGKILL to a process group; a group that is gone already is fine.
fn kill_group(group: u32) {
    signal_group(group, rustix::process::Signal::KILL);
}

/// Sends a signal to a process group; a group that is gone already is fine.
fn signal_group(group: u32, signal: rustix::process::Signal) {
    let Some(pid) = i32::try_from(group)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    match rustix::process::kill_process_group(pid, signal) {
        Ok(()) => {}
        Err(error) if error == rustix::io::Errno::SRCH => {}
        Err(error) => tracing::warn!(group, %error, "could not signal an agent's process group"),
    }
}

/// The processes of a group that still run (ended ones not reaped yet do not count),
/// but `except`.
pub(crate) fn group_members(group: u32, except: Option<u32>) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(std::result::Result::ok)
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            (Some(pid) != except
                && process_group_of(&entry.path()) == Some(group)
                && !is_zombie(&entry.path()))
            .then_some(pid)
        })
        .collect()
}

/// Whether a process of the group still runs, but `except`.
pub(crate) fn group_runs(group: u32, except: Option<u32>) -> bool {
    !group_members(group, except).is_empty()
}

/// Whether a process has ended and waits to be reaped.
fn is_zombie(process: &Path) -> bool {
    std::fs::read_to_string(process.join("stat"))
        .ok()
        .and_then(|stat| {
            let after_name = stat.get(stat.rfind(')')? + 1..)?.to_owned();
            after_name
                .split_whitespace()
                .next()
                .map(|state| state == "Z")
        })
        .unwrap_or(false)
}

/// Resident memory of the processes of a group, in KiB (read from /proc).
pub(crate) fn group_rss_kib(group: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(std::result::Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.bytes().all(|byte| byte.is_ascii_digit()))
        })
        .filter(|entry| process_group_of(&entry.path()) == Some(group))
        .filter_map(|entry| rss_kib(&entry.path()))
        .sum()
}

/// The process group in `/proc/<pid>/stat` (the third field after the command name).
pub(crate) fn process_group_of(process: &Path) -> Option<u32> {
    let stat = std::fs::read_to_string(process.join("stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(2)?.parse().ok()
}

/// A process's resident memory in KiB.
pub(crate) fn rss_kib(process: &Path) -> Option<u64> {
    let status = std::fs::read_to_string(process.join("status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `text` cut to at most `limit` bytes at a character boundary.
pub(crate) fn cut(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let end = (0..=limit)
        .rev()
        .find(|index| text.is_char_boundary(*index))
        .unwrap_or(0);
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn a_stopped_agent_may_save_its_work_before_it_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let saved = dir.path().join("saved");
        // An agent that saves on SIGTERM, with a child in its group that ignores it.
        let script = format!(
            "trap 'echo saved > {}; exit 0' TERM; (trap '' TERM; sleep 60) & echo ready; wait; wait",
            saved.display()
        );
        let launch = Launch {
            command: "/bin/sh".into(),
            args: vec!["-c".into(), script],
            env: Vec::new(),
            supervisor: None,
            directory: dir.path().to_path_buf(),
        };
        let (process, pipes) = AgentProcess::spawn("saver", &launch).unwrap();
        let mut ready = String::new();
        let mut stdout = BufReader::new(pipes.stdout);
        stdout.read_line(&mut ready).await.unwrap();
        assert_eq!(ready, "ready\n");
        let group = process.pid();
        assert!(group_runs(group, None));
        process.stop().await;
        assert_eq!(std::fs::read_to_string(&saved).unwrap(), "saved\n");
        // The child that ignored SIGTERM was killed once the grace was over.
        assert!(!group_runs(group, None));
    }

    #[test]
    fn exit_reports_read_as_people_say_them() {
        let report = |code, signal| ExitReport { code, signal }.to_string();
        assert_eq!(report(Some(3), None), "exit status 3");
        assert_eq!(report(None, Some(9)), "killed by signal 9");
        assert_eq!(
            report(Some(137), None),
            "exit status 137, killed by signal 9"
        );
        assert_eq!(report(None, None), "unknown exit status");
    }

    #[test]
    fn the_stderr_tail_keeps_the_last_lines() {
        let tail = StderrTail::default();
        assert_eq!(tail.quoted(), "");
        for index in 0..50 {
            tail.push(format!("line {index}"));
        }
        let quoted = tail.quoted();
        assert!(quoted.contains("line 49"), "{quoted}");
        assert!(quoted.contains("line 42"), "{quoted}");
        assert!(!quoted.contains("line 41"), "{quoted}");
        assert_eq!(cut("héllo", 2), "h…");
    }
}
