//! Agent Home in a real browser: the system's headless Chromium against a real `hearth
//! serve` (the replay harness, the mock model, the test ACP agent). Each test leaves
//! screenshots of what it saw in the test output folder (`agent-home-screenshots`).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_test_support::{OpenAiStream, acp_test_agent};

use super::browser_support::{
    Chromium, VISIBLE, click, eval, press_enter, screenshot, type_into, wait_for,
};
use super::mock::{MODEL, mock_config, server};
use super::serve_support::{Served, request};
use super::support::Hearth;
use super::tool_support::stage_event;

/// A replay scenario whose answer streams word by word, with Markdown worth rendering.
const SCENARIO: &str = r#"name: home
turns:
  - when: table
    steps:
      - text: "Here is **the table** you asked for, see https://example.org/docs for more:\n\n| name | value |\n|---|---|\n| one | 1 |\n| two | 2 |\n\n```rust\nfn main() {}\n```\n"
        stream: words
        delay_ms: 25
  - when: slowly
    steps:
      - text: "Taking my time over this one, word by word."
        stream: words
        delay_ms: 250
  - steps:
      - text: "You said: {{prompt}}"
        stream: words
        delay_ms: 10
"#;

fn served_with_scenario() -> Served {
    let hearth = Hearth::new();
    let scenario = hearth.write("home.yaml", SCENARIO);
    let scenario = scenario.display().to_string();
    // The answer streams at the scenario's own pace.
    Served::start(
        hearth,
        &["--scenario", &scenario],
        &[("HEARTH_REPLAY_DELAY_SCALE", "1")],
    )
}

/// Waits (bounded) until the server's sessions hold these drafts.
async fn wait_for_drafts(served: &Served, wanted: &[&str]) {
    use hearth_protocol::{ChatParams, ChatResolve, SessionList, SessionListParams};
    let (client, _notifications) = served.client().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let sessions = client
            .call::<SessionList>(&SessionListParams::default())
            .await
            .unwrap()
            .sessions;
        let mut drafts = Vec::new();
        for session in sessions {
            let chat = format!(
                "hearth-chat:{}/default",
                session.uri.trim_start_matches("hearth-session:")
            );
            let state = client
                .call::<ChatResolve>(&ChatParams { chat })
                .await
                .unwrap()
                .chat;
            drafts.extend(state.draft);
        }
        if wanted
            .iter()
            .all(|draft| drafts.iter().any(|held| held == draft))
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server holds the drafts {drafts:?}, not {wanted:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A browser logged in through the link `hearth login` prints, on Agent Home.
pub(super) async fn logged_in(chromium: &Chromium, served: &Served) -> chromiumoxide::Page {
    let link = served.hearth.ok(&["login"]);
    let link = link.trim();
    assert!(
        link.starts_with(&format!("{}/auth?code=", served.url)),
        "{link}"
    );
    let page = chromium.open(link).await;
    wait_for(&page, "document.body.dataset.connection === 'open'").await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} form:not([inert])')"),
    )
    .await;
    page
}

pub(super) fn text_of(selector: &str) -> String {
    format!(
        "(document.querySelector({}) || {{}}).textContent || ''",
        serde_json::to_string(selector).unwrap()
    )
}

