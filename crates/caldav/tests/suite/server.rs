//! An in-memory CalDAV server for the CalDAV tests: one collection of alice's, answered
//! in the wire format (`207 Multi-Status` in the `DAV:` and CalDAV namespaces, ETags,
//! preconditions, status codes), with switches for what real servers differ in. The
//! tests of hearth-caldav and of hearth-calendar's CalDAV calendars share it, each using
//! part of it.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use base64::Engine as _;
use futures::future::BoxFuture;
use hearth_caldav::{DavRequest, DavResponse, DavTransport};

pub(crate) const ORIGIN: &str = "http://dav.test";
pub(crate) const COLLECTION_PATH: &str = "/cal/alice/work/";
pub(crate) const COLLECTION: &str = "http://dav.test/cal/alice/work/";
pub(crate) const USER: &str = "alice";
pub(crate) const PASSWORD: &str = "pw-of-alice";
/// The sync tokens the fake issues: this prefix and the number of changes so far.
pub(crate) const TOKEN_PREFIX: &str = "http://dav.test/sync/";

/// How the fake answers a `sync-collection` report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncSupport {
    /// As RFC 6578 says.
    Supported,
    /// `403` with a `DAV:supported-report` error (a server without the report).
    Forbidden,
    /// `501 Not Implemented`.
    NotImplemented,
}

/// What the fake does with a request.
#[derive(Clone, Debug)]
pub(crate) enum Answer {
    /// Serves it.
    Serve,
    /// Answers this status with an empty body.
    Status(u16),
    /// Answers this status and body.
    Body(u16, &'static str),
}

/// A request the fake received, and its answer.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    /// `PROPFIND Depth 0`, `REPORT sync-collection`, `REPORT calendar-multiget`, `PUT`…
    pub(crate) kind: String,
    pub(crate) url: String,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: String,
    pub(crate) status: u16,
    /// The `ETag` header answered.
    pub(crate) etag: Option<String>,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

pub(crate) struct Member {
    pub(crate) etag: String,
    pub(crate) text: String,
}

pub(crate) struct State {
    /// The collection's members by href.
    pub(crate) members: BTreeMap<String, Member>,
    /// Every change: its number and the member's href.
    pub(crate) log: Vec<(u64, String)>,
    /// The number of changes so far: the ctag, the sync token and each new ETag.
    pub(crate) changes: u64,
    pub(crate) sync: SyncSupport,
    /// Whether a sync token the fake issued is refused (`valid-sync-token`).
    pub(crate) expire_tokens: bool,
    /// Answers to the next requests, in order, before any is served.
    pub(crate) queued: VecDeque<Answer>,
    /// The answer to every request while set (a server down, a login page).
    pub(crate) always: Option<Answer>,
    pub(crate) seen: Vec<Seen>,
}

/// An in-memory CalDAV server holding alice's collection `work`.
pub(crate) struct FakeDav {
    pub(crate) state: Mutex<State>,
}

impl FakeDav {
    pub(crate) fn new(sync: SyncSupport) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                members: BTreeMap::new(),
                log: Vec::new(),
                changes: 0,
                sync,
                expire_tokens: false,
                queued: VecDeque::new(),
                always: None,
                seen: Vec::new(),
            }),
        })
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// Another client writes member `name`.
    pub(crate) fn put(&self, name: &str, text: &str) {
        self.state()
            .store(&format!("{COLLECTION_PATH}{name}"), text.to_owned());
    }

    /// Another client removes member `name`.
    pub(crate) fn remove(&self, name: &str) {
        assert!(self.state().delete(&format!("{COLLECTION_PATH}{name}")));
    }

    /// Member `name`'s ETag and text.
    pub(crate) fn member(&self, name: &str) -> Option<(String, String)> {
        self.state()
            .members
            .get(&format!("{COLLECTION_PATH}{name}"))
            .map(|m| (m.etag.clone(), m.text.clone()))
    }

    /// The members' names.
    pub(crate) fn names(&self) -> Vec<String> {
        self.state()
            .members
            .keys()
            .map(|href| href.trim_start_matches(COLLECTION_PATH).to_owned())
            .collect()
    }

    pub(crate) fn expire_tokens(&self) {
        self.state().expire_tokens = true;
    }

    pub(crate) fn queue(&self, answers: impl IntoIterator<Item = Answer>) {
        self.state().queued.extend(answers);
    }

    pub(crate) fn always(&self, answer: Answer) {
        self.state().always = Some(answer);
    }

    /// The requests received since the last call.
    pub(crate) fn take_seen(&self) -> Vec<Seen> {
        std::mem::take(&mut self.state().seen)
    }

    pub(crate) fn answer(&self, request: &DavRequest) -> DavResponse {
        let mut state = self.state();
        let answer = state
            .queued
            .pop_front()
            .or_else(|| state.always.clone())
            .unwrap_or(Answer::Serve);
        let response = match answer {
            Answer::Status(code) => status(code),
            Answer::Body(code, body) => DavResponse {
                status: code,
                etag: None,
                body: body.as_bytes().to_vec(),
            },
            Answer::Serve if request.authorization != Some(basic(USER, PASSWORD)) => status(401),
            Answer::Serve => state.serve(request),
        };
        state.seen.push(Seen {
            kind: kind_of(request),
            url: request.url.clone(),
            headers: request.headers.clone(),
            body: request.body.clone().unwrap_or_default(),
            status: response.status,
            etag: response.etag.clone(),
        });
        response
    }
}

