//! A small W3C WebDriver client over HTTP (reqwest + serde_json, both already dependencies of
//! these tests) driving Debian's headless Chromium through its chromedriver: the few commands
//! the web page's test needs. The Rust WebDriver crates (thirtyfour, fantoccini) would bring
//! their own HTTP stacks and dozens of crates for these dozen requests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Where Debian puts the browser and its driver.
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// Debian's chromedriver (package chromium-driver).
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The W3C name of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Keys for [`Browser::type_into`].
pub const ENTER: &str = "\u{E007}";
/// Shift (held until [`RELEASE`]).
pub const SHIFT: &str = "\u{E008}";
/// Releases held modifier keys.
pub const RELEASE: &str = "\u{E000}";
/// Escape.
pub const ESCAPE: &str = "\u{E00C}";
/// Tab.
pub const TAB: &str = "\u{E004}";

/// A running chromedriver and one browser session; both end when dropped.
pub struct Browser {
    driver: Child,
    base: String,
    http: reqwest::Client,
    _profile: tempfile::TempDir,
}

/// The text of a message (a string, or a list of text parts).
pub fn text_of(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// Code as the model would send it: a tool call, or a fenced block in text mode.
pub fn code(body: &Value, before: &str, source: &str) -> oi_testkit::Reply {
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    if tools {
        oi_testkit::Reply::tool_call("python", source).with_text_before(before)
    } else {
        oi_testkit::Reply::text(format!("{before}\n```python\n{source}\n```"))
    }
}

/// Why the browser cannot run here, if it cannot.
pub fn missing() -> Option<String> {
    for path in [CHROMIUM, CHROMEDRIVER] {
        if !std::path::Path::new(path).exists() {
            return Some(format!(
                "{path} is missing (apt-get install chromium chromium-driver)"
            ));
        }
    }
    None
}

/// `Some(reason)` when the browser cannot run here (said on stderr: the test then skips);
/// panics instead when `OI_TEST_REQUIRE_ALL=1`.
pub fn skip_reason() -> Option<String> {
    let reason = missing()?;
    oi_testkit::skipped!("skipped: {reason}");
    Some(reason)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Browser {
    /// Starts chromedriver and a fresh headless Chromium (its own profile folder), with the
    /// browser's console log recorded.
    pub async fn start() -> Browser {
        Browser::start_with(&[]).await
    }

    /// [`Browser::start`] with more Chromium flags (`extra`).
    pub async fn start_with(extra: &[&str]) -> Browser {
        let port = free_port();
        // Its own process group, so that dropping the browser ends Chromium too.
        let driver = Command::new(CHROMEDRIVER)
            .process_group(0)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let root = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let ready = http.get(format!("{root}/status")).send().await;
            if let Ok(answer) = ready {
                let status: Value = answer.json().await.unwrap_or_default();
                if status["value"]["ready"] == json!(true) {
                    break;
                }
            }
            assert!(Instant::now() < deadline, "chromedriver did not get ready");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let profile = tempfile::tempdir().unwrap();
        let profile_arg = format!("--user-data-dir={}", profile.path().display());
        let mut args = vec![
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--window-size=1100,760",
            &profile_arg,
        ];
        args.extend_from_slice(extra);
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
            "goog:loggingPrefs": {"browser": "ALL"},
            "unhandledPromptBehavior": "ignore",
        }}});
        let answer: Value = http
            .post(format!("{root}/session"))
            .json(&capabilities)
            .send()
            .await
            .expect("a browser session")
            .json()
            .await
            .unwrap();
        let id = answer["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {answer}"))
            .to_owned();
        Browser {
            driver,
            base: format!("{root}/session/{id}"),
            http,
            _profile: profile,
        }
    }

    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request.send().await.unwrap().json().await.unwrap();
        answer["value"].clone()
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    /// Opens `url`.
    pub async fn goto(&self, url: &str) {
        self.post("/url", json!({ "url": url })).await;
    }

    /// Reloads the page.
    pub async fn reload(&self) {
        self.post("/refresh", json!({})).await;
    }

    /// Runs `script` (a function body; `arguments` holds `args`) and returns its value.
    pub async fn js(&self, script: &str, args: Value) -> Value {
        self.post("/execute/sync", json!({ "script": script, "args": args }))
            .await
    }

    /// The element matching the CSS `selector`, waiting up to 15 s for it.
    pub async fn find(&self, selector: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let found = self
                .post(
                    "/element",
                    json!({"using": "css selector", "value": selector}),
                )
                .await;
            if let Some(id) = found.get(ELEMENT).and_then(Value::as_str) {
                return id.to_owned();
            }
            assert!(Instant::now() < deadline, "no element {selector}: {found}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Clicks the element matching `selector` (tried again for a while when the page is
    /// still moving and something else would get the click).
    pub async fn click(&self, selector: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let id = self.find(selector).await;
            let answer = self.post(&format!("/element/{id}/click"), json!({})).await;
            if answer.is_null() {
                return;
            }
            let moving = answer["error"] == json!("element click intercepted")
                || answer["error"] == json!("stale element reference");
            assert!(
                moving && Instant::now() < deadline,
                "click {selector}: {answer}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Types `text` (with key codes such as [`ENTER`]) into the element matching `selector`.
    pub async fn type_into(&self, selector: &str, text: &str) {
        let id = self.find(selector).await;
        let answer = self
            .post(&format!("/element/{id}/value"), json!({ "text": text }))
            .await;
        assert!(answer.is_null(), "type into {selector}: {answer}");
    }

    /// Empties the input element matching `selector`.
    pub async fn clear(&self, selector: &str) {
        let id = self.find(selector).await;
        self.post(&format!("/element/{id}/clear"), json!({})).await;
    }

    /// Ends the browser session (Chromium exits).
    pub async fn quit(&self) {
        self.call(reqwest::Method::DELETE, "", None).await;
    }

    /// Waits up to `secs` for the JavaScript expression `condition` to be truthy; panics with
    /// `what` and the page's text otherwise.
    pub async fn wait_for(&self, condition: &str, secs: u64, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        let script = format!("return !!({condition});");
        loop {
            if self.js(&script, json!([])).await == json!(true) {
                return;
            }
            if Instant::now() > deadline {
                let text = self.js("return document.body.innerText;", json!([])).await;
                panic!("timed out waiting for {what} ({condition}); the page shows:\n{text}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The text of an open alert/confirm/prompt, if one is open.
    pub async fn alert_text(&self) -> Option<String> {
        let answer = self.call(reqwest::Method::GET, "/alert/text", None).await;
        answer.as_str().map(str::to_owned)
    }

    /// The browser's console entries since the last call (chromedriver's log endpoint).
    pub async fn console(&self) -> Vec<Value> {
        let answer = self.post("/se/log", json!({"type": "browser"})).await;
        answer.as_array().cloned().unwrap_or_default()
    }

    /// A PNG screenshot of the window.
    pub async fn screenshot(&self) -> Vec<u8> {
        use base64::Engine;
        let answer = self.call(reqwest::Method::GET, "/screenshot", None).await;
        base64::engine::general_purpose::STANDARD
            .decode(answer.as_str().unwrap_or_default())
            .unwrap()
    }

    /// Presses and releases `key` (e.g. [`ENTER`]) wherever the focus is, as a user would.
    pub async fn press(&self, key: &str) {
        let actions = json!({"actions": [{"type": "key", "id": "keyboard", "actions": [
            {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key},
        ]}]});
        let answer = self.post("/actions", actions).await;
        assert!(answer.is_null(), "press {key:?}: {answer}");
    }

    /// Presses `keys` together (held down in order, released in reverse), wherever the focus
    /// is: `press_together(&[SHIFT, TAB])` is Shift+Tab.
    pub async fn press_together(&self, keys: &[&str]) {
        let down = keys.iter().map(|k| json!({"type": "keyDown", "value": k}));
        let up = keys
            .iter()
            .rev()
            .map(|k| json!({"type": "keyUp", "value": k}));
        let actions = json!({"actions": [{"type": "key", "id": "keyboard",
            "actions": down.chain(up).collect::<Vec<_>>()}]});
        let answer = self.post("/actions", actions).await;
        assert!(answer.is_null(), "press {keys:?}: {answer}");
    }

    /// Types `text` key by key wherever the focus is, as a user at the keyboard does (unlike
    /// [`Browser::type_into`], which first puts the focus into an element).
    pub async fn keys(&self, text: &str) {
        let strokes = text.chars().flat_map(|c| {
            let key = c.to_string();
            [
                json!({"type": "keyDown", "value": key}),
                json!({"type": "keyUp", "value": key}),
            ]
        });
        let actions = json!({"actions": [{"type": "key", "id": "keyboard",
            "actions": strokes.collect::<Vec<_>>()}]});
        let answer = self.post("/actions", actions).await;
        assert!(answer.is_null(), "keys {text:?}: {answer}");
    }

    /// Moves and presses the mouse as a user would: `steps` are W3C pointer actions
    /// (`pointerMove`, `pointerDown`, `pause`, `pointerUp`); [`Browser::at`] makes a move's
    /// origin an element. A button pressed and not released stays down until a later call
    /// releases it.
    pub async fn pointer(&self, steps: Vec<Value>) {
        let actions = json!({"actions": [{"type": "pointer", "id": "mouse",
            "parameters": {"pointerType": "mouse"}, "actions": steps}]});
        let answer = self.post("/actions", actions).await;
        assert!(answer.is_null(), "pointer {answer}");
    }

    /// A `pointerMove` to the centre of the element matching `selector` (offset by `dx`, `dy`).
    pub async fn at(&self, selector: &str, dx: i64, dy: i64) -> Value {
        let id = self.find(selector).await;
        json!({"type": "pointerMove", "duration": 0, "origin": {ELEMENT: id}, "x": dx, "y": dy})
    }

    /// Runs a Chrome DevTools Protocol command (chromedriver's `goog/cdp/execute`), e.g.
    /// `Emulation.setEmulatedMedia`.
    pub async fn cdp(&self, cmd: &str, params: Value) -> Value {
        self.post("/goog/cdp/execute", json!({ "cmd": cmd, "params": params }))
            .await
    }

    /// Sets the window's size.
    pub async fn resize(&self, width: u32, height: u32) {
        self.post("/window/rect", json!({"width": width, "height": height}))
            .await;
    }
}

impl Drop for Browser {
    /// Ends the browser session (so chromedriver ends Chromium, which runs in its own process
    /// group) with a plain blocking request, even when a test panicked, then chromedriver.
    fn drop(&mut self) {
        use std::io::{Read, Write};
        let rest = self.base.trim_start_matches("http://");
        if let Some((host, path)) = rest.split_once('/') {
            if let Ok(mut tcp) = std::net::TcpStream::connect(host) {
                let _ = tcp.set_read_timeout(Some(Duration::from_secs(10)));
                let request =
                    format!("DELETE /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
                let _ = tcp.write_all(request.as_bytes());
                let _ = tcp.read_to_end(&mut Vec::new());
            }
        }
        // The group's leader is chromedriver (never 1: kill(-1) would signal every process).
        // A direct kill(2), not `kill -KILL -PGID`: procps-ng 4.0.2's kill(1) can take the
        // negative number for something else and signal far more than the group.
        let group = i32::try_from(self.driver.id())
            .ok()
            .filter(|pid| *pid > 1)
            .and_then(rustix::process::Pid::from_raw);
        if let Some(group) = group {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
