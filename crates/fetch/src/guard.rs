//! The checks every URL, every redirect and every resolved address pass.
//!
//! Hosts are classified from the parsed [`url::Host`], never from the URL's text: the
//! WHATWG parser has already turned decimal, octal, hex, short, percent-encoded and
//! full-width spellings of an IPv4 address into one `Ipv4Addr`.

use std::net::IpAddr;

use url::{Host, Url};

use crate::error::{FetchError, Result, Rule};
use crate::policy::{FetchPolicy, PrivateNetworks};
use crate::ranges::{is_metadata_address, special_purpose};

/// Names that designate this machine, besides `*.localhost`.
const LOCAL_NAMES: &[&str] = &[
    "localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "ip6-loopback",
];

/// Cloud metadata service names, denied under every policy.
const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
];

const MAX_ECHOED_INPUT: usize = 200;

/// Parses a URL the way the fetcher will use it.
pub(crate) fn parse_url(input: &str) -> Result<Url> {
    Url::parse(input.trim()).map_err(|error| FetchError::InvalidUrl {
        input: shorten(input),
        reason: error.to_string(),
    })
}

fn shorten(input: &str) -> String {
    match input.char_indices().nth(MAX_ECHOED_INPUT) {
        Some((end, _)) => format!("{}…", &input[..end]),
        None => input.to_owned(),
    }
}

/// The URL as shown in messages: its credentials replaced by `[redacted]`.
pub(crate) fn redacted(url: &Url) -> String {
    hearth_core::redact_userinfo(url.as_str()).into_owned()
}

/// A refusal of `url` under `rule`.
pub(crate) fn refusal(url: &Url, rule: Rule) -> FetchError {
    FetchError::Refused {
        url: redacted(url),
        rule,
    }
}

/// Everything that can be checked before resolution: scheme, credentials, ports, and
/// the host (a literal address fully; a name against the denied names).
pub(crate) fn check_url(policy: &FetchPolicy, url: &Url) -> Result<(), Rule> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(Rule::Scheme {
                scheme: other.to_owned(),
            });
        }
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Rule::UserInfo);
    }
    let host = url.host().ok_or(Rule::MissingHost)?;
    let port = url.port_or_known_default().ok_or(Rule::MissingHost)?;
    if policy.own_ports().contains(&port) {
        return Err(Rule::OwnPort { port });
    }
    if !policy.ports().allows(port) {
        return Err(Rule::Port { port });
    }
    match host {
        Host::Ipv4(address) => check_address(policy, IpAddr::V4(address), None),
        Host::Ipv6(address) => check_address(policy, IpAddr::V6(address), None),
        Host::Domain(name) => check_name(policy, name),
    }
}

/// Checks a host name before it is resolved.
pub(crate) fn check_name(policy: &FetchPolicy, host: &str) -> Result<(), Rule> {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    if name.is_empty() {
        return Err(Rule::MissingHost);
    }
    // The URL parser never yields an address as a name; a caller handing one over by
    // other means still gets the address checks.
    if let Ok(address) = name.parse::<IpAddr>() {
        return check_address(policy, address, None);
    }
    if METADATA_NAMES.contains(&name.as_str()) || name.ends_with(".metadata.google.internal") {
        return Err(Rule::MetadataName {
            host: host.to_owned(),
        });
    }
    let local = LOCAL_NAMES.contains(&name.as_str()) || name.ends_with(".localhost");
    if local && policy.private_networks() == PrivateNetworks::Deny {
        return Err(Rule::LocalName {
            host: host.to_owned(),
        });
    }
    Ok(())
}

/// Checks one address: a literal host, or one a name resolved to (`host`).
pub(crate) fn check_address(
    policy: &FetchPolicy,
    address: IpAddr,
    host: Option<&str>,
) -> Result<(), Rule> {
    if is_metadata_address(address) {
        return Err(Rule::MetadataAddress {
            host: host.map(str::to_owned),
            address,
        });
    }
    if policy.is_overridden_public(address) || policy.is_opened(address) {
        return Ok(());
    }
    let Some(special) = special_purpose(address) else {
        return Ok(());
    };
    if policy.private_networks() == PrivateNetworks::Allow && special.class.is_private_network() {
        return Ok(());
    }
    Err(Rule::NonPublicAddress {
        host: host.map(str::to_owned),
        address,
        class: special.class,
        network: special.network,
        via: special.via,
    })
}