impl DavTransport for FakeDav {
    fn send(&self, request: DavRequest) -> BoxFuture<'_, Result<DavResponse, String>> {
        let response = self.answer(&request);
        Box::pin(async move { Ok(response) })
    }
}

impl State {
    /// Records a change to `href`; returns the ETag it gets.
    pub(crate) fn change(&mut self, href: &str) -> String {
        self.changes += 1;
        self.log.push((self.changes, href.to_owned()));
        format!("\"e{}\"", self.changes)
    }

    pub(crate) fn store(&mut self, href: &str, text: String) -> String {
        let etag = self.change(href);
        self.members.insert(
            href.to_owned(),
            Member {
                etag: etag.clone(),
                text,
            },
        );
        etag
    }

    pub(crate) fn delete(&mut self, href: &str) -> bool {
        let existed = self.members.remove(href).is_some();
        if existed {
            self.change(href);
        }
        existed
    }

    pub(crate) fn serve(&mut self, request: &DavRequest) -> DavResponse {
        let Some(path) = request.url.strip_prefix(ORIGIN) else {
            return status(404);
        };
        let body = request.body.as_deref().unwrap_or("");
        let on_collection = path == COLLECTION_PATH;
        let in_collection = path.starts_with(COLLECTION_PATH) && !on_collection;
        match request.method {
            "PROPFIND" if on_collection => match header(&request.headers, "Depth") {
                Some("0") => self.collection_properties(),
                Some("1") => self.listing(),
                _ => dav_error(403, "propfind-finite-depth"),
            },
            "REPORT" if on_collection && body.contains("sync-collection") => self.sync_report(body),
            "REPORT" if on_collection && body.contains("calendar-multiget") => self.multiget(body),
            "REPORT" if on_collection => dav_error(403, "supported-report"),
            "PUT" if in_collection => self.put_request(path, request),
            "DELETE" if in_collection => self.delete_request(path, request),
            "PROPFIND" | "REPORT" | "PUT" | "DELETE" => status(404),
            _ => status(405),
        }
    }

    /// `PROPFIND` Depth 0: the ctag, and the sync token where the report is supported.
    pub(crate) fn collection_properties(&self) -> DavResponse {
        let ctag = format!("<cs:getctag>\"c{}\"</cs:getctag>", self.changes);
        let token = format!(
            "<d:sync-token>{TOKEN_PREFIX}{}</d:sync-token>",
            self.changes
        );
        let response = match self.sync {
            SyncSupport::Supported => found(COLLECTION_PATH, &format!("{ctag}{token}"), ""),
            SyncSupport::Forbidden | SyncSupport::NotImplemented => {
                found(COLLECTION_PATH, &ctag, "<d:sync-token/>")
            }
        };
        multistatus(&response, None)
    }

    /// `PROPFIND` Depth 1: the collection, then each member's ETag.
    pub(crate) fn listing(&self) -> DavResponse {
        let mut responses = found(
            COLLECTION_PATH,
            "<d:resourcetype><d:collection/><cal:calendar/></d:resourcetype>",
            "<d:getetag/>",
        );
        for (href, member) in &self.members {
            responses.push_str(&found(
                href,
                &format!(
                    "<d:getetag>{}</d:getetag><d:resourcetype/>",
                    escape(&member.etag)
                ),
                "",
            ));
        }
        multistatus(&responses, None)
    }

    /// `sync-collection` (RFC 6578): every member for an empty token, else the members
    /// changed since the token and those removed since (404).
    pub(crate) fn sync_report(&self, body: &str) -> DavResponse {
        match self.sync {
            SyncSupport::Supported => {}
            SyncSupport::Forbidden => return dav_error(403, "supported-report"),
            SyncSupport::NotImplemented => return status(501),
        }
        let token = element_texts(body, "d:sync-token")
            .into_iter()
            .next()
            .unwrap_or_default();
        let hrefs: BTreeSet<&String> = if token.is_empty() {
            self.members.keys().collect()
        } else {
            let since = token
                .strip_prefix(TOKEN_PREFIX)
                .and_then(|number| number.parse::<u64>().ok())
                .filter(|number| *number <= self.changes && !self.expire_tokens);
            let Some(since) = since else {
                return dav_error(403, "valid-sync-token");
            };
            self.log
                .iter()
                .filter(|(number, _)| *number > since)
                .map(|(_, href)| href)
                .collect()
        };
        let responses: String = hrefs
            .into_iter()
            .map(|href| match self.members.get(href) {
                Some(member) => found(
                    href,
                    &format!("<d:getetag>{}</d:getetag>", escape(&member.etag)),
                    "",
                ),
                None => gone(href),
            })
            .collect();
        multistatus(&responses, Some(&format!("{TOKEN_PREFIX}{}", self.changes)))
    }

