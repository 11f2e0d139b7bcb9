//! A real CalDAV server for the calendar tests: Radicale (installed by
//! `.ci/install-python-packages`) on a free loopback port, with its storage, users file
//! and log in a temporary directory. Each user owns `/<user>/` and nothing else.
//!
//! Its methods are "another CalDAV client": they change the server behind Hearth's back
//! over plain HTTP/1.1. Without the venv the tests that need Radicale say so and pass,
//! unless `HEARTH_REQUIRE_PYTHON=1` (CI) makes that a failure.

use std::fs::{File, OpenOptions};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;

use super::serve_support::{raw_http, request};
use super::support::venv_python;

/// How long Radicale may take to answer after it is started.
const START_WAIT: Duration = Duration::from_secs(15);

/// A running Radicale. Dropping it kills the process and deletes its storage.
pub struct Radicale {
    python: PathBuf,
    port: u16,
    child: Option<Child>,
    dir: tempfile::TempDir,
}

fn python() -> Option<PathBuf> {
    venv_python("radicale")
}

/// A port on 127.0.0.1 that was free a moment ago.
fn free_port() -> u16 {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    listener.local_addr().unwrap().port()
}

/// The server's configuration: htpasswd users in plain text, owner-only rights, no web
/// interface, no hooks or sharing (nothing that could reach beyond the loopback).
fn config(port: u16, dir: &Path) -> String {
    format!(
        "[server]\n\
         hosts = 127.0.0.1:{port}\n\
         \n\
         [auth]\n\
         type = htpasswd\n\
         htpasswd_filename = {users}\n\
         htpasswd_encryption = plain\n\
         delay = 0\n\
         \n\
         [rights]\n\
         type = owner_only\n\
         \n\
         [storage]\n\
         filesystem_folder = {storage}\n\
         \n\
         [web]\n\
         type = none\n\
         \n\
         [hook]\n\
         type = none\n\
         \n\
         [sharing]\n\
         type = none\n\
         \n\
         [logging]\n\
         level = warning\n",
        users = dir.join("users").display(),
        storage = dir.join("collections").display(),
    )
}

/// `text` as XML character data.
fn xml_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One parsed response: its status, head (status line and headers) and body.
struct Response {
    status: u16,
    head: String,
    body: String,
}

impl Response {
    fn parse(status: u16, text: &str) -> Self {
        let (head, body) = text
            .split_once("\r\n\r\n")
            .unwrap_or_else(|| panic!("no end of headers in {text:?}"));
        Self {
            status,
            head: head.to_owned(),
            body: body.to_owned(),
        }
    }

    /// The value of header `name` (case-insensitive), if present.
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    }
}

impl Radicale {
    /// Starts Radicale with `users` (name, password), each owning `/<name>/`, and waits
    /// until it answers; `None` when the venv has no Radicale (see the module docs).
    pub fn start(users: &[(&str, &str)]) -> Option<Self> {
        let python = python()?;
        let dir = tempfile::tempdir().unwrap();
        let htpasswd: String = users
            .iter()
            .map(|(name, password)| format!("{name}:{password}\n"))
            .collect();
        std::fs::write(dir.path().join("users"), htpasswd).unwrap();
        let port = free_port();
        std::fs::write(dir.path().join("config"), config(port, dir.path())).unwrap();
        let mut radicale = Self {
            python,
            port,
            child: None,
            dir,
        };
        radicale.restart();
        Some(radicale)
    }

