//! Child processes of tests, waited for with a bound: a child that hangs is killed and
//! fails the test with what it wrote, instead of hanging the test until the runner's
//! own timeout kills it without a word.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a child process of a test may run before the test fails. Generous: a
/// process that starts, opens a database and answers a turn takes a second or two even
/// on a machine busy with other builds.
pub const PROCESS_WAIT: Duration = Duration::from_secs(60);

/// How often a child is checked for having ended.
const POLL: Duration = Duration::from_millis(5);

/// [`Command::output`] with a bound.
pub trait BoundedCommand {
    /// Runs the command to its end like [`Command::output`] (stdin closed, stdout and
    /// stderr captured). A child still running after `limit` is killed and the test
    /// fails, naming the command and showing what it wrote.
    fn output_within(&mut self, limit: Duration) -> Output;
}

impl BoundedCommand for Command {
    fn output_within(&mut self, limit: Duration) -> Output {
        let what = format!("{self:?}");
        let child = self
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("could not start {what}: {error}"));
        collect(child, limit, &what)
    }
}

/// [`Child::wait`] and [`Child::wait_with_output`] with a bound.
pub trait BoundedChild {
    /// Waits for the child to end like [`Child::wait`] (closing its stdin first). A
    /// child still running after `limit` is killed and the test fails, showing its
    /// stderr when that is piped and not taken.
    fn wait_within(&mut self, limit: Duration) -> ExitStatus;

    /// Waits for the child to end and collects its piped stdout and stderr like
    /// [`Child::wait_with_output`]. A child still running after `limit` is killed and
    /// the test fails, showing what it wrote.
    fn wait_with_output_within(self, limit: Duration) -> Output;
}

impl BoundedChild for Child {
    fn wait_within(&mut self, limit: Duration) -> ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + limit;
        let what = format!("child process {}", self.id());
        loop {
            match self.try_wait() {
                Ok(Some(status)) => return status,
                Ok(None) => {}
                Err(error) => panic!("waiting for {what}: {error}"),
            }
            if Instant::now() >= deadline {
                // Stderr is read only now, and only when the test left it here: until
                // then the child may write into a pipe nobody reads.
                let stderr = self.stderr.take().map(Capture::start);
                kill(self, &what);
                let wrote = stderr.map_or_else(
                    || "(not piped, or taken by the test)".to_owned(),
                    |capture| text(&capture.finish(Instant::now() + Duration::from_secs(5))),
                );
                panic!("{what} did not end within {limit:?}; it was killed. Its stderr:\n{wrote}");
            }
            std::thread::sleep(POLL);
        }
    }

    fn wait_with_output_within(mut self, limit: Duration) -> Output {
        drop(self.stdin.take());
        let what = format!("child process {}", self.id());
        collect(self, limit, &what)
    }
}

/// Waits for `child` and its output pipes, at most `limit` in all.
fn collect(mut child: Child, limit: Duration, what: &str) -> Output {
    let deadline = Instant::now() + limit;
    let stdout = child.stdout.take().map(Capture::start);
    let stderr = child.stderr.take().map(Capture::start);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(error) => panic!("waiting for {what}: {error}"),
        }
        if Instant::now() >= deadline {
            kill(&mut child, what);
            let grace = Instant::now() + Duration::from_secs(5);
            panic!(
                "{what} did not end within {limit:?}; it was killed.\nstdout:\n{}\nstderr:\n{}",
                stdout.map_or_else(String::new, |capture| text(&capture.finish(grace))),
                stderr.map_or_else(String::new, |capture| text(&capture.finish(grace))),
            );
        }
        std::thread::sleep(POLL);
    };
    // The child has ended; a process it left behind may still hold its pipes open.
    let closed = |capture: Option<Capture>, name: &str| {
        capture.map_or_else(Vec::new, |capture| {
            capture.finish_by(deadline).unwrap_or_else(|partial| {
                panic!(
                    "{what} ended ({status}), but its {name} stayed open past {limit:?} \
                     (a process it started still holds it). It wrote:\n{}",
                    text(&partial)
                )
            })
        })
    };
    let stdout = closed(stdout, "stdout");
    let stderr = closed(stderr, "stderr");
    Output {
        status,
        stdout,
        stderr,
    }
}

fn kill(child: &mut Child, what: &str) {
    if let Err(error) = child.kill() {
        panic!("could not kill {what}: {error}");
    }
    if let Err(error) = child.wait() {
        panic!("waiting for {what} after killing it: {error}");
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A pipe read to its end on a thread of its own, readable so far at any time.
struct Capture {
    bytes: Arc<Mutex<Vec<u8>>>,
    ended: mpsc::Receiver<()>,
}

impl Capture {
    fn start(mut pipe: impl Read + Send + 'static) -> Self {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let (done, ended) = mpsc::channel();
        let sink = Arc::clone(&bytes);
        std::thread::spawn(move || {
            let mut buffer = [0_u8; 8192];
            // A read error ends the capture like the end of the pipe does.
            while let Ok(count @ 1..) = pipe.read(&mut buffer) {
                sink.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend_from_slice(&buffer[..count]);
            }
            // The receiver is gone only when nobody waits for the capture any more.
            done.send(()).ok();
        });
        Self { bytes, ended }
    }

    fn so_far(&self) -> Vec<u8> {
        self.bytes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Everything, once the pipe closed by `deadline`; what arrived so far otherwise.
    fn finish_by(self, deadline: Instant) -> Result<Vec<u8>, Vec<u8>> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.ended.recv_timeout(left) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => Ok(self.so_far()),
            Err(RecvTimeoutError::Timeout) => Err(self.so_far()),
        }
    }

    /// Whatever arrived by `deadline`, closed or not.
    fn finish(self, deadline: Instant) -> Vec<u8> {
        self.finish_by(deadline).unwrap_or_else(|partial| partial)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_collected_like_command_output() {
        let output = Command::new("sh")
            .args(["-c", "echo out; echo err >&2; exit 3"])
            .output_within(PROCESS_WAIT);
        assert_eq!(output.status.code(), Some(3));
        assert_eq!(output.stdout, b"out\n");
        assert_eq!(output.stderr, b"err\n");
    }

    #[test]
    fn a_child_that_hangs_is_killed_and_fails_with_what_it_wrote() {
        let hung = std::panic::catch_unwind(|| {
            Command::new("sh")
                .args(["-c", "echo stuck >&2; exec sleep 600"])
                .output_within(Duration::from_millis(300))
        });
        let message = hung.expect_err("a hung child must fail the test");
        let message = message
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(message.contains("did not end within 300ms"), "{message}");
        assert!(message.contains("stuck"), "{message}");
    }

    #[test]
    fn waiting_for_a_child_is_bounded() {
        let mut quick = Command::new("true").spawn().unwrap();
        assert!(quick.wait_within(PROCESS_WAIT).success());
        let mut hung = Command::new("sh")
            .args(["-c", "echo stuck >&2; exec sleep 600"])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = hung.id();
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            hung.wait_within(Duration::from_millis(300))
        }));
        let message = failed.expect_err("a hung child must fail the test");
        let message = message
            .downcast_ref::<String>()
            .cloned()
            .unwrap_or_default();
        assert!(message.contains("stuck"), "{message}");
        // It was killed and reaped, not left running.
        assert!(hung.try_wait().unwrap().is_some(), "child {pid} still runs");
    }
}
