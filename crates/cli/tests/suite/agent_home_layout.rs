//! Agent Home on a laptop and on a phone: every place reachable from a menu, the
//! calendar in columns that line up (and a day or three on a phone), tables that fit,
//! pages that follow the server's events without losing the scroll position or the
//! focus, proposed changes laid beside the events they overlap, a date to jump to,
//! axe-core's checks on every page, and the finishing touches (no Markdown punctuation
//! in the text, people's names for actors, one icon set, the open chat marked, a warning
//! on a repeated change). Each test runs at 1280×800 and 390×844.

use hearth_protocol::{
    self as wire, ChatSend, ChatSendParams, ProposalReject, ProposalRejectParams, SessionCreate,
    SessionCreateParams, Subscribe, SubscribeParams, UserMessage,
};
use hearth_server::{Client, Notified};
use hearth_test_support::OpenAiStream;

use super::agent_home::{logged_in, text_of};
use super::browser_support::{
    Chromium, SCREENS, VISIBLE, assert_accessible, click, eval, press_enter, screenshot_at,
    set_viewport, type_into, wait_for,
};
use hearth_test_support::MockModelServer;

use super::mock::{MODEL, mock_config, server};
use super::serve_support::{Served, next};
use super::support::Hearth;
use super::tool_support::stage_event;

/// The path of chat completions.
const COMPLETIONS: &str = "/v1/chat/completions";

/// JavaScript: whether the element `selector` names is on screen and is what a tap at its
/// centre reaches (nothing covers it).
fn hittable(selector: &str) -> String {
    format!(
        "(e => {{ if (!e) return false; const r = e.getBoundingClientRect(); if (r.width < 1 || r.height < 1) return false; \
         const x = r.left + r.width / 2, y = r.top + r.height / 2; if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) return false; \
         const t = document.elementFromPoint(x, y); return !!t && (t === e || e.contains(t)); }})(document.querySelector({}))",
        serde_json::to_string(selector).unwrap()
    )
}

/// Taps what `selector` names, after checking a person could.
async fn tap(page: &chromiumoxide::Page, selector: &str) {
    wait_for(page, &hittable(selector)).await;
    click(page, selector).await;
}

/// Goes to a page of the app.
async fn go(page: &chromiumoxide::Page, hash: &str) {
    page.evaluate(format!("location.hash = '{hash}'"))
        .await
        .unwrap();
}

/// Jumps the calendar to a date with its date field, as one change.
async fn go_to_date(page: &chromiumoxide::Page, date: &str) {
    eval::<bool>(
        page,
        &format!(
            "(i => {{ i.value = '{date}'; i.dispatchEvent(new Event('change')); return true; }})(document.querySelector('.calendar-nav input[type=date]'))"
        ),
    )
    .await;
}

/// An iCalendar file of single events: (uid, summary, start, end) in UTC stamps.
fn calendar_file(events: &[(&str, &str, &str, &str)]) -> String {
    let mut text = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n");
    for (uid, summary, start, end) in events {
        text.push_str(&format!(
            "BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{start}\r\nDTEND:{end}\r\nSUMMARY:{summary}\r\nEND:VEVENT\r\n"
        ));
    }
    text.push_str("END:VCALENDAR\r\n");
    text
}

