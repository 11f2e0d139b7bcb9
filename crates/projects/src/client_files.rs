//! Files read through the client of a session instead of the disk: an editor that
//! serves `fs/read_text_file` over the Agent Client Protocol gives `file_read` its
//! buffers, unsaved edits included.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::future::BoxFuture;
use hearth_core::SessionUri;

/// Reads a file as a session's client sees it (an editor's buffer).
pub trait ClientFileReader: Send + Sync {
    /// The text of the file at `path` (absolute), or what the client said went wrong.
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>>;
}

/// The client readers of the sessions that have one, shared between the surface that
/// registers them and the `file_read` tool. Cheap to clone; empty by default.
#[derive(Clone, Default)]
pub struct ClientFiles {
    sessions: Arc<Mutex<HashMap<SessionUri, Arc<dyn ClientFileReader>>>>,
}

impl std::fmt::Debug for ClientFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientFiles")
            .field("sessions", &self.lock().len())
            .finish()
    }
}

impl ClientFiles {
    /// No session reads through a client yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<SessionUri, Arc<dyn ClientFileReader>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `session` reads its files through `reader` (in place of any reader it had).
    pub fn set(&self, session: &SessionUri, reader: Arc<dyn ClientFileReader>) {
        self.lock().insert(session.clone(), reader);
    }

    /// `session` reads its files from disk again.
    pub fn remove(&self, session: &SessionUri) {
        self.lock().remove(session);
    }

    /// The reader of `session`, if it has one.
    pub fn get(&self, session: &SessionUri) -> Option<Arc<dyn ClientFileReader>> {
        self.lock().get(session).cloned()
    }

    /// Every session reads from disk again (the client left).
    pub fn clear(&self) {
        self.lock().clear();
    }
}
