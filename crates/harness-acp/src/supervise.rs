//! The supervisor an agent runs under when Hearth starts it through its own binary
//! (`hearth __supervise-agent <hearth pid> -- <agent> <args…>`).
//!
//! The supervisor leads the agent's process group. It asks the kernel to send it
//! SIGTERM when Hearth dies — however Hearth dies, `kill -9` included — and then stops
//! the whole group (asked to end, killed after a short grace), so no agent outlives
//! Hearth. When the agent ends on its own, the supervisor stops whatever the agent left
//! behind in the group the same way, says on stderr how the agent ended, and exits with
//! the agent's code (128 + the signal when one killed it).

use std::ffi::OsString;
use std::process::ExitCode;

use hearth_process::group;
use tokio::signal::unix::{SignalKind, signal};

/// The hidden subcommand of the `hearth` binary that runs the supervisor.
pub const SUBCOMMAND: &str = "__supervise-agent";

/// Runs an agent under supervision until it ends or Hearth dies. `arguments` are what
/// follows the subcommand: Hearth's pid, `--`, the agent's program and its arguments.
#[allow(clippy::print_stderr)]
pub async fn supervise(arguments: Vec<OsString>) -> ExitCode {
    let (parent, program, arguments) = match parse(arguments) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    let Ok(parent) = i32::try_from(parent) else {
        return ExitCode::from(2);
    };
    if let Err(error) =
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM))
    {
        eprintln!("hearth supervisor: cannot follow Hearth's lifetime: {error}");
        return ExitCode::from(2);
    }
    // Hearth may have died before the request above took effect.
    if rustix::process::getppid().map(rustix::process::Pid::as_raw_nonzero)
        != rustix::process::Pid::from_raw(parent).map(rustix::process::Pid::as_raw_nonzero)
    {
        return ExitCode::from(1);
    }
    let (mut terminate, mut interrupt, mut hangup) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) {
        (Ok(terminate), Ok(interrupt), Ok(hangup)) => (terminate, interrupt, hangup),
        _ => {
            eprintln!("hearth supervisor: cannot listen for signals");
            return ExitCode::from(2);
        }
    };
    // The agent inherits stdin, stdout, stderr and the process group.
    let mut child = match tokio::process::Command::new(&program)
        .args(arguments)
        .spawn()
    {
        Ok(child) => child,
        Err(error) => {
            eprintln!(
                "hearth supervisor: cannot start {}: {error}",
                program.to_string_lossy()
            );
            return ExitCode::from(127);
        }
    };
    let status = tokio::select! {
        status = child.wait() => status,
        _ = terminate.recv() => return stop_group(),
        _ = interrupt.recv() => return stop_group(),
        _ = hangup.recv() => return stop_group(),
    };
    stop_others_in_group();
    agent_ended(status)
}

/// How often [`supervise_by_polling`] looks whether Hearth or the agent has ended.
const POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// The supervisor of the small `hearth-supervise` binary: the same duty as
/// [`supervise`] with the standard library only, so its process stays about a megabyte
/// (the whole `hearth` binary costs ten just to start). Instead of asking for a signal
/// when Hearth dies, it looks every [`POLL`] whether its parent is still Hearth; when
/// not, it stops the group. Hearth stops the group itself on a normal stop. `arguments`
/// may start with [`SUBCOMMAND`] (Hearth passes the same arguments to either).
#[allow(clippy::print_stderr)]
pub fn supervise_by_polling(arguments: Vec<OsString>) -> ExitCode {
    let (parent, program, arguments) = match parse(arguments) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    let hearth_runs = || std::os::unix::process::parent_id() == parent;
    if !hearth_runs() {
        return ExitCode::from(1);
    }
    // The agent inherits stdin, stdout, stderr and the process group.
    let mut child = match std::process::Command::new(&program).args(arguments).spawn() {
        Ok(child) => child,
        Err(error) => {
            eprintln!(
                "hearth supervisor: cannot start {}: {error}",
                program.to_string_lossy()
            );
            return ExitCode::from(127);
        }
    };
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                stop_others_in_group();
                return agent_ended(Ok(status));
            }
            Ok(None) => {}
            Err(error) => {
                stop_others_in_group();
                return agent_ended(Err(error));
            }
        }
        if !hearth_runs() {
            return stop_group();
        }
        std::thread::sleep(POLL);
    }
}

