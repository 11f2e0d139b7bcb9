//! Agent Home's tabs, drafts and session list in a real browser, with the inputs of the
//! findings they fix: a side chat's Agent select deletes nothing, a closed tab keeps its
//! draft and closing every tab shows the landing, empty sessions are reused instead of
//! stacked, every session can be paged to and searched by title, a side chat shows the
//! turn it branched from, a refused connection reads as words with a way to Setup, and
//! the keyboard shortcuts work.

use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::input::{DispatchKeyEventParams, DispatchKeyEventType};
use hearth_protocol::{
    ChatParams, ChatResolve, SessionCreate, SessionCreateParams, SessionList, SessionListParams,
    SessionSummary,
};

use super::agent_home::{logged_in, text_of};
use super::browser_support::{
    Chromium, VISIBLE, answered, click, eval, press_enter, screenshot, send, type_into, wait_for,
};
use super::serve_support::Served;
use super::support::Hearth;

/// Answers echo the prompt; "slowly" takes its time (to be stopped).
const SCENARIO: &str = r#"name: tabs
turns:
  - when: slowly
    steps:
      - text: "Taking my time over this one, word by word, so there is time to stop me."
        stream: words
        delay_ms: 300
  - steps:
      - text: "You said: {{prompt}}"
        stream: words
        delay_ms: 5
"#;

/// A server with the replay agent as the default and a second provider, `down`, at a
/// loopback port where nothing listens (its turns fail with a refused connection), and
/// a calendar for the Ask bar.
fn served() -> Served {
    let hearth = Hearth::new();
    let scenario = hearth.write("tabs.yaml", SCENARIO).display().to_string();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let calendar = hearth.home.path().join("home.ics");
    hearth.write(
        "home.ics",
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nEND:VCALENDAR\r\n",
    );
    hearth.write(
        "config.toml",
        &format!(
            "[defaults]\nprovider = \"replay\"\ntime_zone = \"UTC\"\n\n\
             [providers.down]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\
             default_model = \"m\"\nmax_retries = 0\n\n\
             [calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n",
            calendar.display().to_string()
        ),
    );
    Served::start(
        hearth,
        &["--scenario", &scenario],
        &[("HEARTH_REPLAY_DELAY_SCALE", "1")],
    )
}

/// Every session the server keeps, newest first (paged through).
async fn sessions(served: &Served) -> Vec<SessionSummary> {
    let (client, _notifications) = served.client().await;
    let mut all = Vec::new();
    let mut cursor = None;
    loop {
        let page = client
            .call::<SessionList>(&SessionListParams {
                limit: Some(500),
                cursor: cursor.take(),
                ..SessionListParams::default()
            })
            .await
            .unwrap();
        all.extend(page.sessions);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return all,
        }
    }
}

/// The draft the server holds for a session's default chat.
async fn draft_of(served: &Served, session: &str) -> Option<String> {
    let (client, _notifications) = served.client().await;
    let chat = format!(
        "hearth-chat:{}/default",
        session.trim_start_matches("hearth-session:")
    );
    client
        .call::<ChatResolve>(&ChatParams { chat })
        .await
        .unwrap()
        .chat
        .draft
}

