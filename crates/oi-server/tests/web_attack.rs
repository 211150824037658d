//! Another site's page against the web page's server, in real headless Chromium (Debian's
//! chromium and chromedriver, over W3C WebDriver) and the real `oi-server` binary with no key
//! (the worst case: only the Host/Origin door stands in the way). A hostile page served from
//! another origin opens WebSockets to the server, posts settings with `fetch` and with a
//! `text/plain` form (CSRF), tries to read a conversation and frames the page. Nothing reaches
//! the model, no setting changes, no session is made, nothing is read, the frame stays empty.
//! DNS rebinding (Chromium told that `evil.test` is 127.0.0.1, so the attacker's page and the
//! server share an origin) is refused by the Host check: the page, a POST and a socket. The
//! same requests from the server's own page do work (the control: the browser does send them).
//!
//! Slow, so ignored by `cargo test`: run with `cargo xtask web-tests`. Without chromium and
//! chromium-driver the test skips, saying why, unless `OI_TEST_REQUIRE_ALL=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;
mod webdriver;

use std::time::Duration;

use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess, get, raw};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use webdriver::Browser;

/// The attacker's page: every request it makes goes to `target` (`127.0.0.1:PORT`), and it
/// writes what it saw into `window.results`.
fn hostile_page(target: &str) -> String {
    format!(
        r#"<!DOCTYPE html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>a page on another site</title></head><body>
<form id="csrf" method="POST" action="http://{target}/settings" enctype="text/plain" target="sink">
<input name='{{"custom_instructions":"csrf-form","x":"' value='"}}'></form>
<iframe name="sink"></iframe>
<iframe id="framed" src="http://{target}/"></iframe>
<script>
window.results = {{}};
function socket(path) {{
  return new Promise((resolve) => {{
    const r = {{ opened: false, got: "" }};
    const s = new WebSocket("ws://{target}" + path);
    s.onopen = () => {{
      r.opened = true;
      for (const f of [{{role: "user", type: "message", start: true}}, {{role: "user", type: "message", content: "cross-origin hello"}}, {{role: "user", type: "message", end: true}}]) s.send(JSON.stringify(f));
    }};
    s.onmessage = (e) => {{ r.got += e.data; }};
    s.onclose = (e) => {{ r.code = e.code; resolve(r); }};
    setTimeout(() => resolve(r), 5000);
  }});
}}
async function attack() {{
  results.root = await socket("/");
  results.session = await socket("/sessions/evil");
  try {{
    await fetch("http://{target}/settings", {{ method: "POST", mode: "no-cors", headers: {{ "Content-Type": "text/plain" }}, body: JSON.stringify({{ custom_instructions: "csrf-fetch" }}) }});
    results.post = "sent";
  }} catch (e) {{ results.post = "failed: " + e; }}
  try {{
    const r = await fetch("http://{target}/sessions/default/messages");
    results.read = await r.text();
  }} catch (e) {{ results.read = "blocked"; }}
  document.getElementById("csrf").submit();
  await new Promise((r) => setTimeout(r, 1500));
  results.done = true;
}}
attack();
</script></body></html>"#
    )
}

/// Serves `page` to every request on a port of its own (another origin than the server's).
async fn serve_hostile(page: String) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let page = page.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tcp.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
                let _ = tcp.write_all(answer.as_bytes()).await;
            });
        }
    });
    port
}

