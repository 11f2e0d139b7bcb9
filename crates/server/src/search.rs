//! `search/query`: full-text search over every turn of every live session.

use hearth_core::{ChatUri, HarnessId, ProjectId};
use hearth_protocol::{self as wire, ErrorKind, Method, RpcError};
use hearth_store::StoreError;

use crate::access::Principal;
use crate::backend::Shared;
use crate::dispatch::{MethodTable, parse_field, route};

/// The search method.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::SearchQuery => search_query, narrowed);
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError::new(ErrorKind::InvalidParams, message, false)
}

async fn search_query(
    shared: &Shared,
    caller: &Principal,
    params: <wire::SearchQuery as Method>::Params,
) -> Result<<wire::SearchQuery as Method>::Response, RpcError> {
    let harness = params
        .harness
        .as_deref()
        .map(|harness| parse_field("harness", harness, HarnessId::parse))
        .transpose()?;
    let project = params
        .project_id
        .as_deref()
        .map(|project| parse_field("projectId", project, ProjectId::parse))
        .transpose()?;
    let chat = params
        .chat
        .as_deref()
        .map(|chat| parse_field("chat", chat, ChatUri::parse))
        .transpose()?;
    let since = params
        .since
        .as_deref()
        .map(|since| {
            chrono::DateTime::parse_from_rfc3339(since)
                .map(|time| time.with_timezone(&chrono::Utc))
                .map_err(|error| invalid(format!("`since` is not an RFC 3339 time: {error}")))
        })
        .transpose()?;
    let query = hearth_store::SearchQuery {
        text: params.query,
        harness,
        project,
        chat,
        since,
        cursor: params.cursor,
        limit: params.limit.unwrap_or(50),
        viewer: caller.viewer().map(|user| user.id.clone()),
    };
    let page = shared
        .host()
        .store()
        .search_turns(&query)
        .await
        .map_err(|error| match error {
            StoreError::InvalidQuery(message) => invalid(message),
            other => RpcError::new(ErrorKind::Internal, other.to_string(), other.is_retryable()),
        })?;
    Ok(wire::SearchQueryResponse {
        hits: page.hits.iter().map(hit).collect(),
        next_cursor: page.next_cursor,
    })
}

fn hit(found: &hearth_store::SearchHit) -> wire::SearchHit {
    wire::SearchHit {
        session: found.session.to_string(),
        title: found.title.clone(),
        chat: found.chat.to_string(),
        turn_id: found.turn_id.to_string(),
        index: found.index,
        started_at: found.started_at.to_rfc3339(),
        snippet: found
            .pieces()
            .into_iter()
            .map(|(text, is_match)| wire::SnippetPiece { text, is_match })
            .collect(),
    }
}
