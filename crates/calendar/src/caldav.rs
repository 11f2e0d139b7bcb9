//! CalDAV calendars (RFC 4791): discovery from a server root, sync into a local cache
//! (`sync-collection`, RFC 6578, where the server supports it, else a comparison of
//! ETags), and the requests that apply approved changes (`PUT` with `If-Match` or
//! `If-None-Match: *`, `DELETE` with `If-Match`).
//!
//! Requests go through a [`DavTransport`]: Hearth plugs its guarded fetcher in (private
//! networks only where the calendar allows them, redirects re-checked, the password
//! sent to the configured origin only). The password comes from an environment
//! variable or a command (a system keyring's command-line tool) each time a request
//! needs it; it is never written to the configuration, the cache, logs or errors.
//!
//! The cache is one JSON file per calendar, replaced atomically after each sync, so a
//! sync that fails part-way leaves the last complete copy: reads work offline from it,
//! with the time it was synced.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use hearth_core::redact_userinfo;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::{CalendarError, Result};

pub(crate) mod xml;

/// How many resources one `calendar-multiget` asks for.
const MULTIGET_BATCH: usize = 250;
/// How often a request answered with a 5xx or a 429 is tried.
const ATTEMPTS: u32 = 3;
/// The cache file's format.
const CACHE_FORMAT: u32 = 1;

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

/// Where a CalDAV password comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PasswordSource {
    /// No password (a server that needs none).
    None,
    /// An environment variable.
    Env(String),
    /// A program and its arguments that print the password (`secret-tool lookup …`,
    /// `security find-generic-password -w …`, `pass show …`).
    Command(Vec<String>),
}

/// A CalDAV account: the server, the user and where the password comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalDavAccount {
    /// The calendar id it belongs to (for messages), or the URL being discovered.
    pub label: String,
    /// The URL (a calendar collection, or a server root to discover from).
    pub url: String,
    /// The user name.
    pub username: Option<String>,
    /// The password's source.
    pub password: PasswordSource,
    /// Whether the server may be on a private network.
    pub allow_private_network: bool,
}

/// A CalDAV calendar as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CalDavSource {
    pub account: CalDavAccount,
    /// How long a sync is used before syncing again.
    pub refresh: Duration,
    /// The cache file.
    pub cache: PathBuf,
    /// The most bytes of one answer.
    pub max_bytes: u64,
}

impl CalDavAccount {
    /// The password, read now from its source.
    fn password(&self) -> Result<Option<String>> {
        match &self.password {
            PasswordSource::None => Ok(None),
            PasswordSource::Env(name) => match std::env::var(name) {
                Ok(value) if !value.is_empty() => Ok(Some(value)),
                _ => Err(self.error(format!(
                    "the password variable `{name}` is not set; export it (an app password from the provider), or set `password_command`"
                ))),
            },
            PasswordSource::Command(command) => {
                let Some((program, args)) = command.split_first() else {
                    return Err(self.error("`password_command` is empty".to_owned()));
                };
                let output = std::process::Command::new(program)
                    .args(args)
                    .stdin(std::process::Stdio::null())
                    .output()
                    .map_err(|error| {
                        self.error(format!("`password_command` ({program}) cannot run: {error}"))
                    })?;
                if !output.status.success() {
                    return Err(self.error(format!(
                        "`password_command` ({program}) failed ({}); run it yourself to see why",
                        output.status
                    )));
                }
                let text = String::from_utf8(output.stdout).map_err(|_| {
                    self.error(format!("`password_command` ({program}) printed non-UTF-8 text"))
                })?;
                let password = text.lines().next().unwrap_or("").to_owned();
                if password.is_empty() {
                    return Err(self.error(format!(
                        "`password_command` ({program}) printed no password"
                    )));
                }
                Ok(Some(password))
            }
        }
    }

    fn authorization(&self) -> Result<Option<String>> {
        let password = self.password()?;
        match (&self.username, password) {
            (None, None) => Ok(None),
            (user, password) => {
                let pair = format!(
                    "{}:{}",
                    user.as_deref().unwrap_or(""),
                    password.as_deref().unwrap_or("")
                );
                Ok(Some(format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(pair)
                )))
            }
        }
    }

    pub(crate) fn error(&self, message: String) -> CalendarError {
        CalendarError::Server {
            id: self.label.clone(),
            url: self.url.clone(),
            message,
        }
    }
}

