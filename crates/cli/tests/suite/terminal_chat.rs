//! `hearth chat` on a real terminal: editing with the arrows, the history (kept across
//! chats), a pasted block of lines sent as one prompt, lines joined with `\` and
//! Alt-Enter, and Ctrl-C and Ctrl-D at the prompt.

use hearth_test_support::{MockModelServer, OpenAiStream};
use pretty_assertions::assert_eq;

use super::mock::{MODEL, command, completions, configure, conversation, mock_config, server};
use super::support::Hearth;
use super::terminal_support::{Terminal, keys};

/// The prompts of the chat's turns, in order (title requests left out).
fn prompts(server: &MockModelServer) -> Vec<String> {
    completions(server)
        .iter()
        .filter(|request| {
            request.json()["messages"][0]["content"]
                .as_str()
                .is_some_and(|system| system.starts_with("You are Hearth's assistant"))
        })
        .filter_map(|request| {
            conversation(request)
                .into_iter()
                .rev()
                .find(|(role, _)| role == "user")
                .map(|(_, content)| content)
        })
        .collect()
}

/// A chat on a terminal, on the mock model, with its first prompt shown.
fn chat_on_a_terminal(hearth: &Hearth) -> Terminal {
    let mut chat = command(hearth);
    chat.arg("chat");
    let mut terminal = Terminal::start(&chat);
    terminal.wait_for("› ");
    terminal
}

/// Types a prompt's keys, then waits for the answer and the next prompt.
fn send(terminal: &mut Terminal, typed: &str) {
    terminal.type_keys(typed);
    terminal.wait_for("ok");
    terminal.wait_for("› ");
}

#[test]
fn the_chat_prompt_edits_remembers_and_takes_a_paste_as_one_prompt() {
    let server = server();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["o", "k"], 1, 1));
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));

    let mut terminal = chat_on_a_terminal(&hearth);
    // ← moves into the line; the letter lands there.
    send(
        &mut terminal,
        &format!("helo{}l{}", keys::LEFT, keys::ENTER),
    );
    // ↑ brings the last prompt back to be edited.
    send(&mut terminal, &format!("{} again{}", keys::UP, keys::ENTER));
    // Three pasted lines are one prompt, sent with Enter.
    send(
        &mut terminal,
        &format!("{}{}", keys::paste("one\ntwo\nthree"), keys::ENTER),
    );
    // A line ending in `\`, and Alt-Enter, go on to the next line.
    send(
        &mut terminal,
        &format!("a\\{}b{}c{}", keys::ENTER, keys::ALT_ENTER, keys::ENTER),
    );
    terminal.type_keys(keys::CTRL_D);
    let (success, screen) = terminal.finish();
    assert!(success, "{screen}");
    assert_eq!(
        prompts(&server),
        ["hello", "hello again", "one\ntwo\nthree", "a\nb\nc"],
        "{screen}"
    );
    assert!(!screen.contains("^[["), "raw escape bytes echoed: {screen}");

    // The history outlives the chat: ↑ in a new chat brings back the last prompt.
    let mut terminal = chat_on_a_terminal(&hearth);
    send(&mut terminal, &format!("{}{}", keys::UP, keys::ENTER));
    terminal.type_keys(keys::CTRL_D);
    let (success, screen) = terminal.finish();
    assert!(success, "{screen}");
    assert_eq!(prompts(&server).last().unwrap(), "a\nb\nc", "{screen}");
    let history = hearth.home.path().join("chat-history");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&history).unwrap().permissions(),
    );
    assert_eq!(mode & 0o077, 0, "the history is private");
}

#[test]
fn ctrl_c_at_the_prompt_twice_leaves_and_once_does_not() {
    let server = server();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["o", "k"], 1, 1));
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let mut terminal = chat_on_a_terminal(&hearth);
    terminal.type_keys("half a thought\x03");
    terminal.wait_for("press Ctrl-C again");
    terminal.wait_for("› ");
    send(&mut terminal, &format!("hi{}", keys::ENTER));
    terminal.type_keys("\x03");
    terminal.wait_for("press Ctrl-C again");
    terminal.type_keys("\x03");
    terminal.wait_for("leaving the chat");
    let (success, screen) = terminal.finish();
    assert!(!success, "two Ctrl-C end with status 130: {screen}");
    assert_eq!(prompts(&server), ["hi"], "{screen}");
}
