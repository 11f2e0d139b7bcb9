//! How `hearth serve` listens: address, port, remote opt-in, request limits, queue sizes,
//! connection timeouts and cap, how long a browser stays logged in, and OpenID Connect
//! login.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Result, ServerError};
use crate::oidc::OidcOptions;

/// The port `hearth serve` listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 8421;

/// The largest request body or WebSocket message accepted, in bytes.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// Frames queued per connection before its subscriptions count as fallen behind.
pub const DEFAULT_QUEUE_CAPACITY: usize = 4096;

/// How long a new connection may take to send its first request's head.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a kept-alive connection may wait between requests.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// HTTP connections held at once (never more than the open-file limit allows). At the cap
/// a new connection closes the oldest one that has not sent a whole request yet (else the
/// oldest idle one), so clients that send requests are served while others only connect.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;

/// How the server listens and what it accepts.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Where to listen. Port 0 picks a free port (tests).
    pub address: SocketAddr,
    /// Whether a non-loopback address is allowed.
    pub allow_remote: bool,
    /// Host names (without port) accepted in the `Host` header besides the loopback
    /// names and the address listened on.
    pub extra_hosts: Vec<String>,
    /// Origins (`scheme://host:port`) accepted besides the server's own.
    pub extra_origins: Vec<String>,
    /// Largest request body or WebSocket message, in bytes.
    pub max_request_bytes: usize,
    /// Frames queued per connection before it is resynced.
    pub queue_capacity: usize,
    /// How long a new connection may take to send its first request's head.
    pub header_read_timeout: Duration,
    /// How long a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// HTTP connections held at once (lowered to what the open-file limit allows).
    pub max_connections: usize,
    /// The login key's file (browser sessions; `hearth serve` uses `login.key` in the data
    /// directory). Without one the key lives in memory: browsers are logged out when the
    /// server stops.
    pub login_key_file: Option<PathBuf>,
    /// How long a browser stays logged in.
    pub login_lifetime: Duration,
    /// OpenID Connect login for the web (team servers): people log in at the provider
    /// (`GET /auth/oidc`) and their browser sessions carry their user. `None` (the
    /// default): only login links of the token's holder.
    pub oidc: Option<OidcOptions>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            address: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), DEFAULT_PORT),
            allow_remote: false,
            extra_hosts: Vec::new(),
            extra_origins: Vec::new(),
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            queue_capacity: DEFAULT_QUEUE_CAPACITY,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            login_key_file: None,
            login_lifetime: crate::login::DEFAULT_LOGIN_LIFETIME,
            oidc: None,
        }
    }
}

impl ServerOptions {
    /// Options for an address given as text (`127.0.0.1`, `::1`) and a port.
    pub fn at(bind: &str, port: u16) -> Result<Self> {
        let ip: IpAddr = bind
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse()
            .map_err(|_| ServerError::BadAddress(bind.to_owned()))?;
        Ok(Self {
            address: SocketAddr::new(ip, port),
            ..Self::default()
        })
    }

    /// Refuses a non-loopback address unless remote access was asked for, and extra
    /// `Host` names without remote access (on loopback they would only weaken the
    /// DNS-rebinding defence).
    pub fn check(&self) -> Result<()> {
        if !self.address.ip().is_loopback() && !self.allow_remote {
            return Err(ServerError::RemoteBind {
                address: self.address,
            });
        }
        if !self.allow_remote
            && let Some(host) = self.extra_hosts.iter().find(|host| !host.trim().is_empty())
        {
            return Err(ServerError::HostWithoutRemote(host.clone()));
        }
        Ok(())
    }
}

/// The URL a client on this machine uses for a server listening on `address`: a
/// wildcard address (`0.0.0.0`, `::`) is reached through loopback, which the Host
/// check accepts.
pub(crate) fn loopback_url(address: SocketAddr) -> String {
    let ip = match address.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    format!("http://{}", SocketAddr::new(ip, address.port()))
}

/// The exact `Host` values and origins a server on `address` (with its real port)
/// accepts.
pub(crate) fn allowed_authorities(
    options: &ServerOptions,
    address: SocketAddr,
) -> (Vec<String>, Vec<String>) {
    let port = address.port();
    let mut names: Vec<String> = vec!["127.0.0.1".into(), "localhost".into(), "[::1]".into()];
    if !address.ip().is_loopback() && !address.ip().is_unspecified() {
        names.push(match address.ip() {
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        });
    }
    names.extend(
        options
            .extra_hosts
            .iter()
            .map(|host| host.trim().to_ascii_lowercase())
            .filter(|host| !host.is_empty()),
    );
    let hosts: Vec<String> = names.iter().map(|name| format!("{name}:{port}")).collect();
    let mut origins: Vec<String> = names
        .iter()
        .map(|name| format!("http://{name}:{port}"))
        .collect();
    origins.extend(
        options
            .extra_origins
            .iter()
            .map(|origin| origin.trim().trim_end_matches('/').to_ascii_lowercase()),
    );
    (hosts, origins)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_without_opt_in() {
        assert!(ServerOptions::at("127.0.0.1", 1).unwrap().check().is_ok());
        assert!(ServerOptions::at("::1", 1).unwrap().check().is_ok());
        let error = ServerOptions::at("0.0.0.0", 1)
            .unwrap()
            .check()
            .unwrap_err();
        assert!(error.to_string().contains("--allow-remote"), "{error}");
        let mut remote = ServerOptions::at("0.0.0.0", 1).unwrap();
        remote.allow_remote = true;
        assert!(remote.check().is_ok());
        assert!(ServerOptions::at("localhost", 1).is_err());
    }

    #[test]
    fn extra_hosts_need_remote_access() {
        let mut options = ServerOptions::at("127.0.0.1", 1).unwrap();
        options.extra_hosts = vec!["hearth.example".into()];
        let error = options.check().unwrap_err();
        assert!(
            matches!(&error, ServerError::HostWithoutRemote(host) if host == "hearth.example"),
            "{error:?}"
        );
        assert!(error.to_string().contains("--allow-remote"), "{error}");
        options.allow_remote = true;
        assert!(options.check().is_ok());
    }

    #[test]
    fn a_wildcard_address_is_reached_through_loopback() {
        assert_eq!(
            loopback_url("0.0.0.0:9000".parse().unwrap()),
            "http://127.0.0.1:9000"
        );
        assert_eq!(
            loopback_url("[::]:9000".parse().unwrap()),
            "http://[::1]:9000"
        );
        assert_eq!(
            loopback_url("192.168.1.5:9000".parse().unwrap()),
            "http://192.168.1.5:9000"
        );
        assert_eq!(
            loopback_url("[::1]:9000".parse().unwrap()),
            "http://[::1]:9000"
        );
    }

    #[test]
    fn authorities_carry_the_port() {
        let options = ServerOptions::default();
        let (hosts, origins) = allowed_authorities(&options, "127.0.0.1:9000".parse().unwrap());
        assert_eq!(hosts, ["127.0.0.1:9000", "localhost:9000", "[::1]:9000"]);
        assert_eq!(
            origins,
            [
                "http://127.0.0.1:9000",
                "http://localhost:9000",
                "http://[::1]:9000"
            ]
        );
    }
}