/// Whether a status says the server is busy or failing for now (asked again), rather
/// than that it does not support the request (`501`, `505`: answered to the caller).
fn busy(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

/// Talks to one account's server.
pub(crate) struct DavClient<'a> {
    transport: &'a dyn DavTransport,
    account: &'a CalDavAccount,
    authorization: Option<String>,
    max_bytes: u64,
}

impl<'a> DavClient<'a> {
    pub(crate) fn new(
        transport: &'a dyn DavTransport,
        account: &'a CalDavAccount,
        max_bytes: u64,
    ) -> Result<Self> {
        Ok(Self {
            transport,
            account,
            authorization: account.authorization()?,
            max_bytes,
        })
    }

    /// Sends a request, trying again (after 0.25 s, then 1 s) when it is answered with a
    /// 5xx or a 429.
    pub(crate) async fn send(
        &self,
        method: &'static str,
        url: &str,
        headers: Vec<(&'static str, String)>,
        body: Option<String>,
    ) -> Result<DavResponse> {
        let request = DavRequest {
            method,
            url: url.to_owned(),
            headers,
            authorization: self.authorization.clone(),
            body,
            allow_private_network: self.account.allow_private_network,
            max_bytes: self.max_bytes,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let answer = self.transport.send(request.clone()).await;
            // A busy or failing server is asked again; one that cannot be reached (or
            // timed out, having already been waited for) is not.
            let retry = match &answer {
                Ok(response) => busy(response.status),
                Err(_) => false,
            };
            if !retry || attempt >= ATTEMPTS {
                return match answer {
                    Ok(response) => self.check_auth(method, url, response),
                    Err(message) => Err(self
                        .account
                        .error(format!("{method} {url} failed: {message}"))),
                };
            }
            tokio::time::sleep(Duration::from_millis(
                250 * u64::from(4_u32.pow(attempt - 1)),
            ))
            .await;
        }
    }

    fn check_auth(&self, method: &str, url: &str, response: DavResponse) -> Result<DavResponse> {
        match response.status {
            401 => Err(self.account.error(format!(
                "the server refused the user name and password (HTTP 401 on {method} {url}); check `username` and the password{}",
                match &self.account.password {
                    PasswordSource::Env(name) => format!(" in `{name}`"),
                    PasswordSource::Command(_) => " `password_command` prints".to_owned(),
                    PasswordSource::None => " (none is configured: set `password_env`)".to_owned(),
                }
            ))),
            status if busy(status) => Err(self.account.error(format!(
                "{method} {url} answered HTTP {status} (tried {ATTEMPTS} times); the server is busy or failing, try again later"
            ))),
            _ => Ok(response),
        }
    }

    /// A request whose answer must be a `207 Multi-Status`.
    async fn multistatus(
        &self,
        method: &'static str,
        url: &str,
        depth: &str,
        body: String,
    ) -> Result<xml::Multistatus> {
        let response = self
            .send(
                method,
                url,
                vec![
                    ("Depth", depth.to_owned()),
                    ("Content-Type", "application/xml; charset=utf-8".to_owned()),
                ],
                Some(body),
            )
            .await?;
        if response.status == 200 {
            return Err(self.account.error(format!(
                "{method} {url} answered HTTP 200 with something other than WebDAV (a login page or a proxy?); check the URL"
            )));
        }
        if response.status != 207 {
            return Err(self.status_error(method, url, &response));
        }
        let text = String::from_utf8_lossy(&response.body);
        xml::parse_multistatus(&text)
            .map_err(|message| self.account.error(format!("{method} {url}: {message}")))
    }

    fn status_error(&self, method: &str, url: &str, response: &DavResponse) -> CalendarError {
        let hint = match response.status {
            403 => "; the account may lack access to it",
            404 => {
                "; check the URL (discover calendars with `hearth calendar add --caldav <server>`)"
            }
            405 | 501 => "; the server does not support this CalDAV request",
            _ => "",
        };
        self.account.error(format!(
            "{method} {url} answered HTTP {}{hint}",
            response.status
        ))
    }
}

/// `text` is not a URL (shown with its credentials redacted).
fn not_a_url(text: &str, error: &url::ParseError) -> CalendarError {
    CalendarError::InvalidInput(format!("`{}` is not a URL: {error}", redact_userinfo(text)))
}

/// The absolute URL of `href` (as a server reports it) against `base`.
pub(crate) fn resolve(base: &str, href: &str) -> Result<String> {
    let base = Url::parse(base).map_err(|error| not_a_url(base, &error))?;
    base.join(href).map(String::from).map_err(|error| {
        CalendarError::InvalidInput(format!(
            "`{}` is not a URL path: {error}",
            redact_userinfo(href)
        ))
    })
}

/// The href of a new resource for `uid` in the collection at `collection`.
pub(crate) fn new_resource_href(collection: &str, uid: &str) -> Result<String> {
    let path = Url::parse(collection)
        .map_err(|error| not_a_url(collection, &error))?
        .path()
        .to_owned();
    let name: String = uid
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let folder = if path.ends_with('/') {
        path
    } else {
        format!("{path}/")
    };
    Ok(format!("{folder}{name}.ics"))
}

/// Whether `href` (as a server reported it) stays on the collection's origin: a member
/// elsewhere is never fetched or written.
pub(crate) fn same_origin(collection: &str, href: &str) -> bool {
    match (
        Url::parse(collection),
        resolve(collection, href).map(|u| Url::parse(&u)),
    ) {
        (Ok(base), Ok(Ok(url))) => base.origin() == url.origin(),
        _ => false,
    }
}

/// Whether `href` names the collection at `collection` itself.
fn is_collection(collection: &str, href: &str) -> bool {
    let (Ok(base), Ok(resolved)) = (Url::parse(collection), resolve(collection, href)) else {
        return false;
    };
    Url::parse(&resolved)
        .is_ok_and(|url| url.path().trim_end_matches('/') == base.path().trim_end_matches('/'))
}

/// One event resource as last synced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CachedResource {
    pub etag: Option<String>,
    pub text: String,
}

