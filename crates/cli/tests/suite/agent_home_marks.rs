//! Pinned chats stay at the top of Recent chats; archived ones leave it for the
//! "Archived chats" view (kept, searchable) and come back when unarchived. The marks are
//! the server's: they survive a reload. At 1280×800 and 390×844 (through the menu).

use chromiumoxide::Page;

use super::agent_home::logged_in;
use super::browser_support::{
    Chromium, ECHO_SCENARIO, SCREENS, assert_accessible, click, eval, screenshot_at, set_viewport,
    wait_for,
};
use super::serve_support::Served;
use super::support::Hearth;

const SCENARIO: &str = ECHO_SCENARIO;

/// The titles Recent chats shows, in order (the empty landing's "New chat" left out).
async fn listed(page: &Page) -> Vec<String> {
    eval(
        page,
        "[...document.querySelectorAll('.recent-list .recent-title')].map(t => t.textContent).filter(t => t !== 'New chat')",
    )
    .await
}

/// Opens the menu on a phone (the sidebar is a drawer there).
async fn sidebar(page: &Page, width: u32) {
    if width < 760 {
        let open: bool = eval(page, "document.body.dataset.menu === 'open'").await;
        if !open {
            click(page, ".menu-button").await;
            wait_for(page, "document.body.dataset.menu === 'open'").await;
        }
    }
}

async fn wait_listed(page: &Page, titles: &[&str]) {
    let expected = serde_json::to_string(titles).unwrap();
    wait_for(
        page,
        &format!("JSON.stringify([...document.querySelectorAll('.recent-list .recent-title')].map(t => t.textContent).filter(t => t !== 'New chat')) === {expected:?}"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pinned_chats_lead_and_archived_ones_leave_the_list_until_unarchived() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    for screen in SCREENS {
        let hearth = Hearth::new();
        let scenario = hearth.write("echo.yaml", SCENARIO).display().to_string();
        hearth.write("config.toml", "[defaults]\nprovider = \"replay\"\n");
        for prompt in ["alpha", "bravo", "charlie"] {
            hearth.ok(&["run", "--scenario", &scenario, prompt]);
        }
        let served = Served::start(hearth, &["--scenario", &scenario], &[]);
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        sidebar(&page, screen.0).await;
        wait_listed(&page, &["charlie", "bravo", "alpha"]).await;

        click(
            &page,
            ".recent[data-session] button.pin[aria-label='Pin alpha']",
        )
        .await;
        wait_listed(&page, &["alpha", "charlie", "bravo"]).await;
        let pressed: String = eval(&page, "document.querySelector(\"button.pin[aria-label='Pin alpha']\").getAttribute('aria-pressed')").await;
        assert_eq!(pressed, "true");
        click(&page, "button.archive[aria-label='Archive charlie']").await;
        wait_listed(&page, &["alpha", "bravo"]).await;
        assert_accessible(&page, "Recent chats with a pinned chat").await;
        screenshot_at(&page, "pinned-chat", screen).await;

        // The archived view has it, and gives it back.
        click(&page, ".archived-toggle").await;
        wait_listed(&page, &["charlie"]).await;
        click(&page, "button.archive[aria-label='Unarchive charlie']").await;
        wait_listed(&page, &[]).await;
        click(&page, ".archived-toggle").await;
        wait_listed(&page, &["alpha", "charlie", "bravo"]).await;

        // Kept by the server: a reload lists them the same way.
        click(&page, "button.archive[aria-label='Archive bravo']").await;
        wait_listed(&page, &["alpha", "charlie"]).await;
        page.reload().await.unwrap();
        sidebar(&page, screen.0).await;
        wait_listed(&page, &["alpha", "charlie"]).await;
        assert_eq!(listed(&page).await, ["alpha", "charlie"]);
        page.close().await.unwrap();
    }
    chromium.close().await;
}
