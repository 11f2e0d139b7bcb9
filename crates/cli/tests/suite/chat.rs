//! `hearth chat` driven through a pipe: prompts, `/model`, `/fork`, `/new`, `/quit`, and
//! Ctrl-C stopping an answer without leaving.

use std::io::{Read, Write};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_test_support::model_server::Outcome;
use hearth_test_support::{BoundedChild, OpenAiStream, PROCESS_WAIT, RecordedRequest, WAIT};
use pretty_assertions::assert_eq;

use super::mock::{
    MODEL, command, completions, configure, conversation, eventually, mock_config, pair, server,
};
use super::support::Hearth;

/// The requests of the agent's turns (title requests left out).
fn turns(requests: Vec<RecordedRequest>) -> Vec<RecordedRequest> {
    requests
        .into_iter()
        .filter(|request| {
            request.json()["messages"][0]["content"]
                .as_str()
                .is_some_and(|system| system.starts_with("You are Hearth's assistant"))
        })
        .collect()
}

#[test]
fn chat_on_a_pipe_streams_switches_models_forks_and_starts_sessions() {
    let server = server();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["o", "k"], 1, 1));
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let mut child = command(&hearth)
        .arg("chat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"first\n/model other-model\nsecond\n/fork\nthird\n/bogus\n/new\nfourth\n/quit\nnever sent\n")
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "ok\nok\nok\nok\n", "{stderr}");
    assert!(stderr.contains("hearth: model other-model"), "{stderr}");
    assert!(
        stderr.contains("hearth: forked; now in chat hearth-chat:mock/"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hearth: unknown command /bogus"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hearth: new session hearth-session:mock/"),
        "{stderr}"
    );

    let requests = turns(completions(&server));
    assert_eq!(requests.len(), 4);
    let models: Vec<String> = requests
        .iter()
        .map(|request| request.json()["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        models,
        vec![MODEL, "other-model", "other-model", "other-model"]
    );
    assert_eq!(conversation(&requests[0]), vec![pair("user", "first")]);
    assert_eq!(
        conversation(&requests[1]),
        vec![
            pair("user", "first"),
            pair("assistant", "ok"),
            pair("user", "second")
        ]
    );
    // The fork carries the whole chat up to its last turn.
    assert_eq!(
        conversation(&requests[2]),
        vec![
            pair("user", "first"),
            pair("assistant", "ok"),
            pair("user", "second"),
            pair("assistant", "ok"),
            pair("user", "third")
        ]
    );
    assert_eq!(conversation(&requests[3]), vec![pair("user", "fourth")]);

    let sessions = hearth.session_uris();
    assert_eq!(sessions.len(), 2);
    let chats = hearth.ok(&["chats", "list", &sessions[1]]);
    assert_eq!(chats.lines().count(), 2, "{chats}");
    assert!(chats.contains("fork of"), "{chats}");
}

#[test]
fn ctrl_c_stops_the_answer_and_the_chat_goes_on() {
    let server = server();
    // A word every 100 ms for a minute: the answer is still streaming when it is
    // stopped, however slow the machine.
    let slow = (1..=600).fold(OpenAiStream::new(MODEL).role(), |stream, n| {
        stream
            .text(&format!("w{n} "))
            .pause(Duration::from_millis(100))
    });
    server.enqueue(slow.finish("stop").done());
    server.set_fallback(OpenAiStream::text_answer(
        MODEL,
        &["second ", "answer"],
        1,
        1,
    ));
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let mut child = command(&hearth)
        .arg("chat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"talk slowly\n").unwrap();
    stdin.flush().unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    let reader = {
        let seen = Arc::clone(&seen);
        let mut stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            let mut buffer = [0_u8; 256];
            while let Ok(count) = stdout.read(&mut buffer) {
                if count == 0 {
                    break;
                }
                seen.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..count]));
            }
        })
    };
    eventually("streamed words", || seen.lock().unwrap().contains("w2 "));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    eventually("the stopped answer's newline", || {
        seen.lock().unwrap().ends_with('\n')
    });
    stdin.write_all(b"again\n/quit\n").unwrap();
    drop(stdin);
    let status = child.wait_within(PROCESS_WAIT);
    reader.join().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{stderr}");
    let stdout = seen.lock().unwrap().clone();
    assert!(stdout.ends_with("\nsecond answer\n"), "{stdout}");
    assert!(!stdout.contains("w600"), "{stdout}");
    assert!(
        stderr.contains("answer stopped; what arrived is kept"),
        "{stderr}"
    );
    assert_eq!(
        first_outcome(&server),
        Some(Outcome::ClientGone),
        "the model request was not cancelled"
    );
    let requests = completions(&server);
    assert_eq!(requests.len(), 2, "an aborted first turn asks for no title");
    let continued = conversation(&requests[1]);
    assert_eq!(continued[0], pair("user", "talk slowly"));
    assert!(continued[1].1.starts_with("w1 w2 "), "{continued:?}");
    assert_eq!(continued[2], pair("user", "again"));
    let session = hearth.session_uris().remove(0);
    let show = hearth.ok(&["sessions", "show", &session]);
    assert!(show.contains("[aborted]"), "{show}");
}

fn first_outcome(server: &hearth_test_support::MockModelServer) -> Option<Outcome> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        if let Some(outcome) = server.outcome(0) {
            return Some(outcome);
        }
        if std::time::Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn fork_takes_a_turn_number_and_open_takes_the_start_of_an_id() {
    let server = server();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["o", "k"], 1, 1));
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let (_, _) = super::mock::ok(&hearth, &["run", "an older session"]);
    let older = hearth.session_uris().pop().unwrap();
    let older_id = older.rsplit('/').next().unwrap()[..8].to_owned();
    let mut child = command(&hearth)
        .arg("chat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = format!("first\nsecond\n/fork 1\nthird\n/open {older_id}\nfourth\n");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "hearth: opened hearth-chat:mock/{}",
            &older[older.find('/').unwrap() + 1..]
        )),
        "{stderr}"
    );
    let requests = turns(completions(&server));
    // The fork at turn 1 carries only the first turn.
    assert_eq!(
        conversation(&requests[3]),
        vec![
            pair("user", "first"),
            pair("assistant", "ok"),
            pair("user", "third")
        ]
    );
    // The opened session goes on with its own turns.
    assert_eq!(
        conversation(&requests[4]),
        vec![
            pair("user", "an older session"),
            pair("assistant", "ok"),
            pair("user", "fourth")
        ]
    );
}