fn value_of(selector: &str) -> String {
    format!(
        "(document.querySelector({}) || {{}}).value",
        serde_json::to_string(selector).unwrap()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_run_landing_send_streams_the_answer_and_drafts_survive_tabs_and_reloads() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served_with_scenario();
    let page = logged_in(&chromium, &served).await;

    // The landing: a centered composer for the empty session.
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE}').dataset.landing === 'true'"),
    )
    .await;
    let title: String = eval(&page, &text_of(&format!("{VISIBLE} .landing-title h1"))).await;
    assert_eq!(title, "What shall we work on?");
    screenshot(&page, "landing").await;

    // Send: the answer streams in, then settles as rendered Markdown.
    let input = format!("{VISIBLE} textarea");
    type_into(&page, &input, "show me a table").await;
    press_enter(&page, &input).await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} .typing')"),
    )
    .await;
    let partial: String = eval(&page, &text_of(&format!("{VISIBLE} .message.assistant"))).await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} .turn-footer time')"),
    )
    .await;
    let whole: String = eval(&page, &text_of(&format!("{VISIBLE} .message.assistant"))).await;
    assert!(whole.starts_with("Here is the table"), "{whole}");
    assert!(
        partial.len() < whole.len(),
        "it streamed: {partial:?} then {whole:?}"
    );
    let cells: Vec<String> = eval(
        &page,
        &format!(
            "[...document.querySelectorAll('{VISIBLE} .markdown td')].map(td => td.textContent)"
        ),
    )
    .await;
    assert_eq!(cells, ["one", "1", "two", "2"]);
    let code: String = eval(&page, &text_of(&format!("{VISIBLE} .markdown pre code"))).await;
    assert_eq!(code, "fn main() {}");
    let link: (String, String) = eval(
        &page,
        &format!("(a => [a.target, a.rel])(document.querySelector('{VISIBLE} .markdown a'))"),
    )
    .await;
    assert_eq!(
        link,
        ("_blank".to_owned(), "noopener noreferrer".to_owned())
    );
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE}').dataset.landing === 'false'"),
    )
    .await;
    screenshot(&page, "conversation").await;

    // Drafts: one per session, kept while switching tabs.
    type_into(&page, &input, "draft one").await;
    click(&page, ".tab-new").await;
    wait_for(&page, "document.querySelectorAll('.tab').length === 2").await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE}').dataset.landing === 'true'"),
    )
    .await;
    type_into(&page, &input, "draft two").await;
    click(&page, ".tab:first-child .tab-button").await;
    let first: String = eval(&page, &value_of(&input)).await;
    assert_eq!(first, "draft one");
    click(&page, ".tab:nth-child(2) .tab-button").await;
    let second: String = eval(&page, &value_of(&input)).await;
    assert_eq!(second, "draft two");

    // Drafts are on the server (saved a moment after typing): once it holds both, a
    // reload brings back the tabs, history and drafts.
    wait_for_drafts(&served, &["draft one", "draft two"]).await;
    page.reload().await.unwrap();
    wait_for(&page, "document.body.dataset.connection === 'open'").await;
    wait_for(&page, "document.querySelectorAll('.tab').length === 2").await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} textarea').value === 'draft two'"),
    )
    .await;
    click(&page, ".tab:first-child .tab-button").await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} textarea').value === 'draft one'"),
    )
    .await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} .markdown table')"),
    )
    .await;

    // A second window on the same session stays in sync with the first.
    let other = chromium.open(&served.url).await;
    wait_for(&other, "document.body.dataset.connection === 'open'").await;
    click(&other, ".tab:first-child .tab-button").await;
    wait_for(
        &other,
        &format!("document.querySelector('{VISIBLE} textarea').value === 'draft one'"),
    )
    .await;
    type_into(&page, &input, " and more").await;
    wait_for(
        &other,
        &format!("document.querySelector('{VISIBLE} textarea').value === 'draft one and more'"),
    )
    .await;
    click(&page, &format!("{VISIBLE} .send")).await;
    wait_for(
        &other,
        &format!("document.querySelectorAll('{VISIBLE} .turn').length === 2"),
    )
    .await;
    wait_for(
        &other,
        &format!(
            "{}.includes('You said: draft one and more')",
            text_of(&format!("{VISIBLE} .turn:last-child .message.assistant"))
        ),
    )
    .await;
    // A sent message clears the draft everywhere.
    wait_for(
        &other,
        &format!("document.querySelector('{VISIBLE} textarea').value === ''"),
    )
    .await;

    // A message sent while a turn runs waits in the chat's queue, on the server: a
    // reload shows it, and it goes when the turn ends. (The first window is brought to
    // the front: a browser draws a background tab only when it is shown again.)
    other.close().await.unwrap();
    page.bring_to_front().await.unwrap();
    type_into(&page, &input, "answer slowly").await;
    press_enter(&page, &input).await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} .stop:not([hidden])')"),
    )
    .await;
    type_into(&page, &input, "then this").await;
    press_enter(&page, &input).await;
    wait_for(
        &page,
        &format!(
            "{}.includes('then this')",
            text_of(&format!("{VISIBLE} .queue"))
        ),
    )
    .await;
    screenshot(&page, "queue").await;
    page.reload().await.unwrap();
    wait_for(&page, "document.body.dataset.connection === 'open'").await;
    click(&page, ".tab:first-child .tab-button").await;
    wait_for(
        &page,
        &format!(
            "{}.includes('then this')",
            text_of(&format!("{VISIBLE} .queue"))
        ),
    )
    .await;
    wait_for(
        &page,
        &format!(
            "{}.includes('You said: then this')",
            text_of(&format!("{VISIBLE} .turn:last-child .message.assistant"))
        ),
    )
    .await;
    wait_for(
        &page,
        &format!("document.querySelectorAll('{VISIBLE} .queue li').length === 0"),
    )
    .await;

    // Closing a tab prunes its draft on the server.
    click(&page, ".tab:nth-child(2) .tab-close").await;
    wait_for(&page, "document.querySelectorAll('.tab').length === 1").await;
    chromium.close().await;
}

