//! Hearth's MCP client against real FastMCP servers (the official Python MCP SDK),
//! over stdio and streamable HTTP.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use hearth_config::McpServerConfig;
use hearth_core::{ChatUri, HarnessId, Scope, SessionId, SessionUri, ToolCallContext, TurnId};
use hearth_fetch::FetchPolicy;
use hearth_mcp_client::{McpTools, ServerStatus};
use hearth_tools::{PermissionAsker, PermissionQuestion, PermissionReply, with_permission_asker};
use pretty_assertions::assert_eq;
use serde_json::json;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The venv's python with the MCP SDK, or `None` (skipped with the reason) unless
/// `HEARTH_REQUIRE_PYTHON=1`.
fn python() -> Option<PathBuf> {
    let venv = std::env::var_os("HEARTH_PYTHON_VENV")
        .map_or_else(|| repo().join("target/python-venv"), PathBuf::from);
    let python = venv.join("bin/python");
    let works = std::process::Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|output| output.status.success());
    if works {
        return Some(python);
    }
    let reason = format!(
        "skipped: no python with the `mcp` package at {}; run .ci/install-python-packages",
        python.display()
    );
    assert!(
        std::env::var("HEARTH_REQUIRE_PYTHON").as_deref() != Ok("1"),
        "{reason}"
    );
    eprintln!("{reason}");
    None
}

fn script() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/servers/server.py")
        .display()
        .to_string()
}

fn stdio(python: &std::path::Path, extra: impl FnOnce(&mut McpServerConfig)) -> McpTools {
    let mut config = McpServerConfig {
        command: Some(python.display().to_string()),
        args: vec![script(), "stdio".to_owned()],
        timeout_seconds: Some(3),
        ..McpServerConfig::default()
    };
    extra(&mut config);
    McpTools::from_config(
        &BTreeMap::from([("test".to_owned(), config)]),
        FetchPolicy::default(),
    )
}

fn context() -> ToolCallContext {
    let session = SessionUri::new(HarnessId::parse("openai").unwrap(), SessionId::generate());
    ToolCallContext {
        chat: ChatUri::default_for(&session),
        session,
        turn_id: TurnId::generate(),
        call_id: "call_1".to_owned(),
        scope: Scope::Global,
        working_directories: Vec::new(),
    }
}

/// Answers every question with `option_id`, keeping what was asked.
struct Answering {
    option_id: &'static str,
    asked: Mutex<Vec<String>>,
}

impl PermissionAsker for Answering {
    fn ask<'a>(
        &'a self,
        _call: &'a ToolCallContext,
        question: PermissionQuestion,
    ) -> BoxFuture<'a, Option<PermissionReply>> {
        self.asked.lock().unwrap().push(question.title.clone());
        let option = question
            .options
            .iter()
            .find(|option| option.id == self.option_id)
            .cloned()
            .unwrap();
        Box::pin(async move {
            Some(PermissionReply {
                option_id: option.id,
                kind: option.kind,
                via: "test".to_owned(),
            })
        })
    }
}

fn answering(option_id: &'static str) -> Arc<Answering> {
    Arc::new(Answering {
        option_id,
        asked: Mutex::new(Vec::new()),
    })
}

#[tokio::test]
async fn tools_are_listed_with_the_server_prefix_and_an_invalid_schema_is_left_out() {
    let Some(python) = python() else { return };
    let tools = stdio(&python, |_| {});
    let descriptions = tools.descriptions();
    // None claims to stage a proposal; those that are not read-only say they ask first.
    assert!(descriptions.iter().all(|tool| !tool.mutates));
    let write = descriptions
        .iter()
        .find(|tool| tool.name == "test__write_note")
        .unwrap();
    assert!(
        write.description.contains("asks the user before it runs"),
        "{write:?}"
    );
    let lookup = descriptions
        .iter()
        .find(|tool| tool.name == "test__lookup")
        .unwrap();
    assert!(!lookup.description.contains("asks the user"), "{lookup:?}");
    let mut names: Vec<String> = descriptions.into_iter().map(|tool| tool.name).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "test__crash",
            "test__garbage",
            "test__hang",
            "test__lookup",
            "test__wipe",
            "test__write_note"
        ]
    );
    let reports = tools.reports().await;
    assert_eq!(reports[0].status, ServerStatus::Running);
    let broken = reports[0]
        .tools
        .iter()
        .find(|tool| tool.name == "broken")
        .unwrap();
    assert!(
        broken
            .unavailable
            .as_deref()
            .is_some_and(|why| why.contains("invalid input schema") && why.contains("strin")),
        "{broken:?}"
    );
    let outcome = tools
        .call(&context(), "test__broken", json!({"x": "a"}), None)
        .await;
    assert!(
        outcome.is_error && outcome.content.contains("unavailable"),
        "{outcome:?}"
    );
    tools.shutdown().await;
}

