//! The system's Chromium, headless, driven over the DevTools protocol for Agent Home's
//! end-to-end tests. No browser is ever downloaded: without `chromium` on the machine the
//! tests say so and pass, unless `HEARTH_REQUIRE_BROWSER=1` (CI) makes that a failure.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::page::{Page, ScreenshotParams};
use futures::StreamExt;
use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;

/// How long a condition may take to come true in the page.
pub const PAGE_WAIT: Duration = Duration::from_secs(20);

/// A headless Chromium with a profile of its own.
pub struct Chromium {
    pub browser: Browser,
    handler: JoinHandle<()>,
    _profile: tempfile::TempDir,
}

fn executable() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        let path = std::env::var_os("PATH")?;
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

impl Chromium {
    /// Starts the system's Chromium, or `None` (the test is skipped with a note) when the
    /// machine has none and CI did not ask for it.
    #[allow(clippy::print_stderr)]
    pub async fn launch() -> Option<Self> {
        if executable().is_none() {
            let required = std::env::var("HEARTH_REQUIRE_BROWSER").is_ok_and(|value| value == "1");
            assert!(
                !required,
                "HEARTH_REQUIRE_BROWSER=1 but no chromium is installed (apt-get install chromium)"
            );
            eprintln!("skipped: no chromium on this machine (apt-get install chromium)");
            return None;
        }
        Some(Self::launch_with(tempfile::tempdir().unwrap()).await)
    }

    /// Quits the browser and starts a new one on the same profile (what survives is what
    /// a browser keeps on disk).
    pub async fn restart(self) -> Self {
        let Self {
            mut browser,
            handler,
            _profile: profile,
        } = self;
        browser.close().await.unwrap();
        browser.wait().await.unwrap();
        handler.abort();
        Self::launch_with(profile).await
    }

    async fn launch_with(profile: tempfile::TempDir) -> Self {
        let config = BrowserConfig::builder()
            .chrome_executable(executable().unwrap())
            .user_data_dir(profile.path())
            .new_headless_mode()
            .no_sandbox()
            .window_size(1280, 860)
            .viewport(None)
            .arg("--disable-gpu")
            .arg("--disable-dev-shm-usage")
            .arg("--no-first-run")
            .arg("--disable-extensions")
            .launch_timeout(Duration::from_secs(30))
            .request_timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let (browser, mut handler) = Browser::launch(config).await.unwrap();
        let handler = tokio::spawn(async move { while handler.next().await.is_some() {} });
        Self {
            browser,
            handler,
            _profile: profile,
        }
    }

    /// A new tab at `url`.
    pub async fn open(&self, url: &str) -> Page {
        let page = self.browser.new_page(url).await.unwrap();
        page.wait_for_navigation().await.unwrap();
        page
    }

    /// Closes the browser.
    pub async fn close(mut self) {
        self.browser.close().await.ok();
        self.browser.wait().await.ok();
        self.handler.abort();
    }
}

/// Runs JavaScript (an expression or `async` body's value) in the page and returns its
/// value.
pub async fn eval<T: DeserializeOwned>(page: &Page, expression: &str) -> T {
    let params = EvaluateParams::builder()
        .expression(format!("(async () => {{ return ({expression}); }})()"))
        .await_promise(true)
        .return_by_value(true)
        .build()
        .unwrap();
    let result = page
        .evaluate_expression(params)
        .await
        .unwrap_or_else(|error| panic!("evaluating {expression}: {error}"));
    result
        .into_value()
        .unwrap_or_else(|error| panic!("the value of {expression}: {error}"))
}

