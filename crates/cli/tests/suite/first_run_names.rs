//! The first ten minutes: sessions and proposals named by a prefix of their id, `run
//! --continue`, approvals that show what they approve, and configuration typos that are
//! refused instead of quietly using another provider.

use hearth_test_support::{BoundedCommand, PROCESS_WAIT};
use pretty_assertions::assert_eq;

use super::short_ids::{SAME_MILLISECOND, rename_session};
use super::support::Hearth;
use super::tool_support::{proposal, stage_event, with_calendar};

/// The id part of a session URI (`hearth-session:<provider>/<id>`).
fn id_of(uri: &str) -> &str {
    uri.rsplit_once('/').unwrap().1
}

/// The text of a session as `sessions show` prints it.
fn shown(hearth: &Hearth, session: &str) -> String {
    hearth.ok(&["sessions", "show", session])
}

/// Two sessions, newest first.
fn two_sessions() -> (Hearth, String, String) {
    let hearth = Hearth::new();
    hearth.ok(&["run", "first walnut"]);
    hearth.ok(&["run", "second chestnut"]);
    let uris = hearth.session_uris();
    assert_eq!(uris.len(), 2, "{uris:?}");
    (hearth, uris[0].clone(), uris[1].clone())
}

/// The longest start the two ids share, and a start of `id` that only it has.
fn shared_and_unique(first: &str, second: &str) -> (String, String) {
    let common = first
        .chars()
        .zip(second.chars())
        .take_while(|(a, b)| a == b)
        .count();
    (first[..common].to_owned(), first[..common + 1].to_owned())
}

#[test]
fn a_session_is_named_by_its_id_or_a_unique_prefix_of_it() {
    let (hearth, newest, oldest) = two_sessions();
    let (_, unique) = shared_and_unique(id_of(&oldest), id_of(&newest));
    let unique = if unique.len() < 4 {
        id_of(&oldest)[..4].to_owned()
    } else {
        unique
    };
    let by_prefix = shown(&hearth, &unique);
    assert!(by_prefix.contains("first walnut"), "{by_prefix}");
    assert_eq!(by_prefix, shown(&hearth, &oldest));
    assert_eq!(shown(&hearth, id_of(&oldest)), by_prefix);

    let chats = hearth.ok(&["chats", "list", id_of(&newest)]);
    assert_eq!(chats, hearth.ok(&["chats", "list", &newest]));

    // `run --session` takes one too, and continues that session.
    hearth.ok(&["run", "--session", &unique, "third pecan"]);
    assert!(shown(&hearth, &oldest).contains("third pecan"));
    assert!(!shown(&hearth, &newest).contains("third pecan"));

    let forked = hearth.ok(&["sessions", "fork", &unique]);
    assert!(forked.trim().starts_with("hearth-session:"), "{forked}");
    let deleted = hearth.ok(&["sessions", "delete", &unique]);
    assert_eq!(deleted, format!("deleted {oldest}\n"));
    assert!(!hearth.session_uris().contains(&oldest));
}

#[test]
fn an_ambiguous_prefix_lists_the_sessions_it_could_mean() {
    let (hearth, newest, oldest) = two_sessions();
    // Time-ordered ids, as Hearth made before, share their first characters.
    let newest = rename_session(&hearth, &newest, SAME_MILLISECOND[0]);
    let oldest = rename_session(&hearth, &oldest, SAME_MILLISECOND[1]);
    let (shared, _) = shared_and_unique(id_of(&oldest), id_of(&newest));
    assert!(shared.len() >= 4, "{shared}");
    let error = hearth.fails(&["sessions", "show", &shared[..4]]);
    assert!(error.contains("is the start of 2 sessions' ids"), "{error}");
    assert!(
        error.contains(&newest) && error.contains(&oldest),
        "{error}"
    );
    // With their titles.
    assert!(
        error.contains("first walnut") && error.contains("second chestnut"),
        "{error}"
    );
    let error = hearth.fails(&["run", "--session", &shared[..4], "hello"]);
    assert!(error.contains("is the start of 2 sessions' ids"), "{error}");
    assert_eq!(hearth.session_uris().len(), 2, "nothing was created");
}

#[test]
fn a_prefix_that_names_nothing_says_how_to_list_sessions() {
    let (hearth, _, _) = two_sessions();
    let error = hearth.fails(&["sessions", "show", "zzzz"]);
    assert!(
        error.contains("no session has an id starting with `zzzz`")
            && error.contains("hearth sessions list"),
        "{error}"
    );
    let error = hearth.fails(&["sessions", "delete", "abc"]);
    assert!(error.contains("too short"), "{error}");
    let error = hearth.fails(&["run", "--session", "zzzz", "hello"]);
    assert!(error.contains("hearth sessions list"), "{error}");
    assert_eq!(hearth.session_uris().len(), 2);
}

