//! Name resolution: the injectable [`Resolver`], and the filtering resolver the HTTP
//! client connects through.
//!
//! The HTTP client resolves a name once per new connection, through
//! [`GuardedResolver`]: it looks the name up, checks **every** address, and hands the
//! client only those checked addresses, so the connection is pinned to what was
//! checked (no second lookup an attacker's DNS could answer differently). Literal
//! addresses never reach a resolver; the guard checks them before the request.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::error::Rule;
use crate::guard::{check_address, check_name};
use crate::policy::FetchPolicy;

/// Looks up the addresses of a host name.
///
/// The fetcher uses [`SystemResolver`] unless given another; tests inject one that
/// scripts DNS answers (rebinding, mixed answers, IPv4-mapped AAAA records).
pub trait Resolver: Send + Sync + 'static {
    /// Every address `host` resolves to. An empty answer is refused by the guard.
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>>;
}

/// The operating system's resolver (`getaddrinfo`, on a blocking thread).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            let mut addresses: Vec<IpAddr> = Vec::new();
            for socket in tokio::net::lookup_host((host, 0)).await? {
                if !addresses.contains(&socket.ip()) {
                    addresses.push(socket.ip());
                }
            }
            Ok(addresses)
        })
    }
}

/// A resolver answering from a fixed table; unknown names fail as `NotFound`.
#[derive(Clone, Debug, Default)]
pub struct StaticResolver {
    answers: HashMap<String, Vec<IpAddr>>,
}

impl StaticResolver {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Answers `host` (case and a trailing dot ignored) with `addresses`.
    pub fn with(mut self, host: &str, addresses: impl IntoIterator<Item = IpAddr>) -> Self {
        self.answers
            .insert(normalize(host), addresses.into_iter().collect());
        self
    }
}

fn normalize(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

impl Resolver for StaticResolver {
    fn lookup<'a>(&'a self, host: &'a str) -> BoxFuture<'a, io::Result<Vec<IpAddr>>> {
        let answer = self.answers.get(&normalize(host)).cloned().ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, format!("no such host `{host}`"))
        });
        Box::pin(std::future::ready(answer))
    }
}

/// A resolved address the guard refused; carried through the HTTP client's error
/// chain and turned back into [`FetchError::Refused`](crate::FetchError::Refused).
#[derive(Debug)]
pub(crate) struct GuardRefusal(pub(crate) Rule);

impl fmt::Display for GuardRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for GuardRefusal {}

/// A lookup that failed; turned back into [`FetchError::Resolve`](crate::FetchError::Resolve).
#[derive(Debug)]
pub(crate) struct LookupFailure {
    pub(crate) host: String,
    pub(crate) message: String,
}

impl fmt::Display for LookupFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "could not resolve `{}`: {}", self.host, self.message)
    }
}

impl std::error::Error for LookupFailure {}

/// The HTTP client's resolver: looks up once, checks every address, returns only
/// checked addresses.
pub(crate) struct GuardedResolver {
    pub(crate) resolver: Arc<dyn Resolver>,
    pub(crate) policy: Arc<FetchPolicy>,
}

/// A resolver for an HTTP client other than the fetcher's (a team server user's model
/// provider): `resolver`'s addresses for a name, each checked against `policy`; a name
/// with any address the policy refuses fails to resolve, on every connection.
pub fn checked_resolver(
    resolver: Arc<dyn Resolver>,
    policy: FetchPolicy,
) -> Arc<dyn reqwest::dns::Resolve> {
    Arc::new(GuardedResolver {
        resolver,
        policy: Arc::new(policy),
    })
}

/// Resolves `host` and checks every address; any non-public one refuses the name.
pub(crate) async fn resolve_checked(
    resolver: &dyn Resolver,
    policy: &FetchPolicy,
    host: &str,
) -> Result<Vec<IpAddr>, Box<dyn std::error::Error + Send + Sync>> {
    check_name(policy, host).map_err(GuardRefusal)?;
    let addresses = resolver.lookup(host).await.map_err(|error| LookupFailure {
        host: host.to_owned(),
        message: error.to_string(),
    })?;
    if addresses.is_empty() {
        return Err(GuardRefusal(Rule::NoAddresses {
            host: host.to_owned(),
        })
        .into());
    }
    for address in &addresses {
        check_address(policy, *address, Some(host)).map_err(GuardRefusal)?;
    }
    tracing::debug!(host, ?addresses, "resolved and checked");
    Ok(addresses)
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let resolver = Arc::clone(&self.resolver);
        let policy = Arc::clone(&self.policy);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addresses = resolve_checked(resolver.as_ref(), &policy, &host).await?;
            let sockets: reqwest::dns::Addrs = Box::new(
                addresses
                    .into_iter()
                    .map(|address| SocketAddr::new(address, 0)),
            );
            Ok(sockets)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ranges::AddressClass;
    use pretty_assertions::assert_eq;

    fn refusal_of(error: Box<dyn std::error::Error + Send + Sync>) -> Rule {
        error
            .downcast::<GuardRefusal>()
            .map(|refusal| refusal.0)
            .unwrap()
    }

    #[tokio::test]
    async fn every_address_is_checked() {
        let resolver = StaticResolver::new().with(
            "mixed.example",
            [
                "93.184.215.14".parse().unwrap(),
                "10.0.0.7".parse().unwrap(),
            ],
        );
        let error = resolve_checked(&resolver, &FetchPolicy::default(), "mixed.example")
            .await
            .unwrap_err();
        assert_eq!(
            refusal_of(error),
            Rule::NonPublicAddress {
                host: Some("mixed.example".into()),
                address: "10.0.0.7".parse().unwrap(),
                class: AddressClass::Private,
                network: "10.0.0.0/8".parse().unwrap(),
                via: None,
            }
        );
    }

    #[tokio::test]
    async fn an_empty_answer_is_refused() {
        let resolver = StaticResolver::new().with("empty.example", []);
        let error = resolve_checked(&resolver, &FetchPolicy::default(), "empty.example")
            .await
            .unwrap_err();
        assert_eq!(
            refusal_of(error),
            Rule::NoAddresses {
                host: "empty.example".into()
            }
        );
    }

    #[tokio::test]
    async fn public_answers_pass_unchanged() {
        let public: Vec<IpAddr> = vec![
            "93.184.215.14".parse().unwrap(),
            "2606:2800:21f:cb07:6820:80da:af6b:8b2c".parse().unwrap(),
        ];
        let resolver = StaticResolver::new().with("Example.COM.", public.clone());
        let addresses = resolve_checked(&resolver, &FetchPolicy::default(), "example.com")
            .await
            .unwrap();
        assert_eq!(addresses, public);
    }
}
