//! The security matrix of `hearth serve`, against the real binary with raw HTTP: one test
//! per numbered check of the guard (`check_1_…` to `check_5_…`, in the order of
//! `crates/server/src/guard.rs`), and the refusal to listen beyond loopback without
//! opt-in.

use hearth_test_support::{BoundedCommand, PROCESS_WAIT};

use super::serve_support::{Served, WAIT, request};
use super::support::{Hearth, stderr_line_count};

fn bearer(served: &Served) -> String {
    format!("Authorization: Bearer {}", served.token.expose())
}

fn host(served: &Served) -> String {
    format!("Host: 127.0.0.1:{}", served.port)
}

fn has_header(response: &str, name: &str) -> bool {
    let head = response.split("\r\n\r\n").next().unwrap_or_default();
    head.lines()
        .any(|line| line.to_ascii_lowercase().starts_with(&format!("{name}:")))
}

fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next().unwrap_or_default();
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

fn upgrade(served: &Served, path: &str, extra: &[String]) -> (u16, String) {
    let mut headers = vec![
        host(served),
        "Upgrade: websocket".to_owned(),
        "Sec-WebSocket-Version: 13".to_owned(),
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==".to_owned(),
    ];
    headers.extend_from_slice(extra);
    let mut text = format!("GET {path} HTTP/1.1\r\n");
    for header in &headers {
        text.push_str(header);
        text.push_str("\r\n");
    }
    text.push_str("Connection: Upgrade\r\n\r\n");
    served.http(&text)
}

/// Check 1: the Host header.
#[test]
fn check_1_the_host_header_must_name_this_server_on_its_port() {
    let served = Served::start(Hearth::new(), &[], &[]);
    let port = served.port;
    let other = port.wrapping_add(1);
    for bad in [
        format!("Host: evil.com:{port}"),
        format!("Host: 127.0.0.1.nip.io:{port}"),
        format!("Host: :{port}"),
        "Host: ".to_owned(),
        format!("Host: localhost:{other}"),
        "Host: 127.0.0.1".to_owned(),
    ] {
        let (status, response) = served.http(&request(
            "GET /health HTTP/1.1",
            &[bad.clone(), bearer(&served)],
            "",
        ));
        assert_eq!(status, 403, "{bad}: {response}");
    }
    let (status, response) = served.http(&request("GET /health HTTP/1.1", &[bearer(&served)], ""));
    assert!(
        status == 403 || status == 400,
        "a request without Host must be refused: {response}"
    );
    for good in [
        format!("Host: 127.0.0.1:{port}"),
        format!("Host: localhost:{port}"),
        format!("Host: LOCALHOST:{port}"),
        format!("Host: [::1]:{port}"),
    ] {
        let (status, response) = served.http(&request(
            "GET /health HTTP/1.1",
            &[good.clone(), bearer(&served)],
            "",
        ));
        assert_eq!(status, 200, "{good}: {response}");
    }
}

/// Check 2: the Origin header, on requests, WebSocket upgrades and CORS preflights.
#[test]
fn check_2_the_origin_must_be_one_of_the_exact_allowed_origins() {
    let served = Served::start(Hearth::new(), &[], &[]);
    let port = served.port;
    for bad in [
        "Origin: http://evil.com".to_owned(),
        "Origin: null".to_owned(),
        format!("Origin: http://localhost:{}", port.wrapping_add(1)),
        format!("Origin: https://127.0.0.1:{port}"),
        format!("Origin: http://127.0.0.1:{port}.evil.com"),
        "Origin: http://127.0.0.1".to_owned(),
    ] {
        let (status, response) = served.http(&request(
            "GET /health HTTP/1.1",
            &[host(&served), bearer(&served), bad.clone()],
            "",
        ));
        assert_eq!(status, 403, "{bad}: {response}");
    }
    for good in [
        format!("Origin: http://127.0.0.1:{port}"),
        format!("Origin: http://localhost:{port}"),
    ] {
        let (status, response) = served.http(&request(
            "GET /health HTTP/1.1",
            &[host(&served), bearer(&served), good.clone()],
            "",
        ));
        assert_eq!(status, 200, "{good}: {response}");
        assert!(
            !has_header(&response, "access-control-allow-origin"),
            "{response}"
        );
    }

    // A WebSocket upgrade from a foreign origin, even with the token.
    let (status, response) = upgrade(
        &served,
        "/rpc",
        &[bearer(&served), "Origin: http://evil.com".to_owned()],
    );
    assert_eq!(status, 403, "{response}");
    let (status, response) = upgrade(&served, "/rpc", &[bearer(&served)]);
    assert_eq!(
        status, 101,
        "a program's upgrade with the token works: {response}"
    );

    // A CORS preflight gets no allow header, not even from the server's own origin.
    let preflight = |origin: String| {
        served.http(&request(
            "OPTIONS /rpc HTTP/1.1",
            &[
                host(&served),
                origin,
                "Access-Control-Request-Method: POST".to_owned(),
                "Access-Control-Request-Headers: authorization, content-type, x-hearth-session"
                    .to_owned(),
            ],
            "",
        ))
    };
    let (status, response) = preflight("Origin: http://evil.com".to_owned());
    assert_eq!(status, 403, "{response}");
    for origin in [
        "Origin: http://evil.com".to_owned(),
        format!("Origin: http://localhost:{port}"),
    ] {
        let (_, response) = preflight(origin);
        for name in [
            "access-control-allow-origin",
            "access-control-allow-headers",
            "access-control-allow-methods",
            "access-control-allow-credentials",
        ] {
            assert!(!has_header(&response, name), "{name}: {response}");
        }
    }
}

