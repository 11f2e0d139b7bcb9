//! Agent Home's project settings and provider setup in a real browser, against a real
//! `hearth serve`: a project made from the page, its instructions written with a
//! preview and saved to its `project.md`, a source that fails shown as failed (on the
//! project page, in the settings and in a project chat's composer) and ready after the
//! cause is fixed and Retry pressed, the project deleted only once its name is typed; a
//! provider whose check fails saves nothing, one that answers is added to `config.toml`
//! (comments kept) with its key in a 0600 file, listed, and offered in the composer's
//! Agent choice at once, where a message sent to it is answered without a restart or a
//! reload. Both pages pass axe-core at a laptop's and a phone's size.

use std::os::unix::fs::PermissionsExt;

use hearth_protocol::{ProviderList, ProviderListParams};
use hearth_test_support::{MockResponse, OpenAiStream};
use serde_json::json;

use super::agent_home::{logged_in, text_of};
use super::browser_support::{
    Chromium, SCREENS, VISIBLE, answered, assert_accessible, click, eval, screenshot_at, send,
    set_viewport, type_into, wait_for,
};
use super::mock::server;
use super::serve_support::Served;
use super::support::Hearth;

const PAGE: &str = ".page:not([hidden])";

const INSTRUCTIONS: &str = "# House rules\n\nAnswer in **French**, and cite the notes.";

/// Sets a field's value as the page reads it on submit.
async fn set_value(page: &chromiumoxide::Page, selector: &str, value: &str) {
    let set: bool = eval(
        page,
        &format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return false; e.value = {}; e.dispatchEvent(new Event('input', {{ bubbles: true }})); return true; }})()",
            serde_json::to_string(selector).unwrap(),
            serde_json::to_string(value).unwrap()
        ),
    )
    .await;
    assert!(set, "nothing matches {selector}");
}