/// The mode select appears for an agent that offers modes and switches the agent's
/// mode; typing `/` offers the agent's commands; a turn's usage shows under its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mode_select_switches_the_agents_mode_and_its_commands_are_offered() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let work_path = work.path().canonicalize().unwrap();
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        &format!(
            "[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\n",
            acp_test_agent().display(),
            state.path().display()
        ),
    );
    let served = Served::start_in(hearth, Some(&work_path), &[], &[]);
    let page = logged_in(&chromium, &served).await;
    let chose: bool = eval(
        &page,
        &format!(
            "(s => {{ s.value = 'tester'; s.dispatchEvent(new Event('change')); return s.value === 'tester'; }})(document.querySelector('{VISIBLE} select'))"
        ),
    )
    .await;
    assert!(chose, "the agent picker lists the tester");
    let mode = format!("{VISIBLE} select[aria-label=Mode]");
    wait_for(
        &page,
        &format!("(s => s && !s.hidden && s.value === 'ask')(document.querySelector('{mode}'))"),
    )
    .await;
    let offered: Vec<String> = eval(
        &page,
        &format!("[...document.querySelector('{mode}').options].map(o => o.value)"),
    )
    .await;
    assert_eq!(offered, ["ask", "code"]);
    let switched: bool = eval(
        &page,
        &format!(
            "(s => {{ s.value = 'code'; s.dispatchEvent(new Event('change')); return s.value === 'code'; }})(document.querySelector('{mode}'))"
        ),
    )
    .await;
    assert!(switched);

    let input = format!("{VISIBLE} textarea");
    type_into(&page, &input, "/set").await;
    wait_for(
        &page,
        &format!("(m => m && !m.hidden && m.textContent.includes('/settings'))(document.querySelector('{VISIBLE} .command-menu'))"),
    )
    .await;
    let listed: Vec<String> = eval(
        &page,
        &format!("[...document.querySelectorAll('{VISIBLE} .command-menu .command')].map(c => c.dataset.command)"),
    )
    .await;
    assert_eq!(listed, ["settings"], "only the commands that match");
    screenshot(&page, "agent-commands").await;
    click(&page, &format!("{VISIBLE} .command-menu .command")).await;
    let completed: String = eval(&page, &value_of(&input)).await;
    assert_eq!(completed, "/settings ");
    press_enter(&page, &input).await;
    // The agent answers in the mode chosen.
    wait_for(
        &page,
        &format!("[...document.querySelectorAll('{VISIBLE} .turn')].some(t => t.textContent.includes('model test-small mode code'))"),
    )
    .await;

    type_into(&page, &input, "/usage").await;
    press_enter(&page, &input).await;
    wait_for(
        &page,
        &format!("[...document.querySelectorAll('{VISIBLE} .turn-footer .usage')].some(u => u.textContent === '100 in · 20 out · context 1234/200000 · cost 0.01 USD')"),
    )
    .await;
    screenshot(&page, "mode-and-usage").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_card_makes_the_composer_inert_until_it_is_answered() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let work_path = work.path().canonicalize().unwrap();
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        &format!(
            "[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\n",
            acp_test_agent().display(),
            state.path().display()
        ),
    );
    let served = Served::start_in(hearth, Some(&work_path), &[], &[]);
    let page = logged_in(&chromium, &served).await;

    // Choose the agent on the landing: a new session with it replaces the empty one.
    let chose: bool = eval(
        &page,
        &format!(
            "(s => {{ s.value = 'tester'; s.dispatchEvent(new Event('change')); return s.value === 'tester'; }})(document.querySelector('{VISIBLE} select'))"
        ),
    )
    .await;
    assert!(chose, "the agent picker lists the tester");
    wait_for(&page, "[...document.querySelectorAll('.recent-meta')].some(m => m.textContent.startsWith('tester'))").await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} select').value === 'tester'"),
    )
    .await;

    let target = work_path.join("note.txt");
    let input = format!("{VISIBLE} textarea");
    type_into(
        &page,
        &input,
        &format!("/write {} hello from the card", target.display()),
    )
    .await;
    press_enter(&page, &input).await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} .card.permission button')"),
    )
    .await;
    let inert: bool = eval(
        &page,
        &format!("document.querySelector('{VISIBLE} form.composer').inert"),
    )
    .await;
    assert!(inert, "the composer is inert while the agent waits");
    let note: bool = eval(
        &page,
        &format!("!document.querySelector('{VISIBLE} .gate-note').hidden"),
    )
    .await;
    assert!(note, "it says why");
    screenshot(&page, "permission").await;
    assert!(!target.exists(), "nothing is written before the answer");

    // The card still resolves; the answer goes to the agent, which writes.
    // Each button leads with what it does in Hearth's words; the agent's label follows.
    let labels: Vec<String> = eval(
        &page,
        &format!("[...document.querySelectorAll('{VISIBLE} .card.permission button')].map(b => b.textContent)"),
    )
    .await;
    assert_eq!(
        labels,
        [
            "Allow onceagent: “Allow once”",
            "Allow alwaysagent: “Allow always”",
            "Refuse onceagent: “Reject once”",
            "Refuse alwaysagent: “Reject always”",
        ]
    );
    click(&page, &format!("{VISIBLE} .card.permission button.primary")).await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} .turn-footer time')"),
    )
    .await;
    wait_for(
        &page,
        &format!("!document.querySelector('{VISIBLE} form.composer').inert"),
    )
    .await;
    let answered: String = eval(&page, &text_of(&format!("{VISIBLE} .card.permission"))).await;
    assert!(answered.contains("Answered: Allow once"), "{answered}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "hello from the card"
    );

    // A hostile agent labels its "allow always" option "Refuse", the rest concealed
    // (`ESC[8m`), and its refusal "Allow": the buttons still say what they do first.
    type_into(&page, &input, "/hostile").await;
    press_enter(&page, &input).await;
    let waiting = format!("{VISIBLE} .card.permission .card-actions button");
    wait_for(&page, &format!("document.querySelector('{waiting}')")).await;
    let buttons: Vec<(String, String, String)> = eval(
        &page,
        &format!(
            "[...document.querySelectorAll('{waiting}')].map(b => [b.querySelector('.option-effect').textContent, b.querySelector('.option-label').textContent, b.className])"
        ),
    )
    .await;
    assert_eq!(
        buttons,
        [
            (
                "Allow always".to_owned(),
                "agent: “Refuse\x1b[8m (allow always)”".to_owned(),
                "button primary".to_owned()
            ),
            (
                "Refuse once".to_owned(),
                "agent: “Allow\x1b[2J”".to_owned(),
                "button danger".to_owned()
            ),
        ]
    );
    let leads: bool = eval(
        &page,
        &format!(
            "(b => b.textContent.startsWith('Allow always') && b.firstElementChild.className === 'option-effect')(document.querySelector('{waiting}'))"
        ),
    )
    .await;
    assert!(leads, "Hearth's words come first in the button");
    screenshot(&page, "permission-hostile").await;
    click(&page, &format!("{waiting}.danger")).await;
    wait_for(
        &page,
        &format!("document.querySelectorAll('{VISIBLE} .turn-footer time').length === 2"),
    )
    .await;
    let answered: String = eval(
        &page,
        &text_of(&format!("{VISIBLE} .turn:last-of-type .card.permission")),
    )
    .await;
    assert!(answered.contains("Answered: Refuse once"), "{answered}");
    chromium.close().await;
}