fn json_body(response: &str) -> serde_json::Value {
    let start = response.find("\r\n\r\n").unwrap() + 4;
    serde_json::from_str(&response[start..]).unwrap_or_else(|error| panic!("{error}: {response}"))
}

/// Trades a login code for a browser session as Agent Home's page does.
fn trade(served: &Served, code: &str) -> (u16, String) {
    served.http(&request(
        "POST /auth/session HTTP/1.1",
        &[host(served), "Content-Type: application/json".to_owned()],
        &format!(r#"{{"code":"{code}"}}"#),
    ))
}

/// A browser session from a `hearth login` link, as Agent Home's page gets one.
fn browser_session(served: &Served) -> String {
    let link = served.hearth.ok(&["login"]);
    let (_, code) = link.trim().split_once("?code=").unwrap();
    let (status, response) = trade(served, code);
    assert_eq!(status, 200, "{response}");
    json_body(&response)["session"].as_str().unwrap().to_owned()
}

fn session_header(session: &str) -> String {
    format!("X-Hearth-Session: {session}")
}

fn offer(session: &str) -> String {
    format!("Sec-WebSocket-Protocol: hearth.rpc, hearth.session.{session}")
}

/// The status of a read with a browser session.
fn session_status(served: &Served, session: &str) -> u16 {
    served
        .http(&request(
            "GET /auth/session HTTP/1.1",
            &[host(served), session_header(session)],
            "",
        ))
        .0
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"session/list"}"#;

/// Check 3: the token, or a browser session the page sends itself (a header, or the
/// WebSocket protocol offer), and nothing in a cookie or URL.
#[test]
fn check_3_the_caller_holds_the_token_or_a_browser_session_the_page_sends() {
    let served = Served::start(Hearth::new(), &[], &[]);
    for (case, auth) in [
        ("missing", None),
        (
            "wrong",
            Some(format!("Authorization: Bearer {}", "0".repeat(64))),
        ),
        (
            "truncated",
            Some(format!(
                "Authorization: Bearer {}",
                &served.token.expose()[..63]
            )),
        ),
        (
            "not bearer",
            Some(format!("Authorization: Basic {}", served.token.expose())),
        ),
        ("empty", Some("Authorization: Bearer ".to_owned())),
    ] {
        let mut headers = vec![host(&served)];
        headers.extend(auth);
        let (status, response) = served.http(&request("GET /health HTTP/1.1", &headers, ""));
        assert_eq!(status, 401, "{case}: {response}");
        assert_eq!(
            header(&response, "www-authenticate"),
            Some("Bearer realm=\"hearth\""),
            "{case}"
        );
    }
    // The token in a URL is accepted only by the login link, which hands the browser a
    // one-time code (never the token, never a cookie).
    let line = format!("GET /health?token={} HTTP/1.1", served.token.expose());
    let (status, _) = served.http(&request(&line, &[host(&served)], ""));
    assert_eq!(status, 401);
    let line = format!("GET /auth?token={} HTTP/1.1", served.token.expose());
    let (status, response) = served.http(&request(&line, &[host(&served)], ""));
    assert_eq!(status, 303, "{response}");
    assert!(!response.contains(served.token.expose()), "{response}");
    assert!(!has_header(&response, "set-cookie"), "{response}");
    assert_eq!(header(&response, "referrer-policy"), Some("no-referrer"));
    let code = header(&response, "location")
        .and_then(|location| location.strip_prefix("/#login="))
        .unwrap_or_else(|| panic!("sent on with a code: {response}"))
        .to_owned();
    let (status, response) = trade(&served, &code);
    assert_eq!(status, 200, "{response}");
    assert!(!has_header(&response, "set-cookie"), "{response}");
    let session = json_body(&response)["session"].as_str().unwrap().to_owned();
    assert_eq!(trade(&served, &code).0, 401, "a code works once");

    // The page's header authenticates reads and writes; its protocol offer, upgrades.
    let json = "Content-Type: application/json".to_owned();
    let (status, response) = served.http(&request(
        "POST /rpc HTTP/1.1",
        &[host(&served), session_header(&session), json.clone()],
        LIST,
    ));
    assert_eq!(status, 200, "{response}");
    let (status, response) = upgrade(&served, "/rpc", &[offer(&session)]);
    assert_eq!(status, 101, "{response}");
    assert_eq!(
        header(&response, "sec-websocket-protocol"),
        Some("hearth.rpc")
    );
    assert!(!response.contains(&session), "{response}");

    // The same credential as a cookie or in the URL is worth nothing.
    for (case, line, headers) in [
        (
            "a cookie",
            "POST /rpc HTTP/1.1".to_owned(),
            vec![format!("Cookie: hearth_session={session}"), json.clone()],
        ),
        (
            "the URL",
            format!("POST /rpc?session={session} HTTP/1.1"),
            vec![json],
        ),
    ] {
        let mut all = vec![host(&served)];
        all.extend(headers);
        let (status, response) = served.http(&request(&line, &all, LIST));
        assert_eq!(status, 401, "{case}: {response}");
    }
    for (case, path, extra) in [
        ("nothing", "/rpc".to_owned(), Vec::new()),
        (
            "a cookie",
            "/rpc".to_owned(),
            vec![format!("Cookie: hearth_session={session}")],
        ),
        ("the URL", format!("/rpc?session={session}"), Vec::new()),
    ] {
        let (status, response) = upgrade(&served, &path, &extra);
        assert_eq!(status, 401, "an upgrade with {case}: {response}");
    }
}

/// Opens a WebSocket to `/rpc` and keeps it: the stream after the `101` head.
fn open_socket(served: &Served, extra: &[String]) -> std::net::TcpStream {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", served.port)).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut text = format!(
        "GET /rpc HTTP/1.1\r\n{}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n",
        host(served)
    );
    for header in extra {
        text.push_str(header);
        text.push_str("\r\n");
    }
    text.push_str("\r\n");
    stream.write_all(text.as_bytes()).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "the head ended early");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    stream
}

