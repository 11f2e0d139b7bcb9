//! Dispatch: every method a client may call is looked up in a table that each feature
//! fills with its own methods (sessions, chats, permissions, proposals and the audit
//! log, providers, projects, calendars), each a typed handler: params parsed into the
//! method's `Params`, the handler's `Response` or error encoded. `subscribe` and
//! `unsubscribe` belong to a connection and are handled there.
//!
//! A new method is a handler in its feature's module and one `route!` line in its
//! `register`, which also says what the method's params name that the caller must be
//! allowed to reach ([`Access`]); a test checks that every method of the protocol has
//! its handler.

use std::collections::HashMap;
use std::future::Future;
use std::sync::OnceLock;

use futures::future::BoxFuture;
use hearth_core::UriError;
use hearth_protocol::{
    self as wire, ClientMethod, ErrorKind, Method, RequestId, RpcError, error_text, response_text,
};
use serde_json::Value;

use crate::access::{Access, Principal};
use crate::backend::Shared;
use crate::edge::{internal, invalid_params};

/// Parses a method's params; absent params read as `{}`.
pub(crate) fn parse_params<P: serde::de::DeserializeOwned>(params: Value) -> Result<P, RpcError> {
    let params = if params.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        params
    };
    serde_json::from_value(params).map_err(|error| {
        RpcError::new(
            ErrorKind::InvalidParams,
            format!("invalid params: {error}"),
            false,
        )
    })
}

/// Turns in a `chat/turns` page when the client names no limit.
pub(crate) const DEFAULT_TURN_PAGE: u32 = 50;
/// The most turns one page or one subscribe snapshot may ask for.
pub(crate) const MAX_TURN_PAGE: u32 = 200;

/// A page size: `default` when absent, refused outside 1..=[`MAX_TURN_PAGE`].
pub(crate) fn page_limit(
    field: &'static str,
    limit: Option<u32>,
    default: u32,
) -> Result<u32, RpcError> {
    match limit.unwrap_or(default) {
        limit @ 1..=MAX_TURN_PAGE => Ok(limit),
        other => Err(RpcError::new(
            ErrorKind::InvalidParams,
            format!("`{field}` is {other}; it must be between 1 and {MAX_TURN_PAGE}"),
            false,
        )),
    }
}

/// Parses a URI or id parameter, naming it when it does not parse.
pub(crate) fn parse_field<T>(
    field: &'static str,
    text: &str,
    parse: impl FnOnce(&str) -> Result<T, UriError>,
) -> Result<T, RpcError> {
    parse(text).map_err(|source| invalid_params(&wire::ProtocolError::Uri { field, source }))
}

/// Runs a typed handler and encodes its response or error.
pub(crate) async fn respond<M, F, Fut>(id: RequestId, params: Value, handler: F) -> String
where
    M: Method,
    F: FnOnce(M::Params) -> Fut,
    Fut: Future<Output = Result<M::Response, RpcError>>,
{
    let result = match parse_params::<M::Params>(params) {
        Ok(params) => handler(params).await,
        Err(error) => Err(error),
    };
    match result {
        Ok(response) => response_text(id.clone(), &response)
            .unwrap_or_else(|error| error_text(Some(id), internal(error))),
        Err(error) => error_text(Some(id), error),
    }
}

/// A method's handler: the server's state, the caller, the request's id and params in;
/// the text of the response (or error) out.
pub(crate) type Handler =
    for<'a> fn(&'a Shared, &'a Principal, RequestId, Value) -> BoxFuture<'a, String>;

/// Every method's handler, by method, with what its params name.
pub(crate) struct MethodTable {
    handlers: HashMap<ClientMethod, (Access, Handler)>,
}

