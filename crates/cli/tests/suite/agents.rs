//! External agents from the command line: `hearth run --agent`, `hearth chat --agent`
//! with permission requests answered inline (and refused where nobody can answer),
//! `hearth agents list`, `hearth sessions list --agent/--external`, `hearth permissions`
//! through a running server, and no agent process outliving `hearth serve`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use hearth_protocol::{
    ChatSend, ChatSendParams, SessionCreate, SessionCreateParams, Subscribe, SubscribeParams,
    UserMessage,
};
use hearth_test_support::{BoundedChild, BoundedCommand, PROCESS_WAIT, acp_test_agent};

use super::serve_support::{Served, WAIT};
use super::support::Hearth;
use super::terminal_support::on_a_terminal;

/// A data directory whose config.toml names the test agent `tester`, its sessions kept in
/// `state`.
fn hearth_with_agent(state: &Path, extra: &str) -> Hearth {
    hearth_with_agent_env(state, "", extra)
}

/// [`hearth_with_agent`], the test agent also given `env` (`, NAME = "value"` pairs of
/// an inline TOML table).
fn hearth_with_agent_env(state: &Path, env: &str, extra: &str) -> Hearth {
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        &format!(
            "[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\"{env} }}\n{extra}",
            acp_test_agent().display(),
            state.display()
        ),
    );
    hearth
}

fn work() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

#[test]
fn run_streams_an_agents_answer_into_a_session() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "");
    let (_dir, work) = work();
    let output = hearth
        .command()
        .current_dir(&work)
        .args(["run", "--agent", "tester", "hello there"])
        .output_within(PROCESS_WAIT);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "echo: hello there\n"
    );
    let listed = hearth.ok(&["sessions", "list", "--agent", "tester", "--json"]);
    let session: serde_json::Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    assert_eq!(session["provider"], "tester");
    assert_eq!(session["workingDirectories"][0], work.display().to_string());
    // An unknown agent is named, with the known ones.
    let error = hearth.fails(&["run", "--agent", "nobody", "hi"]);
    assert!(error.contains("no agent `nobody`"), "{error}");
    assert!(error.contains("tester"), "{error}");
}

#[test]
fn an_agent_declared_the_old_way_runs_and_the_user_is_told_the_new_way() {
    let state = tempfile::tempdir().unwrap();
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        &format!(
            "[providers.tester]\nkind = \"acp\"\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\n",
            acp_test_agent().display(),
            state.path().display()
        ),
    );
    let (_dir, work) = work();
    let output = hearth
        .command()
        .current_dir(&work)
        .args(["run", "--agent", "tester", "hello there"])
        .output_within(PROCESS_WAIT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "echo: hello there\n"
    );
    assert!(
        stderr.contains("hearth: note:") && stderr.contains("reads it as [agents.tester]"),
        "{stderr}"
    );
    // It is an agent, not a model provider, wherever agents are listed.
    let listed = hearth.ok(&["agents", "list"]);
    assert!(listed.contains("tester"), "{listed}");
    let providers = hearth.ok(&["providers", "list"]);
    assert!(!providers.contains("tester"), "{providers}");
}

#[test]
fn without_a_terminal_a_permission_request_is_refused_with_how_to_allow_it() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "");
    let (_dir, work) = work();
    let target = work.join("refused.txt");
    let output = hearth
        .command()
        .current_dir(&work)
        .args([
            "run",
            "--agent",
            "tester",
            &format!("/write {} nope", target.display()),
        ])
        .output_within(PROCESS_WAIT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "not allowed\n");
    assert!(stderr.contains("nobody can answer here"), "{stderr}");
    assert!(
        stderr.contains("`allow = [\"edit\"]` under [agents.tester]"),
        "{stderr}"
    );
    assert!(!target.exists());

    // Allowed by the configured policy, no question asked.
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "allow = [\"edit\"]\n");
    let output = hearth
        .command()
        .current_dir(&work)
        .args([
            "run",
            "--agent",
            "tester",
            &format!("/write {} yes", target.display()),
        ])
        .output_within(PROCESS_WAIT);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "yes");
}

