//! Deleting a chat in Agent Home moves it to the trash (confirmed, in words that say so);
//! the Trash page lists it, restores it into Recent chats, and empties the trash for good
//! once confirmed. A chat downloads as Markdown and as JSON Lines from its own bar. At
//! 1280×800 and 390×844.

use chromiumoxide::Page;

use super::agent_home::logged_in;
use super::browser_support::{
    Chromium, ECHO_SCENARIO, SCREENS, VISIBLE, assert_accessible, click, eval, screenshot_at,
    set_viewport, wait_for,
};
use super::serve_support::Served;
use super::support::Hearth;

const SCENARIO: &str = ECHO_SCENARIO;

async fn go(page: &Page, route: &str) {
    page.evaluate(format!("location.hash = {route:?}"))
        .await
        .unwrap();
}

/// Answers the confirmation dialog that is open with its confirming button.
async fn confirm(page: &Page) {
    wait_for(
        page,
        "document.querySelector('dialog[open] button.danger, dialog[open] button.primary')",
    )
    .await;
    click(
        page,
        "dialog[open] button.danger, dialog[open] button.primary",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_chat_waits_in_the_trash_and_comes_back() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    for screen in SCREENS {
        let hearth = Hearth::new();
        let scenario = hearth.write("echo.yaml", SCENARIO).display().to_string();
        hearth.write("config.toml", "[defaults]\nprovider = \"replay\"\n");
        hearth.ok(&["run", "--scenario", &scenario, "keep this parsnip"]);
        hearth.ok(&["run", "--scenario", &scenario, "and this turnip"]);
        let served = Served::start(hearth, &["--scenario", &scenario], &[]);
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        if screen.0 < 760 {
            click(&page, ".menu-button").await;
            wait_for(&page, "document.body.dataset.menu === 'open'").await;
        }
        wait_for(
            &page,
            "document.querySelector(\"button[aria-label='Delete keep this parsnip']\")",
        )
        .await;
        click(&page, "button[aria-label='Delete keep this parsnip']").await;
        let question: String = eval(&page, "(async () => { for (let i = 0; i < 100 && !document.querySelector('dialog[open]'); i++) await new Promise(r => setTimeout(r, 20)); return document.querySelector('dialog[open]').textContent; })()").await;
        assert!(question.contains("trash"), "{question}");
        confirm(&page).await;
        wait_for(&page, "![...document.querySelectorAll('.recent-title')].some(t => t.textContent === 'keep this parsnip')").await;

        go(&page, "#/trash").await;
        wait_for(
            &page,
            "document.querySelectorAll('.trash-item').length === 1",
        )
        .await;
        let title: String = eval(
            &page,
            "document.querySelector('.trash-item .trash-title').textContent",
        )
        .await;
        assert_eq!(title, "keep this parsnip");
        assert_accessible(&page, "the trash").await;
        screenshot_at(&page, "trash", screen).await;
        click(&page, "button[aria-label='Restore keep this parsnip']").await;
        wait_for(
            &page,
            "document.querySelectorAll('.trash-item').length === 0",
        )
        .await;
        wait_for(&page, "[...document.querySelectorAll('.recent-title')].some(t => t.textContent === 'keep this parsnip')").await;

        // Deleted again and erased for good: the trash empties and nothing comes back.
        if screen.0 < 760 {
            let open: bool = eval(&page, "document.body.dataset.menu === 'open'").await;
            if !open {
                click(&page, ".menu-button").await;
                wait_for(&page, "document.body.dataset.menu === 'open'").await;
            }
        }
        click(&page, "button[aria-label='Delete keep this parsnip']").await;
        confirm(&page).await;
        wait_for(&page, "![...document.querySelectorAll('.recent-title')].some(t => t.textContent === 'keep this parsnip')").await;
        go(&page, "#/").await;
        go(&page, "#/trash").await;
        wait_for(
            &page,
            "document.querySelectorAll('.trash-item').length === 1",
        )
        .await;
        click(&page, ".page-actions button.danger").await;
        confirm(&page).await;
        wait_for(&page, "document.querySelectorAll('.trash-item').length === 0 && /Erased 1/.test(document.body.innerText)").await;
        page.close().await.unwrap();
    }
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chat_downloads_as_markdown_and_as_json_lines() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let hearth = Hearth::new();
    let scenario = hearth.write("echo.yaml", SCENARIO).display().to_string();
    hearth.write("config.toml", "[defaults]\nprovider = \"replay\"\n");
    hearth.ok(&["run", "--scenario", &scenario, "export the radish"]);
    let session = hearth.session_uris().remove(0);
    let served = Served::start(hearth, &["--scenario", &scenario], &[]);
    for screen in SCREENS {
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        page.evaluate(format!("window.hearth.openSession({session:?})"))
            .await
            .unwrap();
        wait_for(
            &page,
            &format!("document.querySelectorAll('{VISIBLE} .turn').length === 1"),
        )
        .await;
        // The download's blob, caught as the page makes it.
        page.evaluate("window.__downloads = []; const make = URL.createObjectURL; URL.createObjectURL = (blob) => { window.__downloads.push(blob); return make(blob); };").await.unwrap();
        click(
            &page,
            &format!("{VISIBLE} .chat-tools button[title*='Markdown']"),
        )
        .await;
        // One download at a time, so they are caught in the order asked for.
        wait_for(&page, "window.__downloads.length === 1").await;
        click(
            &page,
            &format!("{VISIBLE} .chat-tools button[title*='JSON']"),
        )
        .await;
        wait_for(&page, "window.__downloads.length === 2").await;
        let texts: Vec<String> =
            eval(&page, "Promise.all(window.__downloads.map(b => b.text()))").await;
        assert!(
            texts[0].contains("export the radish")
                && texts[0].contains("You said: export the radish"),
            "{}",
            texts[0]
        );
        let kinds: Vec<String> = texts[1]
            .lines()
            .map(|line| {
                serde_json::from_str::<serde_json::Value>(line).unwrap()["type"].to_string()
            })
            .collect();
        assert_eq!(
            kinds.first().map(String::as_str),
            Some("\"header\""),
            "{}",
            texts[1]
        );
        assert_eq!(
            kinds.last().map(String::as_str),
            Some("\"end\""),
            "{}",
            texts[1]
        );
        assert!(kinds.iter().any(|kind| kind == "\"turn\""), "{}", texts[1]);
        assert!(texts[1].contains("export the radish"));
        assert_accessible(&page, "a chat's bar").await;
        page.close().await.unwrap();
    }
    chromium.close().await;
}
