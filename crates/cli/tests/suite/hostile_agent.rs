//! An agent that writes terminal escape sequences into everything it sends (the test
//! agent's `/hostile`: `ESC[8m`, OSC 52, OSC 0, `ESC[2J`, a C1 CSI, a right-to-left
//! override) reaches the terminal only as text: `hearth run`, `hearth chat`, the
//! listings and `hearth permissions` print none of those bytes, show them escaped
//! (`\x1b`), and every permission choice leads with what it does in Hearth's words.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Instant;

use hearth_protocol::{ChatSend, ChatSendParams, SessionCreate, SessionCreateParams, UserMessage};
use hearth_test_support::{BoundedChild, BoundedCommand, PROCESS_WAIT, acp_test_agent};

use super::serve_support::{Served, WAIT};
use super::support::Hearth;

/// The choices of `/hostile`'s permission request, as the prompt shows them.
const CHOICES: &str = "  [1] allow for this chat   agent's label: \"Refuse\\x1b[8m (allow always)\"\n  [2] refuse once           agent's label: \"Allow\\x1b[2J\"\n";

fn hearth_with_agent(state: &Path) -> Hearth {
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        &format!(
            "[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\n",
            acp_test_agent().display(),
            state.display()
        ),
    );
    hearth
}

/// A character a terminal would act on: ESC, BEL and the other C0 controls but line
/// feed and tab, DEL, C1, and the bidirectional overrides and isolates.
fn acts_on_a_terminal(c: char) -> bool {
    (c < ' ' && c != '\n' && c != '\t')
        || ('\u{7f}'..='\u{9f}').contains(&c)
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// `text`, after checking it holds nothing a terminal acts on.
fn inert(what: &str, text: &str) -> String {
    if let Some(found) = text.chars().find(|c| acts_on_a_terminal(*c)) {
        panic!("{what} holds {found:?}:\n{text}");
    }
    text.to_owned()
}

fn streams(what: &str, output: &Output) -> (String, String) {
    (
        inert(
            &format!("stdout of {what}"),
            &String::from_utf8_lossy(&output.stdout),
        ),
        inert(
            &format!("stderr of {what}"),
            &String::from_utf8_lossy(&output.stderr),
        ),
    )
}

#[test]
fn run_shows_a_hostile_agents_escape_sequences_as_text() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path());
    let work = tempfile::tempdir().unwrap();
    let output = hearth
        .command()
        .current_dir(work.path())
        .args(["run", "--agent", "tester", "--show-reasoning", "/hostile"])
        .output_within(PROCESS_WAIT);
    let (stdout, stderr) = streams("hearth run", &output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        stdout,
        "answer\\x1b[2J\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b]0;owned\\x07 \\u{9b}31mend \\u{202e}txt.exe; chose reject-once\n"
    );
    for shown in [
        "thinking\\x1b[2J hard",
        "⚙ Read\\x1b]52;c;cm0gLXJmIH4=\\x07 notes.txt running",
        "  →\n    result \\u{9b}31min red\\x1b[2J\n    second line\n",
        "hearth: tester asked: Edit\\x1b]0;owned\\x07 notes.txt\nhearth: refused: nobody can answer here",
    ] {
        assert!(stderr.contains(shown), "`{shown}` in:\n{stderr}");
    }
    // Nobody was asked: the refusal is on record as Hearth's policy, not the user's.
    let answers: Vec<(String, String)> = hearth
        .ok(&["audit", "export"])
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|row| row["kind"] == "permission" && row["decision"] != "requested")
        .map(|row| {
            (
                row["decision"].as_str().unwrap_or_default().to_owned(),
                row["actor"].to_string(),
            )
        })
        .collect();
    assert!(!answers.is_empty());
    for (decision, actor) in &answers {
        assert_eq!(decision, "policy", "{answers:?}");
        assert!(!actor.contains("user"), "{answers:?}");
    }
    // JSON stays JSON, and keeps what the agent sent.
    let output = hearth
        .command()
        .current_dir(work.path())
        .args(["run", "--agent", "tester", "--json", "/hostile"])
        .output_within(PROCESS_WAIT);
    let (stdout, _) = streams("hearth run --json", &output);
    let answer: String = stdout
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["action"]["type"] == "text_delta")
        .map(|event| event["action"]["text"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        answer.starts_with("answer\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07"),
        "{answer:?}"
    );
}

