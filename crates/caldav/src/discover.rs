//! Finding an account's calendars on its server (RFC 4791 §6.2.1, RFC 5397, RFC 6764).

use serde::Serialize;

use crate::account::CalDavAccount;
use crate::client::DavClient;
use crate::error::Result;
use crate::href::resolve;
use crate::transport::DavTransport;
use crate::xml;

/// The properties asked of the URL discovery starts from.
const PROBE: &[&str] = &[
    "d:current-user-principal",
    "c:calendar-home-set",
    "d:resourcetype",
    "d:displayname",
    "ic:calendar-color",
    "c:supported-calendar-component-set",
];

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
    let client = DavClient::new(transport, account, 16 * 1024 * 1024).await?;
    let start = account.url.as_str();
    let first = probe(&client, start).await?;
    let Some(here) = first.responses.first() else {
        return Err(account.error(format!("PROPFIND {start} answered no properties")));
    };
    if here.props.resource_types.iter().any(|t| t == "calendar") {
        return Ok(vec![calendar_of(start, here)?]);
    }
    let home = calendar_home(&client, start, here).await?;
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

/// The answer of the URL discovery starts from, or of the server's well-known CalDAV
/// URL when that one is not itself a DAV resource (a server root).
async fn probe(client: &DavClient<'_>, start: &str) -> Result<xml::Multistatus> {
    let body = xml::propfind(PROBE);
    match client
        .multistatus("PROPFIND", start, "0", body.clone())
        .await
    {
        Ok(found) => Ok(found),
        Err(error) => {
            let well_known = resolve(start, "/.well-known/caldav")?;
            client
                .multistatus("PROPFIND", &well_known, "0", body)
                .await
                .map_err(|_| error)
        }
    }
}

/// The calendar home: the one `here` names, else its principal's.
async fn calendar_home(
    client: &DavClient<'_>,
    start: &str,
    here: &xml::Response,
) -> Result<String> {
    let account = client.account();
    match &here.props.calendar_home_set {
        Some(home) => resolve(start, home),
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
            resolve(&principal, &home)
        }
    }
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
