//! A permission is exactly what was shown, and children get only what they need:
//! an agent that asks to read a file and then writes it, that runs an allowed command a
//! second time, or that asks for a command with `LD_PRELOAD` set is asked again (or
//! refused) for what it did not show; neither the agent nor its terminals see Hearth's
//! keys and passwords.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use hearth_test_support::{BoundedChild, BoundedCommand, PROCESS_WAIT, acp_test_agent};

use super::support::Hearth;

fn hearth_with_agent(state: &Path, extra: &str) -> Hearth {
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        &format!(
            "[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\n{extra}",
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

/// `hearth chat --agent tester` fed `input` line by line; (stdout, stderr).
fn chat(hearth: &Hearth, work: &Path, input: &str) -> (String, String) {
    let mut child = hearth
        .command()
        .current_dir(work)
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
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_read_the_policy_allows_never_covers_a_write() {
    let state = tempfile::tempdir().unwrap();
    // Reads need no question; writes do, and nobody can answer (no terminal).
    let hearth = hearth_with_agent(state.path(), "allow = [\"read\"]\n");
    let (_dir, work) = work();
    let target = work.join("notes.md");
    std::fs::write(&target, "mine\n").unwrap();
    let output = hearth
        .command()
        .current_dir(&work)
        .args([
            "run",
            "--agent",
            "tester",
            &format!("/sneak-write {} overwritten", target.display()),
        ])
        .output_within(PROCESS_WAIT);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("write failed"), "{stdout}\n{stderr}");
    // Hearth asked about the write itself (and, with no terminal, refused it).
    assert!(stderr.contains("to write"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine\n");
}

#[test]
fn allowing_a_command_once_covers_one_run_of_it() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "");
    let (_dir, work) = work();
    // The agent asks to run `true` once (answered `y`), runs it, then runs it again:
    // Hearth asks about the second run (answered `n`).
    let (stdout, stderr) = chat(&hearth, &work, "/sneak-run true\ny\nn\n/quit\n");
    let first = stdout.find("first run:").expect(&stdout);
    let second = stdout.find("second run:").expect(&stdout);
    assert!(stdout[first..second].contains("exit code 0"), "{stdout}");
    assert!(stdout[second..].contains("terminal failed"), "{stdout}");
    assert!(
        stdout[second..].contains("did not allow running `true`"),
        "{stdout}"
    );
    // Two questions: the agent's, then Hearth's own about the second run.
    assert_eq!(stderr.matches("answer (").count(), 2, "{stderr}");
    assert!(stderr.contains("Allow tester to run `true`"), "{stderr}");
}

#[test]
fn the_question_about_a_command_shows_its_environment_and_directory() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(state.path(), "");
    let (_dir, work) = work();
    let (stdout, stderr) = chat(
        &hearth,
        &work,
        "/terminal LD_PRELOAD=/tmp/evil.so true\nn\n/quit\n",
    );
    assert!(
        stderr.contains(&format!(
            "Allow tester to run `true` in {} with LD_PRELOAD=/tmp/evil.so?",
            work.display()
        )),
        "{stderr}"
    );
    assert!(stdout.contains("terminal failed"), "{stdout}");
}

#[test]
fn an_agent_and_its_terminals_see_none_of_hearths_keys() {
    let state = tempfile::tempdir().unwrap();
    let hearth = hearth_with_agent(
        state.path(),
        "pass_env = [\"PASSED\"]\nallow = [\"execute\"]\n",
    );
    let (_dir, work) = work();
    let run = |prompt: &str| {
        let output = hearth
            .command()
            .current_dir(&work)
            .env("OPENAI_API_KEY", "sk-hearths-own")
            .env("FASTMAIL_APP_PASSWORD", "calendar-password")
            .env("PASSED", "yes")
            .args(["run", "--agent", "tester", prompt])
            .output_within(PROCESS_WAIT);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let seen = run("/env OPENAI_API_KEY FASTMAIL_APP_PASSWORD PASSED HEARTH_TEST_AGENT_STATE PATH");
    assert_eq!(
        seen,
        "OPENAI_API_KEY=unset\nFASTMAIL_APP_PASSWORD=unset\nPASSED=set\nHEARTH_TEST_AGENT_STATE=set\nPATH=set\n"
    );
    // A terminal gets the minimal environment and what the agent asked for in it:
    // not even what the agent itself was given.
    let terminal = run("/terminal ASKED=here env");
    assert!(terminal.contains("exit code 0"), "{terminal}");
    for hidden in [
        "sk-hearths-own",
        "calendar-password",
        "PASSED=",
        "HEARTH_TEST_AGENT_STATE",
    ] {
        assert!(!terminal.contains(hidden), "{hidden} in {terminal}");
    }
    assert!(terminal.contains("ASKED=here"), "{terminal}");
    assert!(terminal.contains("PATH="), "{terminal}");
}

/// "Allow for this chat" through `hearth serve` is a grant of exactly the call it was
/// given for: the same write again runs, another file asks; the grant is listed
/// (`permissions list --granted`) and, once revoked, the same write asks again.
#[tokio::test]
async fn a_grant_covers_the_same_call_is_listed_and_revocable() {
    use std::time::{Duration, Instant};

    use hearth_protocol::{
        ChatQueue, ChatQueueParams, SessionCreate, SessionCreateParams, UserMessage,
    };

    use super::serve_support::{Served, WAIT};

    let state = tempfile::tempdir().unwrap();
    let (_dir, work) = work();
    let served = Served::start(hearth_with_agent(state.path(), ""), &[], &[]);
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
    let send = |text: String| {
        let client = &client;
        let chat = chat.clone();
        async move {
            // Queued: it goes when the turn before it has ended.
            client
                .call::<ChatQueue>(&ChatQueueParams {
                    chat,
                    message: UserMessage {
                        text,
                        ..UserMessage::default()
                    },
                })
                .await
                .unwrap();
        }
    };
    let waiting = || async {
        let deadline = Instant::now() + WAIT;
        loop {
            let listed = served.hearth.ok(&["permissions", "list", "--json"]);
            if let Some(line) = listed.lines().next() {
                let request: serde_json::Value = serde_json::from_str(line).unwrap();
                return request["requestId"].as_str().unwrap().to_owned();
            }
            assert!(Instant::now() < deadline, "no permission request appeared");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let holds = |path: &Path, content: &str| {
        let (path, content) = (path.to_path_buf(), content.to_owned());
        async move {
            let deadline = Instant::now() + WAIT;
            while std::fs::read_to_string(&path).ok().as_deref() != Some(content.as_str()) {
                assert!(
                    Instant::now() < deadline,
                    "{} never held {content}",
                    path.display()
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    let a = work.join("a.txt");
    let b = work.join("b.txt");

    send(format!("/write {} one", a.display())).await;
    let id = waiting().await;
    served.hearth.ok(&["permissions", "allow", &id, "--always"]);
    holds(&a, "one").await;

    // The same call again: answered by the grant, nobody asked.
    send(format!("/write {} two", a.display())).await;
    holds(&a, "two").await;

    // Another file: asked.
    send(format!("/write {} other", b.display())).await;
    let id = waiting().await;
    served.hearth.ok(&["permissions", "reject", &id]);

    let granted = served.hearth.ok(&["permissions", "list", "--granted"]);
    let line = granted
        .lines()
        .find(|line| line.contains("allowed for the rest of chat"))
        .unwrap_or_else(|| panic!("{granted}"));
    assert!(line.contains(&format!("edit of {}", a.display())), "{line}");
    assert!(!granted.contains("b.txt"), "{granted}");
    let grant = line.split_whitespace().next().unwrap().to_owned();
    let revoked = served.hearth.ok(&["permissions", "revoke", &grant]);
    assert!(
        revoked.starts_with(&format!("revoked {grant}")),
        "{revoked}"
    );
    assert!(
        served
            .hearth
            .ok(&["permissions", "list", "--granted"])
            .starts_with("no standing answers")
    );

    // Revoked: the same write asks again.
    send(format!("/write {} three", a.display())).await;
    let id = waiting().await;
    served.hearth.ok(&["permissions", "allow", &id]);
    holds(&a, "three").await;
    assert!(!b.exists());
}
