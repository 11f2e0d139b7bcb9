//! The mock model server for end-to-end tests of the real binary: it runs on a thread
//! and runtime of its own (the tests are synchronous), and a temporary `config.toml`
//! points providers at its 127.0.0.1 URL.

use std::process::{Command, Output};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use hearth_test_support::{
    BoundedCommand, MockModelServer, OpenAiStream, PROCESS_WAIT, RecordedRequest,
};

use super::support::Hearth;

/// The model the mock answers as and the config names as the default.
pub const MODEL: &str = "mock-model";

/// Starts a mock model server that lives until the test process ends.
pub fn server() -> Arc<MockModelServer> {
    let (ready, started) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let server = Arc::new(MockModelServer::start().await.unwrap());
            ready.send(Arc::clone(&server)).unwrap();
            std::future::pending::<()>().await;
        });
    });
    started.recv().unwrap()
}

/// Writes `config.toml` into the data directory.
pub fn configure(hearth: &Hearth, text: &str) {
    hearth.write("config.toml", text);
}

/// A config with one OpenAI-compatible provider `mock` at the server, as the default.
pub fn mock_config(server: &MockModelServer) -> String {
    format!(
        "[defaults]\nprovider = \"mock\"\ntime_zone = \"Europe/Berlin\"\nclock = \"24h\"\n\n\
         [providers.mock]\nkind = \"openai\"\nbase_url = \"{}\"\ndefault_model = \"{MODEL}\"\nmax_retries = 0\n",
        server.url_with("/v1")
    )
}

/// The binary with no provider in the environment.
pub fn command(hearth: &Hearth) -> Command {
    let mut command = hearth.command();
    command
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("OLLAMA_HOST");
    command
}

/// Runs to the end (bounded: a hung process fails the test).
pub fn run(hearth: &Hearth, args: &[&str]) -> Output {
    command(hearth).args(args).output_within(PROCESS_WAIT)
}

/// Runs and expects success; returns (stdout, stderr).
pub fn ok(hearth: &Hearth, args: &[&str]) -> (String, String) {
    let output = run(hearth, args);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        output.status.success(),
        "hearth {args:?} failed: {stderr}\n{stdout}"
    );
    (stdout, stderr)
}

/// The chat-completion requests the server received (model listings left out).
pub fn completions(server: &MockModelServer) -> Vec<RecordedRequest> {
    server
        .requests()
        .into_iter()
        .filter(|request| request.method == "POST")
        .collect()
}

/// The messages of a request without the system prompt, as (role, content) pairs.
pub fn conversation(request: &RecordedRequest) -> Vec<(String, String)> {
    let messages = request.json()["messages"].as_array().unwrap().clone();
    assert_eq!(messages[0]["role"], "system");
    messages[1..]
        .iter()
        .map(|message| {
            (
                message["role"].as_str().unwrap().to_owned(),
                message["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

pub fn pair(role: &str, content: &str) -> (String, String) {
    (role.to_owned(), content.to_owned())
}

/// Polls `condition` until it holds, failing the test after 20 s.
pub fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A model answer that calls the tool `name` with `arguments` (JSON text).
pub fn tool_call(name: &str, arguments: &str) -> OpenAiStream {
    OpenAiStream::new(MODEL)
        .role()
        .tool_call(0, "call-1", name)
        .tool_arguments(0, arguments)
        .finish("tool_calls")
        .usage(10, 5)
        .done()
}
