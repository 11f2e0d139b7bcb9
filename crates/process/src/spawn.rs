//! Starting a child in a process group of its own, draining its stderr into a bounded
//! tail, watching its exit, and stopping the whole group.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::BufReader;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::env::ChildEnv;
use crate::group;
use crate::lines::{Line, LineReader};

/// Lines of stderr kept for messages.
const STDERR_LINES: usize = 40;
/// Longest stderr line kept, in bytes.
const STDERR_LINE_BYTES: usize = 1024;
/// Lines of stderr quoted in an error message.
const QUOTED_LINES: usize = 8;
/// How long a group asked to stop (SIGTERM) may take to end before it is killed: time
/// to save what it keeps (Claude Code writes its transcripts in batches and loses the
/// last one, often the last turn, to an immediate SIGKILL).
pub const STOP_GRACE: Duration = Duration::from_secs(3);
/// How often a stopping group is looked at.
pub const STOP_POLL: Duration = Duration::from_millis(20);

/// What the child's stdin is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stdin {
    /// A pipe the caller writes (the protocol of an agent or server, a job's input).
    Piped,
    /// Nothing (`/dev/null`).
    Null,
}

/// What happens to the child's stderr.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stderr {
    /// Drained continuously into the [`StderrTail`] (and the debug log).
    Tail,
    /// A pipe the caller reads (a terminal's output).
    Piped,
}

/// What happens to the rest of the group when the child Hearth started ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leftovers {
    /// Killed at once (an agent's or server's helpers have no life without it).
    Kill,
    /// Left running until the group is stopped (a terminal command's background jobs).
    Keep,
}

/// How to start a child.
#[derive(Clone, Debug)]
pub struct Launch {
    /// What it is, for messages and logs (`codex`, `mcp server notes`, `converter`).
    pub name: String,
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Its environment (never Hearth's whole one).
    pub env: ChildEnv,
    /// The directory it starts in (default: Hearth's).
    pub directory: Option<PathBuf>,
    /// Its stdin.
    pub stdin: Stdin,
    /// Its stderr.
    pub stderr: Stderr,
    /// The rest of its group when it ends.
    pub leftovers: Leftovers,
}

impl Launch {
    /// `program` with a minimal environment, stdin and stdout piped, stderr kept in the
    /// tail, leftovers killed.
    pub fn new(name: impl Into<String>, program: impl Into<PathBuf>) -> Self {
        Self {
            name: name.into(),
            program: program.into(),
            args: Vec::new(),
            env: ChildEnv::minimal(),
            directory: None,
            stdin: Stdin::Piped,
            stderr: Stderr::Tail,
            leftovers: Leftovers::Kill,
        }
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets the environment.
    #[must_use]
    pub fn env(mut self, env: ChildEnv) -> Self {
        self.env = env;
        self
    }

    /// Sets the working directory.
    #[must_use]
    pub fn directory(mut self, directory: impl Into<PathBuf>) -> Self {
        self.directory = Some(directory.into());
        self
    }

    /// Sets what stdin is.
    #[must_use]
    pub fn stdin(mut self, stdin: Stdin) -> Self {
        self.stdin = stdin;
        self
    }

    /// Sets what happens to stderr.
    #[must_use]
    pub fn stderr(mut self, stderr: Stderr) -> Self {
        self.stderr = stderr;
        self
    }

    /// Sets what happens to the group when the child ends.
    #[must_use]
    pub fn leftovers(mut self, leftovers: Leftovers) -> Self {
        self.leftovers = leftovers;
        self
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        self.env.apply(&mut command);
        if let Some(directory) = &self.directory {
            command.current_dir(directory);
        }
        command
            .stdin(match self.stdin {
                Stdin::Piped => Stdio::piped(),
                Stdin::Null => Stdio::null(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command
    }
}

/// How a process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitReport {
    /// Its exit code, when it exited.
    pub code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
}

impl ExitReport {
    /// Nothing known (the wait itself failed).
    pub const UNKNOWN: Self = Self {
        code: None,
        signal: None,
    };

    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.code == Some(0) && self.signal.is_none()
    }
}

impl fmt::Display for ExitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.signal) {
            (_, Some(signal)) => write!(f, "killed by signal {signal}"),
            // A supervisor reports a child killed by a signal as 128 + the signal.
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

/// The last lines a child wrote to stderr (at most 40, each cut at 1 KiB).
#[derive(Clone)]
pub struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    /// `true` once the pipe was read to its end.
    ended: watch::Sender<bool>,
}

impl Default for StderrTail {
    fn default() -> Self {
        Self {
            lines: Arc::default(),
            ended: watch::Sender::new(false),
        }
    }
}

impl fmt::Debug for StderrTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("StderrTail")
            .field(&self.lines().len())
            .finish()
    }
}

