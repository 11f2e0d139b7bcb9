//! Process groups, read and signalled through `/proc` and `kill(2)`: a child started by
//! [`Process`](crate::Process) leads a group of its own, so it and everything it starts
//! can be found, measured and stopped together.

use std::path::Path;

/// Sends SIGKILL to a process group; a group that is gone already is fine.
pub fn kill(group: u32) {
    signal(group, rustix::process::Signal::KILL);
}

/// Sends a signal to a process group; a group that is gone already is fine.
pub fn signal(group: u32, signal: rustix::process::Signal) {
    let Some(pid) = i32::try_from(group)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    match rustix::process::kill_process_group(pid, signal) {
        Ok(()) => {}
        Err(error) if error == rustix::io::Errno::SRCH => {}
        Err(error) => tracing::warn!(group, %error, "could not signal a process group"),
    }
}

/// Sends a signal to each of these processes; those gone already are fine.
pub fn signal_each(processes: &[u32], signal: rustix::process::Signal) {
    for process in processes {
        if let Some(pid) = i32::try_from(*process)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            && let Err(error) = rustix::process::kill_process(pid, signal)
            && error != rustix::io::Errno::SRCH
        {
            tracing::warn!(%error, "could not signal a process of a group");
        }
    }
}

/// The processes of a group that still run (ended ones not reaped yet do not count),
/// but `except`.
pub fn members(group: u32, except: Option<u32>) -> Vec<u32> {
    processes()
        .filter(|(pid, process)| {
            Some(*pid) != except && group_of(process) == Some(group) && !is_zombie(process)
        })
        .map(|(pid, _)| pid)
        .collect()
}

/// Whether a process of the group still runs, but `except`.
pub fn runs(group: u32, except: Option<u32>) -> bool {
    !members(group, except).is_empty()
}

/// Resident memory of the processes of a group, in KiB.
pub fn rss_kib(group: u32) -> u64 {
    processes()
        .filter(|(_, process)| group_of(process) == Some(group))
        .filter_map(|(_, process)| process_rss_kib(&process))
        .sum()
}

/// Every process in `/proc`, by pid, with its directory.
fn processes() -> impl Iterator<Item = (u32, std::path::PathBuf)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(std::result::Result::ok)
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((pid, entry.path()))
        })
}

/// The process group in `/proc/<pid>/stat` (the third field after the command name).
pub fn group_of(process: &Path) -> Option<u32> {
    let stat = std::fs::read_to_string(process.join("stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(2)?.parse().ok()
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

/// A process's resident memory in KiB.
pub fn process_rss_kib(process: &Path) -> Option<u64> {
    let status = std::fs::read_to_string(process.join("status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
