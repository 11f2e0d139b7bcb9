//! `attachment/upload`: files a client sends, kept in the data directory by content
//! (`attachments/<sha256>/<name>`, owner-only), so a message or a project source can
//! name them by path like any other file.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use hearth_fs::{FilePermissions, WriteMode, sha256_hex, write_atomic};
use hearth_protocol::{self as wire, ErrorKind, Method, RpcError};

use crate::access::Access;
use crate::backend::Shared;
use crate::dispatch::{MethodTable, route};

/// The attachment method.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::AttachmentUpload => upload, Access::Open);
}

/// The most characters a kept file's name has.
const NAME_CHARS: usize = 120;

/// The file name an upload is kept under: the last part of what the client named, without
/// control characters or leading dots; `attachment` when nothing is left.
pub(crate) fn safe_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let cleaned: String = last
        .chars()
        .filter(|character| !character.is_control())
        .take(NAME_CHARS)
        .collect();
    let cleaned = cleaned.trim().trim_start_matches('.').trim().to_owned();
    if cleaned.is_empty() {
        "attachment".to_owned()
    } else {
        cleaned
    }
}

fn too_large(bytes: u64, limit: u64) -> RpcError {
    RpcError::new(
        ErrorKind::InvalidParams,
        format!(
            "the file is {bytes} bytes; Hearth attaches files up to {limit} bytes (raise \
             attachment_bytes under [limits] in config.toml)"
        ),
        false,
    )
}

async fn upload(
    shared: &Shared,
    params: <wire::AttachmentUpload as Method>::Params,
) -> Result<<wire::AttachmentUpload as Method>::Response, RpcError> {
    let Some(directory) = shared.backend.attachments.clone() else {
        return Err(RpcError::new(
            ErrorKind::Unsupported,
            "this server keeps no attachments",
            false,
        ));
    };
    let limit = shared.host().limits().attachment_bytes;
    // Checked before decoding: a huge upload is refused without holding it twice.
    let estimate = (params.data.len() as u64 / 4) * 3;
    if estimate > limit.saturating_add(3) {
        return Err(too_large(estimate, limit));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(params.data.trim())
        .map_err(|error| {
            RpcError::new(
                ErrorKind::InvalidParams,
                format!("`data` is not base64: {error}"),
                false,
            )
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64, limit));
    }
    let name = safe_name(&params.name);
    let size = bytes.len() as u64;
    let kept_name = name.clone();
    let path = tokio::task::spawn_blocking(move || keep(&directory, &kept_name, &bytes))
        .await
        .map_err(|error| RpcError::new(ErrorKind::Internal, error.to_string(), false))?
        .map_err(|error| {
            RpcError::new(
                ErrorKind::Internal,
                format!("could not keep the attachment: {error}"),
                true,
            )
        })?;
    let media_type = if params.media_type.trim().is_empty() {
        "application/octet-stream".to_owned()
    } else {
        params.media_type
    };
    Ok(wire::AttachmentUploadResponse {
        attachment: wire::Attachment {
            name,
            media_type,
            uri: path.display().to_string(),
        },
        bytes: size,
    })
}

/// Writes the content once under its hash; the same content uploaded again is the same
/// file.
fn keep(directory: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let folder = directory.join(sha256_hex(bytes));
    std::fs::create_dir_all(&folder)?;
    let path = folder.join(name);
    match write_atomic(&path, bytes, WriteMode::CreateNew, FilePermissions::Private) {
        Ok(()) => Ok(path),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(path),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::safe_name;

    #[test]
    fn a_name_keeps_only_its_last_part_without_control_characters_or_leading_dots() {
        assert_eq!(safe_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_name("C:\\Users\\me\\notes.txt"), "notes.txt");
        assert_eq!(safe_name("..hidden"), "hidden");
        assert_eq!(safe_name("a\u{0}b\nc.png"), "abc.png");
        assert_eq!(safe_name("dir/"), "attachment");
        assert_eq!(safe_name("   "), "attachment");
        assert_eq!(safe_name(&"x".repeat(500)).len(), 120);
    }
}