/// A calendar's last complete sync.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SyncCache {
    pub format: u32,
    /// The collection's URL and the user it was synced as: a cache of another is not used.
    pub url: String,
    pub username: Option<String>,
    pub synced_at: Option<DateTime<Utc>>,
    pub sync_token: Option<String>,
    pub ctag: Option<String>,
    /// The resources by href.
    pub resources: BTreeMap<String, CachedResource>,
}

impl SyncCache {
    fn empty(account: &CalDavAccount) -> Self {
        Self {
            format: CACHE_FORMAT,
            url: account.url.clone(),
            username: account.username.clone(),
            ..Self::default()
        }
    }

    /// The cache at `path` if it is one of this account's collection.
    pub(crate) fn read(path: &std::path::Path, account: &CalDavAccount) -> Result<Option<Self>> {
        let Some(bytes) = crate::atomic::read_optional(path)? else {
            return Ok(None);
        };
        match serde_json::from_slice::<Self>(&bytes) {
            Ok(cache)
                if cache.format == CACHE_FORMAT
                    && cache.url == account.url
                    && cache.username == account.username =>
            {
                Ok(Some(cache))
            }
            Ok(_) => Ok(None),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "unreadable CalDAV cache; syncing afresh");
                Ok(None)
            }
        }
    }

    /// Replaces the cache file atomically (its folder is created, private to the user).
    pub(crate) fn write(&self, path: &std::path::Path) -> Result<()> {
        if let Some(folder) = path.parent() {
            create_private_folder(folder)?;
        }
        let bytes =
            serde_json::to_vec(self).map_err(|error| CalendarError::Task(error.to_string()))?;
        crate::atomic::write_atomic(path, &bytes, crate::atomic::WriteMode::Replace)?;
        restrict(path)
    }
}

fn create_private_folder(folder: &std::path::Path) -> Result<()> {
    let error = |source| CalendarError::Write {
        path: folder.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(folder).map_err(error)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700)).map_err(error)?;
    }
    Ok(())
}

fn restrict(path: &std::path::Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(
            |source| CalendarError::Write {
                path: path.to_path_buf(),
                source,
            },
        )?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// How a sync found the changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMethod {
    /// `sync-collection` (RFC 6578).
    SyncCollection,
    /// A listing of every ETag, compared with the cache.
    EtagComparison,
    /// The collection's ctag had not changed.
    Unchanged,
}