#[test]
fn run_continue_answers_in_the_most_recent_session() {
    let hearth = Hearth::new();
    let error = hearth.fails(&["run", "--continue", "hello"]);
    assert!(
        error.contains("there is no session to continue in /"),
        "{error}"
    );
    assert!(hearth.session_uris().is_empty());

    let (hearth, newest, oldest) = two_sessions();
    hearth.ok(&["run", "-c", "third pecan"]);
    assert_eq!(hearth.session_uris(), vec![newest.clone(), oldest.clone()]);
    assert!(shown(&hearth, &newest).contains("third pecan"));
    assert!(!shown(&hearth, &oldest).contains("third pecan"));

    // The most recently *updated* one: after continuing the older one, it is continued.
    hearth.ok(&["run", "--session", &oldest, "fourth hazel"]);
    hearth.ok(&["run", "--continue", "fifth almond"]);
    assert!(shown(&hearth, &oldest).contains("fifth almond"));

    let error = hearth.fails(&["run", "-c", "--session", &oldest, "hello"]);
    assert!(error.contains("cannot be used with"), "{error}");
}

#[test]
fn continuing_with_another_agent_or_provider_is_refused_naming_both() {
    let (hearth, newest, _) = two_sessions();
    let before = shown(&hearth, &newest);
    let error = hearth.fails(&["run", "-c", "--agent", "codex", "hello"]);
    assert!(
        error.contains("belongs to `replay`")
            && error.contains("--agent codex")
            && error.contains("drop --agent"),
        "{error}"
    );
    let error = hearth.fails(&["run", "--session", &newest, "--provider", "openai", "hi"]);
    assert!(
        error.contains("belongs to `replay`") && error.contains("--provider openai"),
        "{error}"
    );
    let error = hearth.fails(&["chat", "-c", "--agent", "gemini"]);
    assert!(error.contains("--agent gemini"), "{error}");
    // Nothing was sent: the session is as it was.
    assert_eq!(shown(&hearth, &newest), before);
    // Naming the session's own harness is fine.
    hearth.ok(&["run", "-c", "--provider", "replay", "sixth walnut"]);
    assert!(shown(&hearth, &newest).contains("sixth walnut"));
}

#[test]
fn a_proposal_is_named_by_a_prefix_of_its_id() {
    let (hearth, _) = with_calendar();
    let id = stage_event(&hearth, "Dentist", "2030-03-04T09:00");
    let shown = hearth.ok(&["proposals", "show", &id[..id.len() - 1]]);
    assert!(shown.starts_with(&format!("Proposal {id}\n")), "{shown}");
    let error = hearth.fails(&["proposals", "show", "ffff"]);
    assert!(
        error.contains("no proposal has an id starting with `ffff`")
            && error.contains("hearth proposals list"),
        "{error}"
    );
}

#[test]
fn approve_accepts_the_first_8_characters_of_the_hash() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Dentist", "2030-03-04T09:00");
    let hash = proposal(&hearth, &id)["payloadHash"]
        .as_str()
        .unwrap()
        .to_owned();
    let short = hearth.fails(&["proposals", "approve", &id, "--hash", &hash[..7]]);
    assert!(short.contains("too short"), "{short}");
    let approved = hearth.ok(&["proposals", "approve", &id, "--hash", &hash[..8]]);
    assert!(
        approved.starts_with(&format!("Applied proposal {id}")),
        "{approved}"
    );
    assert!(
        std::fs::read_to_string(calendar)
            .unwrap()
            .contains("SUMMARY:Dentist")
    );
}

#[test]
fn approve_refuses_a_wrong_8_character_hash() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Gym", "2030-03-05T18:00");
    let hash = proposal(&hearth, &id)["payloadHash"]
        .as_str()
        .unwrap()
        .to_owned();
    let wrong: String = hash[..8]
        .chars()
        .map(|c| if c == '0' { '1' } else { '0' })
        .collect();
    let error = hearth.fails(&["proposals", "approve", &id, "--hash", &wrong]);
    assert!(error.contains(&format!("not {wrong}")), "{error}");
    assert_eq!(proposal(&hearth, &id)["status"], "pending");
    assert!(!calendar.exists());
}

#[test]
fn approve_without_a_hash_or_a_terminal_refuses_and_says_what_to_give() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Gym", "2030-03-05T18:00");
    let error = hearth.fails(&["proposals", "approve", &id]);
    assert!(
        error.contains(&format!(
            "not approving proposal {id} unseen: there is no terminal to ask in"
        )) && error.contains("--hash HASH")
            && error.contains("--yes"),
        "{error}"
    );
    assert_eq!(proposal(&hearth, &id)["status"], "pending");
    assert!(!calendar.exists());

    let approved = hearth.ok(&["proposals", "approve", &id[..id.len() - 2], "--yes"]);
    assert!(
        approved.starts_with(&format!("Applied proposal {id}")),
        "{approved}"
    );
    assert_eq!(proposal(&hearth, &id)["status"], "applied");
    assert!(calendar.exists());
}

