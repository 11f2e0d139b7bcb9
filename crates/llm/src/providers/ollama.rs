//! Finding a local Ollama: `OLLAMA_HOST` or 127.0.0.1:11434, asked briefly.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use serde_json::Value;
use url::Url;

/// Where Ollama listens unless told otherwise.
pub const OLLAMA_DEFAULT_ADDRESS: SocketAddr =
    SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 11434);

/// The Ollama root URL named by an `OLLAMA_HOST` value (`host`, `host:port`,
/// `http://host:port`; a wildcard bind address means this machine).
pub(crate) fn ollama_root(host: &str) -> Option<Url> {
    let host = host.trim().trim_end_matches('/');
    if host.is_empty() {
        return None;
    }
    let with_scheme = if host.contains("://") {
        host.to_owned()
    } else {
        format!("http://{host}")
    };
    let mut url = Url::parse(&with_scheme).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    if matches!(url.host_str(), Some("0.0.0.0" | "[::]" | "::")) {
        url.set_host(Some("127.0.0.1")).ok()?;
    }
    if url.port().is_none() && !host.contains("://") {
        url.set_port(Some(11434)).ok()?;
    }
    url.set_path("");
    Some(url)
}

/// Asks the Ollama at `root` for its local models. `None` when nothing that looks like
/// Ollama answers within `timeout`. Only loopback addresses are asked.
pub(crate) async fn probe(root: &Url, timeout: Duration) -> Option<Vec<String>> {
    if !crate::client::is_loopback(root) {
        return None;
    }
    // Nothing listening is the common case: find that out without building an HTTP
    // client (which loads the TLS roots).
    let port = root.port_or_known_default()?;
    let host = root
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let listening = tokio::time::timeout(
        timeout,
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await;
    if !matches!(listening, Ok(Ok(_))) {
        return None;
    }
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(timeout)
        .timeout(timeout)
        .build()
        .ok()?;
    let url = crate::client::endpoint(root, "api/tags");
    let response = client.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body: Value = response.json().await.ok()?;
    let models = body.get("models")?.as_array()?;
    Some(
        models
            .iter()
            .filter_map(|model| {
                model
                    .get("name")
                    .or_else(|| model.get("model"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn ollama_host_values_are_normalized() {
        let root = |value: &str| ollama_root(value).map(|url| url.to_string());
        assert_eq!(root("127.0.0.1"), Some("http://127.0.0.1:11434/".into()));
        assert_eq!(root("0.0.0.0:8080"), Some("http://127.0.0.1:8080/".into()));
        assert_eq!(
            root("http://localhost:11434/"),
            Some("http://localhost:11434/".into())
        );
        assert_eq!(
            root("https://ollama.example"),
            Some("https://ollama.example/".into())
        );
        assert_eq!(root(""), None);
    }

    #[tokio::test]
    async fn nothing_listening_means_no_ollama() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let root = Url::parse(&format!("http://{address}")).unwrap();
        assert_eq!(probe(&root, Duration::from_millis(300)).await, None);
        let remote = Url::parse("http://192.0.2.1:11434").unwrap();
        assert_eq!(probe(&remote, Duration::from_millis(300)).await, None);
    }
}
