//! Hearth's guarded fetcher and the `web_fetch` agent tool.
//!
//! Every outbound request whose URL a model, a document or a web page can influence
//! goes through a [`Fetcher`]. It owns the SSRF defence:
//!
//! - only `http`/`https`, checked first; URLs with credentials refused; an optional
//!   port allowlist; Hearth's own listening ports denied on every host;
//! - the host classified from the parsed URL, never from its text: literal addresses in
//!   any spelling, and IPv6 forms embedding IPv4 (mapped, compatible, NAT64, 6to4)
//!   unwrapped, are checked against an explicit table of the IANA special-purpose
//!   registries; `localhost`, `*.localhost` and cloud metadata names are denied before
//!   any lookup;
//! - a name is resolved once per connection through an injectable [`Resolver`];
//!   **every** address is checked and the connection is pinned to the checked ones;
//! - redirects are followed by hand (five by default), each hop checked in full;
//!   proxies are never used; connect and total timeouts; a body size cap; a
//!   content-type allowlist per request;
//! - [`PrivateNetworks::Allow`], for sources the user configured, still denies cloud
//!   metadata endpoints and link-local addresses.
//!
//! Refusals name the [`Rule`] that refused; no error ever carries a response body.
//!
//! The crate also turns what it fetched into text — readable Markdown from HTML
//! ([`convert_html`]), an event list from iCalendar ([`summarize_calendar`]), text from
//! PDF ([`pdf_to_text`]) — and offers [`WebFetchTool`], the read-only `web_fetch`
//! tool, which reports every fetch to a [`FetchObserver`] (Hearth's audit log).
//!
//! Wiring: build one [`Fetcher`] with the default [`FetchPolicy`] (plus
//! [`FetchPolicy::deny_own_port`] for every port Hearth listens on), wrap it in
//! [`WebFetchTool::new`], and register the tool. To record fetches in the audit log,
//! implement [`FetchObserver`] (a closure will do) and pass it to
//! [`WebFetchTool::with_observer`]: it is called once per call, after the fetch ends,
//! with the call's context and a serializable [`FetchRecord`] (URL, final URL, status,
//! bytes, content type, outcome with the refusing rule's code, elapsed time).
//!
//! It does not own the tool registry, approvals or the audit log itself, nor calendar
//! parsing beyond a summary, nor any caching of what it fetched.

mod calendar;
mod content;
mod error;
mod fetcher;
mod guard;
mod html;
mod nesting;
mod observer;
mod page_job;
mod pdf;
mod policy;
mod ranges;
mod resolve;
mod tool;

pub use calendar::summarize_calendar;
pub use content::{ContentTypes, MediaType, decode_text};
pub use error::{FetchError, Result, Rule};
pub use fetcher::{FetchRequest, FetchResponse, Fetcher};
pub use html::{Document, convert_html};
pub use nesting::{MAX_NESTING, nesting_depth, plain_text};
pub use observer::{FetchObserver, FetchOutcome, FetchRecord};
pub use page_job::{PAGE_JOB, page_job};
pub use pdf::{DEFAULT_PDF_TIME_LIMIT, pdf_to_text, tidy as tidy_text};
pub use policy::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_REDIRECTS, DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TOTAL_TIMEOUT, FetchPolicy, PortPolicy, PrivateNetworks,
};
pub use ranges::{AddressClass, Embedding, SpecialUse, is_metadata_address, special_purpose};
pub use resolve::{Resolver, StaticResolver, SystemResolver, checked_resolver};
pub use tool::{MAX_OUTPUT_CHARACTERS, WEB_FETCH_TOOL, WebFetchTool};
