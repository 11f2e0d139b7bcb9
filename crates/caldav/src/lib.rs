//! Hearth's CalDAV client (RFC 4791): finding an account's calendars on its server
//! ([`discover`]), syncing a collection from its last sync ([`sync`]: `sync-collection`,
//! RFC 6578, where the server supports it, else a comparison of ETags), and the
//! conditional writes that apply changes ([`DavClient::put`], [`DavClient::delete`]
//! with a [`Precondition`]: `If-Match` on the synced ETag, `If-None-Match: *` to create),
//! so another client's edit is never overwritten.
//!
//! Requests go through a [`DavTransport`]: Hearth plugs its guarded fetcher in (private
//! networks only where the calendar allows them, redirects re-checked, the password
//! sent to the configured origin only). The password comes from an environment
//! variable or a command each time a client needs it ([`PasswordSource`]); it is never
//! written to the configuration, caches, logs or errors. A busy server (5xx, 429) is
//! asked again, twice; members reported on another origin are never fetched or written.
//!
//! It does not own calendars, where a sync is kept, or what the resources mean
//! (hearth-calendar keeps each collection's [`SyncCache`] in a file and reads its text
//! with hearth-ical), nor the network itself (the transport's).

mod account;
mod client;
mod discover;
mod error;
mod href;
mod sync;
mod transport;
mod xml;

pub use account::{CalDavAccount, PasswordSource};
pub use client::{DavClient, Precondition};
pub use discover::{DiscoveredCalendar, discover};
pub use error::{CalDavError, Result};
pub use href::{new_resource_href, resolve, same_origin};
pub use sync::{CachedResource, SyncCache, SyncMethod, SyncReport, sync};
pub use transport::{DavRequest, DavResponse, DavTransport, NoNetwork};