/// What a sync did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SyncReport {
    /// The calendar.
    pub calendar: String,
    /// How changes were found.
    pub method: SyncMethod,
    /// Resources new since the last sync.
    pub added: usize,
    /// Resources changed since the last sync.
    pub changed: usize,
    /// Resources removed since the last sync.
    pub removed: usize,
    /// Resources now cached.
    pub resources: usize,
    /// When.
    pub synced_at: DateTime<Utc>,
}

/// Syncs `source` into its cache file; returns the new cache and what changed. A failure
/// leaves the cache file as it was.
pub(crate) async fn sync(
    transport: &dyn DavTransport,
    source: &CalDavSource,
) -> Result<(SyncCache, SyncReport)> {
    let account = &source.account;
    let client = DavClient::new(transport, account, source.max_bytes)?;
    let cache_path = source.cache.clone();
    let account_for_read = account.clone();
    let previous =
        tokio::task::spawn_blocking(move || SyncCache::read(&cache_path, &account_for_read))
            .await
            .map_err(|error| CalendarError::Task(error.to_string()))??
            .unwrap_or_else(|| SyncCache::empty(account));
    let collection = account.url.as_str();

    // What is on the server now: each member's ETag, or (incremental) only the changes.
    let mut listed: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut removed: Vec<String> = Vec::new();
    let mut full = true;
    let mut new_token = None;
    let mut new_ctag = previous.ctag.clone();
    let mut method = SyncMethod::SyncCollection;
    let report = match sync_collection(&client, collection, previous.sync_token.as_deref()).await? {
        Some(report) => Some(report),
        // The token expired: everything again.
        None if previous.sync_token.is_some() => sync_collection(&client, collection, None).await?,
        None => None,
    };
    match report {
        Some((multistatus, incremental)) => {
            full = !incremental;
            new_token = multistatus.sync_token.clone();
            for response in multistatus.responses {
                if is_collection(collection, &response.href)
                    || !same_origin(collection, &response.href)
                {
                    continue;
                }
                if response.status == Some(404) {
                    removed.push(response.href);
                } else {
                    listed.insert(response.href, response.props.etag);
                }
            }
        }
        None => {
            method = SyncMethod::EtagComparison;
            let head = client
                .multistatus(
                    "PROPFIND",
                    collection,
                    "0",
                    xml::propfind(&["cs:getctag", "d:sync-token"]),
                )
                .await?;
            let ctag = head.responses.first().and_then(|r| r.props.ctag.clone());
            if ctag.is_some() && ctag == previous.ctag && previous.synced_at.is_some() {
                method = SyncMethod::Unchanged;
                listed = previous
                    .resources
                    .iter()
                    .map(|(href, r)| (href.clone(), r.etag.clone()))
                    .collect();
            } else {
                new_ctag = ctag;
                let listing = client
                    .multistatus(
                        "PROPFIND",
                        collection,
                        "1",
                        xml::propfind(&["d:getetag", "d:resourcetype"]),
                    )
                    .await?;
                for response in listing.responses {
                    if is_collection(collection, &response.href)
                        || !same_origin(collection, &response.href)
                        || response
                            .props
                            .resource_types
                            .iter()
                            .any(|t| t == "collection")
                    {
                        continue;
                    }
                    listed.insert(response.href, response.props.etag);
                }
            }
        }
    }

    let mut resources = if full {
        BTreeMap::new()
    } else {
        previous.resources.clone()
    };
    for href in &removed {
        resources.remove(href);
    }
    let mut to_fetch: Vec<String> = Vec::new();
    for (href, etag) in &listed {
        match previous.resources.get(href) {
            Some(cached) if etag.is_some() && cached.etag == *etag => {
                resources.insert(href.clone(), cached.clone());
            }
            _ => to_fetch.push(href.clone()),
        }
    }
    for batch in to_fetch.chunks(MULTIGET_BATCH) {
        let hrefs: Vec<&str> = batch.iter().map(String::as_str).collect();
        let fetched = client
            .multistatus("REPORT", collection, "1", xml::calendar_multiget(&hrefs))
            .await?;
        for response in fetched.responses {
            match response.props.calendar_data {
                Some(text) => {
                    resources.insert(
                        response.href,
                        CachedResource {
                            etag: response.props.etag,
                            text,
                        },
                    );
                }
                // Removed between the listing and the fetch.
                None => {
                    resources.remove(&response.href);
                }
            }
        }
    }
    let added = resources
        .keys()
        .filter(|href| !previous.resources.contains_key(*href))
        .count();
    let changed = resources
        .iter()
        .filter(|(href, r)| {
            previous
                .resources
                .get(*href)
                .is_some_and(|p| p.etag != r.etag || p.text != r.text)
        })
        .count();
    let gone = previous
        .resources
        .keys()
        .filter(|href| !resources.contains_key(*href))
        .count();
    let synced_at = Utc::now();
    let cache = SyncCache {
        format: CACHE_FORMAT,
        url: account.url.clone(),
        username: account.username.clone(),
        synced_at: Some(synced_at),
        sync_token: new_token.or_else(|| {
            (method != SyncMethod::SyncCollection)
                .then(|| previous.sync_token.clone())
                .flatten()
        }),
        ctag: new_ctag,
        resources,
    };
    let path = source.cache.clone();
    let written = cache.clone();
    tokio::task::spawn_blocking(move || written.write(&path))
        .await
        .map_err(|error| CalendarError::Task(error.to_string()))??;
    let report = SyncReport {
        calendar: account.label.clone(),
        method,
        added,
        changed,
        removed: gone,
        resources: cache.resources.len(),
        synced_at,
    };
    Ok((cache, report))
}