impl StderrTail {
    /// Keeps one more line (cut at 1 KiB), dropping the oldest past the bound.
    pub fn push(&self, line: &str) {
        self.keep(cut(line, STDERR_LINE_BYTES));
    }

    fn keep(&self, line: String) {
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The lines kept, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// The last non-blank lines (at most 8), for listings.
    pub fn last_lines(&self) -> Vec<String> {
        let lines = self.lines();
        let mut last: Vec<String> = lines
            .into_iter()
            .rev()
            .filter(|line| !line.trim().is_empty())
            .take(QUOTED_LINES)
            .collect();
        last.reverse();
        last
    }

    /// The last lines, for an error message: `; its last lines on stderr:\n  …`, or
    /// nothing when it wrote none.
    pub fn quoted(&self) -> String {
        let last = self.last_lines();
        if last.is_empty() {
            String::new()
        } else {
            format!("; its last lines on stderr:\n  {}", last.join("\n  "))
        }
    }

    /// Reads `stderr` to its end into the tail (and the debug log, under `name`). A line
    /// is read with a cap of 1 KiB: the rest of a longer one is skipped, so a child
    /// writing without newlines costs no memory.
    pub fn drain(&self, name: String, stderr: ChildStderr) {
        let tail = self.clone();
        tokio::spawn(async move {
            let mut reader = LineReader::new(BufReader::new(stderr), STDERR_LINE_BYTES);
            loop {
                let text = match reader.next_line().await {
                    Ok(Some(Line::Whole(line))) => {
                        String::from_utf8_lossy(&line).trim_end().to_owned()
                    }
                    Ok(Some(Line::Overlong(prefix))) => cut_mark(&prefix),
                    Ok(None) => break,
                    Err(error) => {
                        tracing::debug!(child = %name, %error, "stopped reading stderr");
                        break;
                    }
                };
                tracing::debug!(child = %name, "stderr: {text}");
                tail.keep(text);
            }
            tail.ended.send_replace(true);
        });
    }

    /// Waits until the child's stderr was read to its end (it closed it, usually by
    /// ending), at most `limit`; whether it was.
    pub async fn finished(&self, limit: Duration) -> bool {
        let mut ended = self.ended.subscribe();
        tokio::time::timeout(limit, ended.wait_for(|ended| *ended))
            .await
            .is_ok_and(|waited| waited.is_ok())
    }
}

/// The child's pipes the caller uses.
#[derive(Debug)]
pub struct Pipes {
    /// Its stdin, when piped.
    pub stdin: Option<ChildStdin>,
    /// Its stdout.
    pub stdout: ChildStdout,
    /// Its stderr, when the caller reads it.
    pub stderr: Option<ChildStderr>,
}

/// A running (or ended) child leading its own process group. Dropping it kills the
/// group.
pub struct Process {
    name: String,
    /// The child's pid, also its group's id.
    pid: u32,
    stderr: StderrTail,
    exit: watch::Receiver<Option<ExitReport>>,
    /// Set while the group is being stopped: the rest of the group then gets its grace
    /// when the child ends first.
    stopping: Arc<AtomicBool>,
}

impl fmt::Debug for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Process")
            .field("name", &self.name)
            .field("pid", &self.pid)
            .field("exit", &self.exit_report())
            .finish()
    }
}