/// A data directory with the calendar `home` (UTC) holding `events`, and `extra` config.
fn with_events(events: &[(&str, &str, &str, &str)], extra: &str) -> Hearth {
    let hearth = Hearth::new();
    let calendar = hearth.home.path().join("home.ics");
    hearth.write("home.ics", &calendar_file(events));
    hearth.write(
        "config.toml",
        &format!(
            "{extra}\n[calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n",
            calendar.display().to_string()
        ),
    );
    hearth
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

/// A model that names chats "Dentist booking" and, for each of `events` (title, start),
/// proposes it with `event_create` and then says so.
fn proposing_model(events: &[(&str, &str)]) -> std::sync::Arc<MockModelServer> {
    let model = server();
    model.set_responder(std::sync::Arc::new(|request| {
        String::from_utf8_lossy(&request.body)
            .contains("You name conversations")
            .then(|| OpenAiStream::text_answer(MODEL, &["Dentist booking"], 1, 1).into())
    }));
    for (index, (title, start)) in events.iter().enumerate() {
        model.enqueue_for(
            COMPLETIONS,
            tool_call(
                "event_create",
                &format!("call-{index}"),
                &format!(r#"{{"title": "{title}", "start": "{start}"}}"#),
            ),
        );
        model.enqueue_for(
            COMPLETIONS,
            OpenAiStream::text_answer(MODEL, &["It awaits your approval."], 1, 1),
        );
    }
    model
}

/// Starts a turn in a new session through the protocol, as another window would.
async fn send_elsewhere(client: &Client, text: &str) {
    let created = client
        .call::<SessionCreate>(&SessionCreateParams::default())
        .await
        .unwrap();
    let chat = created.session.chats[0].summary.uri.clone();
    client
        .call::<ChatSend>(&ChatSendParams {
            chat,
            message: UserMessage {
                text: text.into(),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_reaches_every_place_from_the_menu_and_the_calendar_and_audit_fit() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let hearth = with_events(
        &[(
            "standup@test",
            "Standup",
            "20300304T090000Z",
            "20300304T093000Z",
        )],
        "[defaults]\ntime_zone = \"UTC\"\n",
    );
    // Audit rows with long values to fit.
    stage_event(
        &hearth,
        "Quarterly planning with the whole extended team",
        "2030-03-10T10:00",
    );
    let served = Served::start(hearth, &[], &[]);
    for screen in SCREENS {
        let (width, height) = screen;
        let narrow = width < 760;
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, width, height).await;
        if narrow {
            wait_for(&page, &hittable(".menu-button")).await;
        } else {
            let display: String = eval(
                &page,
                "getComputedStyle(document.querySelector('.top-bar')).display",
            )
            .await;
            assert_eq!(
                display, "none",
                "no menu button at {width} px: the sidebar is there"
            );
        }
        if narrow {
            let hidden: String = eval(
                &page,
                "getComputedStyle(document.querySelector('.sidebar')).visibility",
            )
            .await;
            assert_eq!(hidden, "hidden");
        }
        for route in [
            "#/projects",
            "#/calendar",
            "#/proposals",
            "#/setup",
            "#/audit",
        ] {
            if narrow {
                tap(&page, ".menu-button").await;
                wait_for(&page, "document.body.dataset.menu === 'open'").await;
                if route == "#/projects" {
                    screenshot_at(&page, "menu-open", screen).await;
                }
            }
            tap(&page, &format!(".sidebar a[href='{route}']")).await;
            wait_for(&page, &format!("location.hash === '{route}'")).await;
            wait_for(
                &page,
                "document.body.dataset.menu === undefined && document.querySelector('.page h1')",
            )
            .await;
        }
        // Recent chats, too.
        if narrow {
            tap(&page, ".menu-button").await;
        }
        tap(&page, ".recent-open").await;
        wait_for(&page, "location.hash === '#/' || location.hash === ''").await;
        wait_for(&page, &format!("document.querySelector('{VISIBLE}')")).await;

        // The calendar: three days on a phone, a week on a laptop, in columns that line
        // up with their headings; the last day (Sunday in a week) is never cut off.
        go(&page, "#/calendar").await;
        wait_for(&page, "document.querySelector('.week .day')").await;
        go_to_date(&page, "2030-03-04").await;
        wait_for(&page, "document.querySelector('.week .event[data-uid]')").await;
        let expected = if narrow { 3 } else { 7 };
        let columns: usize = eval(&page, "document.querySelectorAll('.week .day').length").await;
        assert_eq!(columns, expected, "days shown at {width} px");
        screenshot_at(&page, "calendar", screen).await;
        for days in ["7", "3", "1"] {
            eval::<bool>(&page, &format!("(s => {{ s.value = '{days}'; s.dispatchEvent(new Event('change')); return true; }})(document.querySelector('.calendar-nav select'))")).await;
            wait_for(
                &page,
                &format!("document.querySelectorAll('.week .day').length === {days}"),
            )
            .await;
            let misaligned: Vec<String> = eval(
                &page,
                "(() => { const heads = [...document.querySelectorAll('.week .day-head')]; const days = [...document.querySelectorAll('.week .day')];
                  const box = document.querySelector('.week-scroll').getBoundingClientRect();
                  return days.flatMap((d, i) => { const a = d.getBoundingClientRect(), h = heads[i].getBoundingClientRect();
                    const out = [];
                    if (Math.abs(a.left - h.left) > 1 || Math.abs(a.width - h.width) > 1) out.push(`${d.dataset.date}: column ${a.left}+${a.width}, heading ${h.left}+${h.width}`);
                    if (a.right > box.right + 0.5) out.push(`${d.dataset.date} ends at ${a.right}, past ${box.right}`);
                    return out; }); })()",
            )
            .await;
            assert!(
                misaligned.is_empty(),
                "{days} days at {width} px: {misaligned:?}"
            );
        }
        let last: String = eval(
            &page,
            "[...document.querySelectorAll('.week .day-head')].pop().textContent",
        )
        .await;
        assert!(!last.is_empty());
        if narrow {
            eval::<bool>(&page, "(s => { s.value = '7'; s.dispatchEvent(new Event('change')); return true; })(document.querySelector('.calendar-nav select'))").await;
            wait_for(
                &page,
                "document.querySelectorAll('.week .day').length === 7",
            )
            .await;
            let sunday: String = eval(
                &page,
                "[...document.querySelectorAll('.week .day-head')].pop().textContent",
            )
            .await;
            assert!(sunday.contains("Sun"), "{sunday}");
            screenshot_at(&page, "calendar-week", screen).await;
        }

        // The audit table scrolls inside itself; the page never scrolls sideways.
        go(&page, "#/audit").await;
        wait_for(
            &page,
            "document.querySelectorAll('table.audit tbody tr td').length > 1",
        )
        .await;
        for _ in 0..2 {
            let (scroll, inner): (f64, f64) =
                eval(&page, "[document.documentElement.scrollWidth, innerWidth]").await;
            assert!(
                scroll <= inner,
                "the audit page is {scroll} px wide at {width} px"
            );
        }
        screenshot_at(&page, "audit", screen).await;
        page.close().await.unwrap();
    }

    // Down to 360 px, no page is wider than the screen.
    let page = logged_in(&chromium, &served).await;
    set_viewport(&page, 360, 740).await;
    for route in [
        "#/",
        "#/projects",
        "#/calendar",
        "#/proposals",
        "#/setup",
        "#/audit",
    ] {
        go(&page, route).await;
        wait_for(&page, &format!("location.hash === '{route}'")).await;
        wait_for(
            &page,
            "document.querySelector('.page:not([hidden]) h1, .home:not([hidden]) h1')",
        )
        .await;
        wait_for(&page, "document.documentElement.scrollWidth <= innerWidth").await;
    }
    screenshot_at(&page, "calendar", (360, 740)).await;
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_staged_or_decided_proposal_is_announced_on_the_root() {
    let hearth = with_events(&[], "[defaults]\ntime_zone = \"UTC\"\n");
    let id = stage_event(&hearth, "Review", "2030-03-05T14:00");
    let served = Served::start(hearth, &[], &[]);
    let (client, mut notes) = served.client().await;
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: "hearth-root:".into(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    client
        .call::<ProposalReject>(&ProposalRejectParams {
            proposal_id: id.clone(),
            reason: None,
        })
        .await
        .unwrap();
    loop {
        let Notified::Envelope(envelope) = next(&mut notes).await else {
            continue;
        };
        if let wire::Action::ProposalChanged { proposal_id } = envelope.action {
            assert_eq!(proposal_id, id);
            assert_eq!(envelope.resource, "hearth-root:");
            break;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calendar_and_proposals_follow_the_server_keeping_scroll_and_focus() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    for screen in SCREENS {
        let model = proposing_model(&[
            ("Dentist", "2030-03-04T15:00"),
            ("Lunch", "2030-03-06T12:00"),
        ]);
        let hearth = with_events(
            &[(
                "planning@test",
                "Planning",
                "20300305T130000Z",
                "20300305T140000Z",
            )],
            &mock_config(&model).replace("Europe/Berlin", "UTC"),
        );
        let served = Served::start(hearth, &[], &[]);
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        go(&page, "#/calendar").await;
        wait_for(&page, "document.querySelector('.calendar-nav input[type=date]') && document.querySelector('.week .day')").await;
        go_to_date(&page, "2030-03-04").await;
        wait_for(
            &page,
            "document.querySelector('.week .event[data-uid=\"planning@test\"]')",
        )
        .await;
        // Read at 12:00, the Planning event focused.
        let scrolled: f64 = eval(&page, "(s => { s.scrollTop = 12 * 44; document.querySelector('.week .event[data-uid=\"planning@test\"]').focus(); return s.scrollTop; })(document.querySelector('.week-scroll'))").await;
        assert!(scrolled > 7.0 * 44.0, "{scrolled}");

        // Another window asks for the dentist: the ghost appears without a reload, the
        // view stays where it was, and the badge counts it at once.
        let (client, _notes) = served.client().await;
        send_elsewhere(&client, "book the dentist").await;
        wait_for(&page, "[...document.querySelectorAll('.week .event.ghost')].some(g => g.textContent.includes('Dentist'))").await;
        let kept: (f64, String) = eval(&page, "[document.querySelector('.week-scroll').scrollTop, document.activeElement.dataset.uid || document.activeElement.className]").await;
        assert_eq!(kept, (scrolled, "planning@test".to_owned()));
        wait_for(
            &page,
            &format!("{} === '1'", text_of(".places .badge.count")),
        )
        .await;
        screenshot_at(&page, "calendar-live", screen).await;

        // The Proposals page: a new proposal joins the list; the card in focus keeps it.
        go(&page, "#/proposals").await;
        wait_for(
            &page,
            "document.querySelectorAll('.page .card.proposal button.primary').length === 1",
        )
        .await;
        eval::<bool>(&page, "(b => { b.focus(); window.keptFocus = b; return true; })(document.querySelector('.page .card.proposal button.primary'))").await;
        send_elsewhere(&client, "and lunch").await;
        wait_for(
            &page,
            "document.querySelectorAll('.page .card.proposal button.primary').length === 2",
        )
        .await;
        let focused: bool = eval(
            &page,
            "document.activeElement === window.keptFocus && window.keptFocus.isConnected",
        )
        .await;
        assert!(focused, "the focused card kept the focus");
        wait_for(
            &page,
            &format!("{} === '2'", text_of(".places .badge.count")),
        )
        .await;
        screenshot_at(&page, "proposals-live", screen).await;
        page.close().await.unwrap();
    }
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ghosts_sit_beside_the_events_they_overlap_and_a_date_is_one_step_away() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    for screen in SCREENS {
        let hearth = with_events(
            &[(
                "standup@test",
                "Standup",
                "20300506T090000Z",
                "20300506T093000Z",
            )],
            "[defaults]\ntime_zone = \"UTC\"\n",
        );
        let id = stage_event(&hearth, "Review", "2030-05-06T09:00");
        let served = Served::start(hearth, &[], &[]);
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        go(&page, "#/calendar").await;
        wait_for(&page, "document.querySelector('.week .day')").await;
        // May 2030 in one step, not 178 clicks.
        go_to_date(&page, "2030-05-06").await;
        let ghost = format!(".event.ghost[data-proposal=\"{id}\"]");
        wait_for(&page, &format!("document.querySelector('{ghost}') && document.querySelector('.week .event[data-uid=\"standup@test\"]')")).await;
        let title: String = eval(&page, &text_of(".page h1")).await;
        assert!(title.contains("2030"), "{title}");
        eval::<bool>(&page, &format!("(e => {{ e.scrollIntoView({{block: 'center'}}); return true; }})(document.querySelector('{ghost}'))")).await;
        // Its buttons are whole, and nothing covers them or the event beside it.
        let clipped: Vec<String> = eval(
            &page,
            &format!("(g => {{ const r = g.getBoundingClientRect(); return [...g.querySelectorAll('button')].filter(b => {{ const c = b.getBoundingClientRect(); return c.left < r.left - 0.5 || c.right > r.right + 0.5 || c.top < r.top - 0.5 || c.bottom > r.bottom + 0.5; }}).map(b => b.getAttribute('aria-label')); }})(document.querySelector('{ghost}'))"),
        )
        .await;
        assert!(clipped.is_empty(), "clipped at {screen:?}: {clipped:?}");
        for selector in [
            format!("{ghost} button.primary"),
            format!("{ghost} button.danger"),
            ".week .event[data-uid=\"standup@test\"]".to_owned(),
        ] {
            let reachable: bool = eval(&page, &hittable(&selector)).await;
            assert!(reachable, "{selector} is covered at {screen:?}");
        }
        screenshot_at(&page, "calendar-ghost", screen).await;
        tap(&page, &format!("{ghost} button.primary")).await;
        wait_for(&page, &format!("!document.querySelector('{ghost}')")).await;
        wait_for(&page, "[...document.querySelectorAll('.week .event[data-uid]')].some(e => e.textContent.includes('Review'))").await;
        page.close().await.unwrap();
    }
    chromium.close().await;
}

/// A replay scenario whose answer holds a task list.
const TASKS: &str = r#"name: tasks
turns:
  - steps:
      - text: "Here is the plan:\n\n- [ ] buy milk\n- [x] call home\n"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn axe_finds_nothing_critical_or_serious_on_any_page_and_dialogs_return_the_focus() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let hearth = with_events(
        &[(
            "standup@test",
            "Standup",
            "20300304T090000Z",
            "20300304T093000Z",
        )],
        "[defaults]\ntime_zone = \"UTC\"\n",
    );
    stage_event(&hearth, "Review", "2030-03-04T09:00");
    let folder = hearth.home.path().join("demo");
    std::fs::create_dir_all(&folder).unwrap();
    hearth.ok(&[
        "projects",
        "new",
        "Demo",
        "--folder",
        &folder.display().to_string(),
    ]);
    let scenario = hearth.write("tasks.yaml", TASKS).display().to_string();
    let served = Served::start(hearth, &["--scenario", &scenario], &[]);
    for screen in SCREENS {
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        // The browser keeps the tabs of the first round: a new one is a landing.
        wait_for(&page, &format!("document.querySelector('{VISIBLE}')")).await;
        let landing: bool = eval(
            &page,
            &format!("document.querySelector('{VISIBLE}').dataset.landing === 'true'"),
        )
        .await;
        if !landing {
            click(&page, ".tab-new").await;
        }
        wait_for(
            &page,
            &format!("document.querySelector('{VISIBLE}').dataset.landing === 'true'"),
        )
        .await;
        assert_accessible(&page, &format!("the landing at {screen:?}")).await;
        let input = format!("{VISIBLE} textarea");
        type_into(&page, &input, "what is the plan").await;
        press_enter(&page, &input).await;
        wait_for(&page, &format!("document.querySelector('{VISIBLE} .turn-footer time') && document.querySelector('{VISIBLE} .markdown input[type=checkbox]')")).await;
        assert_accessible(&page, &format!("a chat with a task list at {screen:?}")).await;
        screenshot_at(&page, "chat-tasks", screen).await;
        for (route, ready) in [
            (
                "#/projects",
                "document.querySelector('.page [data-project]')",
            ),
            ("#/project/demo", "document.querySelector('.page .facts')"),
            ("#/calendar", "true"),
            (
                "#/proposals",
                "document.querySelector('.page .card.proposal button.primary')",
            ),
            (
                "#/setup",
                "document.querySelector('.page h1') && !document.querySelector('.page').textContent.includes('Reading')",
            ),
            (
                "#/audit",
                "document.querySelectorAll('table.audit tbody td').length > 1",
            ),
        ] {
            go(&page, route).await;
            wait_for(&page, &format!("location.hash === '{route}'")).await;
            if route == "#/calendar" {
                wait_for(&page, "document.querySelector('.calendar-nav input[type=date]') && document.querySelector('.week .day')").await;
                go_to_date(&page, "2030-03-04").await;
                wait_for(&page, "document.querySelector('.week .event.ghost') && document.querySelector('.week .event[data-uid]')").await;
            } else {
                wait_for(&page, ready).await;
            }
            let headings: usize = eval(&page, "[...document.querySelectorAll('h1')].filter(h => h.offsetParent !== null || h.classList.contains('visually-hidden')).length").await;
            assert!(headings >= 1, "no h1 on {route}");
            assert_accessible(&page, &format!("{route} at {screen:?}")).await;
        }
        // A dialog gives the focus back to the button that opened it.
        go(&page, "#/").await;
        if screen.0 < 760 {
            tap(&page, ".menu-button").await;
        }
        wait_for(
            &page,
            "document.querySelector('.recent .button[aria-label^=Rename]')",
        )
        .await;
        eval::<bool>(&page, "(b => { b.focus(); b.click(); return true; })(document.querySelector('.recent .button[aria-label^=Rename]'))").await;
        wait_for(&page, "document.querySelector('dialog[open]')").await;
        click(&page, "dialog[open] button[value=cancel]").await;
        wait_for(&page, "!document.querySelector('dialog')").await;
        let back: String = eval(
            &page,
            "document.activeElement.getAttribute('aria-label') || document.activeElement.tagName",
        )
        .await;
        assert!(back.starts_with("Rename"), "the focus went to {back}");
        page.close().await.unwrap();
    }
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_text_names_people_uses_icons_marks_the_open_chat_and_warns_of_a_repeat() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    for screen in SCREENS {
        let model = proposing_model(&[
            ("Dentist", "2030-03-04T15:00"),
            ("Dentist", "2030-03-04T15:00"),
        ]);
        let hearth = Hearth::new();
        hearth.write("config.toml", &mock_config(&model));
        let served = Served::start(hearth, &[], &[]);
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        // No Markdown punctuation where no calendar or project exists yet.
        wait_for(
            &page,
            &format!("document.querySelector('{VISIBLE} .landing-shelves code')"),
        )
        .await;
        for (route, ready) in [
            ("#/", ".home:not([hidden]) .landing-shelves code"),
            ("#/projects", ".page:not([hidden]) .empty code"),
            ("#/calendar", ".page:not([hidden]) .calendar-notes p"),
        ] {
            go(&page, route).await;
            wait_for(&page, &format!("document.querySelector('{ready}')")).await;
            let text: String = eval(&page, "document.body.innerText").await;
            assert!(!text.contains('`'), "{route}: {text}");
        }
        go(&page, "#/").await;

        // Two identical proposals, from two chats.
        let input = format!("{VISIBLE} textarea");
        type_into(&page, &input, "book the dentist").await;
        press_enter(&page, &input).await;
        wait_for(
            &page,
            &format!("document.querySelector('{VISIBLE} .card.proposal button.primary')"),
        )
        .await;
        click(&page, ".tab-new").await;
        wait_for(&page, "document.querySelectorAll('.tab').length === 2").await;
        wait_for(
            &page,
            &format!("document.querySelector('{VISIBLE}').dataset.landing === 'true'"),
        )
        .await;
        type_into(&page, &input, "book the dentist again").await;
        press_enter(&page, &input).await;
        wait_for(
            &page,
            &format!("document.querySelector('{VISIBLE} .card.proposal button.primary')"),
        )
        .await;

        // The open chat is the marked one in Recent chats.
        if screen.0 < 760 {
            tap(&page, ".menu-button").await;
        }
        wait_for(&page, "document.querySelectorAll('.recent').length >= 2 && document.querySelector('.recent.active')").await;
        let marked: (String, String, usize) = eval(&page, "[document.querySelector('.recent.active').dataset.session, document.querySelector('.recent.active .recent-open').getAttribute('aria-current'), document.querySelectorAll('.recent-open[aria-current]').length]").await;
        let active: String = eval(&page, "window.hearth.active").await;
        assert_eq!(marked, (active, "true".to_owned(), 1));
        let (on, off): (String, String) = eval(&page, "[getComputedStyle(document.querySelector('.recent.active')).backgroundColor, getComputedStyle(document.querySelector('.recent:not(.active):not(.open), .recent.open:not(.active)')).backgroundColor]").await;
        assert_ne!(on, off);
        // One icon set: no emoji or dingbat in the controls, an SVG in each.
        let glyphs: String = eval(&page, "([...document.querySelectorAll('.sidebar button, .tab-bar button, .top-bar button, .composer button')].map(b => b.textContent).join('').match(/[\\u2190-\\u2BFF\\u{1F000}-\\u{1FAFF}]/gu) || []).join('')").await;
        assert_eq!(glyphs, "", "glyphs in the controls");
        let icons: bool = eval(&page, "['.new-chat', '.tab-new', '.theme', '.recent .button'].every(s => document.querySelector(s + ' svg.icon'))").await;
        assert!(icons);
        screenshot_at(&page, "recent-active", screen).await;
        if screen.0 < 760 {
            tap(&page, ".menu-button").await;
        }

        // The proposals view warns that the change is the same as another.
        go(&page, "#/proposals").await;
        wait_for(
            &page,
            "document.querySelectorAll('.page .card.proposal .notice.repeat').length === 2",
        )
        .await;
        screenshot_at(&page, "proposals-repeat", screen).await;
        // On a phone the Approve button is below the change it approves: scroll to it.
        eval::<bool>(&page, "(e => { e.scrollIntoView({ block: 'center' }); return true; })(document.querySelector('.page .card.proposal button.primary'))").await;
        tap(&page, ".page .card.proposal button.primary").await;
        wait_for(
            &page,
            "document.querySelectorAll('.page .card.proposal button.primary').length === 1",
        )
        .await;
        wait_for(
            &page,
            &format!(
                "{}.includes('already approved')",
                text_of(".page .card.proposal .notice.repeat")
            ),
        )
        .await;

        // The audit log names the chat, not its URI (which is in the tooltip).
        go(&page, "#/audit").await;
        wait_for(
            &page,
            "document.querySelectorAll('table.audit td.actor').length > 1",
        )
        .await;
        let actors: Vec<(String, String)> = eval(&page, "[...document.querySelectorAll('table.audit td.actor > *')].map(a => [a.textContent, a.title])").await;
        assert!(
            actors
                .iter()
                .all(|(text, _)| !text.contains("hearth-chat:")),
            "{actors:?}"
        );
        assert!(
            actors
                .iter()
                .any(|(text, title)| title.starts_with("hearth-chat:") && !text.is_empty()),
            "{actors:?}"
        );
        screenshot_at(&page, "audit-actors", screen).await;
        page.close().await.unwrap();
    }
    chromium.close().await;
}