fn tool_call(name: &str, call: &str, arguments: &str) -> OpenAiStream {
    OpenAiStream::new(MODEL)
        .role()
        .tool_call(0, call, name)
        .tool_arguments(0, arguments)
        .finish("tool_calls")
        .usage(10, 5)
        .done()
}

/// The path of chat completions (other requests, such as the model list, never take the
/// scripted answers).
const COMPLETIONS: &str = "/v1/chat/completions";

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_card_applies_exactly_the_shown_change_and_a_stale_card_is_refused() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let model = server();
    let hearth = Hearth::new();
    let calendar = hearth.home.path().join("home.ics");
    hearth.write(
        "config.toml",
        &format!(
            "{}\n[calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n",
            mock_config(&model),
            calendar.display().to_string()
        ),
    );
    // Hearth names the conversation after its first answer: that request gets a title.
    model.set_responder(std::sync::Arc::new(|request| {
        String::from_utf8_lossy(&request.body)
            .contains("You name conversations")
            .then(|| OpenAiStream::text_answer(MODEL, &["Dentist and lunch"], 1, 1).into())
    }));
    model.enqueue_for(
        COMPLETIONS,
        tool_call(
            "event_create",
            "call-1",
            r#"{"title": "Dentist", "start": "2030-03-04T09:00"}"#,
        ),
    );
    model.enqueue_for(
        COMPLETIONS,
        OpenAiStream::text_answer(MODEL, &["It awaits your approval."], 1, 1),
    );
    model.enqueue_for(
        COMPLETIONS,
        tool_call(
            "event_create",
            "call-2",
            r#"{"title": "Lunch", "start": "2030-03-05T12:00"}"#,
        ),
    );
    model.enqueue_for(
        COMPLETIONS,
        OpenAiStream::text_answer(MODEL, &["That one too."], 1, 1),
    );
    let served = Served::start(hearth, &[], &[]);
    let page = logged_in(&chromium, &served).await;

    let input = format!("{VISIBLE} textarea");
    type_into(&page, &input, "book the dentist").await;
    press_enter(&page, &input).await;
    let card = format!("{VISIBLE} .card.proposal[data-hash]");
    wait_for(
        &page,
        &format!("document.querySelector('{card} button.primary')"),
    )
    .await;
    let diff: String = eval(&page, &text_of(&format!("{card} .diff"))).await;
    assert!(diff.contains("Dentist"), "{diff}");
    screenshot(&page, "proposal-card").await;

    // The stored change is altered after the card was drawn: approving the card's hash
    // is refused, and nothing is written.
    let id: String = eval(
        &page,
        &format!("document.querySelector('{card}').dataset.proposal"),
    )
    .await;
    let database = served.hearth.database();
    tokio::task::block_in_place(|| {
        super::tool_support::tamper(
            &database,
            &[&format!(
                "UPDATE proposals SET payload = replace(payload, 'Dentist', 'Wire money'), payload_hash = '{}' WHERE id = '{id}'",
                "f".repeat(64)
            )],
        );
    });
    click(&page, &format!("{card} button.primary")).await;
    wait_for(
        &page,
        &format!("!document.querySelector('{card} .card-error').hidden"),
    )
    .await;
    let refusal: String = eval(&page, &text_of(&format!("{card} .card-error"))).await;
    assert!(refusal.contains("approve what it shows"), "{refusal}");
    assert!(!read(&calendar).contains("Wire money") && !read(&calendar).contains("Dentist"));
    screenshot(&page, "proposal-stale").await;

    // A second proposal, approved as shown, is applied exactly.
    type_into(&page, &input, "and lunch").await;
    press_enter(&page, &input).await;
    wait_for(
        &page,
        &format!("document.querySelectorAll('{VISIBLE} .turn').length === 2"),
    )
    .await;
    let second = format!("{VISIBLE} .turn:last-child .card.proposal[data-hash]");
    wait_for(
        &page,
        &format!("document.querySelector('{second} button.primary')"),
    )
    .await;
    let shown: String = eval(&page, &text_of(&format!("{second} .diff"))).await;
    assert!(shown.contains("Lunch"), "{shown}");
    click(&page, &format!("{second} button.primary")).await;
    wait_for(
        &page,
        &format!("document.querySelector('{second} .status.applied')"),
    )
    .await;
    let written = read(&calendar);
    let paths: Vec<String> = model
        .requests()
        .iter()
        .map(|request| format!("{} {}", request.method, request.path))
        .collect();
    assert!(
        paths
            .iter()
            .filter(|path| path.ends_with(COMPLETIONS))
            .count()
            >= 4,
        "{paths:?}"
    );
    assert!(written.contains("SUMMARY:Lunch"), "{written}");
    assert!(written.contains(":20300305T120000"), "{written}");
    assert!(!written.contains("Wire money"), "{written}");

    // The Proposals page lists what is still waiting.
    page.evaluate("location.hash = '#/proposals'")
        .await
        .unwrap();
    wait_for(&page, "document.querySelector('.page h1') && document.querySelector('.page h1').textContent === 'Proposals'").await;
    wait_for(
        &page,
        &format!("document.querySelector('.page [data-proposal=\"{id}\"]')"),
    )
    .await;
    screenshot(&page, "proposals").await;
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_calendar_week_shows_events_and_a_ghost_proposal_to_approve() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let hearth = Hearth::new();
    let calendar = hearth.home.path().join("home.ics");
    // Monday of this week (UTC), so both events fall in the week shown.
    let today = chrono::Utc::now().date_naive();
    let monday = today
        - chrono::Duration::days(i64::from(
            chrono::Datelike::weekday(&today).num_days_from_monday(),
        ));
    let tuesday = monday + chrono::Duration::days(1);
    hearth.write(
        "home.ics",
        &format!(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:standup@test\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{}T090000Z\r\nDTEND:{}T093000Z\r\nSUMMARY:Standup\r\nRRULE:FREQ=DAILY;COUNT=5\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
            monday.format("%Y%m%d"),
            monday.format("%Y%m%d")
        ),
    );
    hearth.write(
        "config.toml",
        &format!(
            "[defaults]\ntime_zone = \"UTC\"\n\n[calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\ncolor = \"#CC3300\"\n",
            calendar.display().to_string()
        ),
    );
    let id = stage_event(
        &hearth,
        "Review",
        &format!("{}T14:00", tuesday.format("%Y-%m-%d")),
    );
    let served = Served::start(hearth, &[], &[]);
    let page = logged_in(&chromium, &served).await;
    page.evaluate("location.hash = '#/calendar'").await.unwrap();
    wait_for(
        &page,
        "document.querySelectorAll('.week .event[data-uid]').length >= 5",
    )
    .await;
    wait_for(
        &page,
        &format!("document.querySelector('.week .event.ghost[data-proposal=\"{id}\"]')"),
    )
    .await;
    let standup: String = eval(&page, &text_of(".week .event[data-uid]")).await;
    assert!(
        standup.contains("Standup") && standup.contains("09:00"),
        "{standup}"
    );
    let ghost_day: String = eval(&page, &format!("document.querySelector('.event.ghost[data-proposal=\"{id}\"]').closest('.day').dataset.date")).await;
    assert_eq!(ghost_day, tuesday.format("%Y-%m-%d").to_string());
    // Drawn at its hour: level with the 09:00 line of the hour column.
    let (event_top, hour_top): (f64, f64) = eval(
        &page,
        "[document.querySelector('.week .event[data-uid]').offsetTop, document.querySelectorAll('.week .hour')[9].offsetTop]",
    )
    .await;
    assert!(
        event_top > 0.0 && (event_top - hour_top).abs() < 2.0,
        "event at {event_top}px, 09:00 at {hour_top}px"
    );
    // In its calendar's colour (a ghost keeps the proposal's look).
    let colour: String = eval(
        &page,
        "getComputedStyle(document.querySelector('.week .event[data-uid]')).borderLeftColor",
    )
    .await;
    assert_eq!(colour, "rgb(204, 51, 0)");
    screenshot(&page, "calendar").await;

    click(
        &page,
        &format!(".event.ghost[data-proposal=\"{id}\"] .button.primary"),
    )
    .await;
    wait_for(
        &page,
        &format!("!document.querySelector('.event.ghost[data-proposal=\"{id}\"]')"),
    )
    .await;
    wait_for(&page, "[...document.querySelectorAll('.week .event[data-uid]')].some(e => e.textContent.includes('Review'))").await;
    assert!(read(&calendar).contains("SUMMARY:Review"));
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_reconnects_after_the_server_restarts() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let mut served = served_with_scenario();
    let page = logged_in(&chromium, &served).await;
    let input = format!("{VISIBLE} textarea");
    type_into(&page, &input, "before the restart").await;
    press_enter(&page, &input).await;
    wait_for(
        &page,
        &format!(
            "{}.includes('You said: before the restart')",
            text_of(&format!("{VISIBLE} .message.assistant"))
        ),
    )
    .await;

    served.stop();
    wait_for(&page, "document.body.dataset.connection === 'offline'").await;
    wait_for(&page, "!document.querySelector('.banner').hidden").await;
    screenshot(&page, "offline").await;
    // Typing goes on while the server is away, and is not lost.
    type_into(&page, &input, "after").await;

    served.restart();
    wait_for(&page, "document.body.dataset.connection === 'restarted'").await;
    wait_for(
        &page,
        &format!("document.querySelectorAll('{VISIBLE} .turn').length === 1"),
    )
    .await;
    let kept: String = eval(&page, &value_of(&input)).await;
    assert_eq!(kept, "after");
    type_into(&page, &input, " the restart").await;
    press_enter(&page, &input).await;
    wait_for(
        &page,
        &format!(
            "{}.includes('You said: after the restart')",
            text_of(&format!("{VISIBLE} .turn:last-child .message.assistant"))
        ),
    )
    .await;
    chromium.close().await;
}

