//! The WebDAV and CalDAV XML Hearth sends (PROPFIND, `sync-collection`,
//! `calendar-multiget`) and reads (`207 Multi-Status`), namespace-aware: servers differ
//! in the prefixes they pick, never in the namespaces.

use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;

const DAV: &str = "DAV:";
const CALDAV: &str = "urn:ietf:params:xml:ns:caldav";
const CALENDARSERVER: &str = "http://calendarserver.org/ns/";
const APPLE: &str = "http://apple.com/ns/ical/";

/// The properties Hearth reads, as one `<response>` reported them with a 2xx status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Props {
    pub etag: Option<String>,
    pub calendar_data: Option<String>,
    pub display_name: Option<String>,
    pub color: Option<String>,
    /// The local names of `resourcetype`'s children (`collection`, `calendar`).
    pub resource_types: Vec<String>,
    pub current_user_principal: Option<String>,
    pub calendar_home_set: Option<String>,
    /// `supported-calendar-component-set`'s component names (`VEVENT`, `VTODO`).
    pub components: Vec<String>,
    pub ctag: Option<String>,
    pub sync_token: Option<String>,
}

/// One `<response>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Response {
    pub href: String,
    /// The response's own status (`sync-collection` reports a removed member as 404).
    pub status: Option<u16>,
    pub props: Props,
}

/// A `207 Multi-Status` body.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Multistatus {
    pub responses: Vec<Response>,
    /// The new `sync-token` of a `sync-collection` report.
    pub sync_token: Option<String>,
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const HEAD: &str = r#"<?xml version="1.0" encoding="utf-8"?>"#;
const NAMESPACES: &str = r#"xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/" xmlns:ic="http://apple.com/ns/ical/""#;

/// A PROPFIND body asking for `props` (prefixed names: `d:getetag`, `c:calendar-home-set`).
pub(crate) fn propfind(props: &[&str]) -> String {
    let props: String = props.iter().map(|p| format!("<{p}/>")).collect();
    format!("{HEAD}<d:propfind {NAMESPACES}><d:prop>{props}</d:prop></d:propfind>")
}

/// A `sync-collection` report (RFC 6578) from `token` (empty: everything), asking for
/// each member's ETag.
pub(crate) fn sync_collection(token: Option<&str>) -> String {
    let token = escape(token.unwrap_or(""));
    format!(
        "{HEAD}<d:sync-collection {NAMESPACES}><d:sync-token>{token}</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>"
    )
}

/// A `calendar-multiget` report (RFC 4791 §7.9) for `hrefs`.
pub(crate) fn calendar_multiget(hrefs: &[&str]) -> String {
    let hrefs: String = hrefs
        .iter()
        .map(|href| format!("<d:href>{}</d:href>", escape(href)))
        .collect();
    format!(
        "{HEAD}<c:calendar-multiget {NAMESPACES}><d:prop><d:getetag/><c:calendar-data/></d:prop>{hrefs}</c:calendar-multiget>"
    )
}

/// The status code of an HTTP status line (`HTTP/1.1 404 Not Found`).
fn status_code(line: &str) -> Option<u16> {
    line.split_whitespace().nth(1)?.parse().ok()
}

/// An element on the stack: its namespace and local name.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Name {
    namespace: String,
    local: String,
}

impl Name {
    fn is(&self, namespace: &str, local: &str) -> bool {
        self.namespace == namespace && self.local == local
    }
}

fn name_of(resolved: &ResolveResult<'_>, local: &str) -> Name {
    let namespace = match resolved {
        ResolveResult::Bound(namespace) => namespace.0.to_owned(),
        ResolveResult::Unbound | ResolveResult::Unknown(_) => String::new(),
    };
    Name {
        namespace,
        local: local.to_owned(),
    }
}

/// What is being read: the response and the propstat in progress.
#[derive(Default)]
struct State {
    stack: Vec<Name>,
    text: String,
    out: Multistatus,
    response: Option<Response>,
    propstat: Option<(Props, Option<u16>)>,
}

