//! What Agent Home offers on the messages of a chat, as the chat apps people come from
//! do: code blocks highlighted with their language and a copy button, copy on every
//! message, regenerate on the last answer, edit-and-resend as a new branch (the old one
//! stays reachable), files attached by the picker, by pasting and by dropping anywhere
//! on the chat (sent to the model: images as images, text as text) — also while an
//! answer streams, queued with their message and sent with it — and a search inside
//! one chat that reaches turns not yet loaded. Each runs at 1280×800 and 390×844 with
//! axe-core's checks.

use std::sync::Arc;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::browser::{
    PermissionDescriptor, PermissionSetting, SetPermissionParams,
};
use hearth_test_support::{Gate, MockModelServer, MockResponse, OpenAiStream, RecordedRequest};
use serde_json::Value;

use super::agent_home::logged_in;
use super::browser_support::{
    Chromium, ECHO_SCENARIO, SCREENS, VISIBLE, answered, assert_accessible, click, eval,
    screenshot_at, send, set_viewport, type_into, wait_for,
};
use super::mock::{MODEL, mock_config, server};
use super::serve_support::Served;
use super::support::Hearth;

/// The code every answer shows.
const CODE: &str = "fn main() {\n    let answer = 42; // the answer\n}";

/// The text of the last user message of a chat completions request (its text parts,
/// when it has images too).
fn last_prompt(request: &RecordedRequest) -> String {
    let json = request.json();
    let Some(user) = json["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rev().find(|m| m["role"] == "user"))
    else {
        return String::new();
    };
    match &user["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A model that names chats "Code talk" and answers every prompt with the prompt's first
/// line and a block of Rust.
fn coding_model() -> Arc<MockModelServer> {
    let model = server();
    model.set_responder(Arc::new(|request| {
        if request.path.starts_with("/v1/models") {
            let list = serde_json::json!({"object": "list", "data": [
                {"id": MODEL, "object": "model"},
                {"id": "mock-offered", "object": "model"},
            ]});
            return Some(MockResponse::json(200, &list));
        }
        if !request.path.starts_with("/v1/chat/completions") {
            return None;
        }
        let body = String::from_utf8_lossy(&request.body);
        if body.contains("You name conversations") {
            return Some(OpenAiStream::text_answer(MODEL, &["Code talk"], 1, 1).into());
        }
        let prompt = last_prompt(request);
        let first = prompt.lines().next().unwrap_or_default().to_owned();
        let answer = format!("Answer to {first}.\n\n```rust\n{CODE}\n```\n");
        Some(OpenAiStream::text_answer(MODEL, &[&answer], 3, 3).into())
    }));
    model
}

/// The chat completions requests that were not for a title.
fn turns_asked(model: &MockModelServer) -> Vec<RecordedRequest> {
    model
        .requests()
        .into_iter()
        .filter(|request| request.path.starts_with("/v1/chat/completions"))
        .filter(|request| {
            !String::from_utf8_lossy(&request.body).contains("You name conversations")
        })
        .collect()
}

/// Lets the page read and write the clipboard, as a user's click would.
async fn allow_clipboard(page: &Page, served: &Served) {
    for name in ["clipboard-read", "clipboard-write"] {
        let mut params =
            SetPermissionParams::new(PermissionDescriptor::new(name), PermissionSetting::Granted);
        params.origin = Some(served.url.trim_end_matches('/').to_owned());
        page.execute(params).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_offer_highlighted_code_copy_regenerate_and_edit_as_a_branch() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    for screen in SCREENS {
        let model = coding_model();
        let hearth = Hearth::new();
        hearth.write("config.toml", &mock_config(&model));
        let served = Served::start(hearth, &[], &[]);
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        allow_clipboard(&page, &served).await;
        send(&page, "show me code").await;
        answered(&page, 1).await;

        // The block names its language and highlights its keywords and comment.
        let block = format!("{VISIBLE} .turn .code-block");
        let language: String = eval(
            &page,
            &format!("document.querySelector('{block} .code-language').textContent"),
        )
        .await;
        assert_eq!(language, "rust");
        let kinds: Vec<String> = eval(
            &page,
            &format!("[...document.querySelectorAll('{block} code span')].map(s => s.className + ':' + s.textContent)"),
        )
        .await;
        assert!(kinds.contains(&"tok-keyword:fn".to_owned()), "{kinds:?}");
        assert!(kinds.contains(&"tok-number:42".to_owned()), "{kinds:?}");
        assert!(
            kinds.contains(&"tok-comment:// the answer".to_owned()),
            "{kinds:?}"
        );
        let shown: String = eval(
            &page,
            &format!("document.querySelector('{block} code').textContent"),
        )
        .await;
        assert_eq!(shown, CODE);

        // Copy the code, then the whole answer, then the prompt.
        click(&page, &format!("{block} button.copy")).await;
        wait_for(
            &page,
            &format!("document.querySelector('{block} button.copy').dataset.copied === 'true'"),
        )
        .await;
        let copied: String = eval(&page, "await navigator.clipboard.readText()").await;
        assert_eq!(copied, CODE);
        click(&page, &format!("{VISIBLE} .turn-footer button.copy")).await;
        wait_for(&page, &format!("document.querySelector('{VISIBLE} .turn-footer button.copy').dataset.copied === 'true'")).await;
        let copied: String = eval(&page, "await navigator.clipboard.readText()").await;
        assert_eq!(
            copied,
            format!("Answer to show me code.\n\n```rust\n{CODE}\n```")
        );
        click(&page, &format!("{VISIBLE} .turn-actions button.copy")).await;
        wait_for(&page, &format!("document.querySelector('{VISIBLE} .turn-actions button.copy').dataset.copied === 'true'")).await;
        let copied: String = eval(&page, "await navigator.clipboard.readText()").await;
        assert_eq!(copied, "show me code");
        assert_accessible(&page, "a chat with code").await;
        screenshot_at(&page, "code-block-copied", screen).await;

        // Regenerate: the same message again, as a second turn; only the last answer offers it.
        click(&page, &format!("{VISIBLE} .turn-footer button.regenerate")).await;
        answered(&page, 2).await;
        let regenerate: usize = eval(
            &page,
            &format!("document.querySelectorAll('{VISIBLE} button.regenerate').length"),
        )
        .await;
        assert_eq!(regenerate, 1);
        let prompts: Vec<String> = turns_asked(&model).iter().map(last_prompt).collect();
        assert_eq!(prompts, ["show me code", "show me code"]);
        let users: Vec<String> = eval(
            &page,
            &format!(
                "[...document.querySelectorAll('{VISIBLE} .turn .bubble')].map(b => b.textContent)"
            ),
        )
        .await;
        assert_eq!(users, ["show me code", "show me code"]);

        // Edit the second message: a branch from the first turn, in a chat of its own.
        click(
            &page,
            &format!("{VISIBLE} .turn:last-child .turn-actions button[title^='Edit']"),
        )
        .await;
        wait_for(
            &page,
            &format!("document.querySelector('{VISIBLE} textarea.edit-input')"),
        )
        .await;
        page.evaluate(format!(
            "(a => {{ a.value = 'show me other code'; a.dispatchEvent(new Event('input')); }})(document.querySelector('{VISIBLE} textarea.edit-input'))"
        ))
        .await
        .unwrap();
        click(
            &page,
            &format!("{VISIBLE} .edit-message button[type=submit]"),
        )
        .await;
        wait_for(
            &page,
            &format!("document.querySelectorAll('{VISIBLE} .chats-bar .chip').length === 2"),
        )
        .await;
        wait_for(&page, &format!("[...document.querySelectorAll('{VISIBLE} .turn .bubble')].map(b => b.textContent).join('|') === 'show me code|show me other code'")).await;
        answered(&page, 2).await;
        let asked = turns_asked(&model);
        let branch = asked.last().unwrap().json();
        let said: Vec<String> = branch["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(
            said,
            ["show me code", "show me other code"],
            "the branch carries the turn before the edit only"
        );
        // The first branch is still there, whole.
        click(&page, &format!("{VISIBLE} .chats-bar .chip:first-child")).await;
        wait_for(&page, &format!("[...document.querySelectorAll('{VISIBLE} .turn .bubble')].map(b => b.textContent).join('|') === 'show me code|show me code'")).await;
        assert_accessible(&page, "a chat with a branch").await;
        chromium_page_done(page).await;
    }
    chromium.close().await;
}

async fn chromium_page_done(page: Page) {
    page.close().await.unwrap();
}

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
    0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// JavaScript building a `DataTransfer` holding a file named `name` of `type` whose
/// bytes are `bytes` (a JS array literal).
fn transfer(name: &str, media_type: &str, bytes: &str) -> String {
    format!(
        "(() => {{ const t = new DataTransfer(); t.items.add(new File([new Uint8Array({bytes})], {name:?}, {{ type: {media_type:?} }})); return t; }})()"
    )
}

fn js_bytes(bytes: &[u8]) -> String {
    format!("{bytes:?}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_picked_pasted_and_dropped_reach_the_model_and_stay_with_the_turn() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    for screen in SCREENS {
        let model = coding_model();
        let hearth = Hearth::new();
        hearth.write(
            "config.toml",
            &format!(
                "{}\n[limits]\nattachment_bytes = 4096\n",
                mock_config(&model)
            ),
        );
        let home = hearth.home.path().to_path_buf();
        let served = Served::start(hearth, &[], &[]);
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        wait_for(&page, &format!("document.querySelector('{VISIBLE} .composer') && !document.querySelector('{VISIBLE} .composer').inert")).await;

        // Picked: the image, through the file input.
        page.evaluate(format!(
            "(i => {{ i.files = {}.files; i.dispatchEvent(new Event('change')); }})(document.querySelector('{VISIBLE} .composer input[type=file]'))",
            transfer("dot.png", "image/png", &js_bytes(PNG))
        ))
        .await
        .unwrap();
        // Pasted: a text file, into the message field.
        page.evaluate(format!(
            "document.querySelector('{VISIBLE} textarea.composer-input').dispatchEvent(new ClipboardEvent('paste', {{ clipboardData: {}, bubbles: true, cancelable: true }}))",
            transfer("notes.txt", "text/plain", &js_bytes(b"the secret word is parsnip"))
        ))
        .await
        .unwrap();
        // Dropped on the conversation, far from the composer.
        page.evaluate(format!(
            "(v => {{ const t = {}; v.dispatchEvent(new DragEvent('dragenter', {{ dataTransfer: t, bubbles: true, cancelable: true }})); v.dispatchEvent(new DragEvent('drop', {{ dataTransfer: t, bubbles: true, cancelable: true }})); }})(document.querySelector('{VISIBLE} .landing-title'))",
            transfer("plan.md", "text/markdown", &js_bytes(b"# Plan\n\nplant beans"))
        ))
        .await
        .unwrap();
        // Too large for [limits]: refused with the reason, the others kept.
        page.evaluate(format!(
            "(i => {{ i.files = {}.files; i.dispatchEvent(new Event('change')); }})(document.querySelector('{VISIBLE} .composer input[type=file]'))",
            transfer("big.bin", "application/octet-stream", "new Array(5000).fill(7)")
        ))
        .await
        .unwrap();
        wait_for(&page, &format!("document.querySelectorAll('{VISIBLE} .tray .attachment-chip').length === 3 && !document.querySelector('{VISIBLE} .composer-error').hidden")).await;
        let error: String = eval(
            &page,
            &format!("document.querySelector('{VISIBLE} .composer-error').textContent"),
        )
        .await;
        assert!(
            error.contains("big.bin") && error.contains("attachment_bytes"),
            "{error}"
        );
        let preview: bool = eval(&page, &format!("document.querySelector('{VISIBLE} .tray img.attachment-preview').src.startsWith('data:image/png')")).await;
        assert!(preview);
        assert_accessible(&page, "a composer with files").await;
        screenshot_at(&page, "attachments-in-composer", screen).await;

        send(&page, "what is in these files?").await;
        answered(&page, 1).await;
        let chips: Vec<String> = eval(&page, &format!("[...document.querySelectorAll('{VISIBLE} .turn .attachments .attachment-name')].map(c => c.textContent)")).await;
        let mut sorted = chips.clone();
        sorted.sort();
        assert_eq!(sorted, ["dot.png", "notes.txt", "plan.md"], "{chips:?}");
        let tray: bool = eval(
            &page,
            &format!("document.querySelector('{VISIBLE} .tray').hidden"),
        )
        .await;
        assert!(tray, "the composer's files went with the message");

        // The model got the image as an image and the texts' content.
        let request = turns_asked(&model).pop().unwrap().json();
        let user = request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .unwrap()
            .clone();
        let text = user["content"].to_string();
        assert!(text.contains("the secret word is parsnip"), "{text}");
        assert!(text.contains("plant beans"), "{text}");
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(PNG);
        assert!(
            text.contains(&format!("data:image/png;base64,{encoded}")),
            "{text}"
        );

        // Kept in the data directory, owner-only.
        let kept: Vec<std::path::PathBuf> = walk(&home.join("attachments"));
        assert_eq!(kept.len(), 3, "{kept:?}");
        for path in &kept {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", path.display());
        }
        assert_accessible(&page, "a turn with files").await;
        page.close().await.unwrap();
    }
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_attached_while_an_answer_streams_is_queued_with_its_message_and_delivered() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    // The first answer streams until the test opens the gate.
    let gate = Gate::new();
    let model = server();
    let held = gate.clone();
    model.set_responder(Arc::new(move |request| {
        if !request.path.starts_with("/v1/chat/completions") {
            return None;
        }
        if String::from_utf8_lossy(&request.body).contains("You name conversations") {
            return Some(OpenAiStream::text_answer(MODEL, &["Stories"], 1, 1).into());
        }
        let prompt = last_prompt(request);
        if prompt.starts_with("Tell me a long story") {
            return Some(
                OpenAiStream::new(MODEL)
                    .role()
                    .text("Once upon a time")
                    .hold(&held)
                    .text(", the end.")
                    .finish("stop")
                    .usage(3, 3)
                    .done()
                    .into(),
            );
        }
        let first = prompt.lines().next().unwrap_or_default().to_owned();
        Some(OpenAiStream::text_answer(MODEL, &[&format!("Answer to {first}.")], 3, 3).into())
    }));
    let hearth = Hearth::new();
    hearth.write("config.toml", &mock_config(&model));
    let served = Served::start(hearth, &[], &[]);
    let page = logged_in(&chromium, &served).await;
    wait_for(&page, &format!("document.querySelector('{VISIBLE} .composer') && !document.querySelector('{VISIBLE} .composer').inert")).await;

    send(&page, "Tell me a long story").await;
    wait_for(
        &page,
        &format!("(document.querySelector('{VISIBLE} .message.assistant') || {{}}).textContent?.includes('Once upon a time')"),
    )
    .await;
    // While it streams: a file is attached and a message sent; it waits in the queue
    // with its file.
    page.evaluate(format!(
        "(i => {{ i.files = {}.files; i.dispatchEvent(new Event('change')); }})(document.querySelector('{VISIBLE} .composer input[type=file]'))",
        transfer("notes.txt", "text/plain", &js_bytes(b"the secret word is turnip"))
    ))
    .await
    .unwrap();
    wait_for(
        &page,
        &format!("document.querySelectorAll('{VISIBLE} .tray .attachment-chip').length === 1"),
    )
    .await;
    send(&page, "What does the file say?").await;
    wait_for(
        &page,
        &format!("(q => q && q.textContent.includes('What does the file say?') && q.querySelector('.queued-file')?.textContent === 'notes.txt')(document.querySelector('{VISIBLE} .queue .queued'))"),
    )
    .await;
    let error_hidden: bool = eval(
        &page,
        &format!("document.querySelector('{VISIBLE} .composer-error').hidden"),
    )
    .await;
    assert!(error_hidden, "queueing with a file is not refused");
    assert_eq!(turns_asked(&model).len(), 1, "the queued message waits");
    assert_accessible(&page, "a queued message with a file").await;
    screenshot_at(&page, "queued-with-file", SCREENS[0]).await;

    // The answer ends: the queued message goes with its file.
    gate.open();
    answered(&page, 2).await;
    let chips: Vec<String> = eval(&page, &format!("[...document.querySelectorAll('{VISIBLE} .turn:last-child .attachments .attachment-name')].map(c => c.textContent)")).await;
    assert_eq!(chips, ["notes.txt"]);
    let queue_empty: bool = eval(
        &page,
        &format!("document.querySelectorAll('{VISIBLE} .queue .queued').length === 0"),
    )
    .await;
    assert!(queue_empty);
    let asked = turns_asked(&model);
    assert_eq!(asked.len(), 2, "{asked:?}");
    let prompt = last_prompt(&asked[1]);
    assert!(prompt.starts_with("What does the file say?"), "{prompt}");
    assert!(prompt.contains("the secret word is turnip"), "{prompt}");
    chromium.close().await;
}

/// Every file under a folder.
fn walk(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

const SCENARIO: &str = ECHO_SCENARIO;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn find_in_a_chat_reaches_a_turn_not_yet_loaded() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    let hearth = Hearth::new();
    let scenario = hearth.write("echo.yaml", SCENARIO).display().to_string();
    hearth.write("config.toml", "[defaults]\nprovider = \"replay\"\n");
    hearth.ok(&["run", "--scenario", &scenario, "the aardvark question"]);
    for index in 0..120 {
        hearth.ok(&[
            "run",
            "--scenario",
            &scenario,
            "-c",
            &format!("filler number {index}"),
        ]);
    }
    // Another chat says the word too: it is not found from this one.
    hearth.ok(&["run", "--scenario", &scenario, "aardvark elsewhere"]);
    let session = hearth.session_uris().into_iter().find(|uri| {
        hearth
            .ok(&["sessions", "show", uri])
            .contains("the aardvark question")
    });
    let session = session.unwrap();
    let served = Served::start(hearth, &["--scenario", &scenario], &[]);
    for screen in SCREENS {
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        page.evaluate(format!("window.hearth.openSession({session:?})"))
            .await
            .unwrap();
        wait_for(
            &page,
            &format!("document.querySelectorAll('{VISIBLE} .turn').length >= 40"),
        )
        .await;
        let loaded: bool = eval(&page, &format!("[...document.querySelectorAll('{VISIBLE} .bubble')].some(b => b.textContent.includes('aardvark'))")).await;
        let shown: Vec<String> = eval(
            &page,
            &format!("[...document.querySelectorAll('{VISIBLE} .bubble')].map(b => b.textContent)"),
        )
        .await;
        assert!(
            !loaded,
            "the first turn is not among those loaded at first: {} {:?}",
            shown.len(),
            &shown[..3]
        );
        click(
            &page,
            &format!("{VISIBLE} .chat-tools button[aria-expanded]"),
        )
        .await;
        type_into(&page, &format!("{VISIBLE} .find-input"), "AARDVARK").await;
        wait_for(
            &page,
            &format!("document.querySelectorAll('{VISIBLE} .find-hit').length === 1"),
        )
        .await;
        assert_accessible(&page, "find in a chat").await;
        screenshot_at(&page, "find-in-chat", screen).await;
        click(&page, &format!("{VISIBLE} .find-hit")).await;
        wait_for(&page, &format!("document.querySelector('{VISIBLE} .turn.found') && document.querySelector('{VISIBLE} .turn.found .bubble').textContent === 'the aardvark question'")).await;
        let marked: usize = eval(&page, "CSS.highlights.get('chat-find')?.size ?? 0").await;
        assert!(marked >= 2, "the prompt and its echo are marked: {marked}");
        // Esc closes the search and its marks.
        page.evaluate(format!("document.querySelector('{VISIBLE} .find-input').dispatchEvent(new KeyboardEvent('keydown', {{ key: 'Escape', bubbles: true }}))")).await.unwrap();
        wait_for(&page, &format!("document.querySelector('{VISIBLE} .find-panel').hidden && !CSS.highlights.has('chat-find')")).await;
        page.close().await.unwrap();
    }
    chromium.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_of_hearths_agent_is_picked_in_the_composer() {
    let Some(chromium) = Chromium::launch().await else {
        return;
    };
    for screen in SCREENS {
        let model = coding_model();
        let hearth = Hearth::new();
        hearth.write(
            "config.toml",
            &mock_config(&model).replace(
                "default_model = \"mock-model\"",
                "default_model = \"mock-model\"\nmodels = [\"mock-model\", \"mock-large\"]",
            ),
        );
        let served = Served::start(hearth, &[], &[]);
        let page = logged_in(&chromium, &served).await;
        set_viewport(&page, screen.0, screen.1).await;
        let select = format!("{VISIBLE} select[aria-label=Model]");
        wait_for(&page, &format!("!document.querySelector('{select}').hidden && document.querySelector('{select}').options.length === 3")).await;
        let options: Vec<String> = eval(
            &page,
            &format!("[...document.querySelector('{select}').options].map(o => o.textContent)"),
        )
        .await;
        assert_eq!(
            options,
            ["mock-model", "mock-large", "More models from the provider…"]
        );
        assert_accessible(&page, "the model select").await;
        // Asking the provider adds what it offers.
        page.evaluate(format!("(s => {{ s.value = 'hearth:ask-the-provider'; s.dispatchEvent(new Event('change')); }})(document.querySelector('{select}'))")).await.unwrap();
        wait_for(&page, &format!("[...document.querySelector('{select}').options].some(o => o.value === 'mock-offered')")).await;
        page.evaluate(format!("(s => {{ s.value = 'mock-large'; s.dispatchEvent(new Event('change')); }})(document.querySelector('{select}'))")).await.unwrap();
        send(&page, &format!("which model at {}", screen.0)).await;
        answered(&page, 1).await;
        let used = turns_asked(&model).pop().unwrap().json()["model"].clone();
        assert_eq!(used, "mock-large");
        page.close().await.unwrap();
    }
    chromium.close().await;
}