/// Waits (bounded) until the server holds `count` sessions.
async fn wait_for_session_count(served: &Served, count: usize) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let held = sessions(served).await;
        if held.len() == count {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server holds {} sessions, not {count}: {:?}",
            held.len(),
            held.iter().map(|s| (&s.uri, &s.title)).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Sizes the page's viewport as a screen of `width`×`height` CSS pixels.
async fn viewport(page: &Page, width: i64, height: i64) {
    page.execute(SetDeviceMetricsOverrideParams::new(
        width,
        height,
        1.0,
        width < 600,
    ))
    .await
    .unwrap();
    wait_for(page, &format!("window.innerWidth === {width}")).await;
}

/// Presses a key with modifiers (1 Alt, 2 Ctrl, 4 Meta, 8 Shift) on the focused element.
async fn key(page: &Page, key: &str, code: &str, modifiers: i64) {
    for kind in [
        DispatchKeyEventType::RawKeyDown,
        DispatchKeyEventType::KeyUp,
    ] {
        let mut event = DispatchKeyEventParams::builder()
            .r#type(kind.clone())
            .key(key)
            .code(code)
            .modifiers(modifiers);
        if key.chars().count() == 1
            && kind == DispatchKeyEventType::RawKeyDown
            && modifiers & 2 == 0
        {
            event = event.text(key);
        }
        page.execute(event.build().unwrap()).await.unwrap();
    }
}

/// Finding 1 and the first half of 9: in a side chat, changing the composer's Agent
/// select closed the tab and deleted the whole session; and the side chat opened on the
/// landing without the turn it branched from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_side_chat_shows_its_turn_and_its_agent_select_deletes_nothing() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served();
    let page = logged_in(&chromium, &served).await;
    viewport(&page, 1280, 800).await;
    send(&page, "plan the garden").await;
    answered(&page, 1).await;
    let session: String = eval(&page, "window.hearth.active").await;

    click(
        &page,
        &format!("{VISIBLE} .turn-actions button[title^='Ask aside']"),
    )
    .await;
    wait_for(
        &page,
        &format!("document.querySelectorAll('{VISIBLE} .chats-bar .chip').length === 2"),
    )
    .await;
    // Not the landing: the turn it branched from, above an empty side chat.
    wait_for(
        &page,
        &format!(
            "{}.includes('plan the garden') && {}.includes('You said: plan the garden')",
            text_of(&format!("{VISIBLE} .branch .message.user")),
            text_of(&format!("{VISIBLE} .branch .message.assistant"))
        ),
    )
    .await;
    let landing: String = eval(
        &page,
        &format!("document.querySelector('{VISIBLE}').dataset.landing"),
    )
    .await;
    assert_eq!(landing, "false");
    screenshot(&page, "side-chat-branch").await;

    // The Agent select is fixed, and changing it anyway (the finding's input) deletes
    // nothing: the session, its main chat and the tab stay.
    let disabled: bool = eval(
        &page,
        &format!("document.querySelector('{VISIBLE} select[aria-label=Agent]').disabled"),
    )
    .await;
    assert!(disabled, "the Agent select of a side chat is fixed");
    let changed: bool = eval(
        &page,
        &format!(
            "(s => {{ const other = [...s.options].find(o => o.value !== s.value); if (!other) return false; s.disabled = false; s.value = other.value; s.dispatchEvent(new Event('change')); return true; }})(document.querySelector('{VISIBLE} select[aria-label=Agent]'))"
        ),
    )
    .await;
    assert!(changed, "a second agent to pick");
    wait_for(
        &page,
        &format!(
            "{}.includes('fixed once it has a message')",
            text_of(&format!("{VISIBLE} .composer-error"))
        ),
    )
    .await;
    let held = sessions(&served).await;
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].uri, session);
    let tabs: Vec<String> = eval(&page, "[...window.hearth.tabs.keys()]").await;
    assert_eq!(tabs, std::slice::from_ref(&session));
    // Back in the main chat, its turn is there.
    click(&page, &format!("{VISIBLE} .chats-bar .chip")).await;
    wait_for(
        &page,
        &format!(
            "{}.includes('plan the garden')",
            text_of(&format!("{VISIBLE} .transcript .turn .message.user"))
        ),
    )
    .await;
    chromium.close().await;
}

