//! Syncing a collection: from its last complete sync ([`SyncCache`]) to what the server
//! holds now — the changes since a `sync-collection` token (RFC 6578) where the server
//! supports it, else a listing of every ETag compared with the last sync (skipped when
//! the collection's ctag is unchanged) — fetching only the resources that changed
//! (`calendar-multiget`). Keeping the result is the caller's: a sync that fails returns
//! an error and no state, so the last complete one stands.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::account::CalDavAccount;
use crate::client::DavClient;
use crate::error::Result;
use crate::href::{is_collection, same_origin};
use crate::transport::DavTransport;
use crate::xml;

/// How many resources one `calendar-multiget` asks for.
const MULTIGET_BATCH: usize = 250;

/// One event resource as last synced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CachedResource {
    /// Its ETag, when the server gave one.
    pub etag: Option<String>,
    /// Its iCalendar text.
    pub text: String,
}

/// A collection's last complete sync.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncCache {
    /// The format of this record ([`SyncCache::FORMAT`]).
    pub format: u32,
    /// The collection's URL and the user it was synced as: a cache of another is not used.
    pub url: String,
    /// The user it was synced as.
    pub username: Option<String>,
    /// When it was synced; `None` before the first sync.
    pub synced_at: Option<DateTime<Utc>>,
    /// The `sync-collection` token to ask for the changes since.
    pub sync_token: Option<String>,
    /// The collection's ctag when synced.
    pub ctag: Option<String>,
    /// The resources by href.
    pub resources: BTreeMap<String, CachedResource>,
}

impl SyncCache {
    /// The format this crate writes and reads.
    pub const FORMAT: u32 = 1;

    /// The state of `account`'s collection before its first sync.
    pub fn empty(account: &CalDavAccount) -> Self {
        Self {
            format: Self::FORMAT,
            url: account.url.clone(),
            username: account.username.clone(),
            ..Self::default()
        }
    }

