//! The README's first run, from a clean data directory: the demo, setting a key (an
//! OpenAI-compatible server by its base URL, no model named), `doctor`, `run`, `chat`,
//! and continuing the last session with `run -c` and `chat -c`.

use std::io::Write;
use std::process::Stdio;
use std::sync::Arc;

use hearth_test_support::{
    BoundedChild, MockModelServer, MockResponse, OpenAiStream, PROCESS_WAIT, RecordedRequest,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::mock::{completions, conversation, pair, server};
use super::support::Hearth;

/// The server lists these models; chat requests take their answers from the queue.
fn lists(server: &MockModelServer, models: &[&str]) {
    let data: Vec<_> = models
        .iter()
        .map(|model| json!({"id": model, "object": "model"}))
        .collect();
    let listing = json!({"object": "list", "data": data});
    server.set_responder(Arc::new(move |request: &RecordedRequest| {
        request
            .path
            .ends_with("/models")
            .then(|| MockResponse::json(200, &listing))
    }));
}

/// The binary with the key and base URL a user exports.
fn with_key(hearth: &Hearth, server: &MockModelServer) -> std::process::Command {
    let mut command = hearth.command();
    command
        .env("OPENAI_API_KEY", "sk-first-run")
        .env("OPENAI_BASE_URL", server.url_with("/v1"))
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OLLAMA_HOST");
    command
}

fn run_ok(command: &mut std::process::Command) -> (String, String) {
    let output = hearth_test_support::BoundedCommand::output_within(command, PROCESS_WAIT);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}\n{stdout}");
    (stdout, stderr)
}

fn chat(command: &mut std::process::Command, input: &str) -> (String, String) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}\n{stdout}");
    (stdout, stderr)
}

/// Only the agent's turns (no title requests).
fn turns(server: &MockModelServer) -> Vec<RecordedRequest> {
    completions(server)
        .into_iter()
        .filter(|request| request.path.ends_with("/chat/completions"))
        .filter(|request| {
            request.json()["messages"][0]["content"]
                .as_str()
                .is_some_and(|system| system.starts_with("You are Hearth's assistant"))
        })
        .collect()
}

#[test]
fn the_readme_first_run_from_a_clean_home() {
    let hearth = Hearth::new();
    // 1. Nothing set up: the demo answers and says how to add a provider.
    let (stdout, stderr) = run_ok(hearth.command().args(["run", "hello"]));
    assert!(stdout.contains("scripted demo"), "{stdout}");
    assert!(stderr.contains("no model provider in use"), "{stderr}");
    assert!(stderr.contains("OPENAI_API_KEY"), "{stderr}");

    // 2. A key and a base URL are exported; the server offers one model.
    let server = server();
    lists(&server, &["local-llama"]);
    server.enqueue(OpenAiStream::text_answer("local-llama", &["p"], 1, 1));
    let (stdout, _) = run_ok(with_key(&hearth, &server).arg("doctor"));
    assert!(
        stdout.contains("listed 1 model(s), local-llama answered a one-token request"),
        "{stdout}"
    );

    // 3. `run` uses the one model the server offers, with no --model.
    server.enqueue(OpenAiStream::text_answer(
        "local-llama",
        &["po", "ng"],
        3,
        1,
    ));
    let (stdout, stderr) = run_ok(with_key(&hearth, &server).args(["run", "say ping"]));
    assert_eq!(stdout, "pong\n", "{stderr}");
    assert!(!stderr.contains("demo"), "{stderr}");
    let asked = turns(&server);
    assert_eq!(asked.last().unwrap().json()["model"], "local-llama");

    // 4. `chat` on a pipe, then `run -c` continues that chat's session.
    server.set_fallback(OpenAiStream::text_answer("local-llama", &["ok"], 1, 1));
    let (stdout, _) = chat(
        with_key(&hearth, &server).arg("chat"),
        "remember 7\n/quit\n",
    );
    assert_eq!(stdout, "ok\n");
    let (stdout, _) = run_ok(with_key(&hearth, &server).args(["run", "-c", "what number?"]));
    assert_eq!(stdout, "ok\n");
    let last = turns(&server).pop().unwrap();
    assert_eq!(
        conversation(&last),
        vec![
            pair("user", "remember 7"),
            pair("assistant", "ok"),
            pair("user", "what number?")
        ]
    );

    // 5. `chat -c` goes on in the same session.
    let (stdout, _) = chat(
        with_key(&hearth, &server).args(["chat", "-c"]),
        "and again?\n",
    );
    assert_eq!(stdout, "ok\n");
    let last = turns(&server).pop().unwrap();
    assert_eq!(conversation(&last).len(), 5, "{:?}", conversation(&last));
    // Three sessions: the demo's, `run`'s and the chat's (continued twice).
    assert_eq!(hearth.session_uris().len(), 3);
}

