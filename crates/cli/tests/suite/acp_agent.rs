//! `hearth acp` driven by ACP clients written by others: the official Python SDK
//! (`agent-client-protocol` on PyPI, from `target/python-venv`; skipped with the reason
//! when missing, unless `HEARTH_REQUIRE_PYTHON=1`) and Hearth's own ACP client
//! (`hearth run --agent hearth-self` with `hearth acp` configured as an agent), against
//! the scripted mock model.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use hearth_test_support::{
    BoundedCommand, MockModelServer, MockResponse, OpenAiStream, PROCESS_WAIT,
};
use pretty_assertions::assert_eq;
use serde_json::Value;

use super::mock::{MODEL, completions, configure, mock_config, server};
use super::support::{Hearth, venv_python};
use super::tool_support::{audit_rows, proposal};

const CLIENT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/suite/acp_agent_client.py"
);

pub(super) fn python() -> Option<PathBuf> {
    venv_python("acp")
}

/// Runs the Python client in `mode` against `hearth acp` of `hearth`; its JSON report.
fn client(python: &Path, hearth: &Hearth, work: &Path, mode: &[&str]) -> Value {
    client_of(python, hearth, work, mode, &[], &[])
}

/// Runs the Python client in `mode` against `hearth <global...> acp` of `hearth`, with
/// `env` set; its JSON report.
pub(super) fn client_of(
    python: &Path,
    hearth: &Hearth,
    work: &Path,
    mode: &[&str],
    global: &[&str],
    env: &[(&str, &str)],
) -> Value {
    let output = Command::new(python)
        .arg(CLIENT)
        .arg(mode[0])
        .arg(work)
        .args(&mode[1..])
        .arg(env!("CARGO_BIN_EXE_hearth"))
        .arg("--home")
        .arg(hearth.home.path())
        .args(global)
        .arg("acp")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OLLAMA_HOST")
        .envs(env.iter().copied())
        .output_within(PROCESS_WAIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "python client {mode:?} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

/// The text of every update of `kind` (`agent_message_chunk`, …), joined.
pub(super) fn texts(updates: &Value, kind: &str) -> String {
    updates
        .as_array()
        .unwrap()
        .iter()
        .filter(|update| update["sessionUpdate"] == kind)
        .map(|update| update["content"]["text"].as_str().unwrap_or_default())
        .collect()
}

pub(super) fn kinds(updates: &Value) -> Vec<String> {
    let mut kinds: Vec<String> = updates
        .as_array()
        .unwrap()
        .iter()
        .map(|update| update["sessionUpdate"].as_str().unwrap().to_owned())
        .collect();
    kinds.dedup();
    kinds
}

pub(super) fn work() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

pub(super) fn event_call() -> OpenAiStream {
    OpenAiStream::new(MODEL)
        .role()
        .tool_call(0, "call-1", "event_create")
        .tool_arguments(0, r#"{"title": "Dentist", "start": "2030-03-04T09:00"}"#)
        .finish("tool_calls")
        .usage(10, 5)
        .done()
}

pub(super) fn with_calendar(server: &MockModelServer) -> (Hearth, PathBuf) {
    let hearth = Hearth::new();
    let calendar = hearth.home.path().join("home.ics");
    configure(
        &hearth,
        &format!(
            "{}\n[calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n",
            mock_config(server),
            calendar.display().to_string()
        ),
    );
    (hearth, calendar)
}

#[test]
fn python_client_streams_a_prompt_then_loads_and_lists_it_after_a_restart() {
    let Some(python) = python() else { return };
    let server = server();
    let hearth = Hearth::new();
    configure(
        &hearth,
        &format!(
            "{}models = [\"{MODEL}\", \"other-model\"]\n",
            mock_config(&server)
        ),
    );
    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .reasoning_content("Thinking it over.")
            .text("Hello ")
            .text("from Hearth.")
            .finish("stop")
            .usage(12, 3)
            .done(),
    );
    let (_dir, work) = work();
    let report = client(&python, &hearth, &work, &["prompt"]);

    let capabilities = &report["initialize"]["agentCapabilities"];
    assert_eq!(capabilities["loadSession"], true);
    assert_eq!(capabilities["promptCapabilities"]["image"], false);
    assert_eq!(capabilities["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(capabilities["mcpCapabilities"]["http"], false);
    assert!(capabilities["sessionCapabilities"]["list"].is_object());
    assert!(capabilities["sessionCapabilities"]["resume"].is_object());
    let session = report["session"]["sessionId"].as_str().unwrap().to_owned();
    assert!(session.starts_with("hearth-session:mock/"), "{session}");
    let model = &report["session"]["configOptions"][0];
    assert_eq!(model["id"], "model");
    assert_eq!(model["currentValue"], MODEL);

    assert_eq!(report["prompt"]["stopReason"], "end_turn");
    assert_eq!(
        report["prompt"]["_meta"]["hearth"]["usage"]["inputTokens"],
        12
    );
    let updates = &report["updates"];
    // The turn's updates, then the one `session/set_config_option` (below) announces.
    assert_eq!(
        kinds(updates),
        [
            "agent_thought_chunk",
            "agent_message_chunk",
            "config_option_update"
        ]
    );
    assert_eq!(texts(updates, "agent_thought_chunk"), "Thinking it over.");
    assert_eq!(texts(updates, "agent_message_chunk"), "Hello from Hearth.");
    // The prompt reached the model.
    let sent = server.requests().last().unwrap().json();
    assert!(sent.to_string().contains("hello from python"), "{sent}");

    // The model is a config option: one of the provider's models, and nothing else.
    let model = &report["setModel"]["configOptions"][0];
    assert_eq!(model["currentValue"], "other-model");
    let choices: Vec<&str> = model["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|choice| choice["value"].as_str().unwrap())
        .collect();
    assert_eq!(choices, [MODEL, "other-model"]);
    let refused = report["setUnknown"].as_str().unwrap();
    assert!(refused.contains("unknown config option"), "{refused}");

    // A Hearth session like any other, made through ACP.
    let listed: Vec<Value> = hearth
        .ok(&["sessions", "list", "--json"])
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let ours = listed
        .iter()
        .find(|summary| summary["uri"] == session.as_str())
        .unwrap_or_else(|| panic!("{session} not in {listed:?}"));
    assert_eq!(ours["source"], "acp");

    // Another `hearth acp` (a restart) loads it with its history, and lists it.
    let report = client(&python, &hearth, &work, &["load", &session]);
    let replayed = &report["replayed"];
    assert_eq!(
        kinds(replayed),
        [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk"
        ]
    );
    assert_eq!(texts(replayed, "user_message_chunk"), "hello from python");
    assert_eq!(texts(replayed, "agent_message_chunk"), "Hello from Hearth.");
    assert_eq!(
        report["load"]["configOptions"][0]["currentValue"],
        "other-model"
    );
    let sessions = report["list"]["sessions"].as_array().unwrap();
    let listed = sessions
        .iter()
        .find(|info| info["sessionId"] == session.as_str())
        .unwrap_or_else(|| panic!("{session} not listed: {sessions:?}"));
    assert_eq!(listed["cwd"], work.display().to_string());
}

#[test]
fn python_client_cancels_a_streaming_prompt() {
    let Some(python) = python() else { return };
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let pieces: Vec<String> = (0..40).map(|n| format!("word{n} ")).collect();
    let pieces: Vec<&str> = pieces.iter().map(String::as_str).collect();
    server.enqueue(
        MockResponse::from(OpenAiStream::text_answer(MODEL, &pieces, 1, 1))
            .paced(Duration::from_millis(250)),
    );
    let (_dir, work) = work();
    let report = client(&python, &hearth, &work, &["cancel"]);
    assert_eq!(report["prompt"]["stopReason"], "cancelled");
    let said = texts(&report["updates"], "agent_message_chunk");
    assert!(said.starts_with("word0 "), "{said}");
    assert!(
        !said.contains("word39"),
        "the answer was not cut short: {said}"
    );
}

/// Stages a calendar event through `hearth acp`, the editor answering `answer`; returns
/// the report, the proposal and the data directory.
fn staged_through_acp(python: &Path, answer: &str) -> (Value, Value, Hearth, PathBuf) {
    let server = server();
    let (hearth, calendar) = with_calendar(&server);
    server.enqueue(event_call());
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["It awaits your approval."],
        1,
        1,
    ));
    let (_dir, work) = work();
    let report = client(python, &hearth, &work, &["permission", answer]);
    let listed = hearth.ok(&["proposals", "list", "--json"]);
    assert_eq!(listed.lines().count(), 1, "{listed}");
    let id = serde_json::from_str::<Value>(listed.trim()).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let question = &report["questions"][0];
    let shown = question["toolCall"].to_string();
    assert!(
        shown.contains(&id),
        "the question names the proposal: {shown}"
    );
    assert!(
        shown.contains("Dentist"),
        "the question shows the diff: {shown}"
    );
    let options: Vec<&str> = question["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option["optionId"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["approve", "reject"]);
    let proposal = proposal(&hearth, &id);
    assert!(
        shown.contains(proposal["payloadHash"].as_str().unwrap()),
        "the question shows the hash it binds to: {shown}"
    );
    (report, proposal, hearth, calendar)
}

/// The user's decisions on proposals in the audit log: (decision, via).
fn user_decisions(hearth: &Hearth) -> Vec<(String, String)> {
    audit_rows(hearth)
        .iter()
        .filter(|row| row["actor"] == "user")
        .map(|row| {
            (
                row["decision"].as_str().unwrap().to_owned(),
                row["detail"]["via"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn an_editor_approving_a_staged_event_applies_it_as_the_user_via_acp() {
    let Some(python) = python() else { return };
    let (report, proposal, hearth, calendar) = staged_through_acp(&python, "approve");
    assert_eq!(report["prompt"]["stopReason"], "end_turn");
    assert_eq!(proposal["status"], "applied");
    assert_eq!(proposal["decidedBy"], "user");
    assert!(
        std::fs::read_to_string(&calendar)
            .unwrap()
            .contains("SUMMARY:Dentist")
    );
    assert_eq!(
        user_decisions(&hearth),
        [
            ("approved".to_owned(), "acp".to_owned()),
            ("applied".to_owned(), "acp".to_owned())
        ]
    );
}

#[test]
fn an_editor_rejecting_a_staged_event_changes_nothing() {
    let Some(python) = python() else { return };
    let (report, proposal, hearth, calendar) = staged_through_acp(&python, "reject");
    assert_eq!(report["prompt"]["stopReason"], "end_turn");
    assert_eq!(proposal["status"], "rejected");
    assert!(!calendar.exists());
    assert_eq!(
        user_decisions(&hearth),
        [("rejected".to_owned(), "acp".to_owned())]
    );
}

#[test]
fn an_editor_that_leaves_instead_of_answering_leaves_the_proposal_pending() {
    let Some(python) = python() else { return };
    let (_, proposal, hearth, calendar) = staged_through_acp(&python, "disconnect");
    assert_eq!(proposal["status"], "pending");
    assert!(!calendar.exists());
    assert_eq!(user_decisions(&hearth), []);
    // Still the user's to decide, from any Hearth surface.
    let id = proposal["id"].as_str().unwrap();
    hearth.ok(&["proposals", "approve", id, "--yes"]);
    assert!(
        std::fs::read_to_string(&calendar)
            .unwrap()
            .contains("SUMMARY:Dentist")
    );
}

#[test]
fn hearths_own_acp_client_drives_hearth_harness_acp() {
    let server = server();
    let hearth = Hearth::new();
    configure(
        &hearth,
        &format!(
            "{}\n[agents.hearth-self]\ncommand = {:?}\nargs = [\"--home\", {:?}, \"acp\"]\n",
            mock_config(&server),
            env!("CARGO_BIN_EXE_hearth"),
            hearth.home.path().display().to_string()
        ),
    );
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["Hello ", "through ", "ACP."],
        1,
        1,
    ));
    let (_dir, work) = work();
    let output = hearth
        .command()
        .current_dir(&work)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OLLAMA_HOST")
        .args(["run", "--agent", "hearth-self", "say hello"])
        .output_within(PROCESS_WAIT);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Hello through ACP.\n"
    );
    // Two sessions in one store: Hearth's client's, and the one `hearth acp` made.
    let listed: Vec<Value> = hearth
        .ok(&["sessions", "list", "--json"])
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut providers: Vec<(String, String)> = listed
        .iter()
        .map(|summary| {
            (
                summary["provider"].as_str().unwrap().to_owned(),
                summary["source"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    providers.sort();
    assert_eq!(providers[0], ("hearth-self".to_owned(), "cli".to_owned()));
    assert_eq!(providers[1], ("mock".to_owned(), "acp".to_owned()));
    assert_eq!(providers.len(), 2, "{listed:?}");
}

#[test]
fn a_tool_that_must_not_run_unasked_is_put_to_the_editor() {
    let Some(python) = python() else { return };
    let model = server();
    let hearth = Hearth::new();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp-client/tests/servers/server.py");
    configure(
        &hearth,
        &format!(
            "{}\n[mcp_servers.notes]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
            mock_config(&model),
            python.display().to_string(),
            script.display().to_string()
        ),
    );
    model.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .tool_call(0, "call-1", "notes__write_note")
            .tool_arguments(0, r#"{"text": "hi"}"#)
            .finish("tool_calls")
            .usage(10, 5)
            .done(),
    );
    model.enqueue(OpenAiStream::text_answer(MODEL, &["Done."], 1, 1));
    let (_dir, work) = work();
    let report = client(&python, &hearth, &work, &["permission", "approve"]);
    assert_eq!(report["prompt"]["stopReason"], "end_turn");
    assert_eq!(report["questions"].as_array().unwrap().len(), 1);
    let question = &report["questions"][0];
    assert_eq!(question["toolCall"]["toolCallId"], "call-1");
    assert!(
        question["toolCall"]
            .to_string()
            .contains("notes__write_note"),
        "{question}"
    );
    // The editor's yes let the call run: its result went back to the model.
    let sent = model
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .nth(1)
        .unwrap()
        .json();
    let result = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message["role"] == "tool")
        .unwrap()
        .to_string();
    assert!(result.contains("wrote note"), "{result}");
    assert_eq!(texts(&report["updates"], "agent_message_chunk"), "Done.");
}

/// The agent's requests to the model, in order (a chat's title is asked for without
/// tools, at a moment of its own, and is left out).
fn turn_requests(model: &MockModelServer) -> Vec<Value> {
    completions(model)
        .iter()
        .map(|request| request.json())
        .filter(|request| request.get("tools").is_some())
        .collect()
}

/// The names of the tools offered in a request to the model.
fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_mcp_server_an_editor_passes_in_session_new_serves_that_session_only() {
    let Some(python) = python() else { return };
    let model = server();
    let hearth = Hearth::new();
    // No [mcp_servers]: the editor brings the server.
    configure(&hearth, &mock_config(&model));
    model.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .tool_call(0, "call-1", "notes__lookup")
            .tool_arguments(0, r#"{"key": "k"}"#)
            .finish("tool_calls")
            .usage(10, 5)
            .done(),
    );
    model.enqueue(OpenAiStream::text_answer(MODEL, &["Found it."], 1, 1));
    // The second session's answer and the chats' titles, in whichever order they come.
    for _ in 0..3 {
        model.enqueue(OpenAiStream::text_answer(MODEL, &["Done."], 1, 1));
    }
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp-client/tests/servers/server.py");
    let (_dir, work) = work();
    let report = client(
        &python,
        &hearth,
        &work,
        &[
            "mcp",
            &python.display().to_string(),
            &script.display().to_string(),
        ],
    );
    let requests = turn_requests(&model);
    assert_eq!(requests.len(), 3, "{requests:?}");

    // The session given the server: its tools are offered, the read-only one runs
    // without asking, and its answer reaches the model.
    let with = &report["withServer"];
    assert_eq!(with["prompt"]["stopReason"], "end_turn");
    let tools = offered(&requests[0]);
    for name in ["notes__lookup", "notes__write_note"] {
        assert!(tools.iter().any(|tool| tool == name), "{tools:?}");
    }
    assert_eq!(with["questions"], serde_json::json!([]));
    let results: Vec<&str> = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["value of k"]);
    assert_eq!(texts(&with["updates"], "agent_message_chunk"), "Found it.");

    // A second session of the same editor, without the server, is not offered its tools.
    let without = &report["withoutServer"];
    assert_eq!(without["prompt"]["stopReason"], "end_turn");
    assert_ne!(
        without["session"]["sessionId"],
        with["session"]["sessionId"]
    );
    let tools = offered(&requests[2]);
    assert!(
        tools.iter().any(|tool| tool == "web_fetch"),
        "Hearth's own tools are still offered: {tools:?}"
    );
    assert!(
        !tools.iter().any(|tool| tool.starts_with("notes__")),
        "{tools:?}"
    );
}

/// The tool results in a request to the model.
fn tool_results(request: &Value) -> Vec<&str> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap())
        .collect()
}

/// A prompt whose turn calls `file_read` on `notes.txt` of the session's directory,
/// which says "disk text" on disk; `declared` is whether the client declares
/// `fs.readTextFile` (and answers every read with "editor buffer text"). The client's
/// report and the agent's requests to the model.
fn file_read_through(python: &Path, declared: &str) -> (Value, Vec<Value>, PathBuf) {
    let model = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&model));
    model.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .tool_call(0, "call-1", "file_read")
            .tool_arguments(0, r#"{"path": "notes.txt"}"#)
            .finish("tool_calls")
            .usage(10, 5)
            .done(),
    );
    // The answer after the tool result and the chat's title, in whichever order.
    for _ in 0..2 {
        model.enqueue(OpenAiStream::text_answer(MODEL, &["Read it."], 1, 1));
    }
    let (dir, work) = work();
    std::fs::write(work.join("notes.txt"), "disk text\n").unwrap();
    let report = client(python, &hearth, &work, &["files", declared]);
    drop(dir);
    (report, turn_requests(&model), work)
}

#[test]
fn file_read_reads_the_editors_buffer_when_the_client_declares_fs_read_text_file() {
    let Some(python) = python() else { return };

    let (report, requests, work) = file_read_through(&python, "yes");
    assert_eq!(report["prompt"]["stopReason"], "end_turn");
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!(tool_results(&requests[1]), ["editor buffer text"]);
    assert_eq!(
        report["reads"],
        serde_json::json!([work.join("notes.txt").display().to_string()])
    );

    // A client that does not declare it: the file on disk.
    let (report, requests, _) = file_read_through(&python, "no");
    assert_eq!(report["prompt"]["stopReason"], "end_turn");
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!(tool_results(&requests[1]), ["disk text"]);
    assert_eq!(report["reads"], serde_json::json!([]));
}
