//! A page reload restores the turn (issue 35), in real headless Chromium against the real
//! `oi-server` binary and the scripted model: the page is reloaded while text streams, while
//! code waits for approval (Run is there and works), while code runs (Stop is there, the
//! output goes on in one panel) and after a long output, and each time the conversation shown
//! after the reload is the one the live page showed before it.
//!
//! Slow, so ignored by `cargo test`: run with `cargo xtask web-tests`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;
mod webdriver;

use std::time::Duration;

use oi_testkit::{Ending, Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::{Value, json};
use webdriver::{Browser, ENTER};

const CONNECTED: &str = "document.getElementById('status').textContent === 'connected'";
const CONVERSATION: &str =
    "return [...document.getElementById('log').children].map((e) => e.textContent);";
const CODE: &str = "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(1.5)\nprint('x' * 30000)";

fn model() -> Script {
    Script::responder(|body: &Value| {
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .unwrap_or_default();
        let text = webdriver::text_of(&last);
        if last["role"] != "user" {
            return Reply::text("All **done**.");
        }
        if text.contains("stream") {
            return Reply::text_pieces(["Some **bold", " words** here", " and the end."])
                .ending(Ending::StallAfter(3, Duration::from_secs(4)));
        }
        webdriver::code(body, "Running it.", CODE)
    })
}

async fn conversation(browser: &Browser) -> Value {
    browser.js(CONVERSATION, json!([])).await
}

/// Reloads, waits for the page to show the conversation again, and checks it is `before`.
async fn reload_same(browser: &Browser, before: &Value, what: &str) {
    browser.reload().await;
    browser
        .wait_for(CONNECTED, 15, "the socket after reload")
        .await;
    let expected = serde_json::to_string(before).unwrap();
    browser
        .wait_for(
            &format!(
                "JSON.stringify([...document.getElementById('log').children].map((e) => e.textContent)) === {expected:?}"
            ),
            5,
            what,
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn a_reload_restores_each_step_of_a_turn_in_chromium() {
    if webdriver::skip_reason().is_some() {
        return;
    }
    let model = ScriptedServer::start(model()).await.unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .asking()
        .cwd(work.path())
        .start();
    let browser = Browser::start().await;
    browser.goto(&format!("http://{}/", server.addr())).await;
    browser.wait_for(CONNECTED, 15, "the socket").await;

    // While text streams (the model stalls in the middle of the Markdown).
    browser.type_into("#input", "stream please").await;
    browser.type_into("#input", ENTER).await;
    browser
        .wait_for(
            "document.body.textContent.includes('words here')",
            15,
            "the first words",
        )
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before = conversation(&browser).await;
    reload_same(&browser, &before, "the streaming answer as it was").await;
    browser
        .wait_for(
            "[...document.querySelectorAll('.msg.assistant')].length === 1 && document.querySelector('.msg.assistant').textContent === 'Some bold words here and the end.' && document.querySelector('.msg.assistant strong') && document.getElementById('stop').hidden",
            15,
            "the answer in one message, Markdown rendered, once",
        )
        .await;

    // While code waits for approval: Run is there after the reload, and works.
    browser.type_into("#input", "run code").await;
    browser.type_into("#input", ENTER).await;
    browser
        .wait_for(
            "document.querySelector('.approval.pending .run')",
            15,
            "Run",
        )
        .await;
    let before = conversation(&browser).await;
    reload_same(&browser, &before, "the code waiting for approval").await;
    browser
        .wait_for(
            "document.querySelector('.approval.pending .run:not([disabled])')",
            5,
            "Run armed",
        )
        .await;
    browser.click(".approval.pending .run").await;

    // While code runs: Stop is there after the reload, the output goes on in one panel.
    browser
        .wait_for(
            "document.body.textContent.includes('tick 0')",
            20,
            "the first tick",
        )
        .await;
    let before = conversation(&browser).await;
    assert!(before.to_string().contains("Approved."), "{before}");
    reload_same(&browser, &before, "the running code").await;
    assert_eq!(
        browser
            .js("return document.getElementById('stop').hidden;", json!([]))
            .await,
        json!(false),
        "Stop is there"
    );
    browser
        .wait_for(
            "document.body.textContent.includes('All done.') && document.getElementById('stop').hidden",
            40,
            "the end of the turn",
        )
        .await;
    let outputs = browser
        .js(
            "return [...document.querySelectorAll('.panel.output pre')].map((p) => p.textContent);",
            json!([]),
        )
        .await;
    let outputs = outputs.as_array().unwrap();
    assert_eq!(outputs.len(), 1, "one output panel: {outputs:?}");
    assert!(
        outputs[0].as_str().unwrap().ends_with("xxxx\n")
            || outputs[0].as_str().unwrap().ends_with("xxxx")
    );

    // After the long output: the user's view, not the model's truncated copy.
    let before = conversation(&browser).await;
    reload_same(&browser, &before, "the finished turn").await;
    assert!(!before.to_string().contains("summarize"), "{before}");
    browser.quit().await;
}
