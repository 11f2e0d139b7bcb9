//! The crate's one error type, and the rules that refuse a URL.
//!
//! Messages name the URL (credentials redacted, where it is built and again where it is
//! shown) and the rule or failure; they never carry a response body.

use std::fmt;
use std::net::IpAddr;
use std::time::Duration;

use hearth_core::redact_userinfo;
use ipnet::IpNet;
use thiserror::Error;

use crate::ranges::{AddressClass, Embedding};

/// Result of a fetcher operation.
pub type Result<T, E = FetchError> = std::result::Result<T, E>;

/// Why the guard refused a URL or an address. Every refusal names exactly one rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Only `http` and `https` URLs are fetched.
    Scheme {
        /// The scheme the URL had.
        scheme: String,
    },
    /// The URL carries credentials (`user@host` or `user:password@host`).
    UserInfo,
    /// The URL has no host.
    MissingHost,
    /// The port is not in the policy's port allowlist.
    Port {
        /// The URL's effective port.
        port: u16,
    },
    /// The port is one Hearth itself listens on.
    OwnPort {
        /// The URL's effective port.
        port: u16,
    },
    /// The name designates this machine (`localhost`, `*.localhost`, …).
    LocalName {
        /// The host as parsed.
        host: String,
    },
    /// The name is a cloud metadata service (`metadata.google.internal`, …).
    MetadataName {
        /// The host as parsed.
        host: String,
    },
    /// The address is a cloud metadata endpoint; denied under every policy.
    MetadataAddress {
        /// The name the address was resolved from, if it came from DNS.
        host: Option<String>,
        /// The address as given or resolved.
        address: IpAddr,
    },
    /// The address is not publicly routable.
    NonPublicAddress {
        /// The name the address was resolved from, if it came from DNS.
        host: Option<String>,
        /// The address as given or resolved.
        address: IpAddr,
        /// The special-purpose class that matched.
        class: AddressClass,
        /// The registry block that matched.
        network: IpNet,
        /// How an IPv4 address was embedded in the IPv6 one, if it was.
        via: Option<Embedding>,
    },
    /// The name resolved to no address at all.
    NoAddresses {
        /// The name looked up.
        host: String,
    },
    /// More redirects than the policy allows.
    TooManyRedirects {
        /// The maximum number of redirects followed.
        limit: usize,
    },
}

impl Rule {
    /// A stable `snake_case` code for logs and the audit log.
    pub fn code(&self) -> &'static str {
        match self {
            Rule::Scheme { .. } => "scheme",
            Rule::UserInfo => "user_info",
            Rule::MissingHost => "missing_host",
            Rule::Port { .. } => "port",
            Rule::OwnPort { .. } => "own_port",
            Rule::LocalName { .. } => "local_name",
            Rule::MetadataName { .. } => "metadata_name",
            Rule::MetadataAddress { .. } => "metadata_address",
            Rule::NonPublicAddress { .. } => "non_public_address",
            Rule::NoAddresses { .. } => "no_addresses",
            Rule::TooManyRedirects { .. } => "too_many_redirects",
        }
    }
}

fn resolved_from(host: Option<&String>) -> String {
    match host {
        Some(host) => format!(" (resolved from `{host}`)"),
        None => String::new(),
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rule::Scheme { scheme } => {
                write!(f, "only http and https URLs are fetched, not `{scheme}:`")
            }
            Rule::UserInfo => f.write_str("URLs with credentials (user@host) are refused"),
            Rule::MissingHost => f.write_str("the URL has no host"),
            Rule::Port { port } => write!(f, "port {port} is not among the allowed ports"),
            Rule::OwnPort { port } => write!(f, "port {port} is Hearth's own listening port"),
            Rule::LocalName { host } => write!(f, "`{host}` names this machine"),
            Rule::MetadataName { host } => {
                write!(f, "`{host}` is a cloud metadata service name")
            }
            Rule::MetadataAddress { host, address } => write!(
                f,
                "{address}{} is a cloud metadata address, denied under every policy",
                resolved_from(host.as_ref())
            ),
            Rule::NonPublicAddress {
                host,
                address,
                class,
                network,
                via,
            } => {
                write!(f, "{address}{}", resolved_from(host.as_ref()))?;
                if let Some(via) = via {
                    write!(f, " embeds an IPv4 address ({via}) that")?;
                }
                write!(f, " is in {network}, {class}, not a public address")
            }
            Rule::NoAddresses { host } => write!(f, "`{host}` resolved to no address"),
            Rule::TooManyRedirects { limit } => {
                write!(f, "more than {limit} redirects")
            }
        }
    }
}