/// A page of another origin that tries to use the server with the user's browser.
const HOSTILE: &str = r#"<!doctype html><title>elsewhere</title><script>
window.results = {};
const target = new URLSearchParams(location.search).get('target');
const body = JSON.stringify({jsonrpc: '2.0', id: 1, method: 'session/create', params: {}});
fetch(`${target}/rpc`, {method: 'POST', credentials: 'include', headers: {'Content-Type': 'application/json'}, body})
  .then(r => r.text().then(t => { window.results.post = `read ${r.status}: ${t}`; }))
  .catch(e => { window.results.post = `failed: ${e}`; });
fetch(`${target}/rpc`, {method: 'POST', credentials: 'include', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body})
  .then(r => { window.results.form = `sent (${r.type})`; })
  .catch(e => { window.results.form = `failed: ${e}`; });
fetch(`${target}/auth/session`, {credentials: 'include'})
  .then(r => r.text().then(t => { window.results.session = `read ${r.status}: ${t}`; }))
  .catch(e => { window.results.session = `failed: ${e}`; });
const socket = new WebSocket(`${target.replace('http', 'ws')}/rpc`);
socket.onopen = () => { window.results.socket = 'open'; socket.send(body); };
socket.onerror = () => { window.results.socket = window.results.socket || 'refused'; };
</script>"#;

