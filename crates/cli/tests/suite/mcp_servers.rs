//! MCP servers as tools of Hearth's agent, through the real `hearth` binary: a scripted
//! model calls `<server>__<tool>` on a FastMCP server (the official Python MCP SDK); a
//! read-only tool runs, a mutating one is put to the user (refused by `hearth run`
//! where nobody can answer, with how to allow it), an allow-listed one runs; every call
//! is in the audit log; `hearth mcp list` shows the server and its tools.

use std::path::PathBuf;

use hearth_test_support::OpenAiStream;

use super::mock::{MODEL, completions, configure, mock_config, ok, run, server};
use super::support::{Hearth, venv_python};
use super::tool_support::audit_rows;

fn python() -> Option<PathBuf> {
    venv_python("mcp")
}

fn server_config(python: &std::path::Path, allow: &str) -> String {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp-client/tests/servers/server.py");
    format!(
        "\n[mcp_servers.notes]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\nallow = [{allow}]\n",
        python.display().to_string(),
        script.display().to_string()
    )
}

fn tool_call(id: &str, name: &str, arguments: &str) -> OpenAiStream {
    OpenAiStream::new(MODEL)
        .role()
        .tool_call(0, id, name)
        .tool_arguments(0, arguments)
        .finish("tool_calls")
        .usage(10, 5)
        .done()
}

/// The tool results the model got back in request `index`, in order.
fn tool_results(server: &hearth_test_support::MockModelServer, index: usize) -> Vec<String> {
    let request = &completions(server)[index];
    request.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].as_str().unwrap().to_owned())
        .collect()
}

