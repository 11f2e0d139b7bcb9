//! Message limits: a prompt over `[limits] prompt_bytes` is refused before anything is
//! stored — in-process and through a server alike — with the sizes and what to change;
//! through the protocol it is a JSON-RPC error on a connection that stays open. Output
//! limits: an agent's answer past `[limits] answer_bytes` is printed and stored cut, with
//! the marks that say so.

use std::io::Write;
use std::process::Stdio;

use hearth_protocol::{
    ChatSend, ChatSendParams, ErrorKind, SessionCreate, SessionCreateParams, SessionList,
    SessionListParams, UserMessage,
};

use hearth_test_support::{BoundedChild, BoundedCommand, PROCESS_WAIT, acp_test_agent};

use super::serve_support::Served;
use super::support::Hearth;

/// Runs `hearth run -` with `prompt` on stdin.
fn run_with_stdin(hearth: &Hearth, prompt: &str) -> std::process::Output {
    let mut child = hearth
        .command()
        .args(["run", "--provider", "replay", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(prompt.as_bytes())
        .unwrap();
    child.wait_with_output_within(PROCESS_WAIT)
}

#[test]
fn a_prompt_over_the_limit_is_refused_before_a_session_exists() {
    let hearth = Hearth::new();
    hearth.write("config.toml", "[limits]\nprompt_bytes = 4096\n");
    let output = run_with_stdin(&hearth, &"x".repeat(10_000));
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the prompt is 9 KB"), "{stderr}");
    assert!(stderr.contains("up to 4 KB"), "{stderr}");
    assert!(stderr.contains("prompt_bytes"), "{stderr}");
    assert!(
        hearth.session_uris().is_empty(),
        "a refused prompt left a session"
    );
    // A control: a prompt within the limit runs.
    let output = run_with_stdin(&hearth, "hello");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(hearth.session_uris().len(), 1);
}

#[tokio::test]
async fn through_a_server_too_large_is_an_error_not_a_dropped_connection() {
    let hearth = Hearth::new();
    hearth.write("config.toml", "[limits]\nprompt_bytes = 65536\n");
    let served = Served::start(hearth, &[], &[]);
    // The CLI checks before creating anything on the server.
    let output = run_with_stdin(&served.hearth, &"y".repeat(100_000));
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("the prompt is 97 KB"));
    assert!(served.hearth.session_uris().is_empty());
    // A protocol client gets the host's error, and its connection stays usable.
    let (client, _notifications) = served.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("replay".into()),
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let chat = session.session.chats[0].summary.uri.clone();
    let error = client
        .call::<ChatSend>(&ChatSendParams {
            chat: chat.clone(),
            message: UserMessage {
                text: "z".repeat(200_000),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap_err();
    let hearth_server::ServerError::Rpc(error) = error else {
        panic!("not a JSON-RPC error: {error}");
    };
    assert_eq!(error.kind(), ErrorKind::InvalidParams);
    assert!(error.message.contains("up to 64 KB"), "{}", error.message);
    let listed = client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap();
    assert_eq!(listed.sessions.len(), 1);
    let shown = served.hearth.ok(&["chats", "show", &chat]);
    assert!(
        !shown.contains("zzzz"),
        "nothing of the refused prompt is stored"
    );
}

#[test]
fn an_answer_past_answer_bytes_is_printed_and_stored_cut_with_its_marks() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        &format!(
            "[limits]\nanswer_bytes = 100000\n\n[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\n",
            acp_test_agent().display(),
            state.path().display()
        ),
    );
    let output = hearth
        .command()
        .current_dir(work.path())
        .args(["run", "--agent", "tester", "/big-answer 3000000"])
        .output_within(PROCESS_WAIT);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let line = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+\n";
    let mut kept = line.repeat(100_000 / line.len() + 1);
    kept.truncate(100_000);
    let marks = "\n\n[truncated by Hearth: the answer reached its limit of 97 KB (`answer_bytes` under [limits] in config.toml); the rest is dropped]\n\
                 \n\n[truncated by Hearth: this turn passed its output limits, and Hearth dropped 2.8 MB of answer text (`answer_bytes` = 100000 under [limits] in config.toml)]\n";
    assert_eq!(stdout, format!("{kept}{marks}"));
    // What is stored is cut the same way, and the database stays small.
    let uri = hearth.session_uris().pop().unwrap();
    let shown = hearth.ok(&["sessions", "show", &uri]);
    assert!(
        shown.contains("[truncated by Hearth: the answer reached its limit of 97 KB"),
        "{shown}"
    );
    let database = std::fs::metadata(hearth.database()).unwrap().len();
    assert!(database < 2_000_000, "the database holds {database} bytes");
}
