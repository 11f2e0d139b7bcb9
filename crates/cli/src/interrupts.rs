//! Ctrl-C presses, counted from when the listener is made: a press that lands while
//! nobody waits (between two waits of a turn's loop) is kept for the next wait. A press
//! soon after the one before is a double press: the user wants out, not just to stop.

use std::time::{Duration, Instant};

/// How soon after a press another one counts as a double press.
pub const DOUBLE_PRESS: Duration = Duration::from_secs(1);

/// A press, and how it relates to the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Press {
    /// The first press, or one long after the previous.
    Single,
    /// Within [`DOUBLE_PRESS`] of the previous press.
    Double,
}

/// A listener for Ctrl-C.
pub struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
    #[cfg(not(unix))]
    next: std::pin::Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>,
    /// When the last press was handled.
    last: Option<Instant>,
}

impl Interrupts {
    /// Starts listening.
    pub fn new() -> anyhow::Result<Self> {
        use anyhow::Context as _;
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let signal = signal(SignalKind::interrupt()).context("listening for Ctrl-C")?;
            Ok(Self { signal, last: None })
        }
        #[cfg(not(unix))]
        {
            Ok(Self {
                next: Box::pin(tokio::signal::ctrl_c()),
                last: None,
            })
        }
    }

    /// The next press (or one that came since the last call).
    pub async fn recv(&mut self) -> anyhow::Result<()> {
        self.next_press().await?;
        self.last = Some(Instant::now());
        Ok(())
    }

    /// The next press, single or double (within [`DOUBLE_PRESS`] of the previous one).
    pub async fn recv_press(&mut self) -> anyhow::Result<Press> {
        let previous = self.last;
        self.recv().await?;
        Ok(match previous {
            Some(at) if at.elapsed() <= DOUBLE_PRESS => Press::Double,
            _ => Press::Single,
        })
    }

    async fn next_press(&mut self) -> anyhow::Result<()> {
        #[cfg(unix)]
        {
            match self.signal.recv().await {
                Some(()) => Ok(()),
                None => anyhow::bail!("the Ctrl-C listener stopped"),
            }
        }
        #[cfg(not(unix))]
        {
            use anyhow::Context as _;
            let pressed = (&mut self.next).await;
            self.next = Box::pin(tokio::signal::ctrl_c());
            pressed.context("listening for Ctrl-C")
        }
    }
}