/// Finding 6: closing a tab threw its draft away; closing every tab left a blank pane.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_tab_keeps_its_draft_and_closing_every_tab_shows_the_landing() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served();
    let page = logged_in(&chromium, &served).await;
    for (width, height) in [(1280, 800), (390, 844)] {
        viewport(&page, width, height).await;
        // A chat with a turn and a draft, and a landing with only a draft.
        click(&page, ".tab-new").await;
        wait_for(
            &page,
            &format!("document.querySelector('{VISIBLE}').dataset.landing === 'true'"),
        )
        .await;
        send(&page, "first question").await;
        answered(&page, 1).await;
        let talked: String = eval(&page, "window.hearth.active").await;
        type_into(
            &page,
            &format!("{VISIBLE} textarea"),
            "a reply half written",
        )
        .await;
        click(&page, ".tab-new").await;
        wait_for(&page, &format!("window.hearth.active !== {talked:?}")).await;
        let drafted: String = eval(&page, "window.hearth.active").await;
        type_into(&page, &format!("{VISIBLE} textarea"), "an idea for later").await;

        // Closing both tabs at once keeps both drafts on the server, and both sessions.
        click(
            &page,
            &format!(".tab[data-session=\"{drafted}\"] .tab-close"),
        )
        .await;
        click(
            &page,
            &format!(".tab[data-session=\"{talked}\"] .tab-close"),
        )
        .await;
        wait_for(
            &page,
            &format!("!window.hearth.tabs.has({talked:?}) && !window.hearth.tabs.has({drafted:?})"),
        )
        .await;
        for (session, draft) in [
            (&talked, "a reply half written"),
            (&drafted, "an idea for later"),
        ] {
            let deadline = std::time::Instant::now() + Duration::from_secs(20);
            loop {
                let held = draft_of(&served, session).await;
                if held.as_deref() == Some(draft) {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "{session} holds {held:?}"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        // Every tab closed: the landing, not a blank pane.
        let left: Vec<String> = eval(&page, "[...window.hearth.tabs.keys()]").await;
        for tab in &left {
            click(&page, &format!(".tab[data-session=\"{tab}\"] .tab-close")).await;
        }
        wait_for(
            &page,
            &format!(
                "document.querySelector('{VISIBLE}') && document.querySelector('{VISIBLE}').dataset.landing === 'true' && document.querySelectorAll('.tab').length === 1"
            ),
        )
        .await;
        let visible: bool = eval(
            &page,
            &format!(
                "(r => r.width > 0 && r.height > 0)(document.querySelector('{VISIBLE} .landing-title h1').getBoundingClientRect())"
            ),
        )
        .await;
        assert!(visible, "the landing is drawn");
        screenshot(&page, &format!("all-tabs-closed-{width}")).await;

        // Reopened from Recent chats, each draft comes back with its chat.
        page.evaluate(format!("window.hearth.openSession({drafted:?})"))
            .await
            .unwrap();
        wait_for(
            &page,
            &format!("document.querySelector('{VISIBLE} textarea').value === 'an idea for later'"),
        )
        .await;
        page.evaluate(format!("window.hearth.openSession({talked:?})"))
            .await
            .unwrap();
        wait_for(
            &page,
            &format!(
                "document.querySelector('{VISIBLE} textarea').value === 'a reply half written' && document.querySelectorAll('{VISIBLE} .turn').length === 1"
            ),
        )
        .await;
        for tab in [&talked, &drafted] {
            click(&page, &format!(".tab[data-session=\"{tab}\"] .tab-close")).await;
        }
        wait_for(&page, "document.querySelectorAll('.tab').length === 1").await;
    }
    chromium.close().await;
}

/// Finding 7: each of these made another empty session — a new profile, a reload with
/// no tabs, entering an empty project, New chat, the calendar's Ask bar.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_sessions_are_reused_not_stacked() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served();
    let page = logged_in(&chromium, &served).await;
    viewport(&page, 1280, 800).await;
    wait_for_session_count(&served, 1).await;
    let first: String = eval(&page, "window.hearth.active").await;

    // A reload with no tabs, three times.
    for _ in 0..3 {
        page.evaluate(
            "localStorage.setItem('hearth.tabs', '[]'); localStorage.removeItem('hearth.tabs.active')",
        )
        .await
        .unwrap();
        page.reload().await.unwrap();
        wait_for(&page, "document.body.dataset.connection === 'open'").await;
        wait_for(
            &page,
            &format!("window.hearth.active === {first:?} && document.querySelector('{VISIBLE} form:not([inert])')"),
        )
        .await;
    }
    // A new browser profile, logged in, twice.
    for _ in 0..2 {
        let other = Chromium::launch().await.unwrap();
        let fresh = logged_in(&other, &served).await;
        let shown: String = eval(&fresh, "window.hearth.active").await;
        assert_eq!(shown, first, "a new profile reuses the empty landing");
        other.close().await;
    }
    wait_for_session_count(&served, 1).await;
    // New chat, from the sidebar, the strip and the keyboard, on an unused landing.
    click(&page, ".new-chat").await;
    click(&page, ".tab-new").await;
    key(&page, "O", "KeyO", 2 | 8).await;
    wait_for(&page, "document.querySelectorAll('.tab').length === 1").await;
    wait_for_session_count(&served, 1).await;

    // An empty project, entered three times.
    let folder = served.hearth.home.path().join("garden");
    std::fs::create_dir_all(&folder).unwrap();
    served.hearth.ok(&[
        "projects",
        "new",
        "Garden",
        "--folder",
        &folder.display().to_string(),
        "--trust",
    ]);
    page.evaluate("window.hearth.loadProjects()").await.unwrap();
    wait_for(&page, "window.hearth.projects.length === 1").await;
    for _ in 0..3 {
        page.evaluate("window.hearth.enterProject(window.hearth.projects[0].id)")
            .await
            .unwrap();
        wait_for(
            &page,
            &format!("window.hearth.scope && document.querySelector('{VISIBLE} form:not([inert])') && document.querySelector('{VISIBLE}').dataset.landing === 'true'"),
        )
        .await;
        page.evaluate("window.hearth.enterProject(null)")
            .await
            .unwrap();
        wait_for(&page, "window.hearth.scope === null").await;
    }
    wait_for_session_count(&served, 2).await;

    // The calendar's Ask bar, used twice on two visits: one Calendar conversation.
    for ask in ["move the review to 3pm", "and the standup to 10am"] {
        page.evaluate("location.hash = '#/'").await.unwrap();
        page.evaluate("location.hash = '#/calendar'").await.unwrap();
        wait_for(
            &page,
            "document.querySelector('.page:not([hidden]) input[aria-label^=\"Ask the agent\"]')",
        )
        .await;
        type_into(&page, "input[aria-label^=\"Ask the agent\"]", ask).await;
        press_enter(&page, "input[aria-label^=\"Ask the agent\"]").await;
        wait_for(
            &page,
            &format!("{}.includes('Asked.')", text_of(".page .notice.ok")),
        )
        .await;
    }
    wait_for_session_count(&served, 3).await;
    let calendar: Vec<SessionSummary> = sessions(&served)
        .await
        .into_iter()
        .filter(|session| session.title.as_deref() == Some("Calendar"))
        .collect();
    assert_eq!(calendar.len(), 1, "{calendar:?}");
    chromium.close().await;
}

/// Finding 5: only the 100 newest sessions loaded (60 shown), with no "more", and the
/// search covered only those.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_session_is_reachable_and_search_finds_titles_not_loaded() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served();
    {
        let (client, _notifications) = served.client().await;
        // The oldest first: the needle is the one furthest down the list.
        for index in 0..130 {
            let title = if index == 0 {
                "Needle in the haystack".to_owned()
            } else {
                format!("Hay {index:03}")
            };
            client
                .call::<SessionCreate>(&SessionCreateParams {
                    harness: Some("replay".into()),
                    title: Some(title),
                    ..SessionCreateParams::default()
                })
                .await
                .unwrap();
        }
    }
    let page = logged_in(&chromium, &served).await;
    // The list is the sidebar's (the narrow screen's menu is another matter).
    {
        let width = 1280;
        viewport(&page, width, 800).await;
        wait_for(
            &page,
            "document.querySelectorAll('.recent-list .recent').length >= 50",
        )
        .await;
        let first_page: usize = eval(
            &page,
            "document.querySelectorAll('.recent-list .recent').length",
        )
        .await;
        assert_eq!(first_page, 50, "one page until the list is scrolled");
        let needle_loaded: bool = eval(
            &page,
            "[...document.querySelectorAll('.recent-title')].some(t => t.textContent === 'Needle in the haystack')",
        )
        .await;
        assert!(
            !needle_loaded,
            "the first page holds the newest sessions only"
        );

        // Search: the server finds the title, though its page is not loaded.
        type_into(&page, ".search", "needle").await;
        wait_for(
            &page,
            "document.querySelectorAll('.recent-list .recent').length === 1 && document.querySelector('.recent-title').textContent === 'Needle in the haystack'",
        )
        .await;
        screenshot(&page, &format!("search-all-titles-{width}")).await;
        page.evaluate("(s => { s.value = ''; s.dispatchEvent(new Event('input')); })(document.querySelector('.search'))")
            .await
            .unwrap();
        wait_for(&page, "document.querySelectorAll('.recent-list .recent').length >= 50 && Boolean(document.querySelector('.recent-list .more-chats:not([hidden])'))").await;

        // Paging: scrolling the list to its end (or pressing "Show more chats") reaches
        // every session, the oldest last.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let (count, more): (usize, bool) = eval(
                &page,
                "[document.querySelectorAll('.recent-list .recent').length, Boolean(document.querySelector('.recent-list .more-chats:not([hidden])'))]",
            )
            .await;
            if !more {
                assert_eq!(count, 131, "every session listed");
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{count} listed");
            // Scrolled into view, the control loads the next page by itself.
            page.evaluate("document.querySelector('.more-chats')?.scrollIntoView()")
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let last: String = eval(
            &page,
            &text_of(".recent-list .recent:last-child .recent-title"),
        )
        .await;
        assert_eq!(last, "Needle in the haystack");
    }
    chromium.close().await;
}