impl State {
    /// The element `depth` levels above the current one (0: the current one).
    fn up(&self, depth: usize) -> Option<&Name> {
        self.stack
            .len()
            .checked_sub(depth + 1)
            .map(|i| &self.stack[i])
    }

    fn in_prop(&self) -> bool {
        self.up(1).is_some_and(|n| n.is(DAV, "prop"))
    }

    fn props(&mut self) -> Option<&mut Props> {
        self.propstat.as_mut().map(|(props, _)| props)
    }

    /// An element opened (or an empty one, which also closes at once).
    fn open(&mut self, name: Name, component: Option<String>) {
        self.text.clear();
        self.stack.push(name);
        let Some(current) = self.up(0).cloned() else {
            return;
        };
        if current.is(DAV, "response") {
            self.response = Some(Response::default());
        } else if current.is(DAV, "propstat") {
            self.propstat = Some((Props::default(), None));
        } else if self.up(1).is_some_and(|n| n.is(DAV, "resourcetype")) {
            let local = current.local;
            if let Some(props) = self.props() {
                props.resource_types.push(local);
            }
        } else if current.is(CALDAV, "comp")
            && self
                .up(1)
                .is_some_and(|n| n.is(CALDAV, "supported-calendar-component-set"))
            && let Some(component) = component
            && let Some(props) = self.props()
        {
            props.components.push(component.to_ascii_uppercase());
        }
    }

    fn close(&mut self) {
        let Some(current) = self.stack.last().cloned() else {
            return;
        };
        let text = std::mem::take(&mut self.text);
        let trimmed = text.trim().to_owned();
        let parent = self.up(1).cloned();
        let in_prop = self.in_prop();
        let under =
            |namespace: &str, local: &str| parent.as_ref().is_some_and(|p| p.is(namespace, local));
        if current.is(DAV, "response") {
            if let Some(response) = self.response.take() {
                self.out.responses.push(response);
            }
        } else if current.is(DAV, "propstat") {
            if let Some((props, status)) = self.propstat.take()
                && status.is_none_or(|s| (200..300).contains(&s))
                && let Some(response) = self.response.as_mut()
            {
                merge(&mut response.props, props);
            }
        } else if current.is(DAV, "href") && under(DAV, "response") {
            if let Some(response) = self.response.as_mut() {
                response.href = trimmed;
            }
        } else if current.is(DAV, "status") && under(DAV, "response") {
            if let Some(response) = self.response.as_mut() {
                response.status = status_code(&trimmed);
            }
        } else if current.is(DAV, "status") && under(DAV, "propstat") {
            if let Some((_, status)) = self.propstat.as_mut() {
                *status = status_code(&trimmed);
            }
        } else if current.is(DAV, "sync-token") && under(DAV, "multistatus") {
            self.out.sync_token = Some(trimmed);
        } else if current.is(DAV, "href") {
            let holder = parent.clone();
            let grand = self.up(2).cloned();
            let in_prop = grand.is_some_and(|g| g.is(DAV, "prop"));
            if in_prop && let (Some(holder), Some(props)) = (holder, self.props()) {
                if holder.is(DAV, "current-user-principal") {
                    props.current_user_principal.get_or_insert(trimmed);
                } else if holder.is(CALDAV, "calendar-home-set") {
                    props.calendar_home_set.get_or_insert(trimmed);
                }
            }
        } else if in_prop && let Some(props) = self.props() {
            let value = Some(trimmed).filter(|v| !v.is_empty());
            if current.is(DAV, "getetag") {
                props.etag = value;
            } else if current.is(CALDAV, "calendar-data") {
                // XML turns the CRLF line breaks iCalendar requires into LF (unless the
                // server wrote `&#13;`); they are restored, so what Hearth writes back
                // keeps them.
                props.calendar_data = Some(text.replace("\r\n", "\n").replace('\n', "\r\n"));
            } else if current.is(DAV, "displayname") {
                props.display_name = value;
            } else if current.is(APPLE, "calendar-color") {
                props.color = value;
            } else if current.is(CALENDARSERVER, "getctag") {
                props.ctag = value;
            } else if current.is(DAV, "sync-token") {
                props.sync_token = value;
            }
        }
        self.stack.pop();
    }
}