/// The server's settings and sessions, asked the way a local client asks (no `Origin`).
async fn server_state(server: &ServerProcess) -> (Value, String) {
    let settings = raw(&server.addr(), &get("/settings", &[])).await;
    let settings: Value = serde_json::from_str(settings.body()).unwrap_or_default();
    let sessions = raw(&server.addr(), &get("/sessions", &[])).await;
    (settings, sessions.body().to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn another_sites_page_cannot_use_the_server_in_chromium() {
    if webdriver::skip_reason().is_some() {
        return;
    }
    let model = ScriptedServer::start(Script::responder(|_| Reply::text("hello from the model")))
        .await
        .unwrap();
    let server = Launch::new(&model.base_url()).asking().start();
    let target = server.addr();
    let hostile = serve_hostile(hostile_page(&target)).await;
    let browser = Browser::start_with(&["--host-resolver-rules=MAP evil.test 127.0.0.1"]).await;

    browser.goto(&format!("http://127.0.0.1:{hostile}/")).await;
    browser
        .wait_for("window.results && window.results.done", 30, "the attack")
        .await;
    let results = browser.js("return window.results;", json!([])).await;
    eprintln!("the hostile page saw: {results}");
    for socket in ["root", "session"] {
        assert_eq!(
            results[socket]["opened"],
            json!(false),
            "{socket}: {results}"
        );
        assert_eq!(results[socket]["got"], json!(""), "{socket}: {results}");
    }
    assert_eq!(
        results["read"],
        json!("blocked"),
        "nothing is readable: {results}"
    );
    let console = browser.console().await;
    let framed = console.iter().any(|e| {
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("frame-ancestors"))
    });
    assert!(framed, "the page refused to be framed: {console:?}");

    // The server saw nothing it acted on.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (settings, sessions) = server_state(&server).await;
    assert_eq!(model.request_count(), 0, "no message reached the model");
    let instructions = settings["custom_instructions"].as_str().unwrap_or_default();
    assert!(!instructions.contains("csrf"), "{settings}");
    assert!(!sessions.contains("evil"), "{sessions}");

    // DNS rebinding: a name of the attacker's that resolves to the server. The browser then
    // thinks the server's answers are the attacker's own (same origin); the Host check
    // refuses them all.
    let port = server.port;
    browser.goto(&format!("http://evil.test:{port}/")).await;
    let body = browser
        .js("return document.body.innerText;", json!([]))
        .await;
    assert!(
        body.as_str()
            .unwrap_or_default()
            .contains("not a name of this server"),
        "{body}"
    );
    browser
        .js(
            "window.__r = null; fetch('/settings', {method: 'POST', headers: {'Content-Type': 'text/plain'}, body: JSON.stringify({custom_instructions: 'rebound'})}).then(r => r.text().then(t => { window.__r = r.status + ' ' + t; }), e => { window.__r = 'failed ' + e; });",
            json!([]),
        )
        .await;
    browser.wait_for("window.__r", 10, "the rebound POST").await;
    let rebound = browser.js("return window.__r;", json!([])).await;
    assert!(
        rebound.as_str().unwrap_or_default().starts_with("403 "),
        "{rebound}"
    );

    browser
        .js(
            "window.__ws = null; const s = new WebSocket('ws://' + location.host + '/'); s.onopen = () => { window.__ws = 'opened'; }; s.onclose = (e) => { window.__ws = window.__ws || 'closed ' + e.code; };",
            json!([]),
        )
        .await;
    browser
        .wait_for("window.__ws", 10, "the rebound socket")
        .await;
    let socket = browser.js("return window.__ws;", json!([])).await;
    assert_eq!(
        socket,
        json!("closed 1006"),
        "the rebound socket never opens"
    );

    // The control: the server's own page, same origin, does get through (so the requests
    // above were really made, and refused).
    browser.goto(&format!("http://{target}/")).await;
    browser
        .wait_for(
            "document.getElementById('status').textContent === 'connected'",
            15,
            "the server's own page to connect",
        )
        .await;
    browser
        .js(
            "window.__r = null; fetch('/settings', {method: 'POST', headers: {'Content-Type': 'text/plain'}, body: JSON.stringify({custom_instructions: 'same-origin'})}).then(r => { window.__r = r.status; });",
            json!([]),
        )
        .await;
    browser
        .wait_for("window.__r", 10, "the same-origin POST")
        .await;
    let (settings, _) = server_state(&server).await;
    assert_eq!(
        settings["custom_instructions"],
        json!("same-origin"),
        "{settings}"
    );
    for instructions in ["csrf-form", "csrf-fetch", "rebound"] {
        assert!(!settings.to_string().contains(instructions), "{settings}");
    }
    browser.quit().await;
}
