//! The web page and a saved conversation (issue 27), in real headless Chromium: a session
//! talked to on one `oi-server` over a real `redis-server` store comes back, with its
//! conversation, when the page is opened on a new server process after the first one died.
//! The new server does not have the session in memory (its messages are 404), so the page
//! opens it with `POST /sessions/{id}`, which claims it from the store.
//!
//! Slow, so ignored by `cargo test`: run with `cargo xtask web-tests`. Without chromium,
//! chromium-driver or redis-server the test skips, saying why, unless
//! `OI_TEST_REQUIRE_ALL=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;
mod scale;
mod webdriver;

use std::time::Duration;

use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess};
use serde_json::Value;
use webdriver::{Browser, ENTER};

const LEASE_MS: u64 = 1000;

fn server(model: &ScriptedServer, store: &str, port: u16) -> ServerProcess {
    let lease = LEASE_MS.to_string();
    Launch::new(&model.base_url())
        .asking()
        .port(port)
        .args(&["--store", store, "--lease_ttl_ms", &lease])
        .start()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn a_saved_conversation_comes_back_on_a_new_server_in_chromium() {
    if webdriver::skip_reason().is_some() {
        return;
    }
    if !scale::have("redis-server") {
        assert!(
            std::env::var("OI_TEST_REQUIRE_ALL").as_deref() != Ok("1"),
            "OI_TEST_REQUIRE_ALL=1 but redis-server is missing"
        );
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
    let dir = tempfile::tempdir().unwrap();
    let redis = scale::Redis::start(dir.path());
    let store = redis.url();
    let first = server(&model, &store, 0);
    let port = first.port;
    let url = format!("http://127.0.0.1:{port}/#session=web-kept");
    let browser = Browser::start().await;
    browser.goto(&url).await;
    let ready = "document.getElementById('status').textContent === 'connected' && document.getElementById('session-name').textContent === 'web-kept'";
    browser.wait_for(ready, 15, "the session's socket").await;
    browser.type_into("#input", "remember the number 7").await;
    browser.type_into("#input", ENTER).await;
    browser
        .wait_for(
            "document.body.textContent.includes('echo: remember the number 7') && document.getElementById('stop').hidden",
            20,
            "the answer",
        )
        .await;

    // The page goes away, the server dies (its lease runs out), a new one takes the port.
    browser.goto("about:blank").await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(first);
    let _second = server(&model, &store, port);
    tokio::time::sleep(Duration::from_millis(LEASE_MS + 500)).await;
    let listed = process::raw(
        &format!("127.0.0.1:{port}"),
        &process::get("/sessions", &[]),
    )
    .await;
    assert!(
        !listed.body().contains("web-kept"),
        "the new server does not hold it yet: {}",
        listed.body()
    );

    browser.goto(&url).await;
    browser
        .wait_for(
            &format!("{ready} && document.querySelector('.msg.user') && document.querySelector('.msg.user').textContent === 'remember the number 7' && document.querySelector('.msg.assistant').textContent === 'echo: remember the number 7'"),
            20,
            "the saved conversation",
        )
        .await;
    browser.type_into("#input", "and now").await;
    browser.type_into("#input", ENTER).await;
    browser
        .wait_for(
            "document.body.textContent.includes('echo: and now') && document.getElementById('stop').hidden",
            20,
            "an answer on the new server",
        )
        .await;
    browser.quit().await;
}