impl FetchPolicy {
    /// Parses `input` and checks it against this policy without any network traffic:
    /// scheme, credentials, ports, literal addresses and denied names. A name that
    /// passes is still checked on every address it resolves to when fetched.
    pub fn check_url(&self, input: &str) -> Result<Url> {
        let url = parse_url(input)?;
        check_url(self, &url).map_err(|rule| refusal(&url, rule))?;
        Ok(url)
    }

    /// Checks one address against this policy.
    pub fn check_address(&self, address: IpAddr) -> Result<(), Rule> {
        check_address(self, address, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::PortPolicy;
    use crate::ranges::AddressClass;
    use pretty_assertions::assert_eq;

    fn rule(policy: &FetchPolicy, input: &str) -> Option<Rule> {
        policy
            .check_url(input)
            .err()
            .and_then(|error| error.rule().cloned())
    }

    #[test]
    fn credentials_never_appear_in_messages() {
        let url = Url::parse("http://user:secret@example.com/path").unwrap();
        assert_eq!(redacted(&url), "http://[redacted]@example.com/path");
        let error = FetchPolicy::default()
            .check_url("http://user:secret@example.com/")
            .unwrap_err();
        assert!(!error.to_string().contains("secret"), "{error}");
    }

    #[test]
    fn long_invalid_input_is_shortened() {
        let input = format!("http://[{}", "a".repeat(500));
        let error = FetchPolicy::default().check_url(&input).unwrap_err();
        assert!(error.to_string().len() < 400, "{error}");
    }

    #[test]
    fn private_networks_open_for_configured_sources_only_as_far_as_allowed() {
        let open = FetchPolicy::default().with_private_networks(PrivateNetworks::Allow);
        assert_eq!(rule(&open, "http://192.168.1.10:5232/cal.ics"), None);
        assert_eq!(rule(&open, "http://localhost:5232/"), None);
        assert_eq!(rule(&open, "http://[fd12::1]/"), None);
        assert_eq!(
            rule(&open, "http://169.254.169.254/latest/meta-data/"),
            Some(Rule::MetadataAddress {
                host: None,
                address: "169.254.169.254".parse().unwrap()
            })
        );
        // Every metadata address, including those inside the ranges Allow opens
        // (unique-local, carrier-grade NAT) and embedded spellings.
        for (url, address) in [
            ("http://[fd00:ec2::254]/", "fd00:ec2::254"),
            ("http://100.100.100.200/", "100.100.100.200"),
            ("http://168.63.129.16/", "168.63.129.16"),
            ("http://169.254.170.2/", "169.254.170.2"),
            ("http://192.0.0.192/", "192.0.0.192"),
            ("http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254"),
        ] {
            assert_eq!(
                rule(&open, url),
                Some(Rule::MetadataAddress {
                    host: None,
                    address: address.parse().unwrap()
                }),
                "{url}"
            );
        }
        // A resolved name is checked the same way.
        assert_eq!(
            open.check_address("100.100.100.200".parse().unwrap()),
            Err(Rule::MetadataAddress {
                host: None,
                address: "100.100.100.200".parse().unwrap()
            })
        );
        assert_eq!(open.check_address("100.64.1.1".parse().unwrap()), Ok(()));
        assert_eq!(
            rule(&open, "http://metadata.google.internal/"),
            Some(Rule::MetadataName {
                host: "metadata.google.internal".into()
            })
        );
        assert_eq!(
            rule(&open, "http://169.254.10.10/"),
            Some(Rule::NonPublicAddress {
                host: None,
                address: "169.254.10.10".parse().unwrap(),
                class: AddressClass::LinkLocal,
                network: "169.254.0.0/16".parse().unwrap(),
                via: None,
            })
        );
        let own = open.deny_own_port(7777);
        assert_eq!(
            rule(&own, "http://127.0.0.1:7777/"),
            Some(Rule::OwnPort { port: 7777 })
        );
    }

    #[test]
    fn port_allowlist_uses_effective_ports() {
        let policy = FetchPolicy::default().with_ports(PortPolicy::Only(vec![80, 443]));
        assert_eq!(rule(&policy, "https://example.com/"), None);
        assert_eq!(rule(&policy, "http://example.com:80/"), None);
        assert_eq!(
            rule(&policy, "http://example.com:8080/"),
            Some(Rule::Port { port: 8080 })
        );
    }

    #[test]
    fn public_names_and_addresses_pass() {
        let policy = FetchPolicy::default();
        for input in [
            "https://example.com/",
            "https://example.com./",
            "http://93.184.215.14/",
            "http://[2606:4700::1111]/",
            "https://bücher.example/",
        ] {
            assert_eq!(rule(&policy, input), None, "{input}");
        }
    }
}