#[test]
fn a_config_file_that_was_named_must_exist() {
    let hearth = Hearth::new();
    let missing = hearth.home.path().join("missing.toml");
    let missing_text = missing.display().to_string();
    let error = hearth.fails(&["--config", &missing_text, "sessions", "list"]);
    assert!(
        error.contains(&format!("config file {missing_text} does not exist")),
        "{error}"
    );
    let output = hearth
        .command()
        .env("HEARTH_CONFIG", &missing)
        .args(["sessions", "list"])
        .output_within(PROCESS_WAIT);
    assert!(!output.status.success());
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(error.contains(&missing_text), "{error}");
    // The default file may be missing: the data directory has none.
    hearth.ok(&["sessions", "list"]);
}

#[test]
fn a_default_provider_nobody_knows_is_an_error_not_another_provider() {
    let hearth = Hearth::new();
    let config = hearth.write(
        "config.toml",
        "[defaults]\nprovider = \"opnai\"\n\n[providers.mine]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    );
    let output = hearth
        .command()
        .env("OPENAI_API_KEY", "sk-test-not-used")
        .args(["run", "hello"])
        .output_within(PROCESS_WAIT);
    assert!(!output.status.success());
    let error = String::from_utf8(output.stderr).unwrap();
    assert!(
        error.contains("[defaults] provider = \"opnai\"")
            && error.contains(&config.display().to_string())
            && error.contains("openai, anthropic, ollama, replay, mine"),
        "{error}"
    );
    assert!(!error.contains("using openai"), "{error}");
    assert!(hearth.session_uris().is_empty(), "nothing was sent");

    // A default that names a known provider or the demo still works.
    hearth.write("config.toml", "[defaults]\nprovider = \"replay\"\n");
    hearth.ok(&["run", "hello"]);
}

#[test]
fn chat_takes_a_session_prefix_and_chats_show_a_chat_id_prefix() {
    use std::io::Write;
    use std::process::Stdio;

    use hearth_test_support::BoundedChild;

    let (hearth, newest, oldest) = two_sessions();
    let (_, unique) = shared_and_unique(id_of(&oldest), id_of(&newest));
    let unique = if unique.len() < 4 {
        id_of(&oldest)[..4].to_owned()
    } else {
        unique
    };
    let mut child = hearth
        .command()
        .args(["chat", "--session", &unique])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"third pecan\n/fork\nfourth hazel\n/quit\n")
        .unwrap();
    let output = child.wait_with_output_within(PROCESS_WAIT);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    assert!(shown(&hearth, &oldest).contains("third pecan"), "{stderr}");

    let forked = stderr
        .split_whitespace()
        .find(|word| word.starts_with("hearth-chat:"))
        .unwrap_or_else(|| panic!("no forked chat in {stderr}"));
    let chat_id = forked
        .rsplit_once('/')
        .unwrap()
        .1
        .trim_end_matches([',', ';']);
    let by_prefix = hearth.ok(&["chats", "show", &chat_id[..chat_id.len() - 1]]);
    assert!(by_prefix.contains("fourth hazel"), "{by_prefix}");
    let error = hearth.fails(&["chats", "show", "zzzz"]);
    assert!(
        error.contains("no chat has an id starting with `zzzz`"),
        "{error}"
    );
}

/// `hearth proposals approve ID` on a pseudo-terminal (`script` from util-linux), with
/// `answer` typed at its question.
fn approve_on_a_terminal(hearth: &Hearth, id: &str, answer: &str) -> std::process::Output {
    let command = format!(
        "{} --home {} proposals approve {id}",
        env!("CARGO_BIN_EXE_hearth"),
        hearth.home.path().display()
    );
    let mut child = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("HEARTH_HOME")
        .env_remove("HEARTH_SERVER")
        .env_remove("HEARTH_CONFIG")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("`script` (util-linux) runs a command on a pseudo-terminal");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    hearth_test_support::BoundedChild::wait_with_output_within(child, PROCESS_WAIT)
}

#[test]
fn approve_on_a_terminal_shows_the_change_and_applies_it_only_after_yes() {
    let (hearth, calendar) = with_calendar();
    let id = stage_event(&hearth, "Gym", "2030-03-05T18:00");
    let declined = approve_on_a_terminal(&hearth, &id, "n\n");
    let shown = String::from_utf8_lossy(&declined.stdout);
    assert!(shown.contains("Gym"), "{shown}");
    assert!(shown.contains("Apply this change? [y/N]"), "{shown}");
    assert_eq!(proposal(&hearth, &id)["status"], "pending");
    assert!(!calendar.exists());

    let approved = approve_on_a_terminal(&hearth, &id, "y\n");
    let shown = String::from_utf8_lossy(&approved.stdout);
    assert!(approved.status.success(), "{shown}");
    assert!(shown.contains(&format!("Applied proposal {id}")), "{shown}");
    assert_eq!(proposal(&hearth, &id)["status"], "applied");
    assert!(calendar.exists());
}
