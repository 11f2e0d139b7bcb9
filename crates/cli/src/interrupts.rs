//! Ctrl-C presses, counted from when the listener is made: a press that lands while
//! nobody waits (between two waits of a turn's loop) is kept for the next wait.

/// A listener for Ctrl-C.
pub struct Interrupts {
    #[cfg(unix)]
    signal: tokio::signal::unix::Signal,
    #[cfg(not(unix))]
    next: std::pin::Pin<Box<dyn Future<Output = std::io::Result<()>> + Send>>,
}

impl Interrupts {
    /// Starts listening.
    pub fn new() -> anyhow::Result<Self> {
        use anyhow::Context as _;
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let signal = signal(SignalKind::interrupt()).context("listening for Ctrl-C")?;
            Ok(Self { signal })
        }
        #[cfg(not(unix))]
        {
            Ok(Self {
                next: Box::pin(tokio::signal::ctrl_c()),
            })
        }
    }

    /// The next press (or one that came since the last call).
    pub async fn recv(&mut self) -> anyhow::Result<()> {
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