/// Serves one HTML page on a loopback port of its own (another origin).
async fn serve_page(html: &'static str) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = stream.read(&mut buffer).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                    html.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_works_without_the_session_the_page_keeps() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served_with_scenario();

    // Not logged in: the page asks to log in, and the protocol refuses.
    let stranger = chromium.open(&served.url).await;
    wait_for(&stranger, "document.body.dataset.connection === 'login'").await;
    wait_for(&stranger, "!document.querySelector('.login').hidden").await;
    screenshot(&stranger, "login").await;
    let status: u16 = eval(
        &stranger,
        "fetch('/rpc', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({jsonrpc: '2.0', id: 1, method: 'session/create', params: {}})}).then(r => r.status)",
    )
    .await;
    assert_eq!(status, 401);
    let used: String = eval(
        &stranger,
        "fetch('/auth?code=' + '0'.repeat(64)).then(r => r.status + ' ' + r.redirected)",
    )
    .await;
    assert_eq!(used, "401 false", "a made-up login code is refused");

    // Logged in, a request without the session the page keeps is refused even from the
    // page itself: no cookie stands in for it.
    let page = logged_in(&chromium, &served).await;
    // The tab that asked to log in is logged in too (same origin, same storage).
    wait_for(&stranger, "document.body.dataset.connection === 'open'").await;
    wait_for(
        &stranger,
        &format!("document.querySelector('{VISIBLE} form:not([inert])')"),
    )
    .await;
    let before = served.hearth.session_uris().len();
    let status: u16 = eval(
        &page,
        "fetch('/rpc', {method: 'POST', credentials: 'include', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({jsonrpc: '2.0', id: 1, method: 'session/create', params: {}})}).then(r => r.status)",
    )
    .await;
    assert_eq!(status, 401);
    assert_eq!(eval::<String>(&page, "document.cookie").await, "");
    // A login link works once: following it does not use it, trading its code does.
    let link = served.hearth.ok(&["login"]);
    let link = link.trim();
    let (_, code) = link.split_once("?code=").unwrap();
    let follow = format!(
        "fetch({link:?}, {{redirect: 'manual'}}).then(r => r.type === 'opaqueredirect' ? 303 : r.status)"
    );
    let trade = format!(
        "fetch('/auth/session', {{method: 'POST', headers: {{'Content-Type': 'application/json'}}, body: JSON.stringify({{code: {code:?}}})}}).then(r => r.status)"
    );
    assert_eq!(eval::<u16>(&page, &follow).await, 303);
    assert_eq!(eval::<u16>(&page, &follow).await, 303);
    assert_eq!(eval::<u16>(&page, &trade).await, 200);
    assert_eq!(eval::<u16>(&page, &trade).await, 401);
    assert_eq!(eval::<u16>(&page, &follow).await, 401);

    // Another origin, in the same logged-in browser, gets nothing.
    let elsewhere = serve_page(HOSTILE).await;
    let hostile = chromium
        .open(&format!(
            "http://127.0.0.1:{elsewhere}/?target={}",
            served.url
        ))
        .await;
    wait_for(&hostile, "window.results && window.results.post && window.results.session && window.results.socket && window.results.form").await;
    let results: serde_json::Value = eval(&hostile, "window.results").await;
    assert!(
        results["post"].as_str().unwrap().starts_with("failed"),
        "{results}"
    );
    assert!(
        results["session"].as_str().unwrap().starts_with("failed"),
        "{results}"
    );
    assert_eq!(results["socket"], "refused", "{results}");
    // Every request was answered (refused) before the results were in: nothing is left
    // in flight that could still make a session.
    assert_eq!(
        served.hearth.session_uris().len(),
        before,
        "nothing was made: {results}"
    );
    chromium.close().await;
}