/// The second half of finding 9: a raw transport error ("tcp connect error … os error
/// 111") was shown with no way to Setup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_is_explained_with_a_way_to_setup() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served();
    let page = logged_in(&chromium, &served).await;
    viewport(&page, 1280, 800).await;
    // The landing's Agent select picks the provider nothing answers for.
    page.evaluate(format!(
        "(s => {{ s.value = 'down'; s.dispatchEvent(new Event('change')); }})(document.querySelector('{VISIBLE} select[aria-label=Agent]'))"
    ))
    .await
    .unwrap();
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE}').dataset.session.startsWith('hearth-session:down/') && document.querySelector('{VISIBLE} select[aria-label=Agent]').value === 'down' && document.querySelector('{VISIBLE} form:not([inert])') && window.hearth.tabs.get(window.hearth.active).chat"),
    )
    .await;
    // The empty landing it replaced is gone; nothing else was made.
    wait_for_session_count(&served, 1).await;
    send(&page, "hello").await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} .turn .notice.error .setup-link')"),
    )
    .await;
    let summary: String = eval(
        &page,
        &text_of(&format!("{VISIBLE} .turn .notice.error .error-summary")),
    )
    .await;
    assert!(summary.contains("could not be reached"), "{summary}");
    assert!(!summary.contains("os error"), "{summary}");
    let detail: String = eval(
        &page,
        &text_of(&format!("{VISIBLE} .turn .notice.error .error-detail pre")),
    )
    .await;
    assert!(
        detail.to_lowercase().contains("connect"),
        "the original is kept: {detail}"
    );
    screenshot(&page, "refused-connection").await;
    click(&page, &format!("{VISIBLE} .turn .notice.error .setup-link")).await;
    wait_for(
        &page,
        "location.hash === '#/setup' && document.querySelector('.page:not([hidden]) h1')",
    )
    .await;
    chromium.close().await;
}

