//! Talking to one account's server: requests sent through the transport with the
//! account's credentials, a busy server asked again, answers checked (a refused
//! password, a `207 Multi-Status` that must be one), and the conditional writes that
//! apply changes: `PUT` with `If-Match` or `If-None-Match: *`, `DELETE` with `If-Match`.

use std::time::Duration;

use hearth_core::Backoff;

use crate::account::{CalDavAccount, PasswordSource};
use crate::error::{CalDavError, Result};
use crate::transport::{DavRequest, DavResponse, DavTransport};
use crate::xml;

/// How often a request answered with a 5xx or a 429 is tried.
const ATTEMPTS: u32 = 3;

/// The pauses before trying such a request again: 250 ms, then 1 s.
const BUSY: Backoff = Backoff::doubling(Duration::from_millis(250), Duration::from_secs(1))
    .with_factor(4)
    .with_retries(ATTEMPTS - 1);

/// What a write requires of the resource on the server, so that it never overwrites
/// another client's edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Precondition {
    /// The resource is as last synced: `If-Match` with its ETag.
    Matches(String),
    /// The resource does not exist: `If-None-Match: *`.
    Absent,
    /// No condition (removing what this client itself just created, when the server
    /// gave no ETag for it).
    Unconditional,
}

impl Precondition {
    fn header(&self) -> Option<(&'static str, String)> {
        match self {
            Self::Matches(etag) => Some(("If-Match", etag.clone())),
            Self::Absent => Some(("If-None-Match", "*".to_owned())),
            Self::Unconditional => None,
        }
    }
}

/// Whether a status says the server is busy or failing for now (asked again), rather
/// than that it does not support the request (`501`, `505`: answered to the caller).
fn busy(status: u16) -> bool {
    matches!(status, 429 | 500 | 502 | 503 | 504)
}

/// Talks to one account's server.
pub struct DavClient<'a> {
    transport: &'a dyn DavTransport,
    account: &'a CalDavAccount,
    authorization: Option<String>,
    max_bytes: u64,
}

impl<'a> DavClient<'a> {
    /// A client of `account`'s server reading at most `max_bytes` of each answer; the
    /// password is read from its source now.
    pub async fn new(
        transport: &'a dyn DavTransport,
        account: &'a CalDavAccount,
        max_bytes: u64,
    ) -> Result<Self> {
        Ok(Self {
            transport,
            account,
            authorization: account.authorization().await?,
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
        let mut retries = 0;
        loop {
            let answer = self.transport.send(request.clone()).await;
            // A busy or failing server is asked again; one that cannot be reached (or
            // timed out, having already been waited for) is not.
            let retry = match &answer {
                Ok(response) => busy(response.status),
                Err(_) => false,
            };
            let pause = if retry { BUSY.next(retries) } else { None };
            let Some(pause) = pause else {
                return match answer {
                    Ok(response) => self.check_auth(method, url, response),
                    Err(message) => Err(self
                        .account
                        .error(format!("{method} {url} failed: {message}"))),
                };
            };
            retries += 1;
            tokio::time::sleep(pause).await;
        }
    }

    /// The account this client talks for.
    pub fn account(&self) -> &CalDavAccount {
        self.account
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

    /// Writes `body` (iCalendar text) to the resource at `url` if `precondition` holds;
    /// the answer's status says whether it did (`412`: it did not hold).
    pub async fn put(
        &self,
        url: &str,
        body: String,
        precondition: &Precondition,
    ) -> Result<DavResponse> {
        let mut headers = vec![("Content-Type", "text/calendar; charset=utf-8".to_owned())];
        headers.extend(precondition.header());
        self.send("PUT", url, headers, Some(body)).await
    }

    /// Removes the resource at `url` if `precondition` holds; the answer's status says
    /// whether it did.
    pub async fn delete(&self, url: &str, precondition: &Precondition) -> Result<DavResponse> {
        let headers = precondition.header().into_iter().collect();
        self.send("DELETE", url, headers, None).await
    }

    /// A request whose answer must be a `207 Multi-Status`.
    pub(crate) async fn multistatus(
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

    pub(crate) fn status_error(
        &self,
        method: &str,
        url: &str,
        response: &DavResponse,
    ) -> CalDavError {
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