fn offered_tools(server: &hearth_test_support::MockModelServer) -> Vec<String> {
    completions(server)[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_agent_calls_mcp_tools_and_a_mutating_one_needs_the_user() {
    let Some(python) = python() else { return };
    let model = server();
    let hearth = Hearth::new();
    configure(
        &hearth,
        &format!("{}{}", mock_config(&model), server_config(&python, "")),
    );
    model.enqueue(tool_call("call-1", "notes__lookup", r#"{"key": "k"}"#));
    model.enqueue(tool_call(
        "call-2",
        "notes__write_note",
        r#"{"text": "hi"}"#,
    ));
    model.enqueue(OpenAiStream::text_answer(MODEL, &["Done."], 1, 1));
    let output = run(&hearth, &["run", "look it up and write a note"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stdout.contains("Done."), "{stdout}\n{stderr}");

    let offered = offered_tools(&model);
    for name in ["notes__lookup", "notes__write_note"] {
        assert!(offered.iter().any(|tool| tool == name), "{offered:?}");
    }
    assert!(
        !offered.iter().any(|tool| tool == "notes__broken"),
        "a tool with an invalid schema is not offered: {offered:?}"
    );
    assert_eq!(tool_results(&model, 1), ["value of k"]);
    let refused = &tool_results(&model, 2)[1];
    // Nobody was asked: the model is told so, not that the user refused.
    assert!(refused.contains("nobody could be asked"), "{refused}");
    assert!(!refused.contains("The user refused"), "{refused}");
    assert!(!refused.contains("wrote note"), "{refused}");
    // `hearth run` without a terminal says how to allow it: under the server.
    assert!(stderr.contains("notes__write_note"), "{stderr}");
    assert!(
        stderr.contains("`allow = [\"write_note\"]` under [mcp_servers.notes]"),
        "{stderr}"
    );

    let rows = audit_rows(&hearth);
    let mcp_calls: Vec<(String, String)> = rows
        .iter()
        .filter(|row| {
            row["tool"]
                .as_str()
                .is_some_and(|tool| tool.starts_with("notes__"))
        })
        .map(|row| {
            (
                row["kind"].as_str().unwrap_or_default().to_owned(),
                row["decision"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert!(
        mcp_calls.contains(&("tool_call".to_owned(), "ran".to_owned())),
        "{mcp_calls:?}"
    );
    // The automatic refusal is recorded as the policy's (by Hearth), never as the user's.
    assert!(
        mcp_calls.contains(&("permission".to_owned(), "policy".to_owned())),
        "{mcp_calls:?}"
    );
    assert!(
        !mcp_calls.contains(&("permission".to_owned(), "answered".to_owned())),
        "{mcp_calls:?}"
    );
    let refusal = rows
        .iter()
        .find(|row| row["kind"] == "permission" && row["tool"] == "notes__write_note")
        .unwrap();
    assert_eq!(refusal["actor"], "hearth", "{refusal}");
    assert!(
        mcp_calls.contains(&("tool_call".to_owned(), "denied".to_owned())),
        "{mcp_calls:?}"
    );
}

#[test]
fn an_allow_listed_tool_runs_without_asking() {
    let Some(python) = python() else { return };
    let model = server();
    let hearth = Hearth::new();
    configure(
        &hearth,
        &format!(
            "{}{}",
            mock_config(&model),
            server_config(&python, "\"write_note\"")
        ),
    );
    model.enqueue(tool_call(
        "call-1",
        "notes__write_note",
        r#"{"text": "hi"}"#,
    ));
    model.enqueue(OpenAiStream::text_answer(MODEL, &["Written."], 1, 1));
    let (stdout, _) = ok(&hearth, &["run", "write a note"]);
    assert!(stdout.contains("Written."), "{stdout}");
    assert_eq!(tool_results(&model, 1), ["wrote note 1: hi"]);
}

#[test]
fn mcp_list_shows_servers_status_and_tools() {
    let Some(python) = python() else { return };
    let hearth = Hearth::new();
    configure(&hearth, &server_config(&python, "\"write_note\""));
    let listed = hearth.ok(&["mcp", "list"]);
    let first = listed.lines().next().unwrap_or_default();
    assert!(first.starts_with("notes  running  ("), "{listed}");
    for line in [
        "  notes__lookup  read-only",
        "  notes__write_note  allowed without asking",
        "  notes__broken  unavailable: invalid input schema",
    ] {
        assert!(listed.contains(line), "{line:?} missing from:\n{listed}");
    }
}

/// In `hearth serve`, a call the user must answer waits as a host-held permission
/// request (with the exact arguments); `hearth permissions allow` lets it run.
#[tokio::test]
async fn in_the_server_the_user_allows_a_call_with_hearth_permissions() {
    use hearth_protocol::{
        ChatSend, ChatSendParams, SessionCreate, SessionCreateParams, UserMessage,
    };
    use std::time::{Duration, Instant};

    use super::serve_support::{Served, WAIT};

    let Some(python) = python() else { return };
    let model = server();
    let hearth = Hearth::new();
    configure(
        &hearth,
        &format!("{}{}", mock_config(&model), server_config(&python, "")),
    );
    model.enqueue(tool_call(
        "call-1",
        "notes__write_note",
        r#"{"text": "hi"}"#,
    ));
    model.enqueue(OpenAiStream::text_answer(MODEL, &["Written."], 1, 1));
    let served = Served::start(hearth, &[], &[]);
    let (client, _notifications) = served.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("mock".into()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let chat = session.session.chats[0].summary.uri.clone();
    client
        .call::<ChatSend>(&ChatSendParams {
            chat,
            message: UserMessage {
                text: "write hi".into(),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap();
    let deadline = Instant::now() + WAIT;
    let listed = loop {
        let listed = served.hearth.ok(&["permissions", "list", "--json"]);
        if !listed.trim().is_empty() {
            break listed;
        }
        assert!(Instant::now() < deadline, "no permission request appeared");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let request: serde_json::Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    let title = request["title"].as_str().unwrap();
    assert!(
        title.contains("notes__write_note") && title.contains(r#"{"text":"hi"}"#),
        "{request}"
    );
    let id = request["requestId"].as_str().unwrap().to_owned();
    // Nothing ran before the answer: the model has had one request only.
    assert_eq!(completions(&model).len(), 1);
    let answered = served.hearth.ok(&["permissions", "allow", &id]);
    assert!(answered.starts_with(&format!("allowed {id}")), "{answered}");
    let deadline = Instant::now() + WAIT;
    while completions(&model).len() < 2 {
        assert!(Instant::now() < deadline, "the turn did not go on");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(tool_results(&model, 1), ["wrote note 1: hi"]);
    let rows = audit_rows(&served.hearth);
    assert!(
        rows.iter().any(|row| row["kind"] == "permission"
            && row["decision"] == "answered"
            && row["tool"] == "notes__write_note"),
        "{rows:?}"
    );
}

#[test]
fn doctor_reports_each_mcp_server_and_fails_on_one_that_cannot_start() {
    let Some(python) = python() else { return };
    let model = server();
    let hearth = Hearth::new();
    configure(
        &hearth,
        &format!(
            "{}{}\n[mcp_servers.gone]\ncommand = \"/nonexistent/hearth-test-mcp\"\n",
            mock_config(&model),
            server_config(&python, "")
        ),
    );
    let output = run(&hearth, &["doctor"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!output.status.success(), "{stdout}");
    assert!(stdout.contains("\nMCP servers:\n"), "{stdout}");
    assert!(
        stdout.contains("gone  failed: MCP server `gone` could not be started: cannot run `/nonexistent/hearth-test-mcp`"),
        "{stdout}"
    );
    assert!(stdout.contains("notes  running  ("), "{stdout}");
    assert!(stdout.contains("  notes__lookup  read-only\n"), "{stdout}");
}

/// A stdio server that fails on start says why (its last stderr lines reach `hearth mcp
/// list`, `--json` and `doctor`), and it sees none of Hearth's keys: only the minimal
/// environment, its `env` and what `pass_env` names.
#[test]
fn a_crashing_server_says_why_and_sees_none_of_hearths_keys() {
    let hearth = Hearth::new();
    let script = "echo \"keys: ${OPENAI_API_KEY:-none} ${FASTMAIL_APP_PASSWORD:-none} ${PASSED:-none} ${SET:-none}\" >&2; \
                  echo 'ModuleNotFoundError: No module named notes_db' >&2; exit 1";
    configure(
        &hearth,
        &format!(
            "[mcp_servers.crashy]\ncommand = \"sh\"\nargs = [\"-c\", {script:?}]\npass_env = [\"PASSED\"]\nenv = {{ SET = \"set\" }}\n"
        ),
    );
    let with_secrets = |args: &[&str]| {
        let output = hearth_test_support::BoundedCommand::output_within(
            super::mock::command(&hearth)
                .env("OPENAI_API_KEY", "sk-hearths-own")
                .env("FASTMAIL_APP_PASSWORD", "calendar-password")
                .env("PASSED", "passed")
                .args(args),
            hearth_test_support::PROCESS_WAIT,
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let listed = with_secrets(&["mcp", "list"]);
    assert!(listed.contains("crashy  failed"), "{listed}");
    assert!(
        listed.contains("ModuleNotFoundError: No module named notes_db"),
        "{listed}"
    );
    assert!(listed.contains("keys: none none passed set"), "{listed}");
    let json = with_secrets(&["mcp", "list", "--json"]);
    let report: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(
        report["stderr"].as_array().unwrap().last().unwrap(),
        "ModuleNotFoundError: No module named notes_db"
    );
    let doctor = with_secrets(&["doctor"]);
    assert!(
        doctor.contains("ModuleNotFoundError: No module named notes_db"),
        "{doctor}"
    );
}

#[test]
fn hearth_run_through_a_server_reports_a_refusal_nobody_was_asked_for_as_such() {
    use super::serve_support::Served;

    let Some(python) = python() else { return };
    let model = server();
    let hearth = Hearth::new();
    configure(
        &hearth,
        &format!("{}{}", mock_config(&model), server_config(&python, "")),
    );
    model.enqueue(tool_call(
        "call-1",
        "notes__write_note",
        r#"{"text": "hi"}"#,
    ));
    model.enqueue(OpenAiStream::text_answer(MODEL, &["Not written."], 1, 1));
    let mut served = Served::start(hearth, &[], &[]);
    // The server answers the turn; this `hearth run` has no terminal to ask at.
    let output = run(&served.hearth, &["run", "write a note"]);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stdout.contains("Not written."), "{stdout}\n{stderr}");
    assert!(stderr.contains("nobody can answer here"), "{stderr}");
    let refused = &tool_results(&model, 1)[0];
    assert!(refused.contains("nobody could be asked"), "{refused}");
    assert!(!refused.contains("The user refused"), "{refused}");
    let rows = audit_rows(&served.hearth);
    let refusal = rows
        .iter()
        .find(|row| row["kind"] == "permission" && row["tool"] == "notes__write_note")
        .expect("the refusal is audited");
    assert_eq!(refusal["decision"], "policy", "{refusal}");
    assert_eq!(refusal["actor"], "hearth", "{refusal}");
    served.stop();
}

/// A Python server that crashes on import says why everywhere the user looks: its
/// traceback's last lines reach `hearth mcp list`, `hearth doctor` and the error of a
/// call to one of its tools, not only "the handshake failed".
#[test]
fn a_python_server_failing_on_import_shows_its_traceback() {
    let Some(python) = python() else { return };
    let hearth = Hearth::new();
    let script = hearth.write(
        "crashy.py",
        "import sys\nprint('starting the notes server', file=sys.stderr)\nimport notes_db_that_is_not_installed\n",
    );
    configure(
        &hearth,
        &format!(
            "[mcp_servers.crashy]\ncommand = {:?}\nargs = [{:?}]\n",
            python.display().to_string(),
            script.display().to_string()
        ),
    );
    let missing = "ModuleNotFoundError: No module named 'notes_db_that_is_not_installed'";
    let output = run(&hearth, &["mcp", "list"]);
    let listed = String::from_utf8(output.stdout).unwrap();
    assert!(!output.status.success(), "{listed}");
    assert!(listed.contains("crashy  failed"), "{listed}");
    assert!(listed.contains(missing), "{listed}");
    let doctor = String::from_utf8(run(&hearth, &["doctor"]).stdout).unwrap();
    assert!(doctor.contains(missing), "{doctor}");
    let output = run(&hearth, &["tools", "call", "crashy__lookup", "{}"]);
    let called = String::from_utf8(output.stdout).unwrap();
    assert!(!output.status.success(), "{called}");
    assert!(called.contains("could not be started"), "{called}");
    assert!(called.contains(missing), "{called}");
    // `tools list` leaves its tools out and says why, on stderr.
    let output = run(&hearth, &["tools", "list"]);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("hearth: the tools of MCP server `crashy` are left out"),
        "{stderr}"
    );
    assert!(stderr.contains(missing), "{stderr}");
}

/// `hearth mcp add` writes `[mcp_servers.<name>]` into config.toml as a document edit (the
/// user's comments and other sections kept); the server then works in `mcp list` and
/// `tools list|call`; `get` shows it with its secrets hidden; `remove` takes it out.
#[test]
fn mcp_add_get_and_remove_edit_config_toml_and_the_tools_appear() {
    let Some(python) = python() else { return };
    let hearth = Hearth::new();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../mcp-client/tests/servers/server.py");
    let (python, script) = (python.display().to_string(), script.display().to_string());
    let original = "# My Hearth\n[defaults]\ntime_zone = \"Europe/Berlin\" # home\n";
    configure(&hearth, original);
    let added = hearth.ok(&[
        "mcp",
        "add",
        "notes",
        "--env",
        "NOTES_KEY=s3cret=x",
        "--",
        &python,
        &script,
        "stdio",
    ]);
    assert!(added.starts_with("added MCP server `notes` ("), "{added}");
    let config = std::fs::read_to_string(hearth.home.path().join("config.toml")).unwrap();
    assert_eq!(
        config,
        format!(
            "{original}\n[mcp_servers.notes]\ncommand = {python:?}\nargs = [{script:?}, \"stdio\"]\nenv = {{ NOTES_KEY = \"s3cret=x\" }}\n"
        )
    );

    let listed = hearth.ok(&["mcp", "list"]);
    assert!(listed.starts_with("notes  running  ("), "{listed}");
    let tools = hearth.ok(&["tools", "list"]);
    assert!(
        tools
            .lines()
            .any(|line| line.starts_with("notes__lookup") && line.contains(" read ")),
        "{tools}"
    );
    assert!(
        tools
            .lines()
            .any(|line| line.starts_with("notes__write_note") && line.contains("asks first")),
        "{tools}"
    );
    assert!(!tools.contains("notes__broken"), "{tools}");
    assert!(
        tools.contains("calendar_list"),
        "the registry's tools stay: {tools}"
    );
    let json = hearth.ok(&["tools", "list", "--json"]);
    let names: Vec<String> = json
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["name"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(names.contains(&"notes__lookup".to_owned()), "{names:?}");

    let looked_up = hearth.ok(&["tools", "call", "notes__lookup", r#"{"key": "k"}"#]);
    assert_eq!(looked_up, "value of k\n");
    // A tool that may change things goes the agent's way: nobody can answer here, so it
    // is refused, saying how to allow it, and nothing ran.
    let output = run(
        &hearth,
        &["tools", "call", "notes__write_note", r#"{"text": "hi"}"#],
    );
    let refused = String::from_utf8(output.stdout).unwrap();
    assert!(!output.status.success(), "{refused}");
    assert!(refused.contains("needs the user's permission"), "{refused}");
    assert!(refused.contains("[mcp_servers.notes]"), "{refused}");
    assert!(!refused.contains("wrote note"), "{refused}");
    // Arguments are checked against the tool's schema, as for the agent.
    let output = run(
        &hearth,
        &["tools", "call", "notes__lookup", r#"{"key": 3}"#],
    );
    let invalid = String::from_utf8(output.stdout).unwrap();
    assert!(
        invalid.contains("invalid arguments for `notes__lookup`"),
        "{invalid}"
    );
    let rows = audit_rows(&hearth);
    let decisions: Vec<(&str, &str)> = rows
        .iter()
        .filter(|row| row["kind"] == "tool_call")
        .map(|row| {
            (
                row["tool"].as_str().unwrap_or_default(),
                row["decision"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("notes__lookup", "ran"),
            ("notes__write_note", "denied"),
            ("notes__lookup", "denied")
        ]
    );

    let shown = hearth.ok(&["mcp", "get", "notes"]);
    assert!(shown.starts_with("notes\n  transport: stdio\n"), "{shown}");
    assert!(shown.contains("  env: NOTES_KEY=*****\n"), "{shown}");
    assert!(!shown.contains("s3cret"), "{shown}");
    let shown: serde_json::Value =
        serde_json::from_str(&hearth.ok(&["mcp", "get", "notes", "--json"])).unwrap();
    assert_eq!(shown["command"], python.as_str());
    assert_eq!(shown["args"], serde_json::json!([script, "stdio"]));
    assert_eq!(shown["env"], serde_json::json!({"NOTES_KEY": "*****"}));
    assert_eq!(shown["enabled"], true);

    let removed = hearth.ok(&["mcp", "remove", "notes"]);
    assert!(
        removed.starts_with("removed MCP server `notes` from "),
        "{removed}"
    );
    let config = std::fs::read_to_string(hearth.home.path().join("config.toml")).unwrap();
    assert_eq!(config, original, "as it was before the server was added");
    assert!(!hearth.ok(&["tools", "list"]).contains("notes__"));
}

#[test]
fn mcp_add_remove_and_get_refuse_clearly() {
    let hearth = Hearth::new();
    let original = "# keep me\n[mcp_servers.notes]\ncommand = \"notes-server\"\n";
    configure(&hearth, original);
    let config = || std::fs::read_to_string(hearth.home.path().join("config.toml")).unwrap();

    let duplicate = hearth.fails(&["mcp", "add", "notes", "--", "other-server"]);
    assert!(
        duplicate.contains("an MCP server named `notes` is already configured in ")
            && duplicate.contains("(it runs notes-server)")
            && duplicate.contains("`hearth mcp remove notes`"),
        "{duplicate}"
    );
    for name in ["a__b", "a.b", ""] {
        let invalid = hearth.fails(&["mcp", "add", name, "--", "server"]);
        assert!(
            invalid.contains("the name must be 1 to 32 letters, digits, `-` or `_`"),
            "{name}: {invalid}"
        );
        assert!(invalid.contains("nothing was added"), "{invalid}");
    }
    let neither = hearth.fails(&["mcp", "add", "web"]);
    assert!(neither.contains("a command after `--`"), "{neither}");
    let both = hearth.fails(&[
        "mcp",
        "add",
        "web",
        "--url",
        "https://mcp.example/mcp",
        "--",
        "x",
    ]);
    assert!(both.contains("not both"), "{both}");
    let bad_env = hearth.fails(&["mcp", "add", "web", "--env", "NOVALUE", "--", "x"]);
    assert!(
        bad_env.contains("--env takes KEY=VALUE, got `NOVALUE`"),
        "{bad_env}"
    );
    let bad_header = hearth.fails(&[
        "mcp",
        "add",
        "web",
        "--url",
        "https://mcp.example/mcp",
        "--header",
        "X Key: v",
    ]);
    assert!(
        bad_header.contains("`X Key` is not an HTTP header name"),
        "{bad_header}"
    );

    let unknown = hearth.fails(&["mcp", "remove", "nope"]);
    assert!(
        unknown.contains("no MCP server named `nope` in ") && unknown.contains("configured: notes"),
        "{unknown}"
    );
    let unknown = hearth.fails(&["mcp", "get", "nope"]);
    assert!(unknown.contains("no MCP server named `nope`"), "{unknown}");
    assert_eq!(config(), original, "nothing was written");

    let added = hearth.ok(&[
        "mcp",
        "add",
        "docs",
        "--url",
        "https://mcp.example/mcp",
        "--header",
        "X-Api-Key: k-123",
    ]);
    assert!(
        added.contains("`docs` (https://mcp.example/mcp)"),
        "{added}"
    );
    assert_eq!(
        config(),
        format!(
            "{original}\n[mcp_servers.docs]\nurl = \"https://mcp.example/mcp\"\nheaders = {{ X-Api-Key = \"k-123\" }}\n"
        )
    );
    let shown = hearth.ok(&["mcp", "get", "docs"]);
    assert!(shown.contains("  transport: http\n"), "{shown}");
    assert!(shown.contains("  headers: X-Api-Key: *****\n"), "{shown}");
    assert!(!shown.contains("k-123"), "{shown}");
}
