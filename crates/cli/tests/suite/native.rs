//! `hearth run` and `hearth doctor` with Hearth's own agent against the mock model
//! server: the answer, what was sent, sessions continued in a new process, provider and
//! model choice, no provider at all, a missing key, a failing provider.

use hearth_test_support::{
    AnthropicStream, BoundedCommand, MockResponse, OpenAiStream, PROCESS_WAIT,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::mock::{
    MODEL, command, completions, configure, conversation, mock_config, ok, pair, run, server,
};
use super::support::{Hearth, stderr_line_count};

#[test]
fn run_streams_the_answer_of_the_configured_provider() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["po", "ng"], 9, 1));
    let (stdout, stderr) = ok(&hearth, &["run", "say ping"]);
    assert_eq!(stdout, "pong\n");
    assert!(!stderr.contains("demo"), "{stderr}");

    // One model call: no title is asked for in a one-shot run.
    let requests = completions(&server);
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].json()["model"], MODEL);
    assert_eq!(conversation(&requests[0]), vec![pair("user", "say ping")]);
    let system = requests[0].json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("(Europe/Berlin, UTC+"), "{system}");
    assert!(system.contains("a 24-hour clock"), "{system}");

    let sessions = hearth.session_uris();
    assert_eq!(sessions.len(), 1);
    assert!(
        sessions[0].starts_with("hearth-session:mock/"),
        "{sessions:?}"
    );
    let show = hearth.ok(&["sessions", "show", &sessions[0]]);
    assert!(show.contains("provider  mock\n"), "{show}");
    assert!(show.contains("› say ping\npong"), "{show}");
}

#[test]
fn a_session_continues_with_its_history_in_a_new_process() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["one"], 1, 1));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["two"], 1, 1));
    ok(&hearth, &["run", "first"]);
    let session = hearth.session_uris().remove(0);
    let (stdout, _) = ok(&hearth, &["run", "--session", &session, "second"]);
    assert_eq!(stdout, "two\n");
    assert_eq!(
        conversation(&completions(&server)[1]),
        vec![
            pair("user", "first"),
            pair("assistant", "one"),
            pair("user", "second")
        ]
    );
}

#[test]
fn provider_and_model_come_from_the_command_line() {
    let server = server();
    let hearth = Hearth::new();
    configure(
        &hearth,
        &format!(
            "{}\n[providers.claude]\nkind = \"anthropic\"\nbase_url = \"{}\"\ndefault_model = \"claude-default\"\n",
            mock_config(&server),
            server.url()
        ),
    );
    server.enqueue(AnthropicStream::text_answer(
        "claude-x",
        &["Hi ", "there"],
        5,
        2,
    ));
    let (stdout, _) = ok(
        &hearth,
        &[
            "run",
            "--provider",
            "claude",
            "--model",
            "claude-x",
            "hello",
        ],
    );
    assert_eq!(stdout, "Hi there\n");
    let request = &completions(&server)[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.json()["model"], "claude-x");
    assert_eq!(
        request.json()["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "hello"}]}])
    );
    assert!(hearth.session_uris()[0].starts_with("hearth-session:claude/"));
}

#[test]
fn without_any_provider_run_says_how_to_add_one_and_plays_the_demo() {
    let hearth = Hearth::new();
    let output = run(&hearth, &["run", "hello"]);
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stdout.contains("scripted demo"), "{stdout}");
    for needle in [
        "No model provider is set up",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ollama serve",
        "[providers.openai]",
        "hearth run --provider replay",
        "built-in demo",
    ] {
        assert!(stderr.contains(needle), "missing {needle}:\n{stderr}");
    }
}

#[test]
fn a_missing_key_names_the_variable_to_set() {
    let hearth = Hearth::new();
    configure(
        &hearth,
        "[providers.keyed]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"HEARTH_TEST_UNSET_KEY\"\n",
    );
    let output = super::mock::command(&hearth)
        .env_remove("HEARTH_TEST_UNSET_KEY")
        .args(["run", "--provider", "keyed", "hello"])
        .output_within(PROCESS_WAIT);
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("no API key for keyed: set HEARTH_TEST_UNSET_KEY"),
        "{stderr}"
    );
    assert_eq!(stderr_line_count(&stderr), 1, "{stderr}");
}