impl Process {
    /// Starts the child. The error is the operating system's; [`spawn_failure`] says it
    /// in words.
    pub fn spawn(launch: &Launch) -> std::io::Result<(Self, Pipes)> {
        let mut child = launch.command().spawn()?;
        let pid = child
            .id()
            .ok_or_else(|| std::io::Error::other("it exited at once"))?;
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(std::io::Error::other("its pipes could not be opened"));
        };
        let stdin = child.stdin.take();
        let tail = StderrTail::default();
        let stderr = match launch.stderr {
            Stderr::Tail => {
                tail.drain(launch.name.clone(), stderr);
                None
            }
            Stderr::Piped => Some(stderr),
        };
        let (exited, exit) = watch::channel(None);
        let stopping = Arc::new(AtomicBool::new(false));
        let stopping_seen = Arc::clone(&stopping);
        let name = launch.name.clone();
        let leftovers = launch.leftovers;
        tokio::spawn(async move {
            let report = match child.wait().await {
                Ok(status) => ExitReport::from(status),
                Err(error) => {
                    tracing::warn!(child = %name, %error, "could not wait for a child process");
                    ExitReport::UNKNOWN
                }
            };
            tracing::debug!(child = %name, %report, "child process ended");
            // Whatever it left running in its group goes with it (at once, unless the
            // group is being stopped, which ends it after its grace).
            if leftovers == Leftovers::Kill && !stopping_seen.load(Ordering::SeqCst) {
                group::kill(pid);
            }
            exited.send_replace(Some(report));
        });
        Ok((
            Self {
                name: launch.name.clone(),
                pid,
                stderr: tail,
                exit,
                stopping,
            },
            Pipes {
                stdin,
                stdout,
                stderr,
            },
        ))
    }

    /// What it is.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The child's pid (and its process group's id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Its stderr tail (empty when the caller reads stderr itself).
    pub fn stderr(&self) -> &StderrTail {
        &self.stderr
    }

    /// How it ended, if it has.
    pub fn exit_report(&self) -> Option<ExitReport> {
        *self.exit.borrow()
    }

    /// A receiver that holds the exit report once it ended.
    pub fn exit_watch(&self) -> watch::Receiver<Option<ExitReport>> {
        self.exit.clone()
    }

    /// Waits until it ends.
    pub async fn exited(&self) -> ExitReport {
        let mut exit = self.exit.clone();
        loop {
            if let Some(report) = *exit.borrow_and_update() {
                return report;
            }
            if exit.changed().await.is_err() {
                return ExitReport::UNKNOWN;
            }
        }
    }

    /// Kills it and everything in its group at once.
    pub fn kill(&self) {
        group::kill(self.pid);
    }

    /// Stops it and everything in its group gracefully: asks them to end (SIGTERM),
    /// gives them [`STOP_GRACE`] to save what they keep, then kills what is left, and
    /// waits (bounded) until the group is gone.
    pub async fn stop(&self) {
        if self.exit_report().is_none() {
            self.stopping.store(true, Ordering::SeqCst);
            group::signal(self.pid, rustix::process::Signal::TERM);
            let deadline = tokio::time::Instant::now() + STOP_GRACE;
            while group::runs(self.pid, None) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(STOP_POLL).await;
            }
        }
        self.kill_and_wait().await;
    }

    /// Kills it and everything in its group at once, and waits (bounded) until the
    /// group is gone.
    pub async fn kill_and_wait(&self) {
        self.kill();
        // SIGKILL is delivered asynchronously: a killed group has no process left when
        // this returns.
        let deadline = tokio::time::Instant::now() + STOP_GRACE;
        while group::runs(self.pid, None) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(STOP_POLL).await;
        }
    }

    /// Resident memory of every process in its group, in KiB.
    pub fn tree_rss_kib(&self) -> u64 {
        group::rss_kib(self.pid)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.exit_report().is_none() {
            self.kill();
        }
    }
}

/// A failed start in words: `no such program`, or the operating system's error.
pub fn spawn_failure(error: &std::io::Error) -> String {
    if error.kind() == std::io::ErrorKind::NotFound {
        "no such program".to_owned()
    } else {
        error.to_string()
    }
}

/// The first bytes of a line too long to keep, as text: its whole characters, then `…`.
fn cut_mark(prefix: &[u8]) -> String {
    let whole = match std::str::from_utf8(prefix) {
        // A character cut in two at the end is left out.
        Err(error) if error.error_len().is_none() => &prefix[..error.valid_up_to()],
        _ => prefix,
    };
    format!("{}…", String::from_utf8_lossy(whole).trim_end())
}