#[test]
fn chat_asks_inline_and_the_typed_answer_decides() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "");
    let (_dir, work) = work();
    let allowed = work.join("allowed.txt");
    let refused = work.join("refused.txt");
    let mut child = hearth
        .command()
        .current_dir(&work)
        .args(["chat", "--agent", "tester"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = format!(
        "/write {} from chat\ny\n/write {} never\nn\n/model\n",
        allowed.display(),
        refused.display()
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(std::fs::read_to_string(&allowed).unwrap(), "from chat");
    assert!(!refused.exists());
    assert!(
        stdout.contains(&format!("wrote {}", allowed.display())),
        "{stdout}"
    );
    assert!(stdout.contains("not allowed"), "{stdout}");
    assert!(stderr.contains("? tester asks: Write"), "{stderr}");
    assert!(
        stderr.contains("+ from chat"),
        "the diff is shown: {stderr}"
    );
    assert!(
        stderr.contains("* test-small"),
        "/model lists the agent's models: {stderr}"
    );
    let audit = hearth.ok(&["audit", "list"]);
    assert!(audit.contains("file_write written"), "{audit}");
    assert!(
        audit.contains("permission answered   ok: allow-once"),
        "{audit}"
    );
    assert!(
        audit.contains("permission answered   ok: reject-once"),
        "{audit}"
    );
}

/// `/mode` lists the agent's modes and switches them, `/help` lists the agent's own
/// commands, one of them typed goes to the agent as the prompt, and the usage a turn
/// reported is shown after its answer.
#[test]
fn chat_switches_modes_lists_and_passes_on_the_agents_commands_and_shows_usage() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "");
    let (_dir, work) = work();
    let mut child = hearth
        .command()
        .current_dir(&work)
        .args(["chat", "--agent", "tester"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"/mode\n/mode code\n/settings\n/help\n/usage\n/mode yolo\n")
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("hearth: modes (switch with /mode ID):\n  * ask — Ask\n    code — Code\n"),
        "{stderr}"
    );
    assert!(stderr.contains("hearth: mode code\n"), "{stderr}");
    // `/settings` is the agent's command: the agent answers it, in the mode chosen.
    assert!(stdout.contains("model test-small mode code"), "{stdout}");
    assert!(
        stderr.contains("tester commands (sent to the agent):\n  /slow N — Stream N ticks"),
        "{stderr}"
    );
    assert!(
        stderr.contains("  /settings — Say the session's model and mode."),
        "{stderr}"
    );
    assert!(
        stderr.contains("tokens 100 in / 20 out (60 cached) · context 1234/200000 · cost 0.01 USD"),
        "{stderr}"
    );
    assert!(stderr.contains("no mode `yolo`"), "{stderr}");
}

#[test]
fn agents_list_reports_each_agent_and_what_it_can_do() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "");
    let output = hearth.run(&["agents", "list", "--json"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let tester = stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|agent| agent["id"] == "tester")
        .expect("the configured agent is listed");
    assert_eq!(tester["installed"], true);
    assert_eq!(tester["status"]["ok"], true, "{tester}");
    assert!(
        tester["status"]["version"]
            .as_str()
            .unwrap()
            .starts_with("hearth-acp-test-agent")
    );
    assert_eq!(tester["status"]["loadSession"], true);
    // The built-in agents are listed too, installed or not.
    for id in ["claude", "codex", "gemini", "opencode", "copilot"] {
        assert!(
            stdout.contains(&format!("\"id\":\"{id}\"")),
            "{id}: {stdout}"
        );
    }
    let doctor = hearth.run(&["doctor", "--provider", "tester"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(doctor.status.success(), "{text}");
    assert!(text.contains("1 of 1 agent(s) work"), "{text}");
}

#[test]
fn the_agents_own_sessions_are_listed_as_external() {
    let state = tempfile::tempdir().unwrap();
    let (_dir, work) = work();
    // A conversation through another data directory: this one has never seen it.
    let elsewhere = hearth_with_agent(state.path(), "");
    let output = elsewhere
        .command()
        .current_dir(&work)
        .args(["run", "--agent", "tester", "said elsewhere"])
        .output_within(PROCESS_WAIT);
    assert!(output.status.success());
    let hearth = hearth_with_agent(state.path(), "");
    assert!(hearth.session_uris().is_empty());
    let listed = hearth.ok(&["sessions", "list", "--external", "--agent", "tester"]);
    assert!(listed.contains("said elsewhere"), "{listed}");
    let uri = hearth.session_uris().pop().unwrap();
    let shown = hearth.ok(&["sessions", "show", &uri]);
    assert!(shown.contains("› said elsewhere"), "{shown}");
    assert!(shown.contains("echo: said elsewhere"), "{shown}");
}

/// Whether a process is alive (not gone and not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or_default()
            .trim_start()
            .starts_with('Z')
    })
}