/// Keyboard shortcuts: new chat, search, Esc stops the answer, next and previous chat,
/// and "?" lists them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keyboard_shortcuts_start_search_stop_and_move_between_chats() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = served();
    let page = logged_in(&chromium, &served).await;
    viewport(&page, 1280, 800).await;
    send(&page, "first").await;
    answered(&page, 1).await;
    let first: String = eval(&page, "window.hearth.active").await;

    // Ctrl+Shift+O: a new chat (the first one is used).
    key(&page, "O", "KeyO", 2 | 8).await;
    wait_for(
        &page,
        &format!("window.hearth.tabs.size === 2 && window.hearth.active !== {first:?}"),
    )
    .await;
    let second: String = eval(&page, "window.hearth.active").await;

    // Alt+↑ / Alt+↓: previous and next chat.
    key(&page, "ArrowUp", "ArrowUp", 1).await;
    wait_for(&page, &format!("window.hearth.active === {first:?}")).await;
    key(&page, "ArrowDown", "ArrowDown", 1).await;
    wait_for(&page, &format!("window.hearth.active === {second:?}")).await;

    // Ctrl+K: the search box.
    key(&page, "k", "KeyK", 2).await;
    wait_for(
        &page,
        "document.activeElement === document.querySelector('.search')",
    )
    .await;

    // Esc stops an answer being written.
    key(&page, "ArrowUp", "ArrowUp", 1).await;
    wait_for(&page, &format!("window.hearth.active === {first:?}")).await;
    send(&page, "answer slowly").await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} .stop:not([hidden])')"),
    )
    .await;
    key(&page, "Escape", "Escape", 0).await;
    wait_for(
        &page,
        &format!("document.querySelector('{VISIBLE} .turn:last-child .stop-reason.aborted')"),
    )
    .await;

    // "?" outside a text field lists the shortcuts; closing it returns the focus.
    page.evaluate("document.activeElement.blur()")
        .await
        .unwrap();
    key(&page, "?", "Slash", 8).await;
    wait_for(&page, "document.querySelector('dialog.shortcuts[open]')").await;
    let listed: String = eval(&page, &text_of("dialog.shortcuts")).await;
    for shortcut in ["Ctrl+Shift+O", "Ctrl+K", "Esc", "Alt+↓", "Alt+↑"] {
        assert!(listed.contains(shortcut), "{shortcut} in {listed}");
    }
    screenshot(&page, "shortcuts").await;
    click(&page, "dialog.shortcuts .dialog-actions button").await;
    wait_for(&page, "!document.querySelector('dialog.shortcuts')").await;
    chromium.close().await;
}
