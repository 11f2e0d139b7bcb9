//! `hearth chat` on a real terminal: editing with the arrows, the history (kept across
//! chats), a pasted block of lines sent as one prompt, lines joined with `\` and
//! Alt-Enter, and Ctrl-C and Ctrl-D at the prompt.

use hearth_test_support::{BoundedCommand, MockModelServer, OpenAiStream};
use pretty_assertions::assert_eq;

use super::mock::{
    MODEL, command, completions, configure, conversation, mock_config, server, tool_call,
};
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
    // Each answer's usage line, once.
    assert_eq!(screen.matches("tokens 1 in / 1 out").count(), 4, "{screen}");

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

/// A config with the mock model and a calendar file; the file's path.
fn with_calendar(hearth: &Hearth, server: &MockModelServer) -> std::path::PathBuf {
    let calendar = hearth.home.path().join("home.ics");
    configure(
        hearth,
        &format!(
            "{}\n[calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n",
            mock_config(server),
            calendar.display().to_string()
        ),
    );
    calendar
}

#[test]
fn a_change_staged_in_the_chat_is_decided_there() {
    let server = server();
    let hearth = Hearth::new();
    let calendar = with_calendar(&hearth, &server);
    let staged = |title: &str| {
        server.enqueue(tool_call(
            "event_create",
            &format!(r#"{{"title": "{title}", "start": "2030-03-04T09:00"}}"#),
        ));
        server.enqueue(OpenAiStream::text_answer(MODEL, &["Staged."], 1, 1));
    };
    let mut terminal = chat_on_a_terminal(&hearth);

    // Approved as soon as the answer ends: the diff is shown, the file written.
    staged("Dentist");
    terminal.type_keys(&format!("book the dentist{}", keys::ENTER));
    terminal.wait_for("+ title: Dentist");
    terminal.wait_for("approve, reject, or later?");
    terminal.type_keys(&format!("a{}", keys::ENTER));
    terminal.wait_for("Applied proposal");
    terminal.wait_for("› ");
    let written = std::fs::read_to_string(&calendar).unwrap();
    assert!(written.contains("SUMMARY:Dentist"), "{written}");

    // Left for later, then listed and approved with /approve.
    staged("Haircut");
    terminal.type_keys(&format!("book a haircut{}", keys::ENTER));
    terminal.wait_for("approve, reject, or later?");
    terminal.type_keys(keys::ENTER);
    terminal.wait_for("waits: /approve");
    terminal.wait_for("› ");
    assert!(
        !std::fs::read_to_string(&calendar)
            .unwrap()
            .contains("Haircut")
    );
    terminal.type_keys(&format!("/proposals{}", keys::ENTER));
    terminal.wait_for("Create event");
    terminal.wait_for("› ");
    terminal.type_keys(&format!("/approve{}", keys::ENTER));
    terminal.wait_for("Applied proposal");
    terminal.wait_for("› ");
    assert!(
        std::fs::read_to_string(&calendar)
            .unwrap()
            .contains("SUMMARY:Haircut")
    );

    // Rejected: nothing written.
    staged("Dinner");
    terminal.type_keys(&format!("book dinner{}", keys::ENTER));
    terminal.wait_for("approve, reject, or later?");
    terminal.type_keys(&format!("r{}", keys::ENTER));
    terminal.wait_for("Rejected proposal");
    terminal.type_keys(keys::CTRL_D);
    let (success, screen) = terminal.finish();
    assert!(success, "{screen}");
    assert!(
        !std::fs::read_to_string(&calendar)
            .unwrap()
            .contains("Dinner")
    );
    let audit = hearth.ok(&["audit", "list"]);
    assert!(audit.contains("rejected"), "{audit}");
}

#[test]
fn a_permission_allowed_for_the_chat_is_not_asked_again() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        &format!(
            "[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\n",
            hearth_test_support::acp_test_agent().display(),
            state.path().display()
        ),
    );
    let target = work.join("notes.txt");
    let mut chat = command(&hearth);
    chat.current_dir(&work).args(["chat", "--agent", "tester"]);
    let mut terminal = Terminal::start(&chat);
    terminal.wait_for("› ");
    terminal.type_keys(&format!("/write {} first{}", target.display(), keys::ENTER));
    terminal.wait_for("allow for this chat");
    terminal.wait_for("answer (number, y, n, always, never): ");
    terminal.type_keys(&format!("always{}", keys::ENTER));
    terminal.wait_for(&format!("wrote {}", target.display()));
    terminal.wait_for("› ");
    terminal.type_keys(&format!(
        "/write {} second{}",
        target.display(),
        keys::ENTER
    ));
    terminal.wait_for(&format!("wrote {}", target.display()));
    terminal.wait_for("› ");
    terminal.type_keys(keys::CTRL_D);
    let (success, screen) = terminal.finish();
    assert!(success, "{screen}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "second");
    assert_eq!(
        screen.matches("answer (number").count(),
        1,
        "asked once: {screen}"
    );
}