/// Whether the server closed a kept socket (read to its end within [`WAIT`]).
fn closed_by_server(mut stream: std::net::TcpStream) -> bool {
    use std::io::Read;
    let mut buffer = [0u8; 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Check 4: a browser session is current. It survives a server restart, and ends for
/// good with `hearth login --revoke` (at once in a running server, its open sockets
/// too, and in a stopped one's key file) or a new token. (Its expiry: the server
/// crate's `suite::login`.)
#[test]
fn check_4_a_browser_session_ends_with_login_revoke_or_a_new_token() {
    let mut served = Served::start(Hearth::new(), &[], &[]);
    let key_file = hearth_server::login_key_file(served.hearth.home.path());
    assert_eq!(mode_of(&key_file), 0o600);
    let first = browser_session(&served);
    let second = browser_session(&served);
    let socket = open_socket(&served, &[offer(&first)]);
    assert_eq!(session_status(&served, &first), 200);
    let key_before = std::fs::read_to_string(&key_file).unwrap();

    let output = served.hearth.run(&["login", "--revoke"]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("every browser is logged out"), "{stderr}");
    assert!(
        stderr.contains(&served.url),
        "the running server ended them: {stderr}"
    );
    assert!(
        closed_by_server(socket),
        "the session's socket closed at once"
    );
    for session in [&first, &second] {
        assert_eq!(session_status(&served, session), 401);
        let (status, _) = upgrade(&served, "/rpc", &[offer(session)]);
        assert_eq!(status, 401);
    }
    assert_ne!(std::fs::read_to_string(&key_file).unwrap(), key_before);
    assert_eq!(mode_of(&key_file), 0o600);

    // A session made since survives a restart of the server...
    let kept = browser_session(&served);
    served.stop();
    served.restart();
    assert_eq!(session_status(&served, &kept), 200, "it survives a restart");
    // ... but not a revocation made while no server runs,
    served.stop();
    let output = served.hearth.run(&["login", "--revoke"]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("every browser is logged out"), "{stderr}");
    served.restart();
    assert_eq!(session_status(&served, &kept), 401);
    // ... nor a new token.
    let kept = browser_session(&served);
    served.stop();
    std::fs::remove_file(served.hearth.home.path().join("token")).unwrap();
    served.restart();
    assert_eq!(session_status(&served, &kept), 401);
    let fresh = browser_session(&served);
    assert_eq!(session_status(&served, &fresh), 200);
}

/// Check 5: a `POST` body is JSON.
#[test]
fn check_5_a_cross_site_form_post_is_refused_and_runs_nothing() {
    let served = Served::start(Hearth::new(), &[], &[]);
    let body =
        r#"{"jsonrpc":"2.0","id":1,"method":"session/create","params":{"provider":"replay"}}"#;
    let (status, response) = served.http(&request(
        "POST /rpc HTTP/1.1",
        &[host(&served), "Content-Type: text/plain".to_owned()],
        body,
    ));
    assert_eq!(status, 401, "{response}");
    let (status, response) = served.http(&request(
        "POST /rpc HTTP/1.1",
        &[
            host(&served),
            "Content-Type: text/plain".to_owned(),
            "Origin: http://evil.com".to_owned(),
        ],
        body,
    ));
    assert_eq!(status, 403, "{response}");
    // Even with the token, a form's content type is not JSON-RPC.
    let (status, response) = served.http(&request(
        "POST /rpc HTTP/1.1",
        &[
            host(&served),
            bearer(&served),
            "Content-Type: text/plain".to_owned(),
        ],
        body,
    ));
    assert_eq!(status, 415, "{response}");
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"session/list"}"#;
    let (status, response) = served.http(&request(
        "POST /rpc HTTP/1.1",
        &[
            host(&served),
            bearer(&served),
            "Content-Type: application/json".to_owned(),
        ],
        list,
    ));
    assert_eq!(status, 200, "{response}");
    assert!(
        response.contains(r#""sessions":[]"#),
        "nothing ran: {response}"
    );
}

#[test]
fn binding_beyond_loopback_without_allow_remote_refuses_to_start() {
    let hearth = Hearth::new();
    for address in ["0.0.0.0", "::"] {
        let error = hearth.fails(&["serve", "--bind", address, "--port", "0"]);
        assert!(error.contains("--allow-remote"), "{address}: {error}");
        assert!(error.contains("refusing to listen"), "{error}");
        assert!(!hearth.home.path().join("server.json").exists());
    }
    hearth.write("config.toml", "[server]\nbind = \"0.0.0.0\"\n");
    let error = hearth.fails(&["serve", "--port", "0"]);
    assert!(error.contains("--allow-remote"), "{error}");
}

#[test]
fn the_token_and_browser_sessions_are_private_and_never_logged() {
    let mut served = Served::start(Hearth::new(), &["-vv"], &[("HEARTH_LOG", "debug")]);
    let token = served.token.expose().to_owned();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(served.hearth.home.path().join("token"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let exchange = format!("GET /auth?token={token} HTTP/1.1");
    served.http(&request(&exchange, &[host(&served)], ""));
    let link = served.hearth.ok(&["login"]);
    let (_, code) = link.trim().split_once("?code=").unwrap();
    let code = code.to_owned();
    let (status, response) = trade(&served, &code);
    assert_eq!(status, 200, "{response}");
    let session = json_body(&response)["session"].as_str().unwrap().to_owned();
    assert_eq!(session_status(&served, &session), 200);
    upgrade(&served, "/rpc", &[offer(&session)]);
    served.http(&request(
        "GET /health HTTP/1.1",
        &[host(&served), bearer(&served)],
        "",
    ));
    served.http(&request(
        "GET /health HTTP/1.1",
        &[
            host(&served),
            format!("Authorization: Bearer {}x", &token[..63]),
        ],
        "",
    ));
    let stderr = served.stop();
    assert!(stderr.contains("request"), "debug logging was on: {stderr}");
    assert!(!stderr.contains(&token), "the token reached the log");
    assert!(
        !stderr.contains(&token[..16]),
        "part of the token reached the log"
    );
    assert!(!stderr.contains(&code), "a login code reached the log");
    for part in session.split('.').filter(|part| part.len() > 16) {
        assert!(!stderr.contains(part), "part of a session reached the log");
    }
}

#[test]
fn oversized_requests_are_refused() {
    let served = Served::start(Hearth::new(), &[], &[]);
    let text = format!(
        "POST /rpc HTTP/1.1\r\n{}\r\n{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        host(&served),
        bearer(&served),
        8 * 1024 * 1024
    );
    let (status, response) = served.http(&text);
    assert_eq!(status, 413, "{response}");
}

#[test]
fn the_mcp_endpoint_has_the_same_checks() {
    let served = Served::start(Hearth::new(), &[], &[]);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let json = "Content-Type: application/json".to_owned();
    let accept = "Accept: application/json, text/event-stream".to_owned();
    let (status, _) = served.http(&request(
        "POST /mcp HTTP/1.1",
        &[host(&served), json.clone(), accept.clone()],
        body,
    ));
    assert_eq!(status, 401, "no token");
    let (status, _) = served.http(&request(
        "POST /mcp HTTP/1.1",
        &[
            format!("Host: evil.com:{}", served.port),
            bearer(&served),
            json.clone(),
            accept.clone(),
        ],
        body,
    ));
    assert_eq!(status, 403, "foreign Host");
    let (status, _) = served.http(&request(
        "POST /mcp HTTP/1.1",
        &[
            host(&served),
            bearer(&served),
            json.clone(),
            accept.clone(),
            "Origin: http://evil.com".to_owned(),
        ],
        body,
    ));
    assert_eq!(status, 403, "foreign Origin");
    let (status, response) = served.http(&request(
        "POST /mcp HTTP/1.1",
        &[host(&served), bearer(&served), json, accept],
        body,
    ));
    assert_eq!(status, 200, "{response}");
}

/// Every directory and file under `root` that group or other users may access, with its
/// mode.
fn open_to_others(root: &std::path::Path) -> Vec<(String, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(path) = pending.pop() {
        let metadata = std::fs::symlink_metadata(&path).unwrap();
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            found.push((path.display().to_string(), mode));
        }
        if metadata.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap() {
                pending.push(entry.unwrap().path());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn a_new_data_directory_and_everything_in_it_are_private() {
    let parent = tempfile::tempdir().unwrap();
    // A data directory Hearth makes itself (a temporary directory is private already).
    let home = parent.path().join("home");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(&home)
        .args(["run", "hello"])
        .env_remove("HEARTH_HOME")
        .env_remove("HEARTH_SERVER")
        .env_remove("HEARTH_CONFIG")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("HEARTH_REPLAY_DELAY_SCALE", "0")
        .output_within(PROCESS_WAIT);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(home.join("hearth.db").exists());
    assert_eq!(open_to_others(&home), Vec::new());
    // A server adds its token, its lock and its discovery file.
    let mut served = Served::start(Hearth::new(), &[], &[]);
    let served_home = served.hearth.home.path().to_path_buf();
    assert!(served_home.join("token").exists());
    assert!(served_home.join("server.json").exists());
    assert_eq!(open_to_others(&served_home), Vec::new());
    served.stop();
    assert_eq!(open_to_others(&served_home), Vec::new());
}

#[test]
fn an_install_open_to_others_is_made_private_once_with_a_notice() {
    use std::os::unix::fs::PermissionsExt;
    let hearth = Hearth::new();
    hearth.ok(&["run", "hello"]);
    let home = hearth.home.path();
    let set = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    // As an older Hearth left it: the directory and the database readable by anyone.
    set(home, 0o755);
    set(&hearth.database(), 0o644);
    std::fs::create_dir(home.join("logs")).unwrap();
    std::fs::write(home.join("logs/hearth.log"), "what was said").unwrap();
    set(&home.join("logs/hearth.log"), 0o644);
    assert_eq!(open_to_others(home).len(), 4, "the control failed");

    let output = hearth.run(&["sessions", "list"]);
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with("hearth: note: made 4 files and directories in ")
            && stderr.contains("readable by you only (the directory was 755)"),
        "{stderr}"
    );
    assert_eq!(stderr_line_count(&stderr), 1, "{stderr}");
    assert_eq!(open_to_others(home), Vec::new());
    // Said once: the next command has nothing to say.
    let output = hearth.run(&["sessions", "list"]);
    assert_eq!(String::from_utf8(output.stderr).unwrap(), "");
}
