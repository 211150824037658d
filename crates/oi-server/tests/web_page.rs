//! The web page (issue 27) in a real browser: Debian's headless Chromium, driven over W3C
//! WebDriver (chromedriver), against the real `oi-server` binary and the scripted model.
//! Chat with Enter and Shift+Enter, code approval, streamed output and Markdown, a reload
//! that restores the conversation, Stop, the key flow, sessions, a settings refusal, and a
//! hostile reply that must not run script; no console errors.
//!
//! Slow (a browser per test), so ignored by `cargo test`: run with `cargo xtask web-tests`
//! (`cargo test -p oi-server --test web_page -- --ignored --test-threads=1`). Without
//! chromium and chromium-driver the tests skip, saying why, unless `OI_TEST_REQUIRE_ALL=1`.
//! With `OI_WEB_SCREENSHOT=FILE` the first test saves a screenshot of the page there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;
mod webdriver;

use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess};
use serde_json::{Value, json};
use webdriver::{Browser, ENTER, RELEASE, SHIFT};

const KEY: &str = "web-page-key-7";

/// A 1×1 PNG, base64.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// What the model says when the browser's payload would have run.
const HOSTILE: &str = "Hostile: <img src=x onerror=\"window.__pwned=1\"> \
<script>window.__pwned=2</script> [click me](javascript:window.__pwned=3) \
[data](data:text/html,<script>alert(1)</script>) <a href=\"javascript:window.__pwned=4\">raw</a> \
![pic](javascript:alert(5)) <iframe src=\"javascript:alert(6)\"></iframe> \
<svg onload=\"window.__pwned=7\"></svg> **done**";

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
        let ran = role == "tool"
            || role == "function"
            || text.starts_with("Code output:")
            || text.starts_with("The code above was executed");
        if ran {
            return Reply::text_pieces([
                "The answer is **42**",
                ", as a table:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
            ]);
        }
        if text.contains("compute") {
            let source = "print('<img src=x onerror=\"window.__pwned=9\">')\nprint('<script>window.__pwned=10</script>')\nprint(6*7)";
            return webdriver::code(body, "Let me **compute** it.", source);
        }
        if text.contains("sleep") {
            let source = "import time\nprint('sleeping', flush=True)\ntime.sleep(600)";
            return webdriver::code(body, "Sleeping.", source);
        }
        if text.contains("display") {
            let source = format!(
                "from IPython.display import display, HTML, Image\nimport base64\ndisplay(Image(data=base64.b64decode('{PNG}')))\ndisplay(HTML('<b id=\"rich\">rich html</b><img src=\"data:,x\" onerror=\"parent.__pwned=8\"><script>parent.__pwned=9</script>'))"
            );
            return webdriver::code(body, "Showing.", &source);
        }
        if text.contains("hostile") {
            return Reply::text(HOSTILE).chunked(9);
        }
        Reply::text(format!("**Still here**: you said {}", text.trim())).chunked(5)
    })
}

async fn start_server(key: Option<&str>) -> (ScriptedServer, ServerProcess) {
    let model = ScriptedServer::start(model_script()).await.unwrap();
    let mut launch = Launch::new(&model.base_url()).asking();
    if let Some(key) = key {
        launch = launch.env("INTERPRETER_API_KEY", key);
    }
    let server = launch.start();
    (model, server)
}

/// The browser's console entries at level SEVERE.
async fn severe(browser: &Browser) -> Vec<Value> {
    browser
        .console()
        .await
        .into_iter()
        .filter(|e| e["level"] == json!("SEVERE"))
        .collect()
}

const CONNECTED: &str = "document.getElementById('status').textContent === 'connected'";

async fn send(browser: &Browser, text: &str) {
    browser.type_into("#input", text).await;
    browser.type_into("#input", ENTER).await;
}