    /// Whether this is a sync of `account`'s collection, in this format.
    pub fn belongs_to(&self, account: &CalDavAccount) -> bool {
        self.format == Self::FORMAT && self.url == account.url && self.username == account.username
    }
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

/// Syncs `account`'s collection from `previous` (its last complete sync, or
/// [`SyncCache::empty`]), reading at most `max_bytes` of each answer; returns the new
/// state and what changed.
pub async fn sync(
    transport: &dyn DavTransport,
    account: &CalDavAccount,
    max_bytes: u64,
    previous: &SyncCache,
) -> Result<(SyncCache, SyncReport)> {
    let client = DavClient::new(transport, account, max_bytes).await?;
    let collection = account.url.as_str();
    let listing = list(&client, collection, previous).await?;
    let resources = fetch(&client, collection, previous, &listing).await?;
    let synced_at = Utc::now();
    let report = SyncReport {
        calendar: account.label.clone(),
        method: listing.method,
        added: resources
            .keys()
            .filter(|href| !previous.resources.contains_key(*href))
            .count(),
        changed: resources
            .iter()
            .filter(|(href, r)| {
                previous
                    .resources
                    .get(*href)
                    .is_some_and(|p| p.etag != r.etag || p.text != r.text)
            })
            .count(),
        removed: previous
            .resources
            .keys()
            .filter(|href| !resources.contains_key(*href))
            .count(),
        resources: resources.len(),
        synced_at,
    };
    let cache = SyncCache {
        format: SyncCache::FORMAT,
        url: account.url.clone(),
        username: account.username.clone(),
        synced_at: Some(synced_at),
        sync_token: listing.sync_token,
        ctag: listing.ctag,
        resources,
    };
    Ok((cache, report))
}

/// What is on the server now, as a sync found it.
struct Listing {
    method: SyncMethod,
    /// Members and their ETags: every member, or (incremental) the changed ones.
    members: BTreeMap<String, Option<String>>,
    /// Members removed since the token (incremental reports only).
    removed: Vec<String>,
    /// Whether `members` is every member.
    full: bool,
    /// The token to keep for the next sync.
    sync_token: Option<String>,
    /// The ctag to keep for the next sync.
    ctag: Option<String>,
}

/// The members of the collection: the changes since the last token (everything again
/// when the token expired), or every ETag where the server has no `sync-collection`.
async fn list(client: &DavClient<'_>, collection: &str, previous: &SyncCache) -> Result<Listing> {
    let report = match sync_collection(client, collection, previous.sync_token.as_deref()).await? {
        Some(report) => Some(report),
        // The token expired: everything again.
        None if previous.sync_token.is_some() => sync_collection(client, collection, None).await?,
        None => None,
    };
    match report {
        Some((multistatus, incremental)) => Ok(listing_of_report(
            collection,
            multistatus,
            incremental,
            previous,
        )),
        None => list_etags(client, collection, previous).await,
    }
}

fn listing_of_report(
    collection: &str,
    multistatus: xml::Multistatus,
    incremental: bool,
    previous: &SyncCache,
) -> Listing {
    let mut listing = Listing {
        method: SyncMethod::SyncCollection,
        members: BTreeMap::new(),
        removed: Vec::new(),
        full: !incremental,
        sync_token: multistatus.sync_token,
        ctag: previous.ctag.clone(),
    };
    for response in multistatus.responses {
        if is_collection(collection, &response.href) || !same_origin(collection, &response.href) {
            continue;
        }
        if response.status == Some(404) {
            listing.removed.push(response.href);
        } else {
            listing.members.insert(response.href, response.props.etag);
        }
    }
    listing
}

/// Every member's ETag, or the last sync's when the collection's ctag is unchanged.
async fn list_etags(
    client: &DavClient<'_>,
    collection: &str,
    previous: &SyncCache,
) -> Result<Listing> {
    let head = client
        .multistatus(
            "PROPFIND",
            collection,
            "0",
            xml::propfind(&["cs:getctag", "d:sync-token"]),
        )
        .await?;
    let ctag = head.responses.first().and_then(|r| r.props.ctag.clone());
    let mut listing = Listing {
        method: SyncMethod::EtagComparison,
        members: BTreeMap::new(),
        removed: Vec::new(),
        full: true,
        sync_token: previous.sync_token.clone(),
        ctag: previous.ctag.clone(),
    };
    if ctag.is_some() && ctag == previous.ctag && previous.synced_at.is_some() {
        listing.method = SyncMethod::Unchanged;
        listing.members = previous
            .resources
            .iter()
            .map(|(href, r)| (href.clone(), r.etag.clone()))
            .collect();
        return Ok(listing);
    }
    listing.ctag = ctag;
    let members = client
        .multistatus(
            "PROPFIND",
            collection,
            "1",
            xml::propfind(&["d:getetag", "d:resourcetype"]),
        )
        .await?;
    for response in members.responses {
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
        listing.members.insert(response.href, response.props.etag);
    }
    Ok(listing)
}

/// The resources after the sync: those whose ETag is as last synced kept, the others
/// fetched (`calendar-multiget`), the removed ones gone.
async fn fetch(
    client: &DavClient<'_>,
    collection: &str,
    previous: &SyncCache,
    listing: &Listing,
) -> Result<BTreeMap<String, CachedResource>> {
    let mut resources = if listing.full {
        BTreeMap::new()
    } else {
        previous.resources.clone()
    };
    for href in &listing.removed {
        resources.remove(href);
    }
    let mut to_fetch: Vec<&str> = Vec::new();
    for (href, etag) in &listing.members {
        match previous.resources.get(href) {
            Some(cached) if etag.is_some() && cached.etag == *etag => {
                resources.insert(href.clone(), cached.clone());
            }
            _ => to_fetch.push(href),
        }
    }
    for batch in to_fetch.chunks(MULTIGET_BATCH) {
        let fetched = client
            .multistatus("REPORT", collection, "1", xml::calendar_multiget(batch))
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
    Ok(resources)
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
                    .account()
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