#[test]
fn a_server_offering_several_models_and_none_chosen_lists_them() {
    let hearth = Hearth::new();
    let server = server();
    lists(&server, &["alpha", "beta"]);
    let output = hearth_test_support::BoundedCommand::output_within(
        with_key(&hearth, &server).args(["run", "hi"]),
        PROCESS_WAIT,
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("which offers alpha, beta: pass --model NAME"),
        "{stderr}"
    );
    // `doctor` says the same, with the fix.
    let output = hearth_test_support::BoundedCommand::output_within(
        with_key(&hearth, &server).arg("doctor"),
        PROCESS_WAIT,
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains("no model is chosen and the provider offers 2: alpha, beta"),
        "{stdout}"
    );
    assert!(stdout.contains("fix: pass --model"), "{stdout}");
    // A model named on the command line needs no listing.
    server.enqueue(OpenAiStream::text_answer("beta", &["fine"], 1, 1));
    let (stdout, _) = run_ok(with_key(&hearth, &server).args(["run", "--model", "beta", "hi"]));
    assert_eq!(stdout, "fine\n");
}

/// The configuration names the OpenAI provider and its default model but no base URL;
/// `OPENAI_BASE_URL` points at a local server. Every request goes to that server (as
/// OpenAI's SDKs and Codex do), and `providers list` and `doctor` say so and why.
#[test]
fn a_configured_openai_provider_without_base_url_follows_openai_base_url() {
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        "[providers.openai]\nkind = \"openai\"\ndefault_model = \"local-llama\"\nmax_retries = 0\n",
    );
    let server = server();
    lists(&server, &["local-llama"]);
    server.set_fallback(OpenAiStream::text_answer("local-llama", &["pong"], 1, 1));

    let (stdout, _) = run_ok(with_key(&hearth, &server).args(["providers", "list"]));
    let base = server.url_with("/v1");
    assert!(
        stdout.contains(&format!("* openai  openai  {base} (from OPENAI_BASE_URL)")),
        "{stdout}"
    );
    let (stdout, _) = run_ok(with_key(&hearth, &server).args(["providers", "list", "--json"]));
    let listed: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(listed["baseUrl"], base);
    assert_eq!(listed["baseUrlSource"], "from OPENAI_BASE_URL");
    assert_eq!(listed["key"], "key from OPENAI_API_KEY");

    let (stdout, _) = run_ok(with_key(&hearth, &server).args(["run", "say ping"]));
    assert_eq!(stdout, "pong\n");
    let asked = turns(&server);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].json()["model"], "local-llama");
    assert_eq!(
        asked[0].header("authorization"),
        Some("Bearer sk-first-run")
    );

    let (stdout, _) = run_ok(with_key(&hearth, &server).arg("doctor"));
    assert!(stdout.contains("(from OPENAI_BASE_URL)"), "{stdout}");

    // Without the variable, the same section names the official endpoint, and says why.
    let output = hearth_test_support::BoundedCommand::output_within(
        with_key(&hearth, &server)
            .env_remove("OPENAI_BASE_URL")
            .args(["providers", "list"]),
        PROCESS_WAIT,
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(
        stdout.contains(
            "https://api.openai.com/v1 (official endpoint: no base_url and OPENAI_BASE_URL not set)"
        ),
        "{stdout}"
    );
}
