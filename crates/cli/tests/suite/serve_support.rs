//! A real `hearth serve` on a free loopback port of a temporary data directory, found
//! through the discovery file it writes; raw HTTP for the security tests.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hearth_server::{
    Client, Notifications, Notified, Secret, read_record, read_token, server_file,
};

use super::support::Hearth;

/// How long any wait may take.
pub const WAIT: Duration = Duration::from_secs(20);

/// A running server. Dropping it kills the process.
pub struct Served {
    pub hearth: Hearth,
    pub child: Child,
    pub url: String,
    pub port: u16,
    pub token: Secret,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: Option<std::path::PathBuf>,
}

impl Served {
    /// Starts `hearth serve --port 0` with extra arguments and environment.
    pub fn start(hearth: Hearth, args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_in(hearth, None, args, env)
    }

    /// Starts `hearth serve --port 0` in a working directory (where its sessions work).
    pub fn start_in(
        hearth: Hearth,
        cwd: Option<&std::path::Path>,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let cwd = cwd.map(std::path::Path::to_path_buf);
        let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect();
        let child = spawn(&hearth, cwd.as_deref(), 0, &args, &env);
        let (url, port) = wait_for_record(&hearth);
        let token = read_token(&hearth.home.path().join("token")).unwrap();
        Self {
            hearth,
            child,
            url,
            port,
            token,
            args,
            env,
            cwd,
        }
    }

    /// Starts the same server again, on the same port and data directory, after
    /// [`Served::stop`].
    pub fn restart(&mut self) {
        self.child = spawn(
            &self.hearth,
            self.cwd.as_deref(),
            self.port,
            &self.args,
            &self.env,
        );
        let (url, port) = wait_for_record(&self.hearth);
        assert_eq!(port, self.port, "{url}");
    }

    /// A connected, initialized protocol client.
    pub async fn client(&self) -> (Client, Notifications) {
        let (client, notifications) = Client::connect(&self.url, &self.token).await.unwrap();
        client.initialize("e2e").await.unwrap();
        (client, notifications)
    }

    /// Stops the server with SIGTERM and returns what it wrote to stderr.
    pub fn stop(&mut self) -> String {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + WAIT;
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "hearth serve did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut stderr = String::new();
        self.child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        stderr
    }

    /// A raw HTTP/1.1 request to the server; returns the status and the whole response.
    pub fn http(&self, request: &str) -> (u16, String) {
        raw_http(self.port, request)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.child.kill().ok();
            self.child.wait().ok();
        }
    }
}

fn spawn(
    hearth: &Hearth,
    cwd: Option<&std::path::Path>,
    port: u16,
    args: &[String],
    env: &[(String, String)],
) -> Child {
    let mut command = hearth.command();
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    command
        .args(["serve", "--port", &port.to_string()])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    command.spawn().unwrap()
}

fn wait_for_record(hearth: &Hearth) -> (String, u16) {
    let record_path = server_file(hearth.home.path());
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(record) = read_record(&record_path) {
            return (record.url, record.port);
        }
        assert!(Instant::now() < deadline, "hearth serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `request` (lines joined with CRLF, ending in an empty line) and reads the
/// response until the server closes.
pub fn raw_http(port: u16, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => {
                response.extend_from_slice(&buffer[..read]);
                if is_complete(&response) {
                    break;
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(error) => panic!("reading the response: {error}"),
        }
    }
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    (status, text)
}

/// Whether a response is whole: an upgrade's head, or a head and `Content-Length` bytes
/// (a connection kept open would otherwise only end at the timeout).
fn is_complete(response: &[u8]) -> bool {
    let Some(end) = response.windows(4).position(|window| window == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&response[..end]).to_ascii_lowercase();
    if head.starts_with("http/1.1 101") {
        return true;
    }
    head.lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|length| length.trim().parse::<usize>().ok())
        .is_some_and(|length| response.len() >= end + 4 + length)
}

/// Builds a raw request: the request line, headers, then `Connection: close` and the body.
pub fn request(line: &str, headers: &[String], body: &str) -> String {
    let mut text = format!("{line}\r\n");
    for header in headers {
        text.push_str(header);
        text.push_str("\r\n");
    }
    text.push_str("Connection: close\r\n");
    if !body.is_empty() {
        text.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    text.push_str("\r\n");
    text.push_str(body);
    text
}

/// The next notification, failing after [`WAIT`].
pub async fn next(notifications: &mut Notifications) -> Notified {
    match tokio::time::timeout(WAIT, notifications.recv()).await {
        Ok(Some(notified)) => notified,
        Ok(None) => panic!("the connection closed"),
        Err(_) => panic!("no notification within {WAIT:?}"),
    }
}
