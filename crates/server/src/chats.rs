//! Chats: `chat/*`.

use hearth_core::{ChatUri, SessionUri, TurnId};
use hearth_host::PageEnd;
use hearth_protocol::{self as wire, Method, RpcError};

use crate::access::Access;
use crate::backend::Shared;
use crate::dispatch::{DEFAULT_TURN_PAGE, MethodTable, page_limit, parse_field, route};
use crate::edge::{host_error, invalid_params};

/// The chat methods.
pub(crate) fn register(table: &mut MethodTable) {
    route!(table, wire::ChatCreate => chat_create, Access::Session("session"));
    route!(table, wire::ChatDispose => chat_dispose, Access::Chat("chat"));
    route!(table, wire::ChatSend => chat_send, Access::Chat("chat"));
    route!(table, wire::ChatQueue => chat_queue, Access::Chat("chat"));
    route!(table, wire::ChatSetQueue => chat_set_queue, Access::Chat("chat"));
    route!(table, wire::ChatAbort => chat_abort, Access::Chat("chat"));
    route!(table, wire::ChatCompact => chat_compact, Access::Chat("chat"));
    route!(table, wire::ChatSetModel => chat_set_model, Access::Chat("chat"));
    route!(table, wire::ChatSetMode => chat_set_mode, Access::Chat("chat"));
    route!(table, wire::ChatSetDraft => chat_set_draft, Access::Chat("chat"));
    route!(table, wire::ChatResolve => chat_resolve, Access::Chat("chat"));
    route!(table, wire::ChatTurns => chat_turns, Access::Chat("chat"));
}

async fn chat_create(
    shared: &Shared,
    params: <wire::ChatCreate as Method>::Params,
) -> Result<<wire::ChatCreate as Method>::Response, RpcError> {
    let host = shared.host();
    let session = parse_field("session", &params.session, SessionUri::parse)?;
    let seed = hearth_core::ChatSeed::try_from(params.seed).map_err(|e| invalid_params(&e))?;
    let chat = host
        .create_chat(&session, seed)
        .await
        .map_err(|e| host_error(&e))?;
    let state = host.chat(&chat).await.map_err(|e| host_error(&e))?;
    Ok(wire::ChatCreateResponse {
        chat: state.summary.into(),
    })
}

async fn chat_dispose(
    shared: &Shared,
    params: <wire::ChatDispose as Method>::Params,
) -> Result<<wire::ChatDispose as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    host.dispose_chat(&chat).await.map_err(|e| host_error(&e))?;
    Ok(wire::ChatDisposeResponse {})
}

async fn chat_send(
    shared: &Shared,
    params: <wire::ChatSend as Method>::Params,
) -> Result<<wire::ChatSend as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    let turn_id = host
        .send(&chat, params.message.into())
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::ChatSendResponse {
        turn_id: turn_id.to_string(),
    })
}

async fn chat_queue(
    shared: &Shared,
    params: <wire::ChatQueue as Method>::Params,
) -> Result<<wire::ChatQueue as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    let turn_id = host
        .queue_message(&chat, params.message.into())
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::ChatQueueResponse {
        turn_id: turn_id.map(|id| id.to_string()),
    })
}

async fn chat_set_queue(
    shared: &Shared,
    params: <wire::ChatSetQueue as Method>::Params,
) -> Result<<wire::ChatSetQueue as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    let queued = params.queued.into_iter().map(Into::into).collect();
    host.set_queue(&chat, queued)
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::ChatSetQueueResponse {})
}

async fn chat_abort(
    shared: &Shared,
    params: <wire::ChatAbort as Method>::Params,
) -> Result<<wire::ChatAbort as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    let aborted = host.abort(&chat).await.map_err(|e| host_error(&e))?;
    Ok(wire::ChatAbortResponse { aborted })
}

async fn chat_compact(
    shared: &Shared,
    params: <wire::ChatCompact as Method>::Params,
) -> Result<<wire::ChatCompact as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    let compacted = host.compact(&chat).await.map_err(|e| host_error(&e))?;
    Ok(wire::ChatCompactResponse {
        turns: compacted.turns,
        summarised: compacted.summarised,
        summary: compacted.summary,
    })
}

async fn chat_set_model(
    shared: &Shared,
    params: <wire::ChatSetModel as Method>::Params,
) -> Result<<wire::ChatSetModel as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    host.set_model(&chat, params.model)
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::ChatSetModelResponse {})
}

async fn chat_set_mode(
    shared: &Shared,
    params: <wire::ChatSetMode as Method>::Params,
) -> Result<<wire::ChatSetMode as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    host.set_mode(&chat, params.mode)
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::ChatSetModeResponse {})
}

async fn chat_set_draft(
    shared: &Shared,
    params: <wire::ChatSetDraft as Method>::Params,
) -> Result<<wire::ChatSetDraft as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    host.set_draft(&chat, params.draft)
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::ChatSetDraftResponse {})
}

async fn chat_resolve(
    shared: &Shared,
    params: <wire::ChatResolve as Method>::Params,
) -> Result<<wire::ChatResolve as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    host.resolve_chat(&chat).await.map_err(|e| host_error(&e))?;
    let state = host.chat(&chat).await.map_err(|e| host_error(&e))?;
    Ok(wire::ChatResolveResponse { chat: state.into() })
}

async fn chat_turns(
    shared: &Shared,
    params: <wire::ChatTurns as Method>::Params,
) -> Result<<wire::ChatTurns as Method>::Response, RpcError> {
    let host = shared.host();
    let chat = parse_field("chat", &params.chat, ChatUri::parse)?;
    let before = params
        .before
        .as_deref()
        .map(|turn| parse_field("before", turn, TurnId::parse))
        .transpose()?;
    let limit = page_limit("limit", params.limit, DEFAULT_TURN_PAGE)?;
    let end = before.as_ref().map_or(PageEnd::Latest, PageEnd::Before);
    let page = host
        .turn_page(&chat, end, limit)
        .await
        .map_err(|e| host_error(&e))?;
    Ok(wire::ChatTurnsResponse {
        turns: page.turns.into_iter().map(Into::into).collect(),
        has_more: page.has_more,
    })
}