/// Nothing hostile in the conversation took effect: no global set, no element that could run
/// or load something, no link, and the payloads (the reply's and the code output's `<script>`)
/// visible as text.
async fn assert_inert(browser: &Browser) {
    let dom = browser
        .js(
            "const log = document.getElementById('log'); return {pwned: window.__pwned === undefined ? null : window.__pwned, scripts: [...document.scripts].map(s => s.getAttribute('src')), imgs: log.querySelectorAll('img').length, frames: log.querySelectorAll('iframe').length, svgs: log.querySelectorAll('svg').length, handlers: [...log.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length, links: [...log.querySelectorAll('a')].map(a => a.href), text: log.textContent.includes('<script>window.__pwned=2</script>') && log.textContent.includes('<script>window.__pwned=10</script>')};",
            json!([]),
        )
        .await;
    assert_eq!(dom["pwned"], Value::Null, "{dom}");
    assert_eq!(
        dom["scripts"],
        json!([
            "/static/visible_table.js",
            "/static/render.js",
            "/static/conversation.js",
            "/static/app.js"
        ]),
        "only the page's own scripts: {dom}"
    );
    assert_eq!(dom["imgs"], json!(0), "{dom}");
    assert_eq!(dom["frames"], json!(0), "{dom}");
    assert_eq!(dom["svgs"], json!(0), "{dom}");
    assert_eq!(dom["handlers"], json!(0), "{dom}");
    assert_eq!(dom["links"], json!([]), "no link survives: {dom}");
    assert_eq!(
        dom["text"],
        json!(true),
        "the payload is shown as text: {dom}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn chat_approve_stream_reload_stop_and_a_hostile_reply_in_chromium() {
    if webdriver::skip_reason().is_some() {
        return;
    }
    let (_model, server) = start_server(None).await;
    let url = format!("http://{}/", server.addr());
    let browser = Browser::start().await;
    browser.goto(&url).await;
    browser.wait_for(CONNECTED, 15, "the socket").await;

    // Shift+Enter is a new line, Enter sends.
    browser
        .type_into(
            "#input",
            &format!("please compute 6*7{SHIFT}{ENTER}{RELEASE}now"),
        )
        .await;
    assert_eq!(
        browser
            .js("return document.getElementById('input').value;", json!([]))
            .await,
        json!("please compute 6*7\nnow")
    );
    browser.type_into("#input", ENTER).await;
    browser
        .wait_for(
            "document.querySelector('.msg.user') && document.querySelector('.msg.user').textContent === 'please compute 6*7\\nnow'",
            10,
            "the user's message, with its new line",
        )
        .await;
    assert_eq!(
        browser
            .js("return document.getElementById('input').value;", json!([]))
            .await,
        json!(""),
        "the box is emptied"
    );
    // The code, in a panel with its language, waits for approval.
    browser
        .wait_for(
            "document.querySelector('.approval.pending .run')",
            15,
            "the approval buttons",
        )
        .await;
    let panel = browser
        .js(
            "const p = document.querySelector('.panel.code'); return [p.querySelector('.lang').textContent, p.querySelector('pre').textContent, !!p.querySelector('.tok-kw, .tok-str')];",
            json!([]),
        )
        .await;
    assert_eq!(panel[0], json!("python"), "{panel}");
    assert!(panel[1].as_str().unwrap().contains("print(6*7)"), "{panel}");
    assert_eq!(panel[2], json!(true), "the code is highlighted: {panel}");
    assert!(
        browser
            .js(
                "return document.querySelector('.msg.assistant strong').textContent;",
                json!([])
            )
            .await
            == json!("compute"),
        "the text before the code is Markdown"
    );
    // Run: the output in its own panel, then the answer, streamed and rendered.
    browser.click(".approval.pending .run:enabled").await;
    browser
        .wait_for(
            "[...document.querySelectorAll('.panel.output pre')].some(p => p.textContent.includes('42'))",
            20,
            "the output",
        )
        .await;
    browser
        .wait_for(
            "[...document.querySelectorAll('.msg.assistant strong')].some(s => s.textContent === '42') && document.querySelector('.msg.assistant td')",
            20,
            "the answer with bold and a table",
        )
        .await;
    let output = browser
        .js(
            "return document.querySelector('.panel.output pre').textContent;",
            json!([]),
        )
        .await;
    assert!(
        output.as_str().unwrap().contains("<img src=x onerror="),
        "output is shown as text: {output}"
    );
    let cells = browser
        .js(
            "return [...document.querySelectorAll('.msg.assistant td')].map(c => c.textContent);",
            json!([]),
        )
        .await;
    assert_eq!(cells, json!(["1", "2"]));
    browser
        .wait_for(
            "document.getElementById('stop').hidden",
            10,
            "Stop to go once the turn is complete",
        )
        .await;
    if let Ok(path) = std::env::var("OI_WEB_SCREENSHOT") {
        std::fs::write(&path, browser.screenshot().await).unwrap();
        eprintln!("screenshot written to {path}");
    }

    // A reload shows the conversation again.
    browser.reload().await;
    browser
        .wait_for(CONNECTED, 15, "the socket after reload")
        .await;
    browser
        .wait_for(
            "document.querySelector('.msg.user') && document.querySelector('.msg.user').textContent.includes('compute 6*7') && [...document.querySelectorAll('.msg.assistant strong')].some(s => s.textContent === '42') && document.querySelector('.panel.code .lang').textContent === 'python' && [...document.querySelectorAll('.panel.output pre')].some(p => p.textContent.includes('42'))",
            10,
            "the restored conversation",
        )
        .await;

    // Stop a sleeping block, then the page still works.
    send(&browser, "now sleep").await;
    browser
        .wait_for(
            "document.querySelector('.approval.pending .run')",
            15,
            "the sleep's approval",
        )
        .await;
    browser.click(".approval.pending .run:enabled").await;
    browser
        .wait_for(
            "[...document.querySelectorAll('.panel.output pre')].some(p => p.textContent.includes('sleeping')) && !document.getElementById('stop').hidden",
            20,
            "the sleeping block, and Stop",
        )
        .await;
    browser.click("#stop").await;
    browser
        .wait_for(
            "document.getElementById('stop').hidden",
            10,
            "Stop to end the turn",
        )
        .await;
    send(&browser, "are you there").await;
    browser
        .wait_for(
            "document.body.textContent.includes('you said are you there')",
            15,
            "an answer after Stop",
        )
        .await;

    // A hostile reply does nothing.
    send(&browser, "hostile").await;
    browser
        .wait_for(
            "[...document.querySelectorAll('.msg.assistant strong')].some(s => s.textContent === 'done')",
            15,
            "the hostile reply",
        )
        .await;
    let blocked = browser.find(".blocked-link").await;
    assert!(!blocked.is_empty());
    browser.click(".blocked-link").await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_inert(&browser).await;
    // The same conversation restored from the server after a reload: still inert.
    browser.reload().await;
    browser
        .wait_for(CONNECTED, 15, "the socket after reload")
        .await;
    browser
        .wait_for(
            "[...document.querySelectorAll('.msg.assistant strong')].some(s => s.textContent === 'done')",
            10,
            "the restored hostile reply",
        )
        .await;
    assert_inert(&browser).await;
    assert_eq!(browser.alert_text().await, None, "no alert opened");

    // Phone width: no sideways scrolling, the sessions behind a menu button.
    browser.resize(390, 800).await;
    browser
        .wait_for(
            "document.documentElement.scrollWidth <= window.innerWidth && getComputedStyle(document.getElementById('menu')).display !== 'none'",
            5,
            "the phone layout",
        )
        .await;
    let errors = severe(&browser).await;
    assert!(errors.is_empty(), "console errors: {errors:?}");

    // display(): the image as a data: URL, the HTML in a sandboxed srcdoc frame where its
    // script does not run (Chromium logs that it blocked it: the only errors allowed now).
    browser.resize(1100, 760).await;
    send(&browser, "display things").await;
    browser
        .wait_for(
            "document.querySelector('.approval.pending .run')",
            15,
            "the display code's approval",
        )
        .await;
    browser.click(".approval.pending .run:enabled").await;
    browser
        .wait_for(
            "document.querySelector('.panel.output img') && document.querySelector('.panel.output iframe')",
            20,
            "the image and the HTML",
        )
        .await;
    let rich = browser
        .js(
            "const img = document.querySelector('.panel.output img'); const f = document.querySelector('.panel.output iframe'); return {src: img.getAttribute('src').slice(0, 22), loaded: img.complete && img.naturalWidth === 1, sandbox: f.getAttribute('sandbox'), srcdoc: f.srcdoc.includes('rich html')};",
            json!([]),
        )
        .await;
    assert_eq!(
        rich,
        json!({"src": "data:image/png;base64,", "loaded": true, "sandbox": "", "srcdoc": true})
    );
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert_eq!(
        browser
            .js("return window.__pwned === undefined;", json!([]))
            .await,
        json!(true)
    );
    for entry in severe(&browser).await {
        let message = entry["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("sandboxed") && message.contains("allow-scripts"),
            "console error: {entry}"
        );
    }

    // The settings a client may change, within the server's rules: auto_run on is refused.
    browser.click("#settings-toggle").await;
    browser
        .wait_for(
            "document.getElementById('set-model').value !== ''",
            10,
            "the settings",
        )
        .await;
    browser.click("#set-auto-run").await;
    browser.click("#settings-form button[type=submit]").await;
    browser
        .wait_for(
            "document.getElementById('settings-result').textContent.includes('refused') && document.getElementById('settings-result').textContent.includes('auto_run')",
            10,
            "the refusal",
        )
        .await;
    browser.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn the_key_flow_and_sessions_in_chromium() {
    if webdriver::skip_reason().is_some() {
        return;
    }
    let (_model, server) = start_server(Some(KEY)).await;
    let url = format!("http://{}/", server.addr());
    let browser = Browser::start().await;
    browser.goto(&url).await;
    browser
        .wait_for(
            "document.getElementById('key-dialog').open",
            10,
            "the page to ask for the key",
        )
        .await;
    browser.type_into("#key-input", "not-the-key").await;
    browser.type_into("#key-input", ENTER).await;
    browser
        .wait_for(
            "document.getElementById('key-dialog').open && document.getElementById('key-title').textContent === 'Wrong key' && document.getElementById('key-message').textContent.includes('wrong')",
            10,
            "the page to say the key is wrong",
        )
        .await;
    browser.clear("#key-input").await;
    browser.type_into("#key-input", KEY).await;
    browser.type_into("#key-input", ENTER).await;
    browser
        .wait_for(CONNECTED, 15, "the socket with the key")
        .await;
    assert_eq!(
        browser
            .js("return sessionStorage.getItem('oi-key');", json!([]))
            .await,
        json!(KEY),
        "kept for the tab"
    );
    send(&browser, "hello there").await;
    browser
        .wait_for(
            "document.body.textContent.includes('you said hello there')",
            15,
            "an answer",
        )
        .await;
    // The tab keeps the key across a reload.
    browser.reload().await;
    browser
        .wait_for(CONNECTED, 15, "the socket after reload")
        .await;
    assert_eq!(
        browser
            .js(
                "return document.getElementById('key-dialog').open;",
                json!([])
            )
            .await,
        json!(false)
    );
    // A new session (created over HTTP with the key, then its socket), its own conversation.
    browser.click("#new-session").await;
    browser
        .wait_for(
            &format!(
                "document.getElementById('session-name').textContent.startsWith('web-') && {CONNECTED} && !document.querySelector('.msg')"
            ),
            15,
            "the new session",
        )
        .await;
    send(&browser, "in the new one").await;
    browser
        .wait_for(
            "document.body.textContent.includes('you said in the new one') && document.getElementById('stop').hidden",
            15,
            "an answer in the new session",
        )
        .await;
    let id = browser
        .js(
            "return document.getElementById('session-name').textContent;",
            json!([]),
        )
        .await;
    let id = id.as_str().unwrap().to_owned();
    // Back to the default session: its conversation; then delete the new one.
    browser.click("#session-list li:first-child .open").await;
    browser
        .wait_for(
            &format!(
                "document.body.textContent.includes('you said hello there') && !document.body.textContent.includes('in the new one') && {CONNECTED}"
            ),
            15,
            "the default session's conversation",
        )
        .await;
    browser
        .click(&format!(
            "#session-list button[aria-label='Delete session {id}']"
        ))
        .await;
    browser
        .wait_for(
            &format!("!document.getElementById('session-list').textContent.includes('{id}')"),
            10,
            "the session to be gone",
        )
        .await;
    // The only errors are the wrong key's 403 answers (which also show the log is read).
    let errors = severe(&browser).await;
    assert!(!errors.is_empty(), "the wrong key's 403s are in the log");
    for entry in errors {
        let message = entry["message"].as_str().unwrap_or_default();
        assert!(message.contains("403"), "console error: {entry}");
    }
    // A link to a session the server no longer has (deleted, or the server restarted): the
    // page opens it again behind the key, rather than knock on a socket that needs the key.
    browser
        .js("location.hash = '#session=' + arguments[0];", json!([id]))
        .await;
    browser
        .wait_for(
            &format!(
                "document.getElementById('session-name').textContent === '{id}' && {CONNECTED} && !document.querySelector('.msg')"
            ),
            15,
            "the gone session, opened again",
        )
        .await;
    send(&browser, "back again").await;
    browser
        .wait_for(
            "document.body.textContent.includes('you said back again')",
            15,
            "an answer in it",
        )
        .await;
    for entry in severe(&browser).await {
        let message = entry["message"].as_str().unwrap_or_default();
        assert!(message.contains("404"), "console error: {entry}");
    }
    browser.quit().await;
}
