//! The runtime MCP connections live on: one thread of its own, so a server that hangs
//! or floods cannot stall the caller's runtime, and so a listing asked for from
//! synchronous code can wait for servers to start.

use std::future::Future;
use std::sync::Arc;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

use crate::error::{McpError, Result};

/// A handle on the MCP thread; the thread stops when the last handle is dropped.
#[derive(Clone)]
pub(crate) struct McpRuntime {
    handle: Handle,
    _stop: Arc<Stop>,
}

struct Stop(Option<oneshot::Sender<()>>);

impl Drop for Stop {
    fn drop(&mut self) {
        if let Some(stop) = self.0.take()
            && stop.send(()).is_err()
        {
            tracing::debug!("the MCP runtime had already stopped");
        }
    }
}

impl McpRuntime {
    /// Starts the thread.
    pub fn start() -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .thread_name("hearth-mcp")
            .build()
            .map_err(|error| McpError::Start {
                server: "(all)".to_owned(),
                message: format!("cannot start the MCP runtime: {error}"),
            })?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("hearth-mcp".to_owned())
            .spawn(move || {
                runtime.block_on(async {
                    // A stop, or every handle gone, ends the thread.
                    if stopped.await.is_err() {
                        tracing::debug!("the MCP runtime's handles are gone");
                    }
                });
            })
            .map_err(|error| McpError::Start {
                server: "(all)".to_owned(),
                message: format!("cannot start the MCP thread: {error}"),
            })?;
        Ok(Self {
            handle,
            _stop: Arc::new(Stop(Some(stop))),
        })
    }

    /// Runs `future` on the MCP thread and waits for it from any runtime.
    pub async fn run<F>(&self, future: F) -> Result<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.handle
            .spawn(future)
            .await
            .map_err(|_| McpError::Stopped)
    }

    /// Runs `future` on the MCP thread and blocks this thread until it ends (listing
    /// from synchronous code). Never call it on the MCP thread.
    pub fn block_on<F>(&self, future: F) -> Result<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let (sender, receiver) = std::sync::mpsc::channel();
        self.handle.spawn(async move {
            if sender.send(future.await).is_err() {
                tracing::debug!("nobody waits for the MCP listing any more");
            }
        });
        receiver.recv().map_err(|_| McpError::Stopped)
    }
}
