//! What goes with a prompt: text piped to `hearth run`, files given with `--attach` or
//! named with `@path` (their text read into the message, stored with the turn).

use std::io::Write;
use std::process::Stdio;

use hearth_test_support::{BoundedChild, BoundedCommand, OpenAiStream, PROCESS_WAIT};
use pretty_assertions::assert_eq;

use super::mock::{MODEL, command, completions, configure, conversation, mock_config, server};
use super::support::Hearth;

/// The last user message the model got.
fn last_prompt(server: &hearth_test_support::MockModelServer) -> String {
    let request = completions(server).last().unwrap().clone();
    conversation(&request)
        .into_iter()
        .rev()
        .find(|(role, _)| role == "user")
        .map(|(_, content)| content)
        .unwrap()
}

#[test]
fn text_piped_to_run_goes_with_the_prompt() {
    let server = server();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["ok"], 1, 1));
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let mut child = command(&hearth)
        .args(["run", "summarize"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"error: disk full\nretrying\n")
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        last_prompt(&server),
        "summarize\n\n<stdin>\nerror: disk full\nretrying\n</stdin>"
    );
}

#[test]
fn attached_and_mentioned_files_are_read_into_the_message_and_kept_with_the_turn() {
    let server = server();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["ok"], 1, 1));
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    std::fs::write(work.join("notes.md"), "# Notes\nship on Friday\n").unwrap();
    std::fs::write(work.join("todo.txt"), "buy milk\n").unwrap();
    let output = command(&hearth)
        .current_dir(&work)
        .args([
            "run",
            "--attach",
            "notes.md",
            "what do they say, and @todo.txt?",
        ])
        .output_within(PROCESS_WAIT);
    assert!(output.status.success(), "{output:?}");
    let said = last_prompt(&server);
    assert!(
        said.starts_with("what do they say, and @todo.txt?"),
        "{said}"
    );
    assert!(
        said.contains("<file name=\"notes.md\">\n# Notes\nship on Friday\n</file>"),
        "{said}"
    );
    assert!(
        said.contains("<file name=\"todo.txt\">\nbuy milk\n</file>"),
        "{said}"
    );
    let session = hearth.session_uris().pop().unwrap();
    let shown = hearth.ok(&["sessions", "show", &session, "--json"]);
    let record: serde_json::Value = serde_json::from_str(shown.trim()).unwrap();
    let names: Vec<String> = record["chats"][0]["turns"][0]["user"]["attachments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|attachment| attachment["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["notes.md", "todo.txt"], "{shown}");

    let error = command(&hearth)
        .current_dir(&work)
        .args(["run", "--attach", "missing.txt", "hello"])
        .output_within(PROCESS_WAIT);
    assert!(!error.status.success());
    let stderr = String::from_utf8_lossy(&error.stderr);
    assert!(stderr.contains("cannot attach missing.txt"), "{stderr}");
}

#[test]
fn an_attached_image_goes_to_the_model_inline() {
    let server = server();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["a dot"], 1, 1));
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let work = tempfile::tempdir().unwrap();
    let png = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3];
    std::fs::write(work.path().join("dot.png"), png).unwrap();
    let output = command(&hearth)
        .current_dir(work.path())
        .args(["run", "--attach", "dot.png", "what is this?"])
        .output_within(PROCESS_WAIT);
    assert!(output.status.success(), "{output:?}");
    let request = completions(&server).last().unwrap().json();
    let messages = request["messages"].as_array().unwrap();
    let content = &messages.last().unwrap()["content"];
    assert_eq!(content[0]["type"], "text", "{content}");
    assert!(
        content[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("what is this?\n\n[Attached file: dot.png (image/png)"),
        "{content}"
    );
    use base64::Engine as _;
    assert_eq!(
        content[1]["image_url"]["url"],
        format!(
            "data:image/png;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(png)
        ),
        "{content}"
    );
}
