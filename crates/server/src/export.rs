//! `session/export`: a session as a file for the web UI's download button — Markdown to
//! read, or the lossless JSON Lines archive `hearth import` reads.

use hearth_core::SessionUri;
use hearth_protocol::{self as wire, ErrorKind, Method, RpcError};
use hearth_store::StoreError;

use crate::access::Access;
use crate::backend::Shared;
use crate::dispatch::{MethodTable, parse_field, route};

/// The export method.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::SessionExport => session_export, Access::Session("sessionId"));
}

/// A file name from a title: letters and digits kept, runs of anything else one `-`,
/// at most 60 characters; `session` when nothing is left.
pub(crate) fn file_stem(title: Option<&str>) -> String {
    let mut stem = String::new();
    for c in title.unwrap_or_default().chars() {
        if c.is_alphanumeric() {
            stem.extend(c.to_lowercase());
        } else if !stem.is_empty() && !stem.ends_with('-') {
            stem.push('-');
        }
        if stem.chars().count() >= 60 {
            break;
        }
    }
    let stem = stem.trim_end_matches('-');
    if stem.is_empty() {
        "session".to_owned()
    } else {
        stem.to_owned()
    }
}

async fn session_export(
    shared: &Shared,
    params: <wire::SessionExport as Method>::Params,
) -> Result<<wire::SessionExport as Method>::Response, RpcError> {
    let session = parse_field("sessionId", &params.session_id, SessionUri::parse)?;
    let store = shared.host().store();
    let failed = |error: StoreError| {
        let kind = match error {
            StoreError::NotFound { .. } => ErrorKind::NotFound,
            _ => ErrorKind::Internal,
        };
        RpcError::new(kind, error.to_string(), false)
    };
    let summary = store
        .session(&session)
        .await
        .map_err(failed)?
        .ok_or_else(|| {
            RpcError::new(
                ErrorKind::NotFound,
                format!("session `{session}` does not exist"),
                false,
            )
        })?;
    let stem = format!("{}-{}", file_stem(summary.title.as_deref()), session.id());
    let (extension, media_type, content) = match params.format {
        wire::ExportFormat::Markdown => (
            "md",
            "text/markdown",
            hearth_store::session_markdown(store.as_ref(), &session)
                .await
                .map_err(failed)?,
        ),
        wire::ExportFormat::Jsonl => (
            "jsonl",
            "application/jsonl",
            store.archive_session(&session).await.map_err(failed)?,
        ),
    };
    Ok(wire::SessionExportResponse {
        file_name: format!("{stem}.{extension}"),
        media_type: media_type.to_owned(),
        content,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_stems_keep_words_and_drop_the_rest() {
        assert_eq!(file_stem(Some("Plan: my week / Q4!")), "plan-my-week-q4");
        assert_eq!(file_stem(Some("../../etc")), "etc");
        assert_eq!(file_stem(None), "session");
    }
}