/// The page another local web service shows: it looks for Hearth's session in its own
/// origin's storage.
const ELSEWHERE: &str = r#"<!doctype html><title>another service</title><script>
window.storage = localStorage.getItem('hearth.session');
</script>"#;

/// A web service on another loopback port, as any local program could run: it keeps the
/// head of every request the browser sends it, and answers with `html`.
async fn recording_service(html: &'static str) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&heads);
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let kept = Arc::clone(&kept);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buffer = [0u8; 4096];
                while !head.windows(4).any(|window| window == b"\r\n\r\n") {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => head.extend_from_slice(&buffer[..read]),
                    }
                }
                kept.lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&head).into_owned());
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}",
                    html.len()
                );
                stream.write_all(response.as_bytes()).await.ok();
            });
        }
    });
    (port, heads)
}

/// The headers of a recorded request head that another service could send on to Hearth
/// itself (its own `Host`, and no `Origin`: it asks from its server, not a page).
fn replayable(head: &str) -> Vec<String> {
    head.lines()
        .skip(1)
        .filter(|line| !line.is_empty())
        .filter(|line| {
            let name = line
                .split(':')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            !matches!(
                name.as_str(),
                "host" | "origin" | "connection" | "content-length" | "upgrade"
            )
        })
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_local_service_receives_nothing_that_logs_in() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served_with_scenario();
    let page = logged_in(&chromium, &served).await;
    let before = served.hearth.session_uris().len();
    let session: String = eval(&page, "localStorage.getItem('hearth.session') || ''").await;
    assert!(
        session.split('.').count() == 3,
        "the page keeps its session: {session:?}"
    );
    // The control: a cookie of Hearth's origin reaches every port of the host, so a
    // login cookie would reach the other service too.
    let cookie: String = eval(
        &page,
        "(document.cookie = 'probe=sent-to-every-port; path=/', document.cookie)",
    )
    .await;
    assert_eq!(cookie, "probe=sent-to-every-port");

    // The browser visits another local web service.
    let (port, heads) = recording_service(ELSEWHERE).await;
    let elsewhere = chromium.open(&format!("http://127.0.0.1:{port}/")).await;
    wait_for(&elsewhere, "window.storage !== undefined").await;
    let found: String = eval(&elsewhere, "String(window.storage)").await;
    assert_eq!(
        found, "null",
        "another origin cannot read the page's storage"
    );
    let heads = heads.lock().unwrap().clone();
    assert!(
        heads
            .iter()
            .any(|head| head.contains("probe=sent-to-every-port")),
        "the control failed: the other service got no cookie of the host: {heads:?}"
    );
    for head in &heads {
        for part in session.split('.').filter(|part| part.len() > 16) {
            assert!(
                !head.contains(part),
                "the session reached another port: {head}"
            );
        }
    }

    // Whatever it received, sent on to Hearth, is refused.
    let json = "Content-Type: application/json".to_owned();
    let create =
        r#"{"jsonrpc":"2.0","id":1,"method":"session/create","params":{"provider":"replay"}}"#;
    for head in &heads {
        let mut headers = vec![format!("Host: 127.0.0.1:{}", served.port)];
        headers.extend(replayable(head));
        for path in ["/auth/csrf", "/auth/session", "/health"] {
            let (status, response) =
                served.http(&request(&format!("GET {path} HTTP/1.1"), &headers, ""));
            assert_eq!(status, 401, "GET {path} with {headers:?}: {response}");
        }
        let mut posting = headers.clone();
        posting.push(json.clone());
        let (status, response) = served.http(&request("POST /rpc HTTP/1.1", &posting, create));
        assert_eq!(status, 401, "POST /rpc with {headers:?}: {response}");
        let mut upgrading = headers.clone();
        upgrading.extend([
            "Upgrade: websocket".to_owned(),
            "Sec-WebSocket-Version: 13".to_owned(),
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==".to_owned(),
        ]);
        let mut text = "GET /rpc HTTP/1.1\r\n".to_owned();
        for header in &upgrading {
            text.push_str(header);
            text.push_str("\r\n");
        }
        text.push_str("Connection: Upgrade\r\n\r\n");
        let (status, response) = served.http(&text);
        assert_eq!(status, 401, "a WebSocket with {headers:?}: {response}");
    }
    assert_eq!(
        served.hearth.session_uris().len(),
        before,
        "nothing was made"
    );
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_login_survives_a_browser_restart_and_ends_with_login_revoke() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served_with_scenario();
    logged_in(&chromium, &served).await;

    // A new browser process on the same profile is still logged in.
    let chromium = chromium.restart().await;
    let page = chromium.open(&served.url).await;
    wait_for(&page, "document.body.dataset.connection === 'open'").await;

    // `hearth login --revoke` logs it out at once.
    let output = served.hearth.run(&["login", "--revoke"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    wait_for(&page, "document.body.dataset.connection === 'login'").await;
    wait_for(&page, "!document.querySelector('.login').hidden").await;
    let kept: String = eval(&page, "String(localStorage.getItem('hearth.session'))").await;
    assert_eq!(kept, "null", "the ended session is forgotten");
    // A new link logs it in again.
    logged_in(&chromium, &served).await;
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_renders_labelled_controls_in_light_and_dark() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served_with_scenario();
    let page = logged_in(&chromium, &served).await;
    for (route, heading) in [
        ("#/projects", "Projects"),
        ("#/proposals", "Proposals"),
        ("#/audit", "Audit log"),
        ("#/setup", "Setup"),
    ] {
        page.evaluate(format!("location.hash = '{route}'"))
            .await
            .unwrap();
        wait_for(&page, &format!("(document.querySelector('.page:not([hidden]) h1') || {{}}).textContent === '{heading}'")).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        screenshot(&page, &heading.to_lowercase().replace(' ', "-")).await;
        let unlabelled: Vec<String> = eval(&page, UNLABELLED).await;
        assert!(
            unlabelled.is_empty(),
            "{route}: controls without a name: {unlabelled:?}"
        );
    }
    // The audit log verifies from the page.
    page.evaluate("location.hash = '#/audit'").await.unwrap();
    wait_for(
        &page,
        "(document.querySelector('.page:not([hidden]) h1') || {}).textContent === 'Audit log'",
    )
    .await;
    click(&page, ".page .actions .button").await;
    wait_for(
        &page,
        "(document.querySelector('.verdict') || {}).textContent.includes('Intact')",
    )
    .await;

    // Dark: the switch changes the palette.
    page.evaluate("location.hash = '#/'").await.unwrap();
    let light: String = eval(&page, "getComputedStyle(document.body).backgroundColor").await;
    let dark_first = light == "rgb(23, 21, 19)";
    click(&page, ".theme").await;
    let switched: String = eval(&page, "getComputedStyle(document.body).backgroundColor").await;
    assert_ne!(light, switched, "the theme switch changes the background");
    screenshot(
        &page,
        if dark_first {
            "home-light"
        } else {
            "home-dark"
        },
    )
    .await;
    let unlabelled: Vec<String> = eval(&page, UNLABELLED).await;
    assert!(
        unlabelled.is_empty(),
        "home: controls without a name: {unlabelled:?}"
    );
    chromium.close().await;
}

/// Buttons, links and fields a screen reader could not name.
const UNLABELLED: &str = r#"[...document.querySelectorAll('button, a[href], input, textarea, select')]
  .filter(e => e.offsetParent !== null)
  .filter(e => {
    const name = (e.getAttribute('aria-label') || e.textContent || e.getAttribute('title') || '').trim();
    const labelled = e.labels && e.labels.length > 0;
    return !name && !labelled && e.type !== 'checkbox';
  })
  .map(e => e.outerHTML.slice(0, 120))"#;

/// Setup lists the standing answers ("allow for this chat") with what each covers, and
/// revoking one there ends it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setup_lists_standing_permissions_and_revokes_them() {
    use hearth_protocol::{
        ChatSend, ChatSendParams, PermissionGrants, PermissionGrantsParams, SessionCreate,
        SessionCreateParams, UserMessage,
    };
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let work_path = work.path().canonicalize().unwrap();
    let hearth = Hearth::new();
    hearth.write(
        "config.toml",
        &format!(
            "[agents.tester]\ncommand = \"{}\"\nenv = {{ HEARTH_TEST_AGENT_STATE = \"{}\" }}\n",
            acp_test_agent().display(),
            state.path().display()
        ),
    );
    let served = Served::start_in(hearth, Some(&work_path), &[], &[]);
    // A grant, made as the command line makes one.
    let (client, _notifications) = served.client().await;
    let session = client
        .call::<SessionCreate>(&SessionCreateParams {
            harness: Some("tester".into()),
            working_directories: vec![work_path.display().to_string()],
            ..SessionCreateParams::default()
        })
        .await
        .unwrap();
    let target = work_path.join("granted.txt");
    client
        .call::<ChatSend>(&ChatSendParams {
            chat: session.session.chats[0].summary.uri.clone(),
            message: UserMessage {
                text: format!("/write {} yes", target.display()),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let id = loop {
        let listed = served.hearth.ok(&["permissions", "list", "--json"]);
        if let Some(line) = listed.lines().next() {
            let request: serde_json::Value = serde_json::from_str(line).unwrap();
            break request["requestId"].as_str().unwrap().to_owned();
        }
        assert!(std::time::Instant::now() < deadline, "no request appeared");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    served.hearth.ok(&["permissions", "allow", &id, "--always"]);

    let page = logged_in(&chromium, &served).await;
    page.evaluate("location.hash = '#/setup'").await.unwrap();
    wait_for(&page, "document.querySelector('[data-grant]')").await;
    let shown: String = eval(&page, &text_of("[data-grant]")).await;
    assert!(shown.starts_with("Allowed"), "{shown}");
    assert!(
        shown.contains(&format!("edit of {}", target.display())),
        "{shown}"
    );
    screenshot(&page, "setup-standing-permissions").await;
    click(&page, "[data-grant] button").await;
    wait_for(
        &page,
        "!document.querySelector('[data-grant]') && document.querySelector('.grants .empty')",
    )
    .await;
    let left = client
        .call::<PermissionGrants>(&PermissionGrantsParams {})
        .await
        .unwrap();
    assert!(left.grants.is_empty(), "{left:?}");
}
