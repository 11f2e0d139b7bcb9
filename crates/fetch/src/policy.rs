//! What a fetcher may reach, and its limits.

use std::time::Duration;

use ipnet::IpNet;

/// Whether private networks may be reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PrivateNetworks {
    /// Only public addresses (the only choice for URLs a model, a document or a web
    /// page chose).
    #[default]
    Deny,
    /// Loopback, RFC 1918, shared address space and unique-local addresses are
    /// allowed too. Only for sources the user configured. Cloud metadata endpoints,
    /// link-local addresses and Hearth's own ports stay denied.
    Allow,
}

/// Which ports URLs may name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PortPolicy {
    /// Any port (Hearth's own ports excepted).
    #[default]
    Any,
    /// Only these ports (as effective ports: `http://host/` is port 80).
    Only(Vec<u16>),
}

impl PortPolicy {
    pub(crate) fn allows(&self, port: u16) -> bool {
        match self {
            PortPolicy::Any => true,
            PortPolicy::Only(ports) => ports.contains(&port),
        }
    }
}

/// Default cap on a response body: 10 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 10 * 1024 * 1024;
/// Default number of redirects followed.
pub const DEFAULT_MAX_REDIRECTS: usize = 5;
/// Default time allowed to connect (resolution included).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default time allowed for a whole fetch, redirects and body included.
pub const DEFAULT_TOTAL_TIMEOUT: Duration = Duration::from_secs(30);

/// The rules and limits of one [`Fetcher`](crate::Fetcher).
///
/// The default suits URLs that a model, a document or a web page can influence:
/// public addresses only, any port but Hearth's own, five redirects, 10 s to connect,
/// 30 s in all, 10 MiB per body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchPolicy {
    private_networks: PrivateNetworks,
    ports: PortPolicy,
    own_ports: Vec<u16>,
    max_redirects: usize,
    connect_timeout: Duration,
    total_timeout: Duration,
    max_response_bytes: u64,
    user_agent: String,
    #[cfg(feature = "test-support")]
    public_overrides: Vec<IpNet>,
    /// Networks an operator opened on purpose ([`FetchPolicy::opening`]).
    opened: Vec<IpNet>,
}

impl Default for FetchPolicy {
    fn default() -> Self {
        Self {
            private_networks: PrivateNetworks::Deny,
            ports: PortPolicy::Any,
            own_ports: Vec::new(),
            max_redirects: DEFAULT_MAX_REDIRECTS,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            total_timeout: DEFAULT_TOTAL_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            user_agent: format!("Hearth/{}", env!("CARGO_PKG_VERSION")),
            #[cfg(feature = "test-support")]
            public_overrides: Vec::new(),
            opened: Vec::new(),
        }
    }
}

impl FetchPolicy {
    /// Whether private networks may be reached. Use [`PrivateNetworks::Allow`] only
    /// for a source the user configured.
    pub fn with_private_networks(mut self, private_networks: PrivateNetworks) -> Self {
        self.private_networks = private_networks;
        self
    }

    /// Restricts the ports URLs may name.
    pub fn with_ports(mut self, ports: PortPolicy) -> Self {
        self.ports = ports;
        self
    }

    /// Denies a port Hearth itself listens on, on every host.
    pub fn deny_own_port(mut self, port: u16) -> Self {
        if !self.own_ports.contains(&port) {
            self.own_ports.push(port);
        }
        self
    }

    /// The most redirects followed before the fetch is refused.
    pub fn with_max_redirects(mut self, max_redirects: usize) -> Self {
        self.max_redirects = max_redirects;
        self
    }

    /// Time allowed to resolve and connect, per connection.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Time allowed for a whole fetch, every redirect and the body included.
    pub fn with_total_timeout(mut self, timeout: Duration) -> Self {
        self.total_timeout = timeout;
        self
    }

    /// The largest body read, in bytes; a larger one fails the fetch.
    pub fn with_max_response_bytes(mut self, bytes: u64) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// The `User-Agent` header sent.
    pub fn with_user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// Treats a network as public, so tests can fetch from a loopback server.
    ///
    /// Exists only with the `test-support` feature, which no shipping build enables.
    /// Cloud metadata addresses and Hearth's own ports stay denied.
    #[cfg(feature = "test-support")]
    pub fn treat_as_public(mut self, network: IpNet) -> Self {
        self.public_overrides.push(network);
        self
    }

    /// Lets addresses in `network` through as if public: a network the operator opened
    /// on purpose (a team's model gateway for its users' providers). Cloud metadata
    /// addresses and Hearth's own ports stay denied. The fetcher's own policy never
    /// takes one from configuration.
    pub fn opening(mut self, network: IpNet) -> Self {
        self.opened.push(network);
        self
    }

    /// Whether an operator opened a network holding `address`.
    pub(crate) fn is_opened(&self, address: std::net::IpAddr) -> bool {
        self.opened.iter().any(|network| network.contains(&address))
    }

    /// Whether private networks may be reached.
    pub fn private_networks(&self) -> PrivateNetworks {
        self.private_networks
    }

    /// Which ports URLs may name.
    pub fn ports(&self) -> &PortPolicy {
        &self.ports
    }

    /// Ports Hearth listens on, denied on every host.
    pub fn own_ports(&self) -> &[u16] {
        &self.own_ports
    }

    /// The most redirects followed.
    pub fn max_redirects(&self) -> usize {
        self.max_redirects
    }

    /// Time allowed to resolve and connect.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// Time allowed for a whole fetch.
    pub fn total_timeout(&self) -> Duration {
        self.total_timeout
    }

    /// The largest body read, in bytes.
    pub fn max_response_bytes(&self) -> u64 {
        self.max_response_bytes
    }

    /// The `User-Agent` header sent.
    pub fn user_agent(&self) -> &str {
        &self.user_agent
    }

    #[cfg(feature = "test-support")]
    pub(crate) fn is_overridden_public(&self, address: std::net::IpAddr) -> bool {
        self.public_overrides
            .iter()
            .any(|network| network.contains(&address))
    }

    #[cfg(not(feature = "test-support"))]
    pub(crate) fn is_overridden_public(&self, _address: std::net::IpAddr) -> bool {
        false
    }
}