fn merge(into: &mut Props, from: Props) {
    let Props {
        etag,
        calendar_data,
        display_name,
        color,
        resource_types,
        current_user_principal,
        calendar_home_set,
        components,
        ctag,
        sync_token,
    } = from;
    into.etag = into.etag.take().or(etag);
    into.calendar_data = into.calendar_data.take().or(calendar_data);
    into.display_name = into.display_name.take().or(display_name);
    into.color = into.color.take().or(color);
    into.resource_types.extend(resource_types);
    into.current_user_principal = into
        .current_user_principal
        .take()
        .or(current_user_principal);
    into.calendar_home_set = into.calendar_home_set.take().or(calendar_home_set);
    into.components.extend(components);
    into.ctag = into.ctag.take().or(ctag);
    into.sync_token = into.sync_token.take().or(sync_token);
}

fn predefined(entity: &str) -> Option<char> {
    Some(match entity {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        _ => return None,
    })
}

/// Reads a `207 Multi-Status` body.
pub(crate) fn parse_multistatus(xml: &str) -> Result<Multistatus, String> {
    let mut reader = NsReader::from_str(xml);
    let mut state = State::default();
    let mut saw_multistatus = false;
    loop {
        let (resolved, event) = reader
            .read_resolved_event()
            .map_err(|error| format!("the server's XML is malformed: {error}"))?;
        match event {
            Event::Start(start) => {
                let name = name_of(&resolved, start.local_name().as_ref());
                saw_multistatus |= name.is(DAV, "multistatus");
                let component = component_name(&start);
                state.open(name, component);
            }
            Event::Empty(start) => {
                let name = name_of(&resolved, start.local_name().as_ref());
                let component = component_name(&start);
                state.open(name, component);
                state.close();
            }
            Event::End(_) => state.close(),
            Event::Text(text) => state.text.push_str(&text.xml10_content()),
            Event::CData(data) => state.text.push_str(&data.into_inner()),
            Event::GeneralRef(reference) => {
                let resolved = match reference.resolve_char_ref() {
                    Ok(Some(c)) => Some(c),
                    _ => predefined(&reference.xml10_content()),
                };
                match resolved {
                    Some(c) => state.text.push(c),
                    None => {
                        return Err(format!(
                            "the server's XML uses the unknown entity `&{};`",
                            reference.xml10_content()
                        ));
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !saw_multistatus {
        return Err("the server's answer is not a WebDAV multistatus".to_owned());
    }
    if !state.stack.is_empty() {
        return Err("the server's XML ends before its elements are closed".to_owned());
    }
    Ok(state.out)
}

/// The `name` attribute of a `<c:comp name="VEVENT"/>`.
fn component_name(start: &quick_xml::events::BytesStart<'_>) -> Option<String> {
    start
        .attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == "name")
        .map(|a| a.value.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_sync_report_gives_etags_removals_and_the_new_token() {
        let xml = r#"<?xml version='1.0' encoding='utf-8'?>
<multistatus xmlns="DAV:"><response><href>/alice/work/a.ics</href><propstat><prop><getetag>"e1"</getetag></prop><status>HTTP/1.1 200 OK</status></propstat></response><response><href>/alice/work/gone.ics</href><status>HTTP/1.1 404 Not Found</status></response><sync-token>http://radicale.org/ns/sync/abc</sync-token></multistatus>"#;
        let parsed = parse_multistatus(xml).unwrap();
        assert_eq!(
            parsed.sync_token.as_deref(),
            Some("http://radicale.org/ns/sync/abc")
        );
        assert_eq!(parsed.responses.len(), 2);
        assert_eq!(parsed.responses[0].href, "/alice/work/a.ics");
        assert_eq!(parsed.responses[0].props.etag.as_deref(), Some("\"e1\""));
        assert_eq!(parsed.responses[1].status, Some(404));
        assert_eq!(parsed.responses[1].props, Props::default());
    }

    #[test]
    fn calendar_data_keeps_its_text_with_entities_and_prefixes_do_not_matter() {
        let xml = "<D:multistatus xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:caldav\"><D:response><D:href>/a.ics</D:href><D:propstat><D:prop><D:getetag>\"x\"</D:getetag><C:calendar-data>BEGIN:VCALENDAR&#13;\nSUMMARY:Tom &amp; Jerry &lt;3&#13;\nEND:VCALENDAR&#13;\n</C:calendar-data></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat><D:propstat><D:prop><D:displayname/></D:prop><D:status>HTTP/1.1 404 Not Found</D:status></D:propstat></D:response></D:multistatus>";
        let parsed = parse_multistatus(xml).unwrap();
        assert_eq!(
            parsed.responses[0].props.calendar_data.as_deref(),
            Some("BEGIN:VCALENDAR\r\nSUMMARY:Tom & Jerry <3\r\nEND:VCALENDAR\r\n")
        );
        assert_eq!(parsed.responses[0].props.display_name, None);
    }

    #[test]
    fn discovery_properties_are_read() {
        let xml = r##"<multistatus xmlns="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" xmlns:ICAL="http://apple.com/ns/ical/" xmlns:CS="http://calendarserver.org/ns/">
<response><href>/alice/</href><propstat><prop><current-user-principal><href>/alice/</href></current-user-principal><C:calendar-home-set><href>/alice/</href></C:calendar-home-set><resourcetype><principal/><collection/></resourcetype></prop><status>HTTP/1.1 200 OK</status></propstat></response>
<response><href>/alice/work/</href><propstat><prop><resourcetype><collection/><C:calendar/></resourcetype><displayname>Work</displayname><ICAL:calendar-color>#ff0000ff</ICAL:calendar-color><CS:getctag>"c1"</CS:getctag><C:supported-calendar-component-set><C:comp name="VEVENT"/><C:comp name="VTODO"/></C:supported-calendar-component-set></prop><status>HTTP/1.1 200 OK</status></propstat></response>
</multistatus>"##;
        let parsed = parse_multistatus(xml).unwrap();
        let home = &parsed.responses[0].props;
        assert_eq!(home.current_user_principal.as_deref(), Some("/alice/"));
        assert_eq!(home.calendar_home_set.as_deref(), Some("/alice/"));
        assert_eq!(home.resource_types, ["principal", "collection"]);
        let work = &parsed.responses[1].props;
        assert_eq!(work.resource_types, ["collection", "calendar"]);
        assert_eq!(work.display_name.as_deref(), Some("Work"));
        assert_eq!(work.color.as_deref(), Some("#ff0000ff"));
        assert_eq!(work.ctag.as_deref(), Some("\"c1\""));
        assert_eq!(work.components, ["VEVENT", "VTODO"]);
    }

    #[test]
    fn what_is_not_a_multistatus_is_refused_with_a_reason() {
        assert!(parse_multistatus("<html><body>Login</body></html>").is_err());
        assert!(
            parse_multistatus("<multistatus xmlns=\"DAV:\"><response>")
                .unwrap_err()
                .contains("closed")
        );
        assert!(
            parse_multistatus("<d:multistatus xmlns:d=\"DAV:\">&bogus;</d:multistatus>").is_err()
        );
    }

    #[test]
    fn hrefs_are_escaped_in_a_multiget() {
        let body = calendar_multiget(&["/a&b.ics"]);
        assert!(body.contains("<d:href>/a&amp;b.ics</d:href>"), "{body}");
        assert!(sync_collection(Some("t<1")).contains("<d:sync-token>t&lt;1</d:sync-token>"));
    }
}
