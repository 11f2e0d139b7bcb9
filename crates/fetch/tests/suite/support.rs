//! Shared helpers: policies, resolvers, expected rules, tool call contexts.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use hearth_core::{ChatUri, HarnessId, Scope, SessionId, SessionUri, ToolCallContext, TurnId};
use hearth_fetch::{
    AddressClass, ContentTypes, Embedding, FetchError, FetchPolicy, FetchRequest, Fetcher,
    Resolver, Rule, StaticResolver,
};

/// Public (unit test table) address used as a stand-in for "somewhere on the internet";
/// only ever named in refused fetches, never connected to.
pub const PUBLIC_ELSEWHERE: &str = "93.184.215.14";

/// The policy of the served tests: default rules, 127.0.0.1 (and only it) public.
pub fn loopback_public_policy() -> FetchPolicy {
    FetchPolicy::default().treat_as_public("127.0.0.1/32".parse().unwrap())
}

pub fn fetcher(policy: FetchPolicy, resolver: impl Resolver) -> Fetcher {
    Fetcher::with_resolver(policy, Arc::new(resolver)).unwrap()
}

/// A fetcher under the loopback-public policy resolving `site.test` to 127.0.0.1.
pub fn served_fetcher() -> Fetcher {
    fetcher(
        loopback_public_policy(),
        StaticResolver::new().with("site.test", [ip("127.0.0.1")]),
    )
}

pub fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

pub fn get(url: &str) -> FetchRequest {
    FetchRequest::new(url, ContentTypes::any())
}

/// The rule a fetch was refused under; panics with the error if it was not refused.
pub fn refused_rule(result: hearth_fetch::Result<hearth_fetch::FetchResponse>) -> Rule {
    match result {
        Err(FetchError::Refused { rule, .. }) => rule,
        Err(other) => panic!("expected a refusal, got: {other}"),
        Ok(response) => panic!(
            "expected a refusal, got a response from {}",
            response.final_url
        ),
    }
}

pub fn non_public(
    address: &str,
    class: AddressClass,
    network: &str,
    via: Option<Embedding>,
) -> Rule {
    Rule::NonPublicAddress {
        host: None,
        address: ip(address),
        class,
        network: network.parse().unwrap(),
        via,
    }
}

pub fn non_public_from(
    host: &str,
    address: &str,
    class: AddressClass,
    network: &str,
    via: Option<Embedding>,
) -> Rule {
    Rule::NonPublicAddress {
        host: Some(host.to_owned()),
        address: ip(address),
        class,
        network: network.parse().unwrap(),
        via,
    }
}

pub fn loopback(address: &str) -> Rule {
    non_public(address, AddressClass::Loopback, "127.0.0.0/8", None)
}

pub fn metadata(address: &str) -> Rule {
    Rule::MetadataAddress {
        host: None,
        address: ip(address),
    }
}

/// A resolver answering each lookup with the next scripted answer (the last one
/// repeats) and counting lookups.
pub struct ScriptedResolver {
    answers: Mutex<VecDeque<Vec<IpAddr>>>,
    lookups: Arc<AtomicUsize>,
}

impl ScriptedResolver {
    pub fn new(answers: Vec<Vec<IpAddr>>) -> (Self, Arc<AtomicUsize>) {
        let lookups = Arc::new(AtomicUsize::new(0));
        let resolver = Self {
            answers: Mutex::new(answers.into()),
            lookups: Arc::clone(&lookups),
        };
        (resolver, lookups)
    }
}

impl Resolver for ScriptedResolver {
    fn lookup<'a>(&'a self, _host: &'a str) -> BoxFuture<'a, std::io::Result<Vec<IpAddr>>> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        let mut answers = self.answers.lock().unwrap();
        let answer = if answers.len() > 1 {
            answers.pop_front().unwrap_or_default()
        } else {
            answers.front().cloned().unwrap_or_default()
        };
        Box::pin(std::future::ready(Ok(answer)))
    }
}

pub fn tool_call() -> ToolCallContext {
    let session = SessionUri::new(HarnessId::parse("replay").unwrap(), SessionId::generate());
    ToolCallContext {
        chat: ChatUri::default_for(&session),
        session,
        turn_id: TurnId::generate(),
        call_id: "call-1".to_owned(),
        scope: Scope::Global,
        working_directories: Vec::new(),
    }
}
