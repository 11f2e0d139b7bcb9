//! Short ids: listings show the shortest start of each id that names it alone (six
//! characters or more), every command that takes an id takes that start, and turns are
//! named by their index or a start of their id.

use pretty_assertions::assert_eq;

use super::support::Hearth;
use super::tool_support::{stage_event, tamper, with_calendar};

/// Time-ordered ids made in the same millisecond, as Hearth made them before: they share
/// their first 13 characters.
pub const SAME_MILLISECOND: [&str; 2] = [
    "019a3f2e-7c41-7b3a-9d2e-4f5a6b7c8d9e",
    "019a3f2e-7c41-70c1-8a11-0e2f3a4b5c6d",
];

/// The id part of a session URI (`hearth-session:<provider>/<id>`).
fn id_of(uri: &str) -> &str {
    uri.rsplit_once('/').unwrap().1
}

/// Gives a stored session (and its chats) another id, as if it had been made with it.
/// Returns its new URI.
pub fn rename_session(hearth: &Hearth, uri: &str, id: &str) -> String {
    let old = id_of(uri);
    let renamed = format!("{}/{id}", uri.rsplit_once('/').unwrap().0);
    tamper(
        &hearth.database(),
        &[
            // The processes that held them have ended.
            &format!("DELETE FROM chat_leases WHERE chat_uri LIKE '%/{old}/%'"),
            &format!("UPDATE sessions SET uri = '{renamed}' WHERE uri = '{uri}'"),
            &format!(
                "UPDATE chats SET uri = replace(uri, '/{old}/', '/{id}/') WHERE uri LIKE '%/{old}/%'"
            ),
            &format!(
                "UPDATE chat_backings SET chat_uri = replace(chat_uri, '/{old}/', '/{id}/') WHERE chat_uri LIKE '%/{old}/%'"
            ),
        ],
    );
    renamed
}

/// The rows of `sessions list` as (short id, session URI), after its header.
fn listed(hearth: &Hearth) -> Vec<(String, String)> {
    let text = hearth.ok(&["sessions", "list"]);
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("ID "), "{text}");
    lines
        .filter(|line| !line.starts_with("more:"))
        .map(|line| {
            let short = line.split_whitespace().next().unwrap().to_owned();
            let uri = line.split_whitespace().last().unwrap().to_owned();
            (short, uri)
        })
        .collect()
}

#[test]
fn sessions_list_shows_the_shortest_start_of_each_id_and_every_command_takes_it() {
    let hearth = Hearth::new();
    for prompt in ["first walnut", "second chestnut", "third pecan"] {
        hearth.ok(&["run", prompt]);
    }
    let rows = listed(&hearth);
    assert_eq!(rows.len(), 3, "{rows:?}");
    for (short, uri) in &rows {
        assert!(id_of(uri).starts_with(short.as_str()), "{short} {uri}");
        // Random ids: six characters tell three apart (eight would tell 10,000 apart).
        assert!((6..=8).contains(&short.len()), "{short} {uri}");
        let shown = hearth.ok(&["sessions", "show", short]);
        assert!(shown.starts_with(&format!("session   {uri}\n")), "{shown}");
        let chats = hearth.ok(&["chats", "list", short]);
        assert_eq!(chats, hearth.ok(&["chats", "list", uri]));
    }
    // The newest session, continued by its short id.
    let (short, uri) = &rows[0];
    hearth.ok(&["run", "--session", short, "fourth hazelnut"]);
    assert!(
        hearth
            .ok(&["sessions", "show", uri])
            .contains("fourth hazelnut")
    );
}

#[test]
fn time_ordered_ids_of_one_millisecond_are_shown_as_long_as_it_takes() {
    let hearth = Hearth::new();
    hearth.ok(&["run", "first walnut"]);
    hearth.ok(&["run", "second chestnut"]);
    let uris = hearth.session_uris();
    let newest = rename_session(&hearth, &uris[0], SAME_MILLISECOND[0]);
    let oldest = rename_session(&hearth, &uris[1], SAME_MILLISECOND[1]);
    assert_eq!(
        listed(&hearth),
        [
            ("019a3f2e-7c41-7b".to_owned(), newest),
            ("019a3f2e-7c41-70".to_owned(), oldest),
        ]
    );
    assert!(
        hearth
            .ok(&["sessions", "show", "019a3f2e-7c41-70"])
            .contains("first walnut")
    );
    let error = hearth.fails(&["sessions", "show", "019a3f2e"]);
    assert!(error.contains("is the start of 2 sessions' ids"), "{error}");
}