/// Whether the page is wider than the window (something pushes it sideways).
async fn overflows(page: &chromiumoxide::Page) -> bool {
    eval(
        page,
        "document.querySelector('.page:not([hidden])').scrollWidth > document.querySelector('.page:not([hidden])').clientWidth + 1",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_is_made_edited_its_failed_source_retried_and_deleted_only_by_name() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let served = Served::start(Hearth::new(), &[], &[]);
    let page = logged_in(&chromium, &served).await;
    let parent = tempfile::tempdir().unwrap();
    let folder = parent.path().canonicalize().unwrap().join("notes");

    // Made from the projects page (the folder is created).
    page.evaluate("location.hash = '#/projects'").await.unwrap();
    wait_for(
        &page,
        &format!("document.querySelector('{PAGE} form.new-project')"),
    )
    .await;
    type_into(&page, "form.new-project input[name=name]", "Notes").await;
    type_into(
        &page,
        "form.new-project input[name=folder]",
        &folder.display().to_string(),
    )
    .await;
    click(&page, "form.new-project button[type=submit]").await;
    wait_for(
        &page,
        &format!(
            "location.hash.startsWith('#/project/') && ({}) === 'Notes'",
            text_of(&format!("{PAGE} h1"))
        ),
    )
    .await;
    assert!(folder.join("project.md").is_file());
    let project_id: String = eval(
        &page,
        "decodeURIComponent(location.hash.slice('#/project/'.length))",
    )
    .await;

    // Settings: description and instructions, previewed, then saved.
    click(&page, &format!("{PAGE} a[href$='/settings']")).await;
    wait_for(&page, &format!("document.querySelector('{PAGE} form.settings-form') && document.querySelector('{PAGE} .source-status')")).await;
    let heading: String = eval(&page, &text_of(&format!("{PAGE} h1"))).await;
    assert_eq!(heading, "Settings of Notes");
    set_value(
        &page,
        &format!("{PAGE} input[name=description]"),
        "My reading notes",
    )
    .await;
    set_value(
        &page,
        &format!("{PAGE} textarea[name=instructions]"),
        INSTRUCTIONS,
    )
    .await;
    click(
        &page,
        &format!("{PAGE} .editor-modes button[aria-pressed=false]"),
    )
    .await;
    wait_for(
        &page,
        &format!("!document.querySelector('{PAGE} .instructions-preview').hidden"),
    )
    .await;
    let preview: (String, String) = eval(
        &page,
        &format!(
            "[({h}).trim(), ({s}).trim()]",
            h = text_of(&format!("{PAGE} .instructions-preview :is(h1, h2, h3, h4)")),
            s = text_of(&format!("{PAGE} .instructions-preview strong"))
        ),
    )
    .await;
    assert_eq!(preview, ("House rules".to_owned(), "French".to_owned()));
    click(
        &page,
        &format!("{PAGE} form.settings-form button[type=submit]"),
    )
    .await;
    wait_for(
        &page,
        &format!(
            "({}) === 'Saved.'",
            text_of(&format!("{PAGE} .save-status"))
        ),
    )
    .await;
    let file = std::fs::read_to_string(folder.join("project.md")).unwrap();
    assert!(file.contains(INSTRUCTIONS), "{file}");
    assert!(file.contains("description: My reading notes"), "{file}");
    // Saved by the user: still trusted, and the project page shows them.
    assert!(served.hearth.ok(&["projects", "list"]).contains("[ready]"));
    page.evaluate(format!("location.hash = '#/project/{project_id}'"))
        .await
        .unwrap();
    wait_for(
        &page,
        &format!(
            "({}).includes('Answer in **French**')",
            text_of(&format!("{PAGE} pre.instructions"))
        ),
    )
    .await;

    // A source that cannot be read: failed, with its error, everywhere it shows.
    page.evaluate(format!("location.hash = '#/project/{project_id}/settings'"))
        .await
        .unwrap();
    wait_for(
        &page,
        &format!("document.querySelector('{PAGE} .source-status')"),
    )
    .await;
    type_into(
        &page,
        &format!("{PAGE} input[aria-label='New source']"),
        "reading.md",
    )
    .await;
    click(
        &page,
        &format!("{PAGE} input[aria-label='New source'] + button"),
    )
    .await;
    let failed = format!("{PAGE} .source-status li[data-source='reading.md'][data-state=failed]");
    wait_for(&page, &format!("document.querySelector(\"{failed}\")")).await;
    let error: String = eval(
        &page,
        &text_of(&format!("{PAGE} .source-status .source-error")),
    )
    .await;
    assert!(!error.is_empty(), "the failure says why");
    for screen in SCREENS {
        set_viewport(&page, screen.0, screen.1).await;
        assert_accessible(&page, &format!("the project settings at {screen:?}")).await;
        assert!(!overflows(&page).await, "the settings fit at {screen:?}");
        screenshot_at(&page, "project-settings-failed-source", screen).await;
    }
    set_viewport(&page, SCREENS[0].0, SCREENS[0].1).await;
    page.evaluate(format!("location.hash = '#/project/{project_id}'"))
        .await
        .unwrap();
    wait_for(
        &page,
        &format!(
            "({}).includes('failed')",
            text_of(&format!("{PAGE} .project-state"))
        ),
    )
    .await;
    let state: String = eval(&page, &text_of(&format!("{PAGE} .project-state"))).await;
    assert!(
        !state.contains("ready"),
        "a failed source is never called ready: {state}"
    );
    assert!(state.contains("1 of 1 source failed"), "{state}");

    // A chat in the project says so in its composer.
    click(&page, &format!("{PAGE} .page-header .button.primary")).await;
    wait_for(
        &page,
        "document.querySelector('.session-view:not([hidden]) .context-status[data-state=failed]')",
    )
    .await;
    let composer: String = eval(
        &page,
        &text_of(".session-view:not([hidden]) .context-status"),
    )
    .await;
    assert!(composer.contains("1 of 1 source failed"), "{composer}");
    screenshot_at(&page, "project-chat-context-failed", SCREENS[0]).await;

    // The cause fixed (while the page shows the failure), Retry makes it ready.
    page.evaluate(format!("location.hash = '#/project/{project_id}/settings'"))
        .await
        .unwrap();
    wait_for(&page, &format!("document.querySelector(\"{failed}\")")).await;
    std::fs::write(folder.join("reading.md"), "# Reading\n\nChapter one.\n").unwrap();
    click(
        &page,
        &format!("{PAGE} button[aria-label='Retry reading.md']"),
    )
    .await;
    wait_for(&page, &format!("document.querySelector(\"{PAGE} .source-status li[data-source='reading.md'][data-state=ready]\")")).await;
    page.evaluate(format!("location.hash = '#/project/{project_id}'"))
        .await
        .unwrap();
    wait_for(
        &page,
        &format!(
            "({}).includes('context ready')",
            text_of(&format!("{PAGE} .project-state"))
        ),
    )
    .await;

    // Deleting asks for the name; Cancel and a wrong name delete nothing.
    page.evaluate(format!("location.hash = '#/project/{project_id}/settings'"))
        .await
        .unwrap();
    wait_for(
        &page,
        &format!("document.querySelector('{PAGE} .danger-zone button')"),
    )
    .await;
    click(&page, &format!("{PAGE} .danger-zone button")).await;
    wait_for(
        &page,
        "document.querySelector('dialog.confirm-delete[open]')",
    )
    .await;
    assert_accessible(&page, "the delete confirmation").await;
    type_into(&page, "dialog.confirm-delete input", "Note").await;
    let disabled: bool = eval(
        &page,
        "document.querySelector('dialog.confirm-delete button[value=ok]').disabled",
    )
    .await;
    assert!(disabled, "a wrong name cannot delete");
    click(&page, "dialog.confirm-delete button[value=cancel]").await;
    wait_for(&page, "!document.querySelector('dialog.confirm-delete')").await;
    assert!(served.hearth.ok(&["projects", "list"]).contains("Notes"));
    click(&page, &format!("{PAGE} .danger-zone button")).await;
    wait_for(
        &page,
        "document.querySelector('dialog.confirm-delete[open]')",
    )
    .await;
    type_into(&page, "dialog.confirm-delete input", "Notes").await;
    wait_for(
        &page,
        "!document.querySelector('dialog.confirm-delete button[value=ok]').disabled",
    )
    .await;
    click(&page, "dialog.confirm-delete button[value=ok]").await;
    wait_for(&page, "location.hash === '#/projects'").await;
    let listed = served.hearth.ok(&["projects", "list"]);
    assert!(listed.starts_with("no projects yet"), "{listed}");
    assert!(folder.join("project.md").is_file(), "the folder stays");
    chromium.close().await;
}

const CONFIG: &str = "# My own notes on this setup\n[defaults]\ntime_zone = \"UTC\" # I travel\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_is_added_only_once_its_check_passes_and_answers_at_once() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let models = server();
    let hearth = Hearth::new();
    let config_file = hearth.write("config.toml", CONFIG);
    let served = Served::start(hearth, &[], &[]);
    let page = logged_in(&chromium, &served).await;

    page.evaluate("location.hash = '#/setup'").await.unwrap();
    wait_for(
        &page,
        &format!("document.querySelector(\"{PAGE} a[href='#/setup/provider']\")"),
    )
    .await;
    click(&page, &format!("{PAGE} a[href='#/setup/provider']")).await;
    wait_for(
        &page,
        &format!("document.querySelector('{PAGE} form.provider-form')"),
    )
    .await;
    for screen in SCREENS {
        set_viewport(&page, screen.0, screen.1).await;
        assert_accessible(&page, &format!("the provider setup at {screen:?}")).await;
        assert!(
            !overflows(&page).await,
            "the provider setup fits at {screen:?}"
        );
        screenshot_at(&page, "provider-setup", screen).await;
    }
    set_viewport(&page, SCREENS[0].0, SCREENS[0].1).await;
    type_into(&page, &format!("{PAGE} input[name=id]"), "lab").await;
    type_into(
        &page,
        &format!("{PAGE} input[name=baseUrl]"),
        &models.url_with("/v1"),
    )
    .await;
    type_into(&page, &format!("{PAGE} input[name=model]"), "mock-model").await;

    // A wrong key: the check fails, the error is shown, nothing is saved.
    models.set_fallback(MockResponse::openai_error(
        401,
        "Incorrect API key provided",
        "invalid_request_error",
    ));
    type_into(&page, &format!("{PAGE} input[name=key]"), "sk-wrong").await;
    click(
        &page,
        &format!("{PAGE} form.provider-form button[type=submit]"),
    )
    .await;
    wait_for(
        &page,
        &format!("document.querySelector('{PAGE} .provider-result.failed')"),
    )
    .await;
    let shown: String = eval(&page, &text_of(&format!("{PAGE} .provider-result"))).await;
    assert!(shown.contains("nothing was saved"), "{shown}");
    assert!(shown.contains("Incorrect API key provided"), "{shown}");
    assert_eq!(std::fs::read_to_string(&config_file).unwrap(), CONFIG);
    assert!(!served.hearth.home.path().join("keys").exists());
    screenshot_at(&page, "provider-setup-failed", SCREENS[0]).await;

    // The right key: saved, listed, the key in a private file, the comments kept.
    models.set_fallback(MockResponse::json(
        200,
        &json!({"object": "list", "data": [{"id": "mock-model", "object": "model"}]}),
    ));
    models.enqueue_for(
        "/v1/chat/completions",
        OpenAiStream::text_answer("mock-model", &["p"], 1, 1),
    );
    set_value(&page, &format!("{PAGE} input[name=key]"), "sk-right-4242").await;
    click(
        &page,
        &format!("{PAGE} form.provider-form button[type=submit]"),
    )
    .await;
    wait_for(
        &page,
        &format!("document.querySelector('{PAGE} .provider-result.added')"),
    )
    .await;
    let shown: String = eval(&page, &text_of(&format!("{PAGE} .provider-result"))).await;
    assert!(shown.contains("Added lab"), "{shown}");
    assert!(shown.contains("Ready"), "usable without a restart: {shown}");
    let text = std::fs::read_to_string(&config_file).unwrap();
    assert!(text.starts_with(CONFIG), "{text}");
    assert!(
        text.contains("[providers.lab]\nkind = \"openai\""),
        "{text}"
    );
    assert!(!text.contains("sk-right-4242"), "{text}");
    let key_file = served.hearth.home.path().join("keys/lab.key");
    assert_eq!(
        std::fs::read_to_string(&key_file).unwrap(),
        "sk-right-4242\n"
    );
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    let (client, _notifications) = served.client().await;
    let listed = client
        .call::<ProviderList>(&ProviderListParams {})
        .await
        .unwrap();
    assert!(
        listed.providers.iter().any(|provider| provider.id == "lab"),
        "{listed:?}"
    );
    page.evaluate("location.hash = '#/setup'").await.unwrap();
    wait_for(
        &page,
        &format!("document.querySelector(\"{PAGE} [data-provider='lab']\")"),
    )
    .await;

    // The composer offers it now, without a reload, and it answers a message.
    page.evaluate("window.__notReloaded = true; location.hash = '#/'")
        .await
        .unwrap();
    let agent = format!("{VISIBLE} select[aria-label=Agent]");
    wait_for(
        &page,
        &format!("document.querySelector(\"{agent} option[value='lab']\")"),
    )
    .await;
    models.enqueue_for(
        "/v1/chat/completions",
        OpenAiStream::text_answer("mock-model", &["Hello ", "from the lab."], 4, 4),
    );
    eval::<bool>(
        &page,
        &format!(
            "(s => {{ s.value = 'lab'; s.dispatchEvent(new Event('change')); return true; }})(document.querySelector('{agent}'))"
        ),
    )
    .await;
    // The landing is replaced by a session of the new agent, ready to send.
    wait_for(
        &page,
        &format!(
            "(v => v && v.dataset.session.startsWith('hearth-session:lab/') && !v.querySelector('.composer').inert && document.querySelectorAll('.session-view').length === 1)(document.querySelector('{VISIBLE}'))"
        ),
    )
    .await;
    send(&page, "Hello, lab").await;
    answered(&page, 1).await;
    let answer: String = eval(
        &page,
        &text_of(&format!("{VISIBLE} .turn:last-child .message.assistant")),
    )
    .await;
    assert!(answer.contains("Hello from the lab."), "{answer}");
    let asked = models
        .requests()
        .into_iter()
        .find(|request| {
            request.path.ends_with("/chat/completions")
                && String::from_utf8_lossy(&request.body).contains("Hello, lab")
        })
        .unwrap_or_else(|| {
            let bodies: Vec<String> = models
                .requests()
                .iter()
                .map(|request| String::from_utf8_lossy(&request.body).into_owned())
                .collect();
            panic!("the message did not reach the added provider: {bodies:?}")
        });
    assert_eq!(asked.header("authorization"), Some("Bearer sk-right-4242"));
    let same_page: bool = eval(&page, "window.__notReloaded === true").await;
    assert!(same_page, "the page was not reloaded");
    screenshot_at(&page, "provider-added-answers", SCREENS[0]).await;
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_uploaded_or_dropped_on_the_sources_becomes_a_ready_source() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let hearth = Hearth::new();
    let folder = hearth.home.path().join("thesis");
    std::fs::create_dir_all(&folder).unwrap();
    hearth.ok(&[
        "projects",
        "new",
        "Thesis",
        "--folder",
        &folder.display().to_string(),
    ]);
    let home = hearth.home.path().to_path_buf();
    let served = Served::start(hearth, &[], &[]);
    for screen in SCREENS {
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        page.evaluate("location.hash = '#/project/Thesis/settings'")
            .await
            .unwrap();
        wait_for(
            &page,
            &format!("document.querySelector('{PAGE} .upload-source input[type=file]')"),
        )
        .await;
        let name = format!("notes-{}.md", screen.0);
        // Picked with the upload button's file input…
        page.evaluate(format!(
            "(i => {{ const t = new DataTransfer(); t.items.add(new File(['# Chapter one\\n\\nthe quince argument'], {name:?}, {{ type: 'text/markdown' }})); i.files = t.files; i.dispatchEvent(new Event('change')); }})(document.querySelector('{PAGE} .upload-source input[type=file]'))"
        ))
        .await
        .unwrap();
        wait_for(&page, &format!("[...document.querySelectorAll('{PAGE} .source-status li')].some(li => li.textContent.includes({name:?}))")).await;
        // …and dropped on the sources.
        let dropped = format!("dropped-{}.txt", screen.0);
        page.evaluate(format!(
            "(s => {{ const t = new DataTransfer(); t.items.add(new File(['plain words'], {dropped:?}, {{ type: 'text/plain' }})); s.dispatchEvent(new DragEvent('dragenter', {{ dataTransfer: t, bubbles: true, cancelable: true }})); s.dispatchEvent(new DragEvent('drop', {{ dataTransfer: t, bubbles: true, cancelable: true }})); }})(document.querySelector('{PAGE} section[aria-labelledby=settings-sources]'))"
        ))
        .await
        .unwrap();
        wait_for(&page, &format!("[...document.querySelectorAll('{PAGE} .source-status li')].some(li => li.textContent.includes({dropped:?}))")).await;
        let error: String = eval(
            &page,
            &format!("document.querySelector('{PAGE} .card-error')?.textContent ?? ''"),
        )
        .await;
        assert_eq!(error, "");
        assert_accessible(&page, "a project's sources after an upload").await;
        page.close().await.unwrap();
    }
    // The files are kept in the data directory, and the project reads them.
    // Kept by content: the same bytes under two names are one folder with both names.
    let kept: usize = std::fs::read_dir(home.join("attachments"))
        .unwrap()
        .map(|folder| std::fs::read_dir(folder.unwrap().path()).unwrap().count())
        .sum();
    assert_eq!(kept, 4);
    let shown = served.hearth.ok(&["projects", "show", "Thesis"]);
    assert!(
        shown.contains("notes-1280.md") && shown.contains("dropped-390.txt"),
        "{shown}"
    );
    chromium.close().await;
}
