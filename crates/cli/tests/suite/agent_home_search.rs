//! Agent Home's search box finds words said in any chat, not only titles: the matching
//! turns are listed under "In messages" with the words marked, and one clicked opens its
//! chat at that turn.

use super::agent_home::logged_in;
use super::browser_support::{Chromium, VISIBLE, click, eval, screenshot, type_into, wait_for};
use super::serve_support::Served;
use super::support::Hearth;

const SCENARIO: &str = r#"name: echo
turns:
  - steps:
      - text: "You said: {{prompt}}"
        stream: words
        delay_ms: 1
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_box_finds_words_in_messages_and_opens_the_turn() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let hearth = Hearth::new();
    let scenario = hearth.write("echo.yaml", SCENARIO).display().to_string();
    hearth.write("config.toml", "[defaults]\nprovider = \"replay\"\n");
    hearth.ok(&["run", "--scenario", &scenario, "how do I make marmalade?"]);
    for index in 0..12 {
        hearth.ok(&[
            "run",
            "--scenario",
            &scenario,
            "-c",
            &format!("and then step {index}"),
        ]);
    }
    hearth.ok(&["run", "--scenario", &scenario, "something else entirely"]);
    let served = Served::start(hearth, &["--scenario", &scenario], &[]);
    let page = logged_in(&chromium, &served).await;

    type_into(&page, ".search", "MARMAL").await;
    wait_for(
        &page,
        "document.querySelectorAll('.message-hit').length === 1",
    )
    .await;
    let marked: Vec<String> = eval(
        &page,
        "[...document.querySelectorAll('.message-hit mark')].map(m => m.textContent)",
    )
    .await;
    assert!(
        !marked.is_empty()
            && marked
                .iter()
                .all(|text| text.eq_ignore_ascii_case("marmal")),
        "{marked:?}"
    );
    screenshot(&page, "search-in-messages").await;
    // The prompt's turn (the first of its chat), opened and scrolled to.
    click(&page, ".message-hit .recent-open").await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} .turn.found') && document.activeElement === document.querySelector('{VISIBLE} .turn.found')"),
    )
    .await;
    let found: String = eval(
        &page,
        &format!("document.querySelector('{VISIBLE} .turn.found').textContent"),
    )
    .await;
    assert!(found.contains("marmalade"), "{found}");
    // Short words find no messages (the index is of three-character pieces).
    page.evaluate("(s => { s.value = 'ma'; s.dispatchEvent(new Event('input')); })(document.querySelector('.search'))")
        .await
        .unwrap();
    wait_for(
        &page,
        "document.querySelectorAll('.message-hit').length === 0",
    )
    .await;
    chromium.close().await;
}