/// `hearth run` in `folder` with `prompt`, on the mock model.
fn run_in(hearth: &Hearth, folder: &std::path::Path, prompt: &str) {
    let output = command(hearth)
        .current_dir(folder)
        .args(["run", prompt])
        .output_within(hearth_test_support::PROCESS_WAIT);
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn continuing_picks_the_folders_session_and_shows_where_it_left_off() {
    let server = server();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["o", "k"], 1, 1));
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let folders = tempfile::tempdir().unwrap();
    let (here, there) = (folders.path().join("here"), folders.path().join("there"));
    std::fs::create_dir_all(&here).unwrap();
    std::fs::create_dir_all(&there).unwrap();
    run_in(&hearth, &here, "a question asked here");
    run_in(&hearth, &there, "a question asked there");

    // `-c` here goes on with here's session, though there's is newer, and shows it.
    let mut chat = command(&hearth);
    chat.current_dir(&here).args(["chat", "-c"]);
    let mut terminal = Terminal::start(&chat);
    terminal.wait_for("earlier in this chat");
    terminal.wait_for("› a question asked here");
    terminal.wait_for("› ");
    send(&mut terminal, &format!("and a follow-up{}", keys::ENTER));
    terminal.type_keys(keys::CTRL_D);
    let (success, screen) = terminal.finish();
    assert!(success, "{screen}");
    assert!(!screen.contains("asked there"), "{screen}");
    let last = completions(&server).last().unwrap().clone();
    let said: Vec<String> = conversation(&last)
        .into_iter()
        .filter(|(role, _)| role == "user")
        .map(|(_, content)| content)
        .collect();
    assert_eq!(said, ["a question asked here", "and a follow-up"]);

    // `hearth resume` lists both with their folders; the one picked opens with its turns.
    let mut resume = command(&hearth);
    resume.current_dir(&here).arg("resume");
    let mut terminal = Terminal::start(&resume);
    terminal.wait_for("open which?");
    let screen = terminal.screen();
    let there_line = screen
        .lines()
        .find(|line| line.contains("there") && line.starts_with('['))
        .unwrap_or_else(|| panic!("no line for the other folder: {screen}"))
        .to_owned();
    let number = there_line[1..3].trim().to_owned();
    terminal.type_keys(&format!("{number}{}", keys::ENTER));
    terminal.wait_for("› a question asked there");
    terminal.wait_for("› ");
    terminal.type_keys(keys::CTRL_D);
    let (success, screen) = terminal.finish();
    assert!(success, "{screen}");
}

#[test]
fn a_change_staged_by_run_through_a_server_is_decided_at_the_terminal() {
    let server = server();
    let hearth = Hearth::new();
    let calendar = with_calendar(&hearth, &server);
    server.enqueue(tool_call(
        "event_create",
        r#"{"title": "Dentist", "start": "2030-03-04T09:00"}"#,
    ));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Staged."], 1, 1));
    let served = super::serve_support::Served::start(hearth, &[], &[]);
    let mut run = command(&served.hearth);
    run.args(["run", "book the dentist"]);
    let mut terminal = Terminal::start(&run);
    terminal.wait_for("+ title: Dentist");
    terminal.wait_for("approve, reject, or later?");
    terminal.type_keys(&format!("a{}", keys::ENTER));
    terminal.wait_for("is applied");
    let (success, screen) = terminal.finish();
    assert!(success, "{screen}");
    let written = std::fs::read_to_string(&calendar).unwrap();
    assert!(written.contains("SUMMARY:Dentist"), "{written}");
}
