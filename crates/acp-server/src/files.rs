//! The client's `fs/read_text_file`, as the reader the native agent's `file_read` tool
//! uses in a session whose client declared it: the agent reads the editor's buffers,
//! unsaved edits included.

use std::path::Path;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId};
use hearth_projects::ClientFileReader;

/// Reads a session's files through its client.
pub(crate) struct EditorFiles {
    pub(crate) connection: ConnectionTo<Client>,
    pub(crate) session: SessionId,
}

impl ClientFileReader for EditorFiles {
    fn read<'a>(
        &'a self,
        path: &'a Path,
    ) -> futures::future::BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let request = ReadTextFileRequest::new(self.session.clone(), path.to_path_buf());
            match self.connection.send_request(request).block_task().await {
                Ok(response) => Ok(response.content),
                Err(error) => Err(error.to_string()),
            }
        })
    }
}