/// The supervisor's arguments: Hearth's pid, `--`, the agent's program, its arguments
/// (after [`SUBCOMMAND`], which may come first). `Err` is the exit status of a wrong
/// call, said on stderr.
#[allow(clippy::print_stderr)]
fn parse(arguments: Vec<OsString>) -> Result<(u32, OsString, Vec<OsString>), ExitCode> {
    let mut arguments = arguments.into_iter().peekable();
    if arguments
        .peek()
        .is_some_and(|first| first.as_os_str() == std::ffi::OsStr::new(SUBCOMMAND))
    {
        arguments.next();
    }
    let parent = arguments
        .next()
        .and_then(|pid| pid.to_str().and_then(|pid| pid.parse::<u32>().ok()));
    let separator = arguments.next();
    let program = arguments.next();
    let (Some(parent), Some(program)) = (parent, program) else {
        eprintln!("hearth supervisor: usage: hearth-supervise <hearth pid> -- <program> [args…]");
        return Err(ExitCode::from(2));
    };
    if separator.as_deref() != Some(std::ffi::OsStr::new("--")) {
        eprintln!("hearth supervisor: expected `--` before the agent's program");
        return Err(ExitCode::from(2));
    }
    Ok((parent, program, arguments.collect()))
}

/// Says how the agent ended, as the supervisor's own exit status.
#[allow(clippy::print_stderr)]
fn agent_ended(status: std::io::Result<std::process::ExitStatus>) -> ExitCode {
    match status {
        Ok(status) => {
            use std::os::unix::process::ExitStatusExt;
            if let Some(signal) = status.signal() {
                eprintln!("hearth supervisor: the agent was killed by signal {signal}");
                ExitCode::from(128u8.saturating_add(u8::try_from(signal).unwrap_or(127)))
            } else {
                let code = status.code().unwrap_or(1);
                if code != 0 {
                    eprintln!("hearth supervisor: the agent exited with status {code}");
                }
                ExitCode::from(u8::try_from(code).unwrap_or(1))
            }
        }
        Err(error) => {
            eprintln!("hearth supervisor: lost the agent: {error}");
            ExitCode::from(1)
        }
    }
}

/// Stops the whole group, the supervisor included; the others first get their grace
/// (see [`stop_others_in_group`]).
fn stop_group() -> ExitCode {
    stop_others_in_group();
    let group = rustix::process::getpgrp();
    if let Err(error) = rustix::process::kill_process_group(group, rustix::process::Signal::KILL) {
        tracing::warn!(%error, "could not stop the agent's process group");
    }
    ExitCode::from(143)
}

/// Stops every other process of the supervisor's group (the agent, or what it left
/// behind): asks them to end (SIGTERM), gives them their grace to save what they keep,
/// then kills what is left.
fn stop_others_in_group() {
    let group = u32::try_from(rustix::process::getpgrp().as_raw_nonzero().get()).unwrap_or(0);
    let me = Some(std::process::id());
    let others = group::members(group, me);
    if others.is_empty() {
        return;
    }
    group::signal_each(&others, rustix::process::Signal::TERM);
    let deadline = std::time::Instant::now() + hearth_process::STOP_GRACE;
    while group::runs(group, me) && std::time::Instant::now() < deadline {
        std::thread::sleep(hearth_process::STOP_POLL);
    }
    group::signal_each(&group::members(group, me), rustix::process::Signal::KILL);
}