/// Waits until `condition` (a JavaScript expression) is true in the page.
pub async fn wait_for(page: &Page, condition: &str) {
    let deadline = Instant::now() + PAGE_WAIT;
    loop {
        let met: bool = eval(page, &format!("Boolean({condition})")).await;
        if met {
            return;
        }
        if Instant::now() > deadline {
            let body: String = eval(page, "document.body.innerText.slice(0, 2000)").await;
            let chats: String = eval(
                page,
                "JSON.stringify(window.hearth ? [...window.hearth.tabs.values()].map(t => t.chat) : null).slice(0, 4000)",
            )
            .await;
            panic!(
                "timed out waiting for `{condition}`; the page shows:\n{body}\nits chats: {chats}"
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Clicks the first element matching `selector` (through the DOM, as a keyboard user's
/// Enter would).
pub async fn click(page: &Page, selector: &str) {
    let clicked: bool = eval(
        page,
        &format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return false; e.click(); return true; }})()",
            serde_json::to_string(selector).unwrap()
        ),
    )
    .await;
    assert!(clicked, "nothing matches {selector}");
}

/// Types into the focused-or-selected text field as a user would: each key is a real
/// input event.
pub async fn type_into(page: &Page, selector: &str, text: &str) {
    let element = page
        .find_element(selector)
        .await
        .unwrap_or_else(|error| panic!("finding {selector}: {error}"));
    element
        .focus()
        .await
        .unwrap_or_else(|error| panic!("focusing {selector}: {error}"));
    element
        .type_str(text)
        .await
        .unwrap_or_else(|error| panic!("typing into {selector}: {error}"));
}

/// Presses Enter in an element.
pub async fn press_enter(page: &Page, selector: &str) {
    page.find_element(selector)
        .await
        .unwrap()
        .press_key("Enter")
        .await
        .unwrap();
}

/// Where the tests leave their screenshots.
pub fn screenshot_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("agent-home-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Saves a PNG of the page as `<name>.png` in the screenshot folder.
pub async fn screenshot(page: &Page, name: &str) {
    let bytes = page
        .screenshot(
            ScreenshotParams::builder()
                .format(CaptureScreenshotFormat::Png)
                .build(),
        )
        .await
        .unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(screenshot_dir().join(format!("{name}.png")), bytes).unwrap();
}

/// The selector of the visible session view.
pub const VISIBLE: &str = ".session-view:not([hidden])";

/// The two screens every layout test runs at: a laptop and a phone.
pub const SCREENS: [(u32, u32); 2] = [(1280, 800), (390, 844)];

/// Makes the page's viewport `width`×`height` CSS pixels (a phone's is a mobile one).
pub async fn set_viewport(page: &Page, width: u32, height: u32) {
    use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
    let params = SetDeviceMetricsOverrideParams::builder()
        .width(i64::from(width))
        .height(i64::from(height))
        .device_scale_factor(1.0)
        .mobile(width < 760)
        .build()
        .unwrap();
    page.execute(params).await.unwrap();
    wait_for(page, &format!("window.innerWidth === {width}")).await;
}

/// axe-core's script, as `.ci/web` installs it into `target/web-tools`.
fn axe_script() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/web-tools/node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!(
            "reading {}: {error}; run .ci/web, which installs axe-core there",
            path.display()
        )
    })
}

/// The critical and serious accessibility violations axe-core finds in the page as it
/// is now, one line each (rule, impact, the first offending elements).
pub async fn axe_violations(page: &Page) -> Vec<String> {
    let loaded: bool = eval(page, "typeof window.axe === 'object'").await;
    if !loaded {
        let params = EvaluateParams::builder()
            .expression(axe_script())
            .build()
            .unwrap();
        page.evaluate_expression(params).await.unwrap();
    }
    eval(
        page,
        "(await axe.run(document, { resultTypes: ['violations'] })).violations
            .filter(v => v.impact === 'critical' || v.impact === 'serious')
            .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')}`)",
    )
    .await
}

/// Fails with the list when axe-core finds a critical or serious violation; `what`
/// names the page in the message.
pub async fn assert_accessible(page: &Page, what: &str) {
    let violations = axe_violations(page).await;
    assert!(
        violations.is_empty(),
        "axe-core on {what}: {} critical or serious violations:\n{}",
        violations.len(),
        violations.join("\n")
    );
}

/// Saves a screenshot both where the tests keep theirs and, when `HEARTH_SCREENS` names
/// a folder, there too.
pub async fn screenshot_at(page: &Page, name: &str, (width, height): (u32, u32)) {
    let name = format!("{name}-{width}x{height}");
    screenshot(page, &name).await;
    if let Some(dir) = std::env::var_os("HEARTH_SCREENS") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(
            screenshot_dir().join(format!("{name}.png")),
            std::path::Path::new(&dir).join(format!("{name}.png")),
        )
        .unwrap();
    }
}

/// A replay scenario whose every answer echoes the prompt at once.
pub const ECHO_SCENARIO: &str = r#"name: echo
turns:
  - steps:
      - text: "You said: {{prompt}}"
        stream: whole
"#;

/// Types a message in the visible chat's composer and sends it with Enter.
pub async fn send(page: &Page, text: &str) {
    let input = format!("{VISIBLE} textarea.composer-input");
    type_into(page, &input, text).await;
    press_enter(page, &input).await;
}

/// Waits until the visible chat shows `turns` turns, the last one finished.
pub async fn answered(page: &Page, turns: usize) {
    wait_for(
        page,
        &format!(
            "document.querySelectorAll('{VISIBLE} .turn').length === {turns} && document.querySelector('{VISIBLE} .turn:last-child .turn-footer time')"
        ),
    )
    .await;
}
