//! The web page when the connection goes (issue 27), in real headless Chromium against the
//! real `oi-server` binary in acknowledge mode and the scripted model: the server is killed,
//! the page says the connection is lost, a new server comes up on the same port and the page
//! reconnects by itself, says so and works; another client takes the session over, the page
//! says so and takes it back. Every reply shows once (the page acks what it gets).
//!
//! Slow, so ignored by `cargo test`: run with `cargo xtask web-tests`. Without chromium and
//! chromium-driver the test skips, saying why, unless `OI_TEST_REQUIRE_ALL=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;
mod webdriver;

use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess};
use serde_json::{Value, json};
use webdriver::{Browser, ENTER};

const CONNECTED: &str = "document.getElementById('status').textContent === 'connected'";

fn server(model: &ScriptedServer, port: u16) -> ServerProcess {
    Launch::new(&model.base_url())
        .asking()
        .port(port)
        .env("INTERPRETER_REQUIRE_ACKNOWLEDGE", "true")
        .start()
}

async fn say(browser: &Browser, text: &str) {
    browser.type_into("#input", text).await;
    browser.type_into("#input", ENTER).await;
    let answer = format!("echo: {text}");
    browser
        .wait_for(
            &format!(
                "document.body.textContent.includes({answer:?}) && document.getElementById('stop').hidden"
            ),
            20,
            &answer,
        )
        .await;
    let shown = browser
        .js(
            "return [...document.querySelectorAll('.msg.assistant')].filter(m => m.textContent === arguments[0]).length;",
            json!([answer]),
        )
        .await;
    assert_eq!(shown, json!(1), "{answer} shows once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn the_page_says_when_the_connection_goes_and_comes_back_in_chromium() {
    if webdriver::skip_reason().is_some() {
        return;
    }
    let model = ScriptedServer::start(Script::responder(|body: &Value| {
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .unwrap_or_default();
        let text = last["content"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_owned();
        Reply::text(format!("echo: {text}")).chunked(4)
    }))
    .await
    .unwrap();
    let first = server(&model, 0);
    let port = first.port;
    let browser = Browser::start().await;
    browser.goto(&format!("http://127.0.0.1:{port}/")).await;
    browser.wait_for(CONNECTED, 15, "the socket").await;
    say(&browser, "one").await;

    // The server goes away: the page says so, and keeps trying.
    drop(first);
    browser
        .wait_for(
            "document.getElementById('status').textContent === 'offline' && !document.getElementById('banner').hidden && document.getElementById('banner-text').textContent.startsWith('Connection lost')",
            15,
            "the page to say the connection is lost",
        )
        .await;
    let refused = browser
        .js(
            "document.getElementById('input').value = 'lost'; document.getElementById('composer').requestSubmit(); return document.getElementById('banner-text').textContent;",
            json!([]),
        )
        .await;
    assert!(
        refused
            .as_str()
            .unwrap_or_default()
            .contains("nothing was sent"),
        "{refused}"
    );
    assert_eq!(
        browser
            .js("return document.getElementById('input').value;", json!([]))
            .await,
        json!("lost"),
        "the unsent text stays in the box"
    );
    browser.clear("#input").await;

    // A server on the same port again: the page reconnects by itself, says so, and works.
    let _second = server(&model, port);
    browser
        .wait_for(
            &format!(
                "{CONNECTED} && document.getElementById('banner-text').textContent === 'Reconnected.'"
            ),
            30,
            "the page to reconnect",
        )
        .await;
    say(&browser, "two").await;

    // Another client takes the session over (4000): the page says so, then takes it back.
    let (mut other, _) = tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}/"))
        .await
        .unwrap();
    browser
        .wait_for(
            "document.getElementById('status').textContent === 'taken over' && document.getElementById('banner-text').textContent.includes('took over')",
            15,
            "the page to say it was taken over",
        )
        .await;
    browser.click("#banner-action").await;
    browser
        .wait_for(CONNECTED, 15, "the page to take it back")
        .await;
    say(&browser, "three").await;
    let _ = other.close(None).await;

    // The only console errors are the refused connections while the server was down.
    for entry in browser.console().await {
        let message = entry["message"].as_str().unwrap_or_default();
        assert!(
            entry["level"] != json!("SEVERE")
                || message.contains("ERR_CONNECTION_REFUSED")
                || message.contains("WebSocket connection to"),
            "console error: {entry}"
        );
    }
    browser.quit().await;
}