#[tokio::test]
async fn a_read_only_tool_runs_at_once_and_bad_arguments_are_refused() {
    let Some(python) = python() else { return };
    let tools = stdio(&python, |_| {});
    let outcome = tools
        .call(&context(), "test__lookup", json!({"key": "k"}), None)
        .await;
    assert_eq!(
        (outcome.content.as_str(), outcome.is_error),
        ("value of k", false)
    );
    let outcome = tools
        .call(&context(), "test__lookup", json!({"key": 3}), None)
        .await;
    assert!(
        outcome.is_error && outcome.content.contains("invalid arguments"),
        "{outcome:?}"
    );
    tools.shutdown().await;
}

#[tokio::test]
async fn a_mutating_tool_runs_only_when_the_user_allows_it() {
    let Some(python) = python() else { return };
    let tools = stdio(&python, |_| {});
    let call = context();
    // Nobody can answer: refused, with how to allow it.
    let outcome = tools
        .call(&call, "test__write_note", json!({"text": "hi"}), None)
        .await;
    assert!(outcome.is_error, "{outcome:?}");
    assert!(outcome.content.contains("allow"), "{outcome:?}");
    // The user refuses.
    let refuse = answering("reject-once");
    let outcome = with_permission_asker(
        refuse.clone(),
        tools.call(&call, "test__write_note", json!({"text": "hi"}), None),
    )
    .await;
    assert!(
        outcome.is_error && outcome.content.contains("refused"),
        "{outcome:?}"
    );
    // The user allows: the exact arguments were shown.
    let allow = answering("allow-once");
    let outcome = with_permission_asker(
        allow.clone(),
        tools.call(&call, "test__write_note", json!({"text": "hi"}), None),
    )
    .await;
    assert_eq!(
        (outcome.content.as_str(), outcome.is_error),
        ("wrote note 1: hi", false)
    );
    let asked = allow.asked.lock().unwrap().clone();
    assert!(
        asked[0].contains("test__write_note") && asked[0].contains(r#"{"text":"hi"}"#),
        "{asked:?}"
    );
    tools.shutdown().await;
}

/// A tool annotated `readOnlyHint: true` and `destructiveHint: true` is taken at its
/// worst word: it asks like any other write.
#[tokio::test]
async fn a_tool_that_claims_read_only_and_destructive_asks() {
    let Some(python) = python() else { return };
    let tools = stdio(&python, |_| {});
    let wipe = tools
        .descriptions()
        .into_iter()
        .find(|tool| tool.name == "test__wipe")
        .unwrap();
    assert!(
        wipe.description.contains("asks the user before it runs"),
        "{wipe:?}"
    );
    // Nobody can answer: refused, not run.
    let outcome = tools
        .call(&context(), "test__wipe", json!({"path": "/home"}), None)
        .await;
    assert!(outcome.is_error, "{outcome:?}");
    assert!(!outcome.content.contains("wiped"), "{outcome:?}");
    // Asked, then allowed: it runs.
    let allow = answering("allow-once");
    let outcome = with_permission_asker(
        allow.clone(),
        tools.call(&context(), "test__wipe", json!({"path": "/tmp/x"}), None),
    )
    .await;
    assert_eq!(
        (outcome.content.as_str(), outcome.is_error),
        ("wiped /tmp/x", false)
    );
    assert_eq!(allow.asked.lock().unwrap().len(), 1);
    tools.shutdown().await;
}

#[tokio::test]
async fn an_allow_list_skips_the_question() {
    let Some(python) = python() else { return };
    let tools = stdio(&python, |config| {
        config.allow = vec!["write_note".to_owned()]
    });
    let outcome = tools
        .call(&context(), "test__write_note", json!({"text": "x"}), None)
        .await;
    assert_eq!(
        (outcome.content.as_str(), outcome.is_error),
        ("wrote note 1: x", false)
    );
    tools.shutdown().await;
}

#[tokio::test]
async fn a_crashed_hung_or_garbled_server_is_an_error_and_restarts_on_next_use() {
    let Some(python) = python() else { return };
    let tools = stdio(&python, |_| {});
    for (tool, expected) in [
        ("test__crash", "restarted on the next use"),
        ("test__hang", "did not answer within 3 s"),
        ("test__garbage", "restarted on the next use"),
    ] {
        let outcome = tokio::time::timeout(
            Duration::from_secs(30),
            tools.call(&context(), tool, json!({}), None),
        )
        .await
        .unwrap();
        assert!(outcome.is_error, "{tool}: {outcome:?}");
        assert!(outcome.content.contains(expected), "{tool}: {outcome:?}");
        if tool == "test__crash" {
            // The server's last words on stderr are in the error.
            assert!(
                outcome
                    .content
                    .contains("crash: the notes database is locked"),
                "{outcome:?}"
            );
        }
        // The next use starts it again.
        let outcome = tools
            .call(&context(), "test__lookup", json!({"key": "again"}), None)
            .await;
        assert_eq!(
            (outcome.content.as_str(), outcome.is_error),
            ("value of again", false),
            "after {tool}"
        );
    }
    tools.shutdown().await;
}

/// A FastMCP server on streamable HTTP, stopped when dropped.
struct HttpServer {
    child: std::process::Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

fn http_server(python: &std::path::Path) -> HttpServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new(python)
        .args([script(), "http".to_owned(), port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    HttpServer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

#[tokio::test]
async fn streamable_http_servers_need_local_for_loopback_and_then_work() {
    let Some(python) = python() else { return };
    let server = http_server(&python);
    let config = |local| McpServerConfig {
        url: Some(server.url.clone()),
        local,
        ..McpServerConfig::default()
    };
    // The guarded fetcher's rules refuse loopback unless the user marked it local.
    let guarded = McpTools::from_config(
        &BTreeMap::from([("web".to_owned(), config(false))]),
        FetchPolicy::default(),
    );
    let reports = guarded.reports().await;
    assert!(
        matches!(&reports[0].status, ServerStatus::Failed(why) if why.contains("local = true")),
        "{reports:?}"
    );
    let local = McpTools::from_config(
        &BTreeMap::from([("web".to_owned(), config(true))]),
        FetchPolicy::default(),
    );
    let outcome = local
        .call(&context(), "web__lookup", json!({"key": "h"}), None)
        .await;
    assert_eq!(
        (outcome.content.as_str(), outcome.is_error),
        ("value of h", false)
    );
    let outcome = with_permission_asker(
        answering("allow-once"),
        local.call(&context(), "web__write_note", json!({"text": "n"}), None),
    )
    .await;
    assert_eq!(
        (outcome.content.as_str(), outcome.is_error),
        ("wrote note 1: n", false)
    );
    local.shutdown().await;
}

#[tokio::test]
async fn a_missing_bearer_token_variable_is_named_and_a_bad_command_is_a_clear_failure() {
    let missing_token = McpServerConfig {
        url: Some("http://127.0.0.1:9/mcp".to_owned()),
        local: true,
        bearer_token_env: Some("HEARTH_TEST_TOKEN_THAT_IS_NOT_SET".to_owned()),
        ..McpServerConfig::default()
    };
    let bad_command = McpServerConfig {
        command: Some("/nonexistent/hearth-test-mcp-server".to_owned()),
        ..McpServerConfig::default()
    };
    let tools = McpTools::from_config(
        &BTreeMap::from([
            ("token".to_owned(), missing_token),
            ("gone".to_owned(), bad_command),
        ]),
        FetchPolicy::default(),
    );
    let statuses: Vec<(String, ServerStatus)> = tools
        .reports()
        .await
        .into_iter()
        .map(|report| (report.name, report.status))
        .collect();
    assert!(
        matches!(&statuses[0], (name, ServerStatus::Failed(why)) if name == "gone" && why.contains("cannot run `/nonexistent/hearth-test-mcp-server`")),
        "{statuses:?}"
    );
    assert!(
        matches!(&statuses[1], (name, ServerStatus::Failed(why)) if name == "token" && why.contains("`HEARTH_TEST_TOKEN_THAT_IS_NOT_SET` (bearer_token_env) is not set")),
        "{statuses:?}"
    );
    assert!(tools.descriptions().is_empty());
    let outcome = tools
        .call(&context(), "gone__anything", json!({}), None)
        .await;
    assert!(
        outcome.is_error && outcome.content.contains("could not be started"),
        "{outcome:?}"
    );
}

/// "Allow for this chat" lets the tool run again in the same chat without asking, with
/// other arguments too; another chat is asked again.
#[tokio::test]
async fn a_tool_allowed_for_the_chat_is_not_asked_again_in_it() {
    let Some(python) = python() else { return };
    let tools = stdio(&python, |_| {});
    let call = context();
    let allow = answering("allow-chat");
    for text in ["one", "two"] {
        let outcome = with_permission_asker(
            allow.clone(),
            tools.call(&call, "test__write_note", json!({ "text": text }), None),
        )
        .await;
        assert!(!outcome.is_error, "{outcome:?}");
    }
    assert_eq!(
        allow.asked.lock().unwrap().len(),
        1,
        "asked once in the chat"
    );
    let elsewhere = answering("allow-once");
    let outcome = with_permission_asker(
        elsewhere.clone(),
        tools.call(
            &context(),
            "test__write_note",
            json!({"text": "three"}),
            None,
        ),
    )
    .await;
    assert!(!outcome.is_error, "{outcome:?}");
    assert_eq!(
        elsewhere.asked.lock().unwrap().len(),
        1,
        "another chat is asked"
    );
    tools.shutdown().await;
}