    /// The server's root, `http://127.0.0.1:<port>/`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.port)
    }

    /// Kills the server (to test a server that is down); [`Radicale::restart`] brings it
    /// back.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// (Re)starts the server on the same port and storage, and waits until it answers.
    pub fn restart(&mut self) {
        self.stop();
        let log = self.log_file();
        let child = Command::new(&self.python)
            .args(["-m", "radicale", "--config"])
            .arg(self.dir.path().join("config"))
            // Only this configuration: no user or environment config file.
            .env("HOME", self.dir.path())
            .env_remove("RADICALE_CONFIG")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap();
        // Kept before waiting, so that a failed wait's panic still kills it on drop.
        let child = self.child.insert(child);
        let deadline = Instant::now() + START_WAIT;
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "radicale exited ({status}) before answering:\n{}",
                    read_log(self.dir.path())
                );
            }
            assert!(
                Instant::now() < deadline,
                "radicale did not listen on port {} within {START_WAIT:?}:\n{}",
                self.port,
                read_log(self.dir.path())
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let status = self.request("OPTIONS", "/", None, &[], "").status;
        assert_eq!(status, 200, "radicale's OPTIONS /:\n{}", self.log());
    }

    /// Creates the calendar `/<user>/<name>/` with a display name and an Apple
    /// `calendar-color` (such as `#3366CCFF`) and returns its URL (ending in `/`).
    pub fn mkcalendar(
        &self,
        user: &str,
        password: &str,
        name: &str,
        display_name: &str,
        color: &str,
    ) -> String {
        let url = format!("{}{user}/{name}/", self.base_url());
        let body = format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
             <C:mkcalendar xmlns:D=\"DAV:\" xmlns:C=\"urn:ietf:params:xml:ns:caldav\" \
             xmlns:A=\"http://apple.com/ns/ical/\">\
             <D:set><D:prop>\
             <D:displayname>{}</D:displayname>\
             <A:calendar-color>{}</A:calendar-color>\
             </D:prop></D:set>\
             </C:mkcalendar>",
            xml_text(display_name),
            xml_text(color),
        );
        let response = self.request(
            "MKCALENDAR",
            &url,
            Some((user, password)),
            &["Content-Type: application/xml; charset=utf-8".to_owned()],
            &body,
        );
        assert_eq!(
            response.status,
            201,
            "MKCALENDAR {url}: {}\n{}",
            response.body,
            self.log()
        );
        url
    }

    /// PUTs `ics` at `url`, only if its current ETag is `if_match` when given; returns the
    /// status (201 created, 204 replaced, 412 stale ETag, ...) and the new ETag.
    pub fn put(
        &self,
        user: &str,
        password: &str,
        url: &str,
        ics: &str,
        if_match: Option<&str>,
    ) -> (u16, Option<String>) {
        let mut headers = vec!["Content-Type: text/calendar; charset=utf-8".to_owned()];
        if let Some(etag) = if_match {
            headers.push(format!("If-Match: {etag}"));
        }
        let response = self.request("PUT", url, Some((user, password)), &headers, ics);
        (response.status, response.header("ETag"))
    }

    /// GETs `url`: the status, the ETag and the body.
    pub fn get(&self, user: &str, password: &str, url: &str) -> (u16, Option<String>, String) {
        let response = self.request("GET", url, Some((user, password)), &[], "");
        let etag = response.header("ETag");
        (response.status, etag, response.body)
    }

    /// DELETEs `url` and returns the status.
    pub fn delete(&self, user: &str, password: &str, url: &str) -> u16 {
        self.request("DELETE", url, Some((user, password)), &[], "")
            .status
    }

    /// One request to `url` (this server's absolute URL, or a path from its root).
    fn request(
        &self,
        method: &str,
        url: &str,
        credentials: Option<(&str, &str)>,
        headers: &[String],
        body: &str,
    ) -> Response {
        let origin = format!("http://127.0.0.1:{}", self.port);
        let path = url.strip_prefix(&origin).unwrap_or(url);
        assert!(
            path.starts_with('/'),
            "{url} is not on this Radicale ({origin})"
        );
        let mut all = vec![format!("Host: 127.0.0.1:{}", self.port)];
        if let Some((user, password)) = credentials {
            let token =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            all.push(format!("Authorization: Basic {token}"));
        }
        all.extend_from_slice(headers);
        let (status, text) = raw_http(
            self.port,
            &request(&format!("{method} {path} HTTP/1.1"), &all, body),
        );
        Response::parse(status, &text)
    }

    /// The log file, appended to across restarts.
    fn log_file(&self) -> File {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("radicale.log"))
            .unwrap()
    }

    /// What Radicale logged so far, for failure messages.
    fn log(&self) -> String {
        read_log(self.dir.path())
    }
}

/// What the Radicale in `dir` logged so far (warnings and errors).
fn read_log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("radicale.log")).unwrap_or_default()
}

impl Drop for Radicale {
    #[allow(clippy::print_stderr)] // a leaked server is worth a line
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take()
            && let Err(error) = child.kill().and_then(|()| child.wait().map(drop))
        {
            eprintln!("could not stop radicale (pid {}): {error}", child.id());
        }
    }
}
