//! `attachment/upload`: a file a client sends to attach to a message or add to a project.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::turn::Attachment;

/// `attachment/upload`: keeps a file in the data directory, for a message's attachments
/// (`chat/send`, `chat/queue`) or a project's sources (`project/addSource`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentUploadParams {
    /// The file's name (a path in it is dropped: only the last part is kept).
    pub name: String,
    /// MIME type (`application/octet-stream` when unknown).
    pub media_type: String,
    /// The content, base64 (standard alphabet, padded). Limited by `attachment_bytes`
    /// under `[limits]`.
    pub data: String,
}

/// What `attachment/upload` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AttachmentUploadResponse {
    /// The attachment to send with a message; its `uri` is the kept file's path.
    pub attachment: Attachment,
    /// The content's size in bytes.
    pub bytes: u64,
}
