//! Agent Home: the web UI's page and assets, embedded in the binary (the `web/` folder
//! `public/` folder of the repository), served with their SHA-256 as ETag and revalidated on each load.
//! The page speaks the same JSON-RPC protocol over `/rpc` as every other client.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rust_embed::RustEmbed;
use tower_http::compression::CompressionLayer;

#[derive(RustEmbed)]
#[folder = "../../web/public/"]
struct Assets;

/// What `/auth` answers when the token or login code is wrong or used up.
pub(crate) const LOGIN_REFUSED: &str = "<!doctype html><meta charset=utf-8>\
<title>Hearth: log in</title><h1>This login link does not work</h1>\
<p>A login link works once. Run <code>hearth login</code> for a new one (it asks the \
running server), or open <code>/auth?token=</code> followed by the token in Hearth's \
data directory.</p>";

/// The page's policy: only its own scripts, styles and socket; never framed.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
base-uri 'none'; form-action 'none'; object-src 'none'";

/// The page's routes, compressed for browsers that accept gzip.
pub(crate) fn pages() -> Router {
    Router::new()
        .route("/", get(home))
        .route("/favicon.svg", get(favicon))
        .route("/assets/{*path}", get(asset))
        .layer(CompressionLayer::new())
}

/// `GET /`: Agent Home's page.
async fn home(headers: HeaderMap) -> Response {
    serve("index.html", &headers)
}

/// `GET /favicon.svg`.
async fn favicon(headers: HeaderMap) -> Response {
    serve("favicon.svg", &headers)
}

/// `GET /assets/…`: a script, style sheet or image of the page.
async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    serve(&format!("assets/{path}"), &headers)
}

fn serve(path: &str, request: &HeaderMap) -> Response {
    let Some(file) = Assets::get(path) else {
        return (StatusCode::NOT_FOUND, "no such asset").into_response();
    };
    let etag = format!("\"{}\"", hearth_fs::hex(&file.metadata.sha256_hash()[..16]));
    let fresh = request
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.split(',').any(|tag| tag.trim() == etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        file.data.into_owned().into_response()
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(file.metadata.mimetype()) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if path == "index.html" {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY),
        );
        headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_its_assets_are_embedded() {
        assert!(Assets::get("index.html").is_some());
        let names: Vec<_> = Assets::iter().collect();
        assert!(
            names
                .iter()
                .any(|name| name.starts_with("assets/") && name.ends_with(".js")),
            "{names:?}"
        );
    }
}
