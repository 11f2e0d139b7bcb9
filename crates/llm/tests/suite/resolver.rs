//! A client given its own resolver reaches the base URL's host only through it, on every
//! connection: what a team server relies on to keep a user's provider off its network
//! after the address was checked.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hearth_llm::{CancellationToken, DnsResolve, ModelClient, OpenAiClient};
use hearth_test_support::{MockModelServer, OpenAiStream};

use super::support::{drain, hello, options};

/// Resolves every name to `address` while `allowed`, counting lookups; refuses after.
struct Counted {
    address: SocketAddr,
    lookups: Arc<AtomicUsize>,
    allowed: usize,
}

impl DnsResolve for Counted {
    fn resolve(&self, _name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let seen = self.lookups.fetch_add(1, Ordering::SeqCst);
        let answer: Result<reqwest::dns::Addrs, Box<dyn std::error::Error + Send + Sync>> =
            if seen < self.allowed {
                Ok(Box::new(std::iter::once(self.address)))
            } else {
                Err("refused: the name now points at a private address".into())
            };
        Box::pin(async move { answer })
    }
}

#[tokio::test]
async fn a_client_with_its_own_resolver_reaches_its_host_only_through_it() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(OpenAiStream::text_answer("m", &["through"], 1, 1));
    let lookups = Arc::new(AtomicUsize::new(0));
    // A name the system cannot resolve: only the client's resolver knows it.
    let base = format!(
        "http://models.hearth.invalid:{}/v1",
        server.address().port()
    );
    let mut settings = options("mine", &base);
    settings.resolver = Some(Arc::new(Counted {
        address: server.address(),
        lookups: Arc::clone(&lookups),
        allowed: 1,
    }));
    let client = OpenAiClient::new(settings.clone()).unwrap();
    let (events, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;
    assert!(error.is_none(), "{error:?}");
    assert!(!events.is_empty());
    assert_eq!(lookups.load(Ordering::SeqCst), 1);

    // A new client (a new connection) asks again, and is refused when the answer changed.
    let client = OpenAiClient::new(settings).unwrap();
    let (_, error) = drain(client.stream(hello("m"), CancellationToken::new())).await;
    let error = error.expect("the refused name fails the request");
    assert!(lookups.load(Ordering::SeqCst) >= 2);
    assert!(
        format!("{error}").contains("models.hearth.invalid"),
        "{error}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "only the first request reached the server"
    );
}