impl MethodTable {
    /// Registers the handler of `M`.
    pub(crate) fn add<M: Method>(&mut self, access: Access, handler: Handler) {
        match ClientMethod::from_name(M::NAME) {
            Some(method) => {
                self.handlers.insert(method, (access, handler));
            }
            None => tracing::error!(
                method = M::NAME,
                "a handler for a method the protocol lacks"
            ),
        }
    }
}

/// Registers a typed handler for the method `M`: `route!(table, M => handler, access)`
/// for `async fn(&Shared, M::Params) -> Result<M::Response, RpcError>`, checked against
/// the [`Access`] given; `route!(table, M => handler, narrowed)` for a handler that
/// also takes the caller (`async fn(&Shared, &Principal, M::Params)`) and narrows its
/// answer to what the caller may see; `route!(table, M => handler, access, with caller)`
/// for a handler checked against `access` that also takes the caller.
macro_rules! route {
    ($table:expr, $method:ty => $handler:path, narrowed) => {
        $table.add::<$method>(
            $crate::access::Access::Narrowed,
            |shared, caller, id, params| {
                Box::pin($crate::dispatch::respond::<$method, _, _>(
                    id,
                    params,
                    move |params| $handler(shared, caller, params),
                ))
            },
        )
    };
    ($table:expr, $method:ty => $handler:path, $access:expr, with caller) => {
        $table.add::<$method>($access, |shared, caller, id, params| {
            Box::pin($crate::dispatch::respond::<$method, _, _>(
                id,
                params,
                move |params| $handler(shared, caller, params),
            ))
        })
    };
    ($table:expr, $method:ty => $handler:path, $access:expr) => {
        $table.add::<$method>($access, |shared, _caller, id, params| {
            Box::pin($crate::dispatch::respond::<$method, _, _>(
                id,
                params,
                move |params| $handler(shared, params),
            ))
        })
    };
}
pub(crate) use route;

/// The table, filled once by every feature.
fn table() -> &'static MethodTable {
    static TABLE: OnceLock<MethodTable> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = MethodTable {
            handlers: HashMap::new(),
        };
        crate::sessions::register(&mut table);
        crate::chats::register(&mut table);
        crate::permissions::register(&mut table);
        crate::proposals::register(&mut table);
        crate::providers::register(&mut table);
        crate::projects::register(&mut table);
        crate::project_context::register(&mut table);
        crate::provider_setup::register(&mut table);
        crate::user_agents::register(&mut table);
        crate::calendar::register(&mut table);
        crate::search::register(&mut table);
        crate::attachments::register(&mut table);
        crate::trash::register(&mut table);
        crate::export::register(&mut table);
        table
    })
}

/// Answers a request that needs no connection state, once the caller may make it.
pub(crate) async fn call(
    shared: &Shared,
    caller: &Principal,
    method: ClientMethod,
    id: RequestId,
    params: Value,
) -> String {
    match table().handlers.get(&method) {
        Some((access, handler)) => {
            let admitted = match crate::access::check(shared, caller, *access, &params).await {
                Ok(()) => crate::user_providers::admit(shared, caller, method, &params).await,
                Err(error) => Err(error),
            };
            match admitted {
                Ok(()) => handler(shared, caller, id, params).await,
                Err(error) => error_text(Some(id), error),
            }
        }
        None => error_text(
            Some(id),
            RpcError::new(
                ErrorKind::Unsupported,
                format!(
                    "`{}` needs a streaming connection: use the WebSocket at /rpc or `hearth app-server --stdio`",
                    method.name()
                ),
                false,
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_but_the_streaming_ones_has_its_handler() {
        let missing: Vec<&str> = ClientMethod::ALL
            .iter()
            .filter(|method| !matches!(method, ClientMethod::Subscribe | ClientMethod::Unsubscribe))
            .filter(|method| !table().handlers.contains_key(method))
            .map(|method| method.name())
            .collect();
        assert!(missing.is_empty(), "methods without a handler: {missing:?}");
        assert!(!table().handlers.contains_key(&ClientMethod::Subscribe));
    }
}