async fn agent_pid(served: &Served) -> (u32, hearth_server::Client) {
    let (client, _notifications) = served.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("tester".into()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let chat = session.session.chats[0].summary.uri.clone();
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: chat.clone(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    client
        .call::<ChatSend>(&ChatSendParams {
            chat: chat.clone(),
            message: UserMessage {
                text: "/pid".into(),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap();
    let deadline = Instant::now() + WAIT;
    loop {
        let text = served.hearth.ok(&["chats", "show", &chat]);
        if let Some(pid) = text
            .lines()
            .find_map(|line| line.trim().parse::<u32>().ok())
        {
            return (pid, client);
        }
        assert!(Instant::now() < deadline, "no pid in {text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_permission_request_in_the_server_is_answered_with_hearth_permissions() {
    let state = tempfile::tempdir().unwrap();
    let (_dir, work) = work();
    let hearth = hearth_with_agent(state.path(), "");
    let served = Served::start(hearth, &[], &[]);
    let (client, _notifications) = served.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("tester".into()),
            working_directories: vec![work.display().to_string()],
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let chat = session.session.chats[0].summary.uri.clone();
    let target = work.join("served.txt");
    client
        .call::<ChatSend>(&ChatSendParams {
            chat: chat.clone(),
            message: UserMessage {
                text: format!("/write {} through the server", target.display()),
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
    let id = request["requestId"].as_str().unwrap().to_owned();
    assert_eq!(request["toolCall"]["kind"], "edit");
    let text = served.hearth.ok(&["permissions", "list"]);
    assert!(text.contains("? tester asks: Write"), "{text}");
    let answered = served
        .hearth
        .ok(&["permissions", "allow", &id[..id.len() - 4]]);
    assert!(answered.starts_with(&format!("allowed {id}")), "{answered}");
    let deadline = Instant::now() + WAIT;
    while !target.exists() {
        assert!(Instant::now() < deadline, "the write did not happen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "through the server"
    );
    let again = served.hearth.fails(&["permissions", "allow", &id]);
    assert!(again.contains("no waiting permission request"), "{again}");
}

#[tokio::test]
async fn no_agent_outlives_the_server_stopped_or_killed() {
    for kill in [false, true] {
        let state = tempfile::tempdir().unwrap();
        let hearth = hearth_with_agent(state.path(), "");
        let mut served = Served::start(hearth, &[], &[]);
        let (pid, client) = agent_pid(&served).await;
        assert!(alive(pid));
        client.close().await;
        if kill {
            served.child.kill().unwrap();
            served.child.wait().unwrap();
        } else {
            served.stop();
        }
        let deadline = Instant::now() + WAIT;
        while alive(pid) {
            assert!(
                Instant::now() < deadline,
                "agent {pid} outlived hearth serve ({})",
                if kill { "kill -9" } else { "SIGTERM" }
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[test]
fn an_agent_borrows_hearths_tools_and_its_changes_wait_for_approval() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "");
    let (_dir, work) = work();
    let run = |prompt: &str| {
        let output = hearth
            .command()
            .current_dir(&work)
            .args(["run", "--agent", "tester", prompt])
            .output_within(PROCESS_WAIT);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let servers = run("/mcp");
    assert!(servers.contains("\"name\":\"hearth\""), "{servers}");
    assert!(servers.contains("\"mcp\",\"--stdio\""), "{servers}");
    let staged = run(
        r#"/mcp-call hearth event_create {"title":"Dentist","start":"2026-12-03T10:00:00","end":"2026-12-03T11:00:00"}"#,
    );
    assert!(staged.starts_with("Staged proposal"), "{staged}");
    // The proposal names the chat whose agent staged it, not a session of its own.
    let asked = hearth.session_uris().remove(0);
    let id = staged
        .split_whitespace()
        .nth(2)
        .unwrap()
        .trim_end_matches([':', '.']);
    let shown = hearth.ok(&["proposals", "show", id]);
    assert!(
        shown.contains(&format!(
            " by hearth-chat:{}/default",
            &asked["hearth-session:".len()..]
        )),
        "{asked}:\n{shown}"
    );
    let proposals = hearth.ok(&["proposals", "list"]);
    assert!(proposals.contains("pending"), "{proposals}");
    assert!(proposals.contains("Create event 'Dentist'"), "{proposals}");
    // Nothing was written: the calendar is still empty.
    let events = hearth.ok(&["calendar", "list"]);
    assert!(events.contains("0 events"), "{events}");

    // An agent whose tools are not lent gets no Hearth server.
    let state = tempfile::tempdir().unwrap();
    let lonely = hearth_with_agent(state.path(), "lend_tools = false\n");
    let output = lonely
        .command()
        .current_dir(&work)
        .args(["run", "--agent", "tester", "/mcp"])
        .output_within(PROCESS_WAIT);
    assert_eq!(String::from_utf8_lossy(&output.stdout), "[]\n");
}

#[test]
fn an_agent_that_takes_mcp_over_http_borrows_the_one_endpoint_with_its_chats_token() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent_env(
        state.path(),
        ", HEARTH_TEST_AGENT_CAPS = \"load,list,resume,fork,close,mcp-http\"",
        "",
    );
    let (_dir, work) = work();
    let run = |args: &[&str]| {
        let output = hearth
            .command()
            .current_dir(&work)
            .args(args)
            .output_within(PROCESS_WAIT);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let servers = run(&["run", "--agent", "tester", "/mcp"]);
    let listed: serde_json::Value = serde_json::from_str(servers.trim()).unwrap();
    assert_eq!(listed[0]["name"], "hearth", "{servers}");
    assert_eq!(listed[0]["type"], "http", "{servers}");
    let url = listed[0]["url"].as_str().unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let staged = run(&[
        "run",
        "--agent",
        "tester",
        r#"/mcp-call hearth event_create {"title":"Dentist","start":"2026-12-03T10:00:00","end":"2026-12-03T11:00:00"}"#,
    ]);
    assert!(staged.starts_with("Staged proposal"), "{staged}");
    let asked = hearth.session_uris().remove(0);
    let id = staged
        .split_whitespace()
        .nth(2)
        .unwrap()
        .trim_end_matches([':', '.']);
    let shown = hearth.ok(&["proposals", "show", id]);
    assert!(
        shown.contains(&format!(
            " by hearth-chat:{}/default",
            &asked["hearth-session:".len()..]
        )),
        "{asked}:\n{shown}"
    );
}

#[test]
fn a_commands_output_is_shown_under_its_call() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "allow = [\"execute\"]\n");
    let (_dir, work) = work();
    let output = hearth
        .command()
        .current_dir(&work)
        .args([
            "run",
            "--agent",
            "tester",
            "/terminal echo hello-from-terminal",
        ])
        .output_within(PROCESS_WAIT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("  │ hello-from-terminal\n  └ exit status 0"),
        "{stderr}"
    );
    let session = hearth.session_uris().remove(0);
    let shown = hearth.ok(&["sessions", "show", &session]);
    assert!(
        shown.contains("  │ hello-from-terminal\n  └ exit status 0"),
        "{shown}"
    );
}

#[test]
fn a_terminal_sees_an_agent_start_and_a_hanging_one_ends_at_its_start_timeout() {
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        "[agents.hang]\ncommand = \"/bin/sleep\"\nargs = [\"600\"]\nstart_timeout_seconds = 1\n",
    );
    let (_dir, work) = work();
    let mut run = hearth.command();
    run.current_dir(&work)
        .args(["run", "--agent", "hang", "hello"]);
    let started = Instant::now();
    let output = on_a_terminal(&run)
        .stdin(Stdio::null())
        .output_within(PROCESS_WAIT);
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{shown}");
    assert!(shown.contains("hearth: starting hang…"), "{shown}");
    assert!(shown.contains("hearth: hang could not start"), "{shown}");
    assert!(
        shown.contains("start_timeout_seconds under [agents.hang]"),
        "{shown}"
    );
    // The whole run ended well before the default limit of a minute.
    assert!(started.elapsed() < Duration::from_secs(50), "{shown}");
}

#[tokio::test]
async fn a_terminal_question_answered_in_another_window_is_withdrawn() {
    let state = tempfile::tempdir().unwrap();
    let (_dir, work) = work();
    let hearth = hearth_with_agent(state.path(), "");
    let served = Served::start(hearth, &[], &[]);
    let (client, _notifications) = served.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("tester".into()),
            working_directories: vec![work.display().to_string()],
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let target = work.join("elsewhere.txt");
    // `hearth run` on a terminal, through the running server.
    let mut run = served.hearth.command();
    run.current_dir(&work).args([
        "run".to_owned(),
        "--session".to_owned(),
        session.session.summary.uri.clone(),
        format!("/write {} answered elsewhere", target.display()),
    ]);
    let mut child = on_a_terminal(&run).spawn().unwrap();
    // Keeps the terminal's input open (a closed one would refuse the question).
    let _input = child.stdin.take().unwrap();
    let output = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let output = std::sync::Arc::clone(&output);
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut buffer = [0_u8; 4096];
            while let Ok(read) = std::io::Read::read(&mut stdout, &mut buffer) {
                if read == 0 {
                    break;
                }
                output
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..read]));
            }
        })
    };
    let shown = |what: &str| output.lock().unwrap().contains(what);
    let deadline = Instant::now() + WAIT;
    while !shown("answer (number") {
        assert!(
            Instant::now() < deadline,
            "the terminal was not asked:\n{}",
            output.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let listed = served.hearth.ok(&["permissions", "list", "--json"]);
    let request: serde_json::Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    let id = request["requestId"].as_str().unwrap().to_owned();
    served.hearth.ok(&["permissions", "allow", &id]);
    let status = child.wait_within(PROCESS_WAIT);
    reader.join().unwrap();
    let output = output.lock().unwrap().clone();
    assert!(status.success(), "{output}");
    assert!(
        output.contains("hearth: answered elsewhere: allow once"),
        "{output}"
    );
    assert!(!output.contains("does not exist"), "{output}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "answered elsewhere"
    );
}

#[test]
fn a_chat_whose_session_the_agent_lost_goes_on_and_agents_list_says_so() {
    let state = tempfile::tempdir().unwrap();
    let (_dir, work) = work();
    let hearth = hearth_with_agent(state.path(), "");
    let run = |args: &[&str]| {
        let output = hearth
            .command()
            .current_dir(&work)
            .args(args)
            .output_within(PROCESS_WAIT);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "{args:?}: {stderr}");
        (stdout, stderr)
    };
    run(&["run", "--agent", "tester", "the secret word is heron"]);
    let session = hearth.session_uris().pop().unwrap();
    // The agent loses every session it had.
    for entry in std::fs::read_dir(state.path()).unwrap() {
        std::fs::remove_file(entry.unwrap().path()).unwrap();
    }
    let (stdout, stderr) = run(&["run", "--session", &session, "what was the word?"]);
    // The test agent echoes its prompt: the new session got the chat's history.
    assert!(stdout.contains("the secret word is heron"), "{stdout}");
    assert!(stdout.contains("what was the word?"), "{stdout}");
    assert!(
        stderr.contains("ℹ tester could not reopen this chat's session"),
        "{stderr}"
    );
    let shown = hearth.ok(&["sessions", "show", &session]);
    assert!(shown.contains("ℹ tester could not reopen"), "{shown}");
    let listed = hearth.ok(&["agents", "list"]);
    assert!(
        listed.contains("reopen    with session/load, but the last reopening failed"),
        "{listed}"
    );
    assert!(listed.contains("not found"), "{listed}");
    // The new session is the chat's: the next run reopens it as it is.
    let (stdout, stderr) = run(&["run", "--session", &session, "and now?"]);
    assert_eq!(stdout, "echo: and now?\n");
    assert!(!stderr.contains("ℹ"), "{stderr}");
    let listed = hearth.ok(&["agents", "list"]);
    assert!(
        listed.contains("reopen    with session/load; last reopening worked"),
        "{listed}"
    );
}

#[test]
fn doctor_fails_an_agent_that_starts_but_cannot_open_a_session_without_a_sign_in() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent_env(state.path(), ", HEARTH_TEST_AGENT_AUTH = \"1\"", "");
    // It starts: `agents list` says so.
    let listed = hearth.ok(&["agents", "list"]);
    assert!(listed.contains("status    ok"), "{listed}");
    // Opening a session needs a sign-in nobody gave: doctor says so and fails.
    let doctor = hearth.run(&["doctor", "--provider", "tester"]);
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(!doctor.status.success(), "{text}");
    assert!(text.contains("opening a session fails"), "{text}");
    assert!(text.contains("hearth agents login tester"), "{text}");
    assert!(text.contains("0 of 1 agent(s) work"), "{text}");
}

/// A data directory whose agent `tester` needs a sign-in, offers its own in a terminal
/// (`hearth-acp-test-agent login`), and signs out when `logout` is offered.
fn hearth_with_signed_agent(state: &Path, caps: &str) -> Hearth {
    hearth_with_agent_env(
        state,
        &format!(
            ", HEARTH_TEST_AGENT_AUTH = \"1\", HEARTH_TEST_AGENT_TERMINAL_AUTH = \"spec\", HEARTH_TEST_AGENT_CAPS = \"{caps}\""
        ),
        "",
    )
}

/// `hearth agents login ARGS` with `typed` on its stdin.
fn login(hearth: &Hearth, work: &Path, args: &[&str], typed: &str) -> std::process::Output {
    let mut child = hearth
        .command()
        .current_dir(work)
        .args(["agents", "login"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(typed.as_bytes())
        .unwrap();
    child.wait_with_output_within(PROCESS_WAIT)
}

#[test]
fn login_runs_the_agents_own_sign_in_here_and_logout_signs_out() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_signed_agent(state.path(), "load,list,resume,logout");
    let (_dir, work) = work();
    let run = |prompt: &str| {
        hearth
            .command()
            .current_dir(&work)
            .args(["run", "--agent", "tester", prompt])
            .output_within(PROCESS_WAIT)
    };

    // Not signed in: the run fails and says how to sign in.
    let refused = run("hello");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(
        stderr.contains("Sign in with `hearth agents login tester`"),
        "{stderr}"
    );

    // A cancelled sign-in fails and says so.
    let cancelled = login(&hearth, &work, &["tester"], "\n");
    let stderr = String::from_utf8_lossy(&cancelled.stderr);
    assert_eq!(cancelled.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("hearth: the sign-in of tester failed (exit status: 1)"),
        "{stderr}"
    );

    // The agent's own sign-in runs attached to Hearth's stdin and stdout, with the
    // agent's environment and the method's variables.
    let signed = login(&hearth, &work, &["tester"], "Ada\n");
    let stderr = String::from_utf8_lossy(&signed.stderr);
    assert!(signed.status.success(), "{stderr}");
    assert_eq!(
        String::from_utf8_lossy(&signed.stdout),
        "test agent sign-in; your name: signed in as Ada\n"
    );
    assert!(
        stderr.contains(&format!(
            "hearth: signing in to tester with `test-terminal`: running {} login",
            acp_test_agent().display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("hearth: signed in to tester"), "{stderr}");
    let credential: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(state.path().join("signed-in.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(credential["name"], "Ada");
    assert_eq!(credential["by"], "spec");
    assert_eq!(credential["cwd"], work.display().to_string());

    let answered = run("hello");
    assert!(
        answered.status.success(),
        "{}",
        String::from_utf8_lossy(&answered.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&answered.stdout), "echo: hello\n");
    let listed = hearth.ok(&["agents", "list"]);
    assert!(
        listed.contains("test-terminal (Test terminal login); `hearth agents login tester`, `hearth agents logout tester`"),
        "{listed}"
    );

    let out = hearth
        .command()
        .current_dir(&work)
        .args(["agents", "logout", "tester"])
        .output_within(PROCESS_WAIT);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("hearth: signed out of tester"), "{stderr}");
    assert!(!state.path().join("signed-in.json").exists());
    assert!(!run("hello").status.success());
}

#[test]
fn login_with_an_agent_method_reports_the_agents_answer_and_names_the_choices() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_signed_agent(state.path(), "none");
    let (_dir, work) = work();

    // `authenticate`, refused by the agent: its words are shown.
    let refused = login(&hearth, &work, &["tester", "--method", "test-login"], "");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the sign-in of tester with `test-login` failed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("HEARTH_TEST_AGENT_TOKEN is not set"),
        "{stderr}"
    );

    // An unknown method: the offered ones are listed, and how each runs.
    let unknown = login(&hearth, &work, &["tester", "--method", "oauth"], "");
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(!unknown.status.success());
    assert!(
        stderr.contains("agent `tester` offers no sign-in method `oauth`"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "test-login (Test login: set HEARTH_TEST_AGENT_TOKEN; the agent signs in itself)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("test-terminal (Test terminal login: Run `hearth-acp-test-agent login` in the terminal; runs in this terminal)"),
        "{stderr}"
    );

    // Without `logout`, signing out is refused with what to do instead.
    let out = hearth.run(&["agents", "logout", "tester"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("agent `tester` does not support signing out through Hearth (it does not offer ACP `logout`); sign out with the agent's own command"),
        "{stderr}"
    );
    // An unknown agent is named.
    let error = hearth.fails(&["agents", "login", "nobody"]);
    assert!(error.contains("no agent `nobody`"), "{error}");
}

#[test]
fn an_agents_question_is_asked_in_chat_and_declined_where_nobody_can_answer() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "");
    let (_dir, work) = work();

    // Nobody can answer: declined, with a note saying where it could be answered.
    let output = hearth
        .command()
        .current_dir(&work)
        .args(["run", "--agent", "tester", "/ask choice"])
        .output_within(PROCESS_WAIT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "answer: decline\n");
    assert!(
        stderr.contains(
            "hearth: tester asked: Which colour?\nhearth: declined: nobody can answer here"
        ),
        "{stderr}"
    );

    // In a chat, the choices are shown and the typed one goes back to the agent.
    let mut child = hearth
        .command()
        .current_dir(&work)
        .args(["chat", "--agent", "tester"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"/ask choice\n2\n/ask confirm\nn\n")
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("answer: accept color=green"), "{stdout}");
    assert!(stdout.contains("answer: decline"), "{stdout}");
    assert!(stderr.contains("? tester asks: Which colour?"), "{stderr}");
    assert!(
        stderr.contains("  [2] answer                agent's label: \"green\"\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains("  [4] refuse once           agent's label: \"Decline\"\n"),
        "{stderr}"
    );
}

#[test]
fn run_on_a_terminal_shows_what_the_turn_used_after_the_answer() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "");
    let (_dir, work) = work();
    let mut run = hearth.command();
    run.current_dir(&work)
        .args(["run", "--agent", "tester", "/usage"]);
    let output = on_a_terminal(&run)
        .stdin(Stdio::null())
        .output_within(PROCESS_WAIT);
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{shown}");
    assert!(shown.contains("tokens 100 in / 20 out"), "{shown}");
    assert!(shown.contains("context 1234/200000"), "{shown}");
    // Off a terminal nothing is added.
    let output = hearth
        .command()
        .current_dir(&work)
        .args(["run", "--agent", "tester", "/usage"])
        .output_within(PROCESS_WAIT);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("tokens 100 in"));
}