#[test]
fn a_failing_model_fails_the_run_with_the_providers_message() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    server.enqueue(MockResponse::openai_error(
        401,
        "Incorrect API key provided",
        "invalid_request_error",
    ));
    let output = run(&hearth, &["run", "hello"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr
            .contains("mock answered HTTP 401 (invalid_request_error): Incorrect API key provided"),
        "{stderr}"
    );
    let session = hearth.session_uris().remove(0);
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains("[failed]"), "{show}");
}

#[test]
fn doctor_checks_every_provider_and_fails_when_one_does() {
    let server = server();
    let hearth = Hearth::new();
    configure(
        &hearth,
        &format!(
            "[providers.good]\nkind = \"openai\"\nbase_url = \"{}\"\ndefault_model = \"{MODEL}\"\n\n\
             [providers.bad]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
            server.url_with("/v1")
        ),
    );
    let listing = json!({"object": "list", "data": [{"id": MODEL, "object": "model"}]});
    server.enqueue(MockResponse::json(200, &listing));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["p"], 1, 1));
    let output = run(&hearth, &["doctor"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("ok      good ("), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "listed 1 model(s), {MODEL} answered a one-token request in"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAILED  bad (http://127.0.0.1:9/v1): cannot reach bad"),
        "{stdout}"
    );
    assert!(
        stdout.contains("fix: nothing answers at http://127.0.0.1:9/v1"),
        "{stdout}"
    );
    assert!(stdout.contains("1 of 2 provider(s) work"), "{stdout}");
    assert_eq!(server.requests()[0].path, "/v1/models");

    server.enqueue(MockResponse::json(200, &listing));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["p"], 1, 1));
    let (stdout, _) = ok(&hearth, &["doctor", "--provider", "good"]);
    assert!(stdout.contains("1 of 1 provider(s) work"), "{stdout}");
}

#[test]
fn doctor_without_providers_says_how_to_add_one() {
    let hearth = Hearth::new();
    let output = run(&hearth, &["doctor"]);
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("No model provider is set up"), "{stdout}");
    assert!(stdout.contains("hearth run --provider replay"), "{stdout}");
}

#[test]
fn the_api_key_reaches_the_provider_and_nowhere_else() {
    const SECRET: &str = "sk-e2e-secret-0123456789abcdef";
    let server = server();
    let hearth = Hearth::new();
    configure(
        &hearth,
        &mock_config(&server).replace(
            "max_retries = 0\n",
            "max_retries = 0\napi_key_env = \"HEARTH_TEST_E2E_KEY\"\n",
        ),
    );
    server.enqueue(OpenAiStream::text_answer(MODEL, &["po", "ng"], 9, 1));
    server.enqueue(MockResponse::openai_error(
        401,
        &format!("Incorrect API key provided: {SECRET}"),
        "invalid_request_error",
    ));
    let with_key = |args: &[&str]| {
        command(&hearth)
            .env("HEARTH_TEST_E2E_KEY", SECRET)
            .args(args)
            .output_within(PROCESS_WAIT)
    };
    let first = with_key(&["-vv", "run", "say ping"]);
    assert!(first.status.success());
    let session = hearth.session_uris().remove(0);
    let second = with_key(&["-vv", "run", "--session", &session, "again"]);
    assert!(!second.status.success());
    let asked = completions(&server);
    assert_eq!(
        asked[0].header("authorization"),
        Some(format!("Bearer {SECRET}").as_str()),
        "the key is sent to the provider"
    );
    let mut seen = vec![
        String::from_utf8_lossy(&first.stdout).into_owned(),
        String::from_utf8_lossy(&first.stderr).into_owned(),
        String::from_utf8_lossy(&second.stdout).into_owned(),
        String::from_utf8_lossy(&second.stderr).into_owned(),
        hearth.ok(&["sessions", "show", "--json", &session]),
        hearth.ok(&["audit", "export"]),
    ];
    for entry in std::fs::read_dir(hearth.home.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            seen.push(String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned());
        }
    }
    assert!(
        seen[3].contains("Incorrect API key provided"),
        "the provider's message is shown: {}",
        seen[3]
    );
    for (index, text) in seen.iter().enumerate() {
        assert!(
            !text.contains(SECRET),
            "the key leaked into item {index}: {text}"
        );
    }
}
