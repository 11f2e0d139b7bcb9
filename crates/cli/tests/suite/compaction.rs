//! Compaction end to end: a scripted 200-turn `hearth chat` against a model with a
//! 4,000-token window (`context_window` in config.toml) fails no turn, shows where
//! earlier turns were summarised, keeps every raw turn stored and found by `hearth
//! search`, and never sends the model more than its window; `/compact` summarises on
//! demand.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use hearth_test_support::model_server::windowed::{
    WINDOWED_SUMMARY, counted_tokens, is_summary_request,
};
use hearth_test_support::{BoundedChild, RecordedRequest, WindowedModel};
use pretty_assertions::assert_eq;

use super::mock::{command, completions, configure, mock_config, ok, server};
use super::support::Hearth;

const WINDOW: u64 = 4_000;

/// How long a scripted chat of 200 turns may take before the test gives up on it.
const CHAT_WAIT: Duration = Duration::from_secs(600);

fn prompt(n: usize) -> String {
    format!(
        "Question {n}: what should I know about topic marker{n:03}? Please keep it short, \
         I am working through a long numbered list and only need the gist of each."
    )
}

/// Runs `hearth chat` with `input` on its stdin; (stdout, stderr).
fn chat(hearth: &Hearth, input: &str) -> (String, String) {
    let mut child = command(hearth)
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
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output_within(CHAT_WAIT);
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{stderr}");
    (stdout, stderr)
}

/// The requests of the chat's turns (not summaries, not titles).
fn turn_requests(requests: Vec<RecordedRequest>) -> Vec<RecordedRequest> {
    requests
        .into_iter()
        .filter(|request| {
            !is_summary_request(request)
                && !request.json()["messages"][0]["content"]
                    .as_str()
                    .unwrap_or_default()
                    .starts_with("You name conversations")
        })
        .collect()
}

#[test]
fn a_200_turn_chat_in_a_4000_token_window_fails_no_turn_and_loses_nothing() {
    let server = server();
    server.set_responder(WindowedModel::openai(WINDOW).responder());
    let hearth = Hearth::new();
    configure(
        &hearth,
        &format!("{}context_window = {WINDOW}\n", mock_config(&server)),
    );
    let input: String = (1..=200).map(|n| format!("{}\n", prompt(n))).collect();
    let (stdout, stderr) = chat(&hearth, &input);

    // Every turn answered; none failed.
    let answers = stdout
        .lines()
        .filter(|line| line.starts_with("About "))
        .count();
    assert_eq!(answers, 200, "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    let shown = stderr
        .lines()
        .filter(|line| line.starts_with("── earlier turns summarised ("))
        .count();
    assert!(shown >= 5, "{shown} compactions shown: {stderr}");

    // The model's requests all fit its window; the latest sends the summary.
    let requests = turn_requests(completions(&server));
    assert_eq!(requests.len(), 200);
    let largest = requests.iter().map(counted_tokens).max().unwrap();
    assert!(largest <= WINDOW, "a request of {largest} tokens");
    let last = String::from_utf8(requests[199].body.clone()).unwrap();
    assert!(last.contains(WINDOWED_SUMMARY) && !last.contains("marker001"));

    // Every raw turn is stored and found by search.
    let (found, _) = ok(&hearth, &["search", "marker", "--json", "--limit", "500"]);
    let mut turns: Vec<u64> = found
        .lines()
        .map(|line| {
            let hit: serde_json::Value = serde_json::from_str(line).unwrap();
            hit["index"].as_u64().unwrap()
        })
        .collect();
    turns.sort_unstable();
    assert_eq!(turns, (1..=200).collect::<Vec<u64>>());
    let (found, _) = ok(&hearth, &["search", "marker001"]);
    assert_eq!(found.lines().count(), 2, "{found}");
    assert!(found.contains("turn 1"), "{found}");
}

#[test]
fn compact_in_the_chat_summarises_the_earlier_turns_and_the_next_turn_sends_the_summary() {
    let server = server();
    server.set_responder(WindowedModel::openai(100_000).responder());
    let hearth = Hearth::new();
    configure(&hearth, &mock_config(&server));
    let (stdout, stderr) = chat(
        &hearth,
        "first question\nsecond question\n/compact\n/compact\nthird question\n/quit\n",
    );
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
    assert!(
        stderr.contains("── earlier turns summarised (2 turns) ──"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hearth: nothing new to summarise"),
        "{stderr}"
    );

    let requests = completions(&server);
    let summaries: Vec<&RecordedRequest> = requests
        .iter()
        .filter(|request| is_summary_request(request))
        .collect();
    assert_eq!(summaries.len(), 1);
    let asked = summaries[0].json()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(asked.contains("User: first question") && asked.contains("User: second question"));
    let last = turn_requests(requests).pop().unwrap();
    let sent = last.json()["messages"].clone();
    assert_eq!(sent.as_array().unwrap().len(), 3, "{sent}");
    assert!(
        sent[1]["content"]
            .as_str()
            .unwrap()
            .contains(WINDOWED_SUMMARY)
    );
    assert_eq!(sent[2]["content"], "third question");

    // The summarised turns are still the session's.
    let session = &hearth.session_uris()[0];
    let shown = hearth.ok(&["sessions", "show", session]);
    assert!(
        shown.contains("first question") && shown.contains("second question"),
        "{shown}"
    );
}
