//! The web page's code and output panels (issue 27), in real headless Chromium against the
//! real `oi-server` binary and the scripted model: long output capped with "Show all",
//! Decline (the code does not run: a file it would write is never written), Edit (the edited
//! code is what runs, after its own approval), the keyboard (Shift+Tab to Run and Enter, Escape
//! stops), and the dark and light colour schemes.
//!
//! Slow, so ignored by `cargo test`: run with `cargo xtask web-tests`. Without chromium and
//! chromium-driver the test skips, saying why, unless `OI_TEST_REQUIRE_ALL=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;
mod webdriver;

use oi_testkit::{Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::{Value, json};
use webdriver::{Browser, ENTER, ESCAPE, SHIFT, TAB};

const CONNECTED: &str = "document.getElementById('status').textContent === 'connected'";
const IDLE: &str = "document.getElementById('stop').hidden";
const PENDING: &str = "document.querySelectorAll('.approval.pending').length === 1";

/// The scripted model: answers by what it was last sent.
fn model_script() -> Script {
    Script::responder(|body| {
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .unwrap_or_default();
        let role = last["role"].as_str().unwrap_or_default();
        let text = webdriver::text_of(&last);
        if role == "tool"
            || role == "function"
            || text.starts_with("Code output:")
            || text.starts_with("The code above was executed")
        {
            return Reply::text("Done.");
        }
        if let Some(rest) = text.strip_prefix("Run this code instead of the block above:") {
            let source = rest
                .trim()
                .trim_start_matches("```python")
                .trim_end_matches("```")
                .trim();
            return webdriver::code(body, "Running your version.", source);
        }
        if text.contains("sleep") {
            let source = "import time\nprint('sleeping', flush=True)\ntime.sleep(600)";
            return webdriver::code(body, "Sleeping.", source);
        }
        if text.contains("long") {
            return webdriver::code(body, "A lot of output.", "print('x' * 20000)");
        }
        if text.contains("write") {
            let source = "open('declined.txt', 'w').write('ran')\nprint('wrote')";
            return webdriver::code(body, "Writing a file.", source);
        }
        Reply::text("Hello.")
    })
}

/// Waits for the approval, then reaches Run from the message box with Shift+Tab, as a
/// keyboard user does (the page never puts the focus on Run by itself).
async fn tab_to_run(browser: &Browser) {
    browser.wait_for(PENDING, 15, "the approval").await;
    browser
        .wait_for(
            "document.activeElement === document.getElementById('input') && !document.querySelector('.approval.pending .run').disabled",
            5,
            "Run to be ready, the focus still in the message box",
        )
        .await;
    for _ in 0..3 {
        browser.press_together(&[SHIFT, TAB]).await;
    }
    let focused = browser
        .js("return document.activeElement.className;", json!([]))
        .await;
    assert_eq!(focused, json!("primary run"));
}

async fn send(browser: &Browser, text: &str) {
    browser.type_into("#input", text).await;
    browser.type_into("#input", ENTER).await;
}

/// The page's background colour under the colour scheme `scheme`.
async fn background(browser: &Browser, scheme: &str) -> Value {
    browser
        .cdp(
            "Emulation.setEmulatedMedia",
            json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
        )
        .await;
    browser
        .js(
            "return getComputedStyle(document.body).backgroundColor;",
            json!([]),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn long_output_decline_edit_and_dark_mode_in_chromium() {
    if webdriver::skip_reason().is_some() {
        return;
    }
    let model = ScriptedServer::start(model_script()).await.unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .asking()
        .cwd(work.path())
        .start();
    let browser = Browser::start().await;
    browser.goto(&format!("http://{}/", server.addr())).await;
    browser.wait_for(CONNECTED, 15, "the socket").await;

    // Light and dark, by the browser's preference.
    assert_eq!(background(&browser, "dark").await, json!("rgb(13, 17, 23)"));
    assert_eq!(
        background(&browser, "light").await,
        json!("rgb(255, 255, 255)")
    );

    // Long output: the last 8 000 characters, and a button that shows all of it. With the
    // keyboard: the focus stays in the message box when the code asks; Shift+Tab three times
    // (Edit, Decline, Run) reaches Run, and Enter runs it.
    send(&browser, "long output please").await;
    tab_to_run(&browser).await;
    browser.press(ENTER).await;
    browser
        .wait_for(
            &format!("{IDLE} && document.querySelector('.panel.output .more') && !document.querySelector('.panel.output .more').hidden"),
            20,
            "the capped output",
        )
        .await;
    let capped = browser
        .js(
            "const p = document.querySelector('.panel.output'); return [p.querySelector('pre').textContent.length, p.querySelector('.more').textContent];",
            json!([]),
        )
        .await;
    assert_eq!(capped[0], json!(8001), "'…' and the last 8 000: {capped}");
    assert!(
        capped[1].as_str().unwrap().starts_with("Show all (2000"),
        "{capped}"
    );
    browser.click(".panel.output .more").await;
    let full = browser
        .js(
            "const p = document.querySelector('.panel.output'); return [p.querySelector('pre').textContent.trim(), p.querySelector('.more').hidden];",
            json!([]),
        )
        .await;
    assert_eq!(full, json!(["x".repeat(20000), true]));

    // Escape in the message box stops what runs.
    send(&browser, "sleep a while").await;
    tab_to_run(&browser).await;
    browser.press(ENTER).await;
    browser
        .wait_for(
            "[...document.querySelectorAll('.panel.output pre')].some(p => p.textContent.includes('sleeping')) && !document.getElementById('stop').hidden",
            20,
            "the sleeping code",
        )
        .await;
    browser.type_into("#input", ESCAPE).await;
    browser.wait_for(IDLE, 10, "Escape to stop it").await;

    // Decline: the code does not run.
    send(&browser, "write a file").await;
    browser.wait_for(PENDING, 15, "the approval").await;
    browser.click(".approval.pending .decline").await;
    browser
        .wait_for(
            &format!(
                "{IDLE} && document.body.textContent.includes('Declined: the code was not run.')"
            ),
            15,
            "the declined turn to end",
        )
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        !work.path().join("declined.txt").exists(),
        "declined code ran"
    );

    // Edit: the edited code goes back to the model, comes back for approval, and runs.
    send(&browser, "write a file again").await;
    browser.wait_for(PENDING, 15, "the approval").await;
    browser.click(".approval.pending .edit").await;
    let area = ".panel.code textarea.edit";
    let original = browser
        .js(
            "return document.querySelector(arguments[0]).value;",
            json!([area]),
        )
        .await;
    assert!(
        original.as_str().unwrap().contains("declined.txt"),
        "{original}"
    );
    browser.clear(area).await;
    browser.type_into(area, "print('edited', 6*7)").await;
    browser.click(".approval.pending button.primary").await;
    browser
        .wait_for(
            "[...document.querySelectorAll('.panel.code pre')].some(p => p.textContent === \"print('edited', 6*7)\") && document.querySelector('.approval.pending .run')",
            15,
            "the edited code, waiting for approval",
        )
        .await;
    browser.click(".approval.pending .run:enabled").await;
    browser
        .wait_for(
            &format!("{IDLE} && [...document.querySelectorAll('.panel.output pre')].some(p => p.textContent.includes('edited 42'))"),
            20,
            "the edited code's output",
        )
        .await;
    assert!(
        !work.path().join("declined.txt").exists(),
        "the original code ran"
    );

    let errors: Vec<Value> = browser
        .console()
        .await
        .into_iter()
        .filter(|e| e["level"] == json!("SEVERE"))
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
    browser.quit().await;
}