/// A `sync-collection` report from `token`: `None` when the server does not support it
/// (or, with a token, no longer accepts the token); else the report and whether it was
/// incremental.
async fn sync_collection(
    client: &DavClient<'_>,
    collection: &str,
    token: Option<&str>,
) -> Result<Option<(xml::Multistatus, bool)>> {
    let response = client
        .send(
            "REPORT",
            collection,
            vec![
                ("Depth", "0".to_owned()),
                ("Content-Type", "application/xml; charset=utf-8".to_owned()),
            ],
            Some(xml::sync_collection(token)),
        )
        .await?;
    match response.status {
        207 => {
            let text = String::from_utf8_lossy(&response.body);
            let parsed = xml::parse_multistatus(&text).map_err(|message| {
                client
                    .account
                    .error(format!("REPORT sync-collection {collection}: {message}"))
            })?;
            if parsed.sync_token.is_none() {
                // Not a sync report after all: compare ETags instead.
                return Ok(None);
            }
            Ok(Some((parsed, token.is_some())))
        }
        404 => Err(client.status_error("REPORT", collection, &response)),
        // 400/403/409 for an unknown or expired token (`valid-sync-token`), or a server
        // without the report (403, 405, 415, 501).
        _ => Ok(None),
    }
}

/// A calendar found on a server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DiscoveredCalendar {
    /// The collection's URL.
    pub url: String,
    /// Its display name.
    pub name: Option<String>,
    /// Its colour (`#rrggbb` or `#rrggbbaa`).
    pub color: Option<String>,
    /// The components it holds (`VEVENT`, `VTODO`); empty when the server does not say.
    pub components: Vec<String>,
}

impl DiscoveredCalendar {
    /// Whether it holds events.
    pub fn holds_events(&self) -> bool {
        self.components.is_empty() || self.components.iter().any(|c| c == "VEVENT")
    }
}

