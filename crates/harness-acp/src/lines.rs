//! The agent's stdout as JSON-RPC lines, read with limits: a line may be at most
//! [`MAX_LINE`] long, lines that are not JSON objects are skipped (an agent that writes
//! nothing else is stopped after [`MAX_JUNK`] of them), and no more than [`IN_FLIGHT`]
//! notifications and requests from the agent wait for Hearth at once — past that,
//! Hearth stops reading and the agent waits on its full pipe, so a flooding agent
//! cannot grow Hearth's memory.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use futures::{Sink, Stream};
use hearth_process::{Line, LineReader};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The longest line Hearth accepts from an agent.
pub(crate) const MAX_LINE: usize = 32 * 1024 * 1024;
/// Consecutive lines that are not JSON after which the agent counts as broken.
pub(crate) const MAX_JUNK: usize = 1000;
/// Messages from the agent that may wait for Hearth at once.
pub(crate) const IN_FLIGHT: usize = 256;

/// Limits the messages from the agent that Hearth has not handled yet. The reader takes
/// a place (an owned permit) for each message a handler answers; the handler takes it
/// over as an [`Admission`] and gives it back by dropping it — on every path, since
/// dropping is the only way, so no path can keep a place for good.
#[derive(Clone)]
pub(crate) struct Gate {
    places: Arc<Semaphore>,
    /// Places taken by messages read and not yet handed to a handler, oldest first.
    taken: Arc<Mutex<VecDeque<OwnedSemaphorePermit>>>,
}

/// A handler's hold on its message's place; dropping it gives the place back.
#[must_use = "the place is given back when the admission is dropped"]
pub(crate) struct Admission(#[allow(dead_code)] Option<OwnedSemaphorePermit>);

impl Gate {
    pub fn new() -> Self {
        Self {
            places: Arc::new(Semaphore::new(IN_FLIGHT)),
            taken: Arc::default(),
        }
    }

    /// A handler takes over the place of a message read (permits are alike: which one
    /// does not matter).
    pub fn admit(&self) -> Admission {
        Admission(
            self.taken
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop_front(),
        )
    }

    async fn enter(&self) {
        match Arc::clone(&self.places).acquire_owned().await {
            Ok(permit) => self
                .taken
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push_back(permit),
            Err(_) => tracing::debug!("the gate is closed"),
        }
    }

    /// Stops waiting readers (the connection ended).
    pub fn close(&self) {
        self.places.close();
    }

    /// Places free now (tests).
    #[cfg(test)]
    pub fn free(&self) -> usize {
        self.places.available_permits()
    }
}

/// Whether a line is a message that a handler of Hearth's answers (a request or a
/// notification from the agent, not a response and not a protocol-level message).
fn is_handled_message(line: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(borrow, default)]
        method: Option<Cow<'a, str>>,
    }
    serde_json::from_str::<Probe<'_>>(line)
        .ok()
        .and_then(|probe| probe.method)
        .is_some_and(|method| !method.starts_with("$/"))
}

struct Reader {
    agent: String,
    input: LineReader<BufReader<ChildStdout>>,
    gate: Gate,
    junk: usize,
    /// Where a refusal of the agent's output is recorded, for the error message.
    violation: Arc<Mutex<Option<String>>>,
}

impl Reader {
    fn refuse(&self, what: String) -> io::Error {
        *self
            .violation
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(what.clone());
        io::Error::other(what)
    }

    /// The next JSON-RPC message, skipping junk.
    async fn next_message(&mut self) -> Option<io::Result<String>> {
        loop {
            let line = match self.input.next_line().await {
                Ok(Some(Line::Whole(line))) => line,
                Ok(Some(Line::Overlong(_))) => {
                    return Some(Err(self.refuse(format!(
                        "wrote a line longer than {} MiB on stdout",
                        MAX_LINE / (1024 * 1024)
                    ))));
                }
                Ok(None) => return None,
                Err(error) => return Some(Err(error)),
            };
            let text = String::from_utf8_lossy(&line);
            let trimmed = text.trim();
            if trimmed.is_empty() {
                continue;
            }
            if !trimmed.starts_with('{') {
                self.junk += 1;
                tracing::debug!(agent = %self.agent, "skipping a line that is not JSON-RPC: {}", hearth_process::cut(trimmed, 200));
                if self.junk > MAX_JUNK {
                    return Some(Err(self.refuse(format!(
                        "wrote more than {MAX_JUNK} lines that are not JSON-RPC on stdout"
                    ))));
                }
                continue;
            }
            self.junk = 0;
            if is_handled_message(trimmed) {
                self.gate.enter().await;
            }
            return Some(Ok(trimmed.to_owned()));
        }
    }
}

/// The agent's stdout as a stream of JSON-RPC lines.
pub(crate) fn incoming(
    agent: &str,
    stdout: ChildStdout,
    gate: Gate,
    violation: Arc<Mutex<Option<String>>>,
) -> impl Stream<Item = io::Result<String>> + Send + 'static {
    let reader = Reader {
        agent: agent.to_owned(),
        input: LineReader::new(BufReader::with_capacity(64 * 1024, stdout), MAX_LINE),
        gate,
        junk: 0,
        violation,
    };
    futures::stream::unfold(reader, |mut reader| async move {
        let message = reader.next_message().await?;
        Some((message, reader))
    })
}

/// The agent's stdin as a sink of JSON-RPC lines.
pub(crate) fn outgoing(stdin: ChildStdin) -> impl Sink<String, Error = io::Error> + Send + 'static {
    futures::sink::unfold(stdin, |mut stdin, line: String| async move {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        stdin.write_all(&bytes).await?;
        stdin.flush().await?;
        Ok(stdin)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_place_comes_back_when_its_admission_is_dropped() {
        let gate = Gate::new();
        for _ in 0..3 {
            gate.enter().await;
        }
        assert_eq!(gate.free(), IN_FLIGHT - 3);
        let first = gate.admit();
        let second = gate.admit();
        // A handler that returns early still drops its admission.
        let early = || -> Result<(), ()> {
            let _third = gate.admit();
            Err(())
        };
        assert!(early().is_err());
        assert_eq!(gate.free(), IN_FLIGHT - 2);
        drop(first);
        drop(second);
        assert_eq!(gate.free(), IN_FLIGHT);
    }

    #[test]
    fn only_requests_and_notifications_take_a_place() {
        assert!(is_handled_message(
            r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#
        ));
        assert!(is_handled_message(
            r#"{"jsonrpc":"2.0","id":"a","method":"fs/read_text_file","params":{}}"#
        ));
        assert!(!is_handled_message(
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#
        ));
        assert!(!is_handled_message(
            r#"{"jsonrpc":"2.0","method":"$/cancel_request","params":{}}"#
        ));
        assert!(!is_handled_message("{not json"));
    }
}