#[test]
fn sessions_show_numbers_the_turns_and_fork_takes_an_index_or_an_id_start() {
    let hearth = Hearth::new();
    hearth.ok(&["run", "one walnut"]);
    let session = hearth.session_uris().remove(0);
    hearth.ok(&["run", "--session", &session, "two chestnuts"]);
    hearth.ok(&["run", "--session", &session, "three pecans"]);
    let shown = hearth.ok(&["sessions", "show", &session]);
    let turns: Vec<(String, String)> = shown
        .lines()
        .filter_map(|line| line.strip_prefix("turn "))
        .map(|rest| {
            let (index, short) = rest.split_once("  ").unwrap();
            (index.to_owned(), short.to_owned())
        })
        .collect();
    assert_eq!(
        turns
            .iter()
            .map(|(index, _)| index.as_str())
            .collect::<Vec<_>>(),
        ["1", "2", "3"],
        "{shown}"
    );
    for (_, short) in &turns {
        assert!(short.len() >= 6, "{shown}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&hearth.ok(&["sessions", "show", &session, "--json"])).unwrap();
    let ids: Vec<&str> = json["chats"][0]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|turn| turn["id"].as_str().unwrap())
        .collect();
    for ((_, short), id) in turns.iter().zip(&ids) {
        assert!(id.starts_with(short.as_str()), "{short} {id}");
    }

    let fork = |turn: &str| {
        let forked = hearth.ok(&["sessions", "fork", &session, "--turn", turn]);
        hearth.ok(&["sessions", "show", forked.trim()])
    };
    let first = fork("1");
    assert!(
        first.contains("one walnut") && !first.contains("two chestnuts"),
        "{first}"
    );
    let last = fork("-1");
    assert!(last.contains("three pecans"), "{last}");
    let second = fork(&turns[1].1);
    assert!(
        second.contains("two chestnuts") && !second.contains("three pecans"),
        "{second}"
    );
    assert!(fork(ids[0]).contains("one walnut"));
    let error = hearth.fails(&["sessions", "fork", &session, "--turn", "4"]);
    assert!(
        error.contains("there is no turn 4: the chat has 3 turns"),
        "{error}"
    );
    let error = hearth.fails(&["sessions", "fork", &session, "--turn", "zzzzzz"]);
    assert!(
        error.contains("no turn has an id starting with `zzzzzz`"),
        "{error}"
    );
}

#[test]
fn chats_list_shows_short_ids_that_chats_show_takes() {
    let hearth = Hearth::new();
    hearth.ok(&["run", "first walnut"]);
    let session = hearth.session_uris().remove(0);
    let listed = hearth.ok(&["chats", "list", &session]);
    let short = listed.split_whitespace().next().unwrap();
    // The default chat is named by its session's id.
    assert!(id_of(&session).starts_with(short), "{listed}");
    assert!(short.len() >= 6, "{listed}");
    let shown = hearth.ok(&["chats", "show", short]);
    assert!(shown.contains("first walnut"), "{shown}");
}

#[test]
fn proposals_list_shows_short_ids_that_proposals_show_takes() {
    let (hearth, _calendar) = with_calendar();
    let first = stage_event(&hearth, "Dentist", "2030-03-04T09:00");
    let second = stage_event(&hearth, "Gym", "2030-03-05T18:00");
    let listed = hearth.ok(&["proposals", "list"]);
    let shorts: Vec<&str> = listed
        .lines()
        .map(|line| line.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(shorts.len(), 2, "{listed}");
    // Newest first.
    assert!(
        second.starts_with(shorts[0]) && first.starts_with(shorts[1]),
        "{listed}"
    );
    for short in &shorts {
        assert!((6..=8).contains(&short.len()), "{listed}");
    }
    let shown = hearth.ok(&["proposals", "show", shorts[1]]);
    assert!(shown.contains("Dentist"), "{shown}");
}