    /// `calendar-multiget`: each href's ETag and text, or 404.
    pub(crate) fn multiget(&self, body: &str) -> DavResponse {
        let responses: String = element_texts(body, "d:href")
            .iter()
            .map(|href| {
                let href = href.strip_prefix(ORIGIN).unwrap_or(href);
                match self.members.get(href) {
                    Some(member) => found(
                        href,
                        &format!(
                            "<d:getetag>{}</d:getetag><cal:calendar-data>{}</cal:calendar-data>",
                            escape(&member.etag),
                            escape(&member.text)
                        ),
                        "",
                    ),
                    None => gone(href),
                }
            })
            .collect();
        multistatus(&responses, None)
    }

    /// `PUT` with `If-Match` (412 when it differs or the member is missing) or
    /// `If-None-Match: *` (412 when the member exists).
    pub(crate) fn put_request(&mut self, path: &str, request: &DavRequest) -> DavResponse {
        let Some(text) = request.body.clone() else {
            return status(400);
        };
        let current = self.members.get(path).map(|m| m.etag.as_str());
        let refused = match (
            current,
            header(&request.headers, "If-Match"),
            header(&request.headers, "If-None-Match"),
        ) {
            (Some(_), _, Some("*")) | (None, Some(_), _) => true,
            (Some(etag), Some(wanted), _) => etag != wanted,
            _ => false,
        };
        if refused {
            return status(412);
        }
        let created = current.is_none();
        let etag = self.store(path, text);
        DavResponse {
            status: if created { 201 } else { 204 },
            etag: Some(etag),
            body: Vec::new(),
        }
    }

    /// `DELETE`, with `If-Match` when given.
    pub(crate) fn delete_request(&mut self, path: &str, request: &DavRequest) -> DavResponse {
        let Some(member) = self.members.get(path) else {
            return status(404);
        };
        if header(&request.headers, "If-Match").is_some_and(|wanted| wanted != member.etag) {
            return status(412);
        }
        self.delete(path);
        status(204)
    }
}

pub(crate) fn header<'a>(headers: &'a [(&'static str, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_str())
}

pub(crate) fn basic(user: &str, password: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

pub(crate) fn kind_of(request: &DavRequest) -> String {
    let body = request.body.as_deref().unwrap_or("");
    match request.method {
        "PROPFIND" => format!(
            "PROPFIND Depth {}",
            header(&request.headers, "Depth").unwrap_or("none")
        ),
        "REPORT" if body.contains("sync-collection") => "REPORT sync-collection".to_owned(),
        "REPORT" if body.contains("calendar-multiget") => "REPORT calendar-multiget".to_owned(),
        method => method.to_owned(),
    }
}

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

pub(crate) fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// The text of each `<name>…</name>` in a request body Hearth wrote.
pub(crate) fn element_texts(xml: &str, name: &str) -> Vec<String> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let mut texts = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let after = &rest[start + open.len()..];
        let Some(end) = after.find(&close) else {
            break;
        };
        texts.push(unescape(&after[..end]));
        rest = &after[end + close.len()..];
    }
    texts
}

pub(crate) fn status(code: u16) -> DavResponse {
    DavResponse {
        status: code,
        etag: None,
        body: Vec::new(),
    }
}

/// An error body with a precondition (`<d:error><d:valid-sync-token/></d:error>`).
pub(crate) fn dav_error(code: u16, condition: &str) -> DavResponse {
    DavResponse {
        status: code,
        etag: None,
        body: format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<d:error xmlns:d=\"DAV:\"><d:{condition}/></d:error>"
        )
        .into_bytes(),
    }
}

pub(crate) fn multistatus(responses: &str, token: Option<&str>) -> DavResponse {
    let token = token
        .map(|token| format!("<d:sync-token>{}</d:sync-token>\n", escape(token)))
        .unwrap_or_default();
    DavResponse {
        status: 207,
        etag: None,
        body: format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<d:multistatus xmlns:d=\"DAV:\" xmlns:cal=\"urn:ietf:params:xml:ns:caldav\" xmlns:cs=\"http://calendarserver.org/ns/\">\n{responses}{token}</d:multistatus>\n"
        )
        .into_bytes(),
    }
}

/// A `<d:response>` with the properties found, and those asked for but missing.
pub(crate) fn found(href: &str, props: &str, missing: &str) -> String {
    let mut response = format!(
        "<d:response>\n <d:href>{}</d:href>\n <d:propstat><d:prop>{props}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat>\n",
        escape(href)
    );
    if !missing.is_empty() {
        response.push_str(&format!(
            " <d:propstat><d:prop>{missing}</d:prop><d:status>HTTP/1.1 404 Not Found</d:status></d:propstat>\n"
        ));
    }
    response.push_str("</d:response>\n");
    response
}

/// A `<d:response>` for a member that is gone.
pub(crate) fn gone(href: &str) -> String {
    format!(
        "<d:response>\n <d:href>{}</d:href>\n <d:status>HTTP/1.1 404 Not Found</d:status>\n</d:response>\n",
        escape(href)
    )
}