/// Finds the account's calendars from a server root, a principal, a calendar home or a
/// calendar: `current-user-principal` → `calendar-home-set` → the collections in it
/// (RFC 4791 §6.2.1, RFC 5397, RFC 6764's `/.well-known/caldav`).
pub async fn discover(
    transport: &dyn DavTransport,
    account: &CalDavAccount,
) -> Result<Vec<DiscoveredCalendar>> {
    let client = DavClient::new(transport, account, 16 * 1024 * 1024)?;
    let start = account.url.as_str();
    let probe = xml::propfind(&[
        "d:current-user-principal",
        "c:calendar-home-set",
        "d:resourcetype",
        "d:displayname",
        "ic:calendar-color",
        "c:supported-calendar-component-set",
    ]);
    let first = match client
        .multistatus("PROPFIND", start, "0", probe.clone())
        .await
    {
        Ok(found) => found,
        Err(error) => {
            // A server root that is not itself a DAV resource: try the well-known URL.
            let well_known = resolve(start, "/.well-known/caldav")?;
            match client
                .multistatus("PROPFIND", &well_known, "0", probe.clone())
                .await
            {
                Ok(found) => found,
                Err(_) => return Err(error),
            }
        }
    };
    let Some(here) = first.responses.first() else {
        return Err(account.error(format!("PROPFIND {start} answered no properties")));
    };
    if here.props.resource_types.iter().any(|t| t == "calendar") {
        return Ok(vec![calendar_of(start, here)?]);
    }
    let home = match &here.props.calendar_home_set {
        Some(home) => resolve(start, home)?,
        None => {
            let principal = here.props.current_user_principal.as_deref().ok_or_else(|| {
                account.error(format!(
                    "{start} names no current-user-principal; give the URL of your calendar home or of a calendar"
                ))
            })?;
            let principal = resolve(start, principal)?;
            let found = client
                .multistatus(
                    "PROPFIND",
                    &principal,
                    "0",
                    xml::propfind(&["c:calendar-home-set"]),
                )
                .await?;
            let home = found
                .responses
                .iter()
                .find_map(|r| r.props.calendar_home_set.clone())
                .ok_or_else(|| {
                    account.error(format!(
                        "the principal {principal} names no calendar-home-set; the server may not offer CalDAV there"
                    ))
                })?;
            resolve(&principal, &home)?
        }
    };
    let listing = client
        .multistatus(
            "PROPFIND",
            &home,
            "1",
            xml::propfind(&[
                "d:resourcetype",
                "d:displayname",
                "ic:calendar-color",
                "c:supported-calendar-component-set",
            ]),
        )
        .await?;
    listing
        .responses
        .iter()
        .filter(|r| r.props.resource_types.iter().any(|t| t == "calendar"))
        .map(|r| calendar_of(&home, r))
        .collect()
}

fn calendar_of(base: &str, response: &xml::Response) -> Result<DiscoveredCalendar> {
    let href = if response.href.is_empty() {
        base.to_owned()
    } else {
        resolve(base, &response.href)?
    };
    Ok(DiscoveredCalendar {
        url: href,
        name: response.props.display_name.clone(),
        color: response.props.color.clone(),
        components: response.props.components.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collection_itself_is_told_from_its_members() {
        let collection = "http://127.0.0.1:5232/alice/work/";
        assert!(is_collection(collection, "/alice/work/"));
        assert!(is_collection(collection, "/alice/work"));
        assert!(is_collection(
            collection,
            "http://127.0.0.1:5232/alice/work/"
        ));
        assert!(!is_collection(collection, "/alice/work/a.ics"));
    }

    #[test]
    fn a_member_on_another_origin_is_not_the_collections() {
        let collection = "http://127.0.0.1:5232/alice/work/";
        assert!(same_origin(collection, "/alice/work/a.ics"));
        assert!(same_origin(
            collection,
            "http://127.0.0.1:5232/alice/work/a.ics"
        ));
        assert!(!same_origin(collection, "http://169.254.169.254/latest/"));
        assert!(!same_origin(
            collection,
            "https://127.0.0.1:5232/alice/work/a.ics"
        ));
        assert!(!same_origin(collection, "//evil.test/a.ics"));
    }

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

    #[test]
    fn a_missing_password_variable_is_named() {
        let account = CalDavAccount {
            label: "work".to_owned(),
            url: "http://x.test/".to_owned(),
            username: Some("alice".to_owned()),
            password: PasswordSource::Env("HEARTH_TEST_UNSET_CALDAV_PASSWORD".to_owned()),
            allow_private_network: false,
        };
        let error = account.authorization().unwrap_err().to_string();
        assert!(
            error.contains("HEARTH_TEST_UNSET_CALDAV_PASSWORD"),
            "{error}"
        );
    }

    #[test]
    fn a_password_command_is_run_and_its_first_line_used() {
        let account = CalDavAccount {
            label: "work".to_owned(),
            url: "http://x.test/".to_owned(),
            username: Some("alice".to_owned()),
            password: PasswordSource::Command(vec![
                "printf".to_owned(),
                "s3cret\\nignored\\n".to_owned(),
            ]),
            allow_private_network: false,
        };
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode("alice:s3cret")
        );
        assert_eq!(account.authorization().unwrap(), Some(expected));
    }
}