/// What went wrong while fetching.
#[derive(Debug, Error)]
pub enum FetchError {
    /// The guard refused the URL, an address it resolved to, or a redirect.
    #[error("refused to fetch {}: {rule}", redact_userinfo(url))]
    Refused {
        /// The refused URL, without credentials.
        url: String,
        /// The rule that refused it.
        rule: Rule,
    },
    /// The text is not a URL.
    #[error(
        "`{}` is not a valid URL ({}); give an absolute http or https URL",
        redact_userinfo(input),
        redact_userinfo(reason)
    )]
    InvalidUrl {
        /// The text given (shortened).
        input: String,
        /// What the parser said.
        reason: String,
    },
    /// The policy cannot be used for this caller.
    #[error("invalid fetch policy: {reason}")]
    InvalidPolicy {
        /// What is wrong.
        reason: String,
    },
    /// The name could not be resolved.
    #[error("could not resolve `{host}`: {message}; check the host name")]
    Resolve {
        /// The name looked up.
        host: String,
        /// What the resolver said.
        message: String,
    },
    /// The fetch took longer than the policy allows.
    #[error(
        "fetching {} took longer than {after:?}; try again later or another source",
        redact_userinfo(url)
    )]
    Timeout {
        /// The URL being fetched (the one asked for, when the total time ran out).
        url: String,
        /// The limit that ran out.
        after: Duration,
    },
    /// The server answered with a status other than success.
    #[error("{} answered HTTP {status}", redact_userinfo(url))]
    Status {
        /// The URL that answered.
        url: String,
        /// The HTTP status code.
        status: u16,
    },
    /// A redirect came without a usable `Location`.
    #[error(
        "{} answered a redirect without a usable Location header",
        redact_userinfo(url)
    )]
    BadRedirect {
        /// The URL that redirected.
        url: String,
    },
    /// The body is larger than the size cap.
    #[error(
        "{} sent more than {limit} bytes, the size cap for this fetch",
        redact_userinfo(url)
    )]
    TooLarge {
        /// The URL that answered.
        url: String,
        /// The cap in bytes.
        limit: u64,
    },
    /// The response's content type is not one the caller accepts.
    #[error(
        "unsupported content type `{content_type}` from {}; accepted here: {accepted}",
        redact_userinfo(url)
    )]
    UnsupportedContentType {
        /// The URL that answered.
        url: String,
        /// The content type it sent (`none` if it sent none).
        content_type: String,
        /// The types the caller accepts.
        accepted: String,
    },
    /// Connecting, sending or receiving failed.
    #[error(
        "could not fetch {}: {}",
        redact_userinfo(url),
        redact_userinfo(message)
    )]
    Transport {
        /// The URL being fetched.
        url: String,
        /// What failed (never the body).
        message: String,
    },
    /// The body could not be turned into text.
    #[error("could not read the {format}: {message}")]
    Conversion {
        /// `PDF`, …
        format: &'static str,
        /// What failed.
        message: String,
    },
    /// The HTTP client could not be built.
    #[error("could not set up the HTTP client: {message}")]
    Client {
        /// What failed.
        message: String,
    },
}

impl FetchError {
    /// The rule that refused the fetch, if a rule did.
    pub fn rule(&self) -> Option<&Rule> {
        match self {
            FetchError::Refused { rule, .. } => Some(rule),
            _ => None,
        }
    }

    /// The HTTP status, if the server answered with one that failed the fetch.
    pub fn status(&self) -> Option<u16> {
        match self {
            FetchError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// Whether the same fetch may succeed if tried again later.
    pub fn is_retryable(&self) -> bool {
        match self {
            FetchError::Timeout { .. } | FetchError::Transport { .. } => true,
            FetchError::Status { status, .. } => *status == 429 || *status >= 500,
            FetchError::Refused { .. }
            | FetchError::InvalidUrl { .. }
            | FetchError::InvalidPolicy { .. }
            | FetchError::Resolve { .. }
            | FetchError::BadRedirect { .. }
            | FetchError::TooLarge { .. }
            | FetchError::UnsupportedContentType { .. }
            | FetchError::Conversion { .. }
            | FetchError::Client { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn non_public_rule_names_the_range_and_the_embedding() {
        let rule = Rule::NonPublicAddress {
            host: Some("rebind.example".into()),
            address: "::ffff:127.0.0.1".parse().unwrap(),
            class: AddressClass::Loopback,
            network: "127.0.0.0/8".parse().unwrap(),
            via: Some(Embedding::Ipv4Mapped),
        };
        assert_eq!(
            rule.to_string(),
            "::ffff:127.0.0.1 (resolved from `rebind.example`) embeds an IPv4 address \
             (IPv4-mapped) that is in 127.0.0.0/8, loopback, not a public address"
        );
        assert_eq!(rule.code(), "non_public_address");
    }

    #[test]
    fn refusals_are_not_retryable_but_server_errors_are() {
        let refused = FetchError::Refused {
            url: "http://127.0.0.1/".into(),
            rule: Rule::UserInfo,
        };
        assert!(!refused.is_retryable());
        assert_eq!(refused.rule(), Some(&Rule::UserInfo));
        let busy = FetchError::Status {
            url: "https://example.com/".into(),
            status: 503,
        };
        assert!(busy.is_retryable());
        assert_eq!(busy.status(), Some(503));
    }

    #[test]
    fn credentials_are_redacted_wherever_a_message_names_a_url() {
        let errors = [
            FetchError::InvalidUrl {
                input: "http://alice:secretpw@host:99999/".into(),
                reason: "invalid port number".into(),
            },
            FetchError::Transport {
                url: "http://alice:secretpw@host/".into(),
                message: "error sending request for url (http://alice:secretpw@host/)".into(),
            },
            FetchError::Status {
                url: "https://alice:secretpw@host/feed".into(),
                status: 500,
            },
        ];
        let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "`http://[redacted]@host:99999/` is not a valid URL (invalid port number); give an absolute http or https URL",
                "could not fetch http://[redacted]@host/: error sending request for url (http://[redacted]@host/)",
                "https://[redacted]@host/feed answered HTTP 500",
            ]
        );
    }
}
