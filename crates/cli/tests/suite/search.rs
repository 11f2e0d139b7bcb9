//! `hearth search`: the turns of every session that hold the words, with the text around
//! them; a deleted session is never found; `--rebuild` builds the index again.

use hearth_test_support::OpenAiStream;
use pretty_assertions::assert_eq;

use super::mock::{MODEL, configure, mock_config, ok, server};
use super::support::Hearth;

#[test]
fn search_finds_prompts_and_answers_and_never_a_deleted_session() {
    let server = server();
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["The log rotation ", "stopped."],
        1,
        1,
    ));
    ok(&hearth, &["run", "why is the disk full?"]);
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Reloaded nginx."], 1, 1));
    ok(&hearth, &["run", "fix the nginx config"]);

    let (found, _) = ok(&hearth, &["search", "rotat"]);
    assert_eq!(found.lines().count(), 2, "{found}");
    assert!(found.contains("why is the disk full? · turn 1"), "{found}");
    assert!(found.contains("«rotat»ion stopped"), "{found}");

    let (json, _) = ok(&hearth, &["search", "NGINX", "--json"]);
    let hits: Vec<serde_json::Value> = json
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(hits.len(), 1, "{json}");
    assert_eq!(hits[0]["index"], 1);
    assert!(hits[0]["snippet"].as_array().unwrap().iter().any(|piece| {
        piece["match"] == true
            && piece["text"]
                .as_str()
                .unwrap()
                .eq_ignore_ascii_case("nginx")
    }));
    let session = hits[0]["session"].as_str().unwrap().to_owned();

    hearth.ok(&["sessions", "delete", &session]);
    let (found, _) = ok(&hearth, &["search", "nginx"]);
    assert_eq!(found, "Nothing found.\n");
    // The deleted session waits in the trash: its turn stays in the index (found again
    // once it is restored), never in what a search returns.
    let (rebuilt, _) = ok(&hearth, &["search", "--rebuild"]);
    assert_eq!(rebuilt, "Search index rebuilt: 2 turns.\n");
    let (found, _) = ok(&hearth, &["search", "nginx"]);
    assert_eq!(found, "Nothing found.\n");
    let (found, _) = ok(&hearth, &["search", "disk", "--agent", "mock"]);
    assert_eq!(found.lines().count(), 2, "{found}");
    let (found, _) = ok(&hearth, &["search", "disk", "--agent", "codex"]);
    assert_eq!(found, "Nothing found.\n");

    let error = hearth.fails(&["search", "is"]);
    assert!(error.contains("too short"), "{error}");
}
