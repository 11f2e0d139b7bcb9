//! The security matrix of `hearth serve`, against the real binary with raw HTTP: each
//! check of the guard, and the refusal to listen beyond loopback without opt-in.

use hearth_test_support::{BoundedCommand, PROCESS_WAIT};

use super::serve_support::{Served, request};
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

#[test]
fn the_host_header_must_name_this_server_on_its_port() {
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

#[test]
fn the_origin_must_be_one_of_the_exact_allowed_origins() {
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
}

#[test]
fn a_websocket_upgrade_from_a_foreign_origin_is_refused() {
    let served = Served::start(Hearth::new(), &[], &[]);
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
    let (status, response) = upgrade(&served, "/rpc", &[]);
    assert_eq!(status, 401, "{response}");
}

#[test]
fn a_cross_site_form_post_is_refused_and_runs_nothing() {
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
fn a_missing_or_wrong_token_gets_401() {
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
    // The token in a URL is accepted only by the browser exchange.
    let line = format!("GET /health?token={} HTTP/1.1", served.token.expose());
    let (status, _) = served.http(&request(&line, &[host(&served)], ""));
    assert_eq!(status, 401);
    let (status, _) = served.http(&request(
        "GET /health HTTP/1.1",
        &[host(&served), bearer(&served)],
        "",
    ));
    assert_eq!(status, 200);
}

#[test]
fn a_cors_preflight_from_a_foreign_origin_gets_no_allow_header() {
    let served = Served::start(Hearth::new(), &[], &[]);
    let preflight = |origin: String| {
        served.http(&request(
            "OPTIONS /rpc HTTP/1.1",
            &[
                host(&served),
                origin,
                "Access-Control-Request-Method: POST".to_owned(),
                "Access-Control-Request-Headers: authorization, content-type".to_owned(),
            ],
            "",
        ))
    };
    let (status, response) = preflight("Origin: http://evil.com".to_owned());
    assert_eq!(status, 403, "{response}");
    assert!(
        !has_header(&response, "access-control-allow-origin"),
        "{response}"
    );
    assert!(
        !has_header(&response, "access-control-allow-headers"),
        "{response}"
    );
    assert!(
        !has_header(&response, "access-control-allow-methods"),
        "{response}"
    );
    assert!(
        !has_header(&response, "access-control-allow-credentials"),
        "{response}"
    );
    // Not even the server's own origin is granted cross-origin reads.
    let (_, response) = preflight(format!("Origin: http://localhost:{}", served.port));
    assert!(
        !has_header(&response, "access-control-allow-origin"),
        "{response}"
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
fn the_token_is_private_and_never_logged() {
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
}

#[test]
fn a_browser_trades_the_token_once_for_a_strict_cookie_and_writes_need_csrf() {
    let served = Served::start(Hearth::new(), &[], &[]);
    let line = format!("GET /auth?token={} HTTP/1.1", served.token.expose());
    let (status, response) = served.http(&request(&line, &[host(&served)], ""));
    assert_eq!(status, 303, "{response}");
    assert_eq!(header(&response, "location"), Some("/"));
    assert_eq!(header(&response, "cache-control"), Some("no-store"));
    assert_eq!(header(&response, "referrer-policy"), Some("no-referrer"));
    let cookie = header(&response, "set-cookie").unwrap().to_owned();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    assert!(
        !cookie.contains(served.token.expose()),
        "the cookie is not the token"
    );
    let session = format!("Cookie: {}", cookie.split(';').next().unwrap());

    let wrong = format!("GET /auth?token={} HTTP/1.1", "0".repeat(64));
    let (status, _) = served.http(&request(&wrong, &[host(&served)], ""));
    assert_eq!(status, 401);

    let (status, _) = served.http(&request(
        "GET /health HTTP/1.1",
        &[host(&served), session.clone()],
        "",
    ));
    assert_eq!(status, 200, "the cookie authenticates reads");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"session/list"}"#;
    let json = "Content-Type: application/json".to_owned();
    let (status, response) = served.http(&request(
        "POST /rpc HTTP/1.1",
        &[host(&served), session.clone(), json.clone()],
        body,
    ));
    assert_eq!(status, 403, "a write without the CSRF header: {response}");
    let (status, response) = served.http(&request(
        "GET /auth/csrf HTTP/1.1",
        &[host(&served), session.clone()],
        "",
    ));
    assert_eq!(status, 200, "{response}");
    let body_start = response.find("\r\n\r\n").unwrap() + 4;
    let csrf: serde_json::Value = serde_json::from_str(&response[body_start..]).unwrap();
    let csrf = csrf["csrf"].as_str().unwrap().to_owned();
    let (status, response) = served.http(&request(
        "POST /rpc HTTP/1.1",
        &[
            host(&served),
            session.clone(),
            json.clone(),
            format!("X-Hearth-CSRF: {csrf}"),
        ],
        body,
    ));
    assert_eq!(status, 200, "{response}");
    let (status, _) = served.http(&request(
        "POST /rpc HTTP/1.1",
        &[
            host(&served),
            session.clone(),
            json,
            "X-Hearth-CSRF: nope".to_owned(),
        ],
        body,
    ));
    assert_eq!(status, 403);
    let (status, _) = upgrade(&served, "/rpc", std::slice::from_ref(&session));
    assert_eq!(status, 403, "a browser's WebSocket needs its CSRF token");
    let (status, response) = upgrade(&served, &format!("/rpc?csrf={csrf}"), &[session]);
    assert_eq!(status, 101, "{response}");
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