/// `text` cut to at most `limit` bytes at a character boundary, with `…` when cut.
pub fn cut(text: &str, limit: usize) -> String {
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
    use tokio::io::AsyncBufReadExt;

    #[tokio::test]
    async fn a_stopped_group_may_save_its_work_before_it_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let saved = dir.path().join("saved");
        // A child that saves on SIGTERM, with a child of its own that ignores it.
        let script = format!(
            "trap 'echo saved > {}; exit 0' TERM; (trap '' TERM; sleep 60) & echo ready; wait; wait",
            saved.display()
        );
        let launch = Launch::new("saver", "/bin/sh")
            .args(["-c", &script])
            .directory(dir.path());
        let (process, pipes) = Process::spawn(&launch).unwrap();
        let mut ready = String::new();
        BufReader::new(pipes.stdout)
            .read_line(&mut ready)
            .await
            .unwrap();
        assert_eq!(ready, "ready\n");
        let group = process.pid();
        assert!(group::runs(group, None));
        process.stop().await;
        assert_eq!(std::fs::read_to_string(&saved).unwrap(), "saved\n");
        // The child that ignored SIGTERM was killed once the grace was over.
        assert!(!group::runs(group, None));
    }

    #[tokio::test]
    async fn what_a_child_leaves_running_ends_with_it_and_its_stderr_is_kept() {
        let launch = Launch::new("leaver", "/bin/sh")
            .args([
                "-c",
                "sleep 60 & echo $! ; echo 'cannot import foo' >&2; exit 3",
            ])
            .stdin(Stdin::Null);
        let (process, pipes) = Process::spawn(&launch).unwrap();
        let mut pid = String::new();
        BufReader::new(pipes.stdout)
            .read_line(&mut pid)
            .await
            .unwrap();
        let report = process.exited().await;
        assert_eq!(report.to_string(), "exit status 3");
        // SIGKILL is delivered asynchronously: the group empties soon after, bounded.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while group::runs(process.pid(), None) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the leftover still runs"
            );
            tokio::time::sleep(STOP_POLL).await;
        }
        // The tail fills as stderr is drained; wait for the line, bounded.
        while process.stderr().lines().is_empty() {
            assert!(tokio::time::Instant::now() < deadline, "stderr never read");
            tokio::time::sleep(STOP_POLL).await;
        }
        assert_eq!(
            process.stderr().quoted(),
            "; its last lines on stderr:\n  cannot import foo"
        );
    }

    #[tokio::test]
    async fn a_stderr_line_without_end_is_kept_cut_and_the_next_line_read() {
        // 4 MiB without a newline, then a line.
        let launch = Launch::new("writer", "/bin/sh")
            .args([
                "-c",
                r"head -c 4194304 /dev/zero | tr '\0' x >&2; printf '\nafter\n' >&2",
            ])
            .stdin(Stdin::Null);
        let (process, _pipes) = Process::spawn(&launch).unwrap();
        assert!(
            process.stderr().finished(Duration::from_secs(30)).await,
            "stderr was not read to its end"
        );
        let mut cut_line = "x".repeat(STDERR_LINE_BYTES);
        cut_line.push('…');
        assert_eq!(process.stderr().lines(), [cut_line, "after".to_owned()]);
    }

    #[tokio::test]
    async fn a_child_writing_stderr_without_end_is_quoted_while_it_writes() {
        // The line never ends: its first KiB is kept as soon as it is read, and the rest
        // is read and dropped as it comes.
        let launch = Launch::new("flooder", "/bin/sh")
            .args(["-c", r"echo before >&2; yes x | tr -d '\n' >&2"])
            .stdin(Stdin::Null);
        let (process, _pipes) = Process::spawn(&launch).unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while process.stderr().lines().len() < 2 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the endless line was never kept: {:?}",
                process.stderr().lines()
            );
            tokio::time::sleep(STOP_POLL).await;
        }
        let mut cut_line = "x".repeat(STDERR_LINE_BYTES);
        cut_line.push('…');
        assert_eq!(process.stderr().lines(), ["before".to_owned(), cut_line]);
        assert_eq!(process.exit_report(), None, "the child still writes");
        process.stop().await;
    }

    #[test]
    fn a_cut_stderr_line_keeps_whole_characters_and_is_marked() {
        assert_eq!(cut_mark(b"abc "), "abc…");
        // `é` is two bytes; the prefix ends after the first.
        assert_eq!(cut_mark(&"ab\u{e9}".as_bytes()[..3]), "ab…");
        assert_eq!(cut_mark(b"a\xffb"), "a\u{fffd}b…");
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
            tail.push(&format!("line {index}"));
        }
        let quoted = tail.quoted();
        assert!(quoted.contains("line 49"), "{quoted}");
        assert!(quoted.contains("line 42"), "{quoted}");
        assert!(!quoted.contains("line 41"), "{quoted}");
        assert_eq!(tail.lines().len(), 40);
        assert_eq!(cut("héllo", 2), "h…");
    }
}