#[test]
fn chat_asks_in_hearths_words_and_listings_stay_inert() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path());
    let work = tempfile::tempdir().unwrap();
    let mut child = hearth
        .command()
        .current_dir(work.path())
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
        .write_all(b"/hostile\n1\n")
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    let (stdout, stderr) = streams("hearth chat", &output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "? tester asks: Edit\\x1b]0;owned\\x07 notes.txt\n  kind: edit\n{CHOICES}"
        )),
        "{stderr}"
    );
    // The first choice, labelled "Refuse" by the agent, allows: and so it was shown.
    assert!(stdout.ends_with("; chose allow-always\n"), "{stdout}");

    let title = "\\x1b]0;owned\\x07Hostile \\u{202e}eltit";
    let list = inert("sessions list", &hearth.ok(&["sessions", "list"]));
    assert!(list.contains(title), "{list}");
    let session = hearth.session_uris().remove(0);
    let show = inert("sessions show", &hearth.ok(&["sessions", "show", &session]));
    for shown in [
        &format!("title     {title}\n"),
        "  ┆ thinking\\x1b[2J hard\n",
        "  [ ] step\\x1b[8m hidden\n",
        "⚙ Read\\x1b]52;c;cm0gLXJmIH4=\\x07 notes.txt done →\n    result \\u{9b}31min red\\x1b[2J\n    second line\n",
        "? Edit\\x1b]0;owned\\x07 notes.txt [allow for this chat \"Refuse\\x1b[8m (allow always)\" / refuse once \"Allow\\x1b[2J\"] → allow for this chat \"Refuse\\x1b[8m (allow always)\"\n",
    ] {
        assert!(show.contains(shown), "`{shown}` in:\n{show}");
    }
    let chats = inert("chats list", &hearth.ok(&["chats", "list", &session]));
    assert!(chats.contains(title), "{chats}");
    for args in [
        &["sessions", "list", "--json"][..],
        &["sessions", "show", &session, "--json"][..],
    ] {
        let json = inert(&format!("{args:?}"), &hearth.ok(args));
        for line in json.lines() {
            serde_json::from_str::<serde_json::Value>(line).unwrap();
        }
        assert!(
            json.contains("\\u001b]0;owned\\u0007Hostile \\u202eeltit"),
            "{json}"
        );
    }
}

#[tokio::test]
async fn permissions_list_shows_hearths_words_first() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let served = Served::start(hearth_with_agent(state.path()), &[], &[]);
    let (client, _notifications) = served.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("tester".into()),
            working_directories: vec![work.path().display().to_string()],
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    client
        .call::<ChatSend>(&ChatSendParams {
            chat: session.session.chats[0].summary.uri.clone(),
            message: UserMessage {
                text: "/hostile".into(),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap();
    let deadline = Instant::now() + WAIT;
    let listed = loop {
        let listed = served.hearth.ok(&["permissions", "list", "--json"]);
        if !listed.trim().is_empty() {
            break inert("permissions list --json", &listed);
        }
        assert!(Instant::now() < deadline, "no permission request appeared");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let request: serde_json::Value = serde_json::from_str(listed.lines().next().unwrap()).unwrap();
    assert_eq!(
        request["options"][0]["label"],
        "Refuse\x1b[8m (allow always)"
    );
    let id = request["requestId"].as_str().unwrap().to_owned();
    let text = inert(
        "permissions list",
        &served.hearth.ok(&["permissions", "list"]),
    );
    assert!(
        text.contains(&format!(
            "? tester asks: Edit\\x1b]0;owned\\x07 notes.txt\n  kind: edit\n{CHOICES}"
        )),
        "{text}"
    );
    let refused = inert(
        "permissions reject",
        &served.hearth.ok(&["permissions", "reject", &id]),
    );
    assert_eq!(
        refused,
        format!("refused {id}: Edit\\x1b]0;owned\\x07 notes.txt\n")
    );
}
