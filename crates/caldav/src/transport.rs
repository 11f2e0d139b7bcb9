//! The seam requests go through: [`DavTransport`] sends a [`DavRequest`] and returns
//! the [`DavResponse`], whatever its status. Hearth plugs its guarded fetcher in; a
//! build without network access plugs in [`NoNetwork`].

use futures::future::BoxFuture;

/// One HTTP request to a CalDAV server.
#[derive(Clone, PartialEq, Eq)]
pub struct DavRequest {
    /// `PROPFIND`, `REPORT`, `GET`, `PUT`, `DELETE`.
    pub method: &'static str,
    /// The absolute URL.
    pub url: String,
    /// Headers (`Depth`, `If-Match`, `Content-Type`).
    pub headers: Vec<(&'static str, String)>,
    /// The `Authorization` header's value, sent to the configured origin only.
    pub authorization: Option<String>,
    /// The body.
    pub body: Option<String>,
    /// Whether the server may be on a private network.
    pub allow_private_network: bool,
    /// The most bytes of answer to read.
    pub max_bytes: u64,
}

impl std::fmt::Debug for DavRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DavRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &self.headers)
            .field(
                "authorization",
                &self.authorization.as_ref().map(|_| "<redacted>"),
            )
            .finish_non_exhaustive()
    }
}

/// The server's answer, whatever its status.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DavResponse {
    /// The HTTP status.
    pub status: u16,
    /// The `ETag` header.
    pub etag: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

/// Sends CalDAV requests.
pub trait DavTransport: Send + Sync + 'static {
    /// Sends `request`; an `Err` says why no answer came (refused by the network
    /// rules, unreachable, timed out).
    fn send(&self, request: DavRequest) -> BoxFuture<'_, std::result::Result<DavResponse, String>>;
}

/// The transport of a build without network access: every request fails with a reason.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoNetwork;

impl DavTransport for NoNetwork {
    fn send(
        &self,
        _request: DavRequest,
    ) -> BoxFuture<'_, std::result::Result<DavResponse, String>> {
        Box::pin(async { Err("this build of Hearth has no network access".to_owned()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_shows_no_password() {
        let request = DavRequest {
            method: "GET",
            url: "http://x.test/".to_owned(),
            headers: Vec::new(),
            authorization: Some("Basic c2VjcmV0".to_owned()),
            body: None,
            allow_private_network: false,
            max_bytes: 1,
        };
        let shown = format!("{request:?}");
        assert!(!shown.contains("c2VjcmV0"), "{shown}");
    }
}
