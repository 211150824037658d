//! Attacks on the approval of code in the web page (issue 34), in real headless Chromium
//! against the real `oi-server` binary (without `-y`: code waits for approval) and the
//! scripted model.
//!
//! - Typing approves code: the user keeps typing the next message while an answer streams;
//!   the code block arrives mid-typing. Nothing runs, the typed text stays in the message box,
//!   a focus given to Run by a script does not let a key approve, and a real click does run.
//! - Code shown for approval hides its payload: Unicode tag characters (escaped, with a
//!   warning naming them), a payload after 400 blanks (the code wraps: it shows inside the
//!   panel), `ls -la notes#; touch X` (never coloured as a comment), a right-to-left override
//!   (escaped); and the page's escaping agrees with oi-core's rule on its shared test vectors.
//! - Right-to-left letters do not reorder code on the screen (F5): each character of code
//!   shown for approval, or in a fenced block, sits right of the one before it.
//! - Run under code A never approves a code B this tab never showed (F2): another tab takes
//!   the session over and makes B wait; this tab's bar was retired when its socket was taken,
//!   and taking the session back loads the conversation again, with a bar under B only.
//! - A press that began on the still-disabled Run (F6), or one dragged off Run and released
//!   elsewhere (F7), approves nothing, not even a Space or Enter afterwards.
//!
//! Slow, so ignored by `cargo test`: run with `cargo xtask web-tests`. Without chromium and
//! chromium-driver the tests skip, saying why, unless `OI_TEST_REQUIRE_ALL=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;
mod webdriver;

use std::path::Path;
use std::time::{Duration, Instant};

use oi_testkit::{Ending, Reply, Script, ScriptedServer};
use process::{Launch, eventually};
use serde_json::{Value, json};
use webdriver::{Browser, ENTER};

const CONNECTED: &str = "document.getElementById('status').textContent === 'connected'";
const IDLE: &str = "document.getElementById('stop').hidden";
const PENDING: &str = "document.querySelectorAll('.approval.pending').length === 1";

/// Code A and code B of the takeover attack (F2): each writes its own marker file.
const CODE_A: &str = "open('a.txt', 'w').write('a')";
const CODE_B: &str = "open('b.txt', 'w').write('b')";
/// Shell code with right-to-left letters (F5): shown, it must read as it runs.
const RTL_CODE: &str = "mv \u{5D0}\u{5D1} \u{5D2}\u{5D3}";
/// What a bar says once its connection went (conversation.js).
const STALE: &str = "This approval is no longer current: the connection to the server changed. The page loads the conversation again when it reconnects and asks only about the code that waits then.";

/// The payload, as Unicode tag characters (U+E0000 + each ASCII character).
fn tags(text: &str) -> String {
    text.chars()
        .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
        .collect()
}

/// Code in `language` as the model would send it: a tool call, or a fenced block in text
/// mode; the stream stalls `stall` between the text and the code.
fn code_in(body: &Value, language: &str, before: &str, source: &str, stall: Duration) -> Reply {
    let tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let reply = if tools {
        Reply::tool_call(language, source).with_text_before(before)
    } else {
        Reply::text_pieces([before.to_owned(), format!("\n```{language}\n{source}\n```")])
    };
    // The events: the role, the text, then the code.
    reply.ending(Ending::StallAfter(2, stall))
}

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
        let quick = Duration::ZERO;
        if text.contains("marker") {
            let source = "open('marker.txt', 'w').write('ran')\nprint('wrote the marker')";
            let stall = Duration::from_millis(1500);
            return code_in(
                body,
                "python",
                "Writing the marker file now.",
                source,
                stall,
            );
        }
        if text.contains("tags") {
            let source = format!(
                "exec(''.join(chr(ord(c)-0xE0000) for c in '{}'))",
                tags("open('tagged.txt', 'w')")
            );
            return code_in(body, "python", "Harmless.", &source, quick);
        }
        if text.contains("blanks") {
            let source = format!("print('hello'){};open('blank.txt', 'w')", " ".repeat(400));
            return code_in(body, "python", "Harmless.", &source, quick);
        }
        if text.contains("shell") {
            return code_in(body, "shell", "Listing.", "ls -la notes#; touch X", quick);
        }
        if text.contains("alpha") {
            return code_in(body, "python", "Code A.", CODE_A, quick);
        }
        if text.contains("bravo") {
            return code_in(body, "python", "Code B.", CODE_B, quick);
        }
        if text.contains("rtl") {
            return code_in(body, "shell", "Moving.", RTL_CODE, quick);
        }
        if text.contains("override") {
            let source = "name = 'report\u{202E}txt.exe'\nprint(name)";
            return code_in(body, "python", "Naming.", source, quick);
        }
        Reply::text("Hello.")
    })
}

async fn send(browser: &Browser, text: &str) {
    browser.type_into("#input", text).await;
    browser.type_into("#input", ENTER).await;
}

/// What the page shows of the approval: whether it said "Approved.", how many blocks wait,
/// which element has the focus, what the message box holds.
async fn approval_state(browser: &Browser) -> Value {
    browser
        .js(
            "return {approved: document.body.textContent.includes('Approved.'), pending: document.querySelectorAll('.approval.pending').length, focus: document.activeElement.id || document.activeElement.className, input: document.getElementById('input').value};",
            json!([]),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn typing_through_the_arrival_of_code_never_approves_it_in_chromium() {
    if webdriver::skip_reason().is_some() {
        return;
    }
    let model = ScriptedServer::start(model_script()).await.unwrap();
    let work = tempfile::tempdir().unwrap();
    let marker = work.path().join("marker.txt");
    let server = Launch::new(&model.base_url())
        .asking()
        .cwd(work.path())
        .start();
    let browser = Browser::start().await;
    browser.goto(&format!("http://{}/", server.addr())).await;
    browser.wait_for(CONNECTED, 15, "the socket").await;

    // The user sends a message and goes on typing the next one, spaces and all, key by key
    // wherever the focus is, while the answer streams, through the code's arrival and well
    // past it (the old page moved the focus to Run, and the next space ran the code).
    send(&browser, "write the marker").await;
    let mut typed = String::new();
    let mut arrived: Option<Instant> = None;
    let started = Instant::now();
    while arrived.is_none_or(|at| at.elapsed() < Duration::from_millis(1500)) {
        browser.keys("and then ").await;
        typed.push_str("and then ");
        if arrived.is_none()
            && browser.js(&format!("return {PENDING};"), json!([])).await == json!(true)
        {
            arrived = Some(Instant::now());
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no code came");
    }
    assert!(
        typed.len() > 100,
        "typed before and after the code came: {typed:?}"
    );
    assert_eq!(
        approval_state(&browser).await,
        json!({"approved": false, "pending": 1, "focus": "input", "input": typed}),
        "the code waits, the typing went on in the message box"
    );

    // A focus on Run that the user did not give (a script's), then Space and Enter: refused;
    // so is a click made by script.
    browser
        .js(
            "document.querySelector('.approval.pending .run').focus();",
            json!([]),
        )
        .await;
    browser.press(" ").await;
    browser.press(ENTER).await;
    browser
        .js(
            "document.querySelector('.approval.pending .run').click();",
            json!([]),
        )
        .await;
    let refused = browser
        .js(
            "const bar = document.querySelector('.approval.pending'); return {pending: !!bar, note: bar && bar.querySelector('span').textContent};",
            json!([]),
        )
        .await;
    assert_eq!(
        refused,
        json!({"pending": true, "note": "To run this code, click Run (or reach it with Tab and press Enter)."})
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!marker.exists(), "the code ran without a person's approval");
    assert_eq!(model.request_count(), 1, "nothing went back to the model");

    // Edit, then Cancel: the focus goes back to the buttons' bar, not to Run, and a space
    // there approves nothing.
    browser.click(".approval.pending .edit").await;
    browser
        .click(".approval.pending button:not(.primary)")
        .await;
    browser.press(" ").await;
    let after_cancel = browser
        .js(
            "const bar = document.querySelector('.approval.pending'); return {focus: document.activeElement === bar, buttons: [...bar.querySelectorAll('button')].map((b) => b.textContent)};",
            json!([]),
        )
        .await;
    assert_eq!(
        after_cancel,
        json!({"focus": true, "buttons": ["Run", "Decline", "Edit"]})
    );

    // A real click runs it; the half-typed message is still there.
    browser.click(".approval.pending .run:enabled").await;
    browser
        .wait_for(
            &format!("{IDLE} && document.body.textContent.includes('Approved.') && [...document.querySelectorAll('.panel.output pre')].some(p => p.textContent.includes('wrote the marker'))"),
            20,
            "the approved code's output",
        )
        .await;
    assert!(eventually(Duration::from_secs(5), || marker.exists()).await);
    assert_eq!(
        browser
            .js("return document.getElementById('input').value;", json!([]))
            .await,
        json!(typed)
    );
    browser.quit().await;
}

/// Sends `message`, waits for its code to ask for approval, returns what the page shows of
/// it, then declines it (and waits for the turn to end).
async fn shown_for_approval(browser: &Browser, message: &str) -> Value {
    send(browser, message).await;
    browser.wait_for(PENDING, 15, "the approval").await;
    let shown = browser
        .js(
            r"const panel = document.querySelector('.approval.pending').closest('.panel');
const pre = panel.querySelector('pre');
const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
return {
  text: pre.textContent,
  escapes: [...pre.querySelectorAll('.esc')].map((e) => e.textContent).join(''),
  warning: panel.querySelector('.warn') ? panel.querySelector('.warn').textContent : null,
  comments: [...pre.querySelectorAll('.tok-com')].map((e) => e.textContent),
  pre: box(pre),
  overflows: pre.scrollWidth > pre.clientWidth,
  strings: [...pre.querySelectorAll('.tok-str')].map((e) => ({text: e.textContent, box: box(e)})),
};",
            json!([]),
        )
        .await;
    browser.click(".approval.pending .decline").await;
    browser.wait_for(IDLE, 15, "the declined turn to end").await;
    shown
}

/// The test vectors oi-core's rule and the page share: `{"vectors": [{"name", "input",
/// "shown", "hidden"}]}` (`hidden`: how many characters are escaped).
fn vectors() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../oi-core/tests/visible_vectors.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file: Value = serde_json::from_str(&text).unwrap();
    file["vectors"].as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn code_for_approval_shows_what_it_hides_in_chromium() {
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

    let table = browser
        .js(
            "return typeof OI_VISIBLE === 'object' && OI_VISIBLE.unicode;",
            json!([]),
        )
        .await;
    assert_eq!(table, json!("16.0.0"), "the page loads visible_table.js");

    // The page's escaping is oi-core's: every shared vector comes out the same, from the
    // function that draws code (and from the generated table's own).
    let vectors = vectors();
    assert!(vectors.len() > 20, "{vectors:?}");
    let page = browser
        .js(
            "return arguments[0].map((v) => [v.name, shownText(v.input).textContent, hiddenChars(v.input).length, OI_VISIBLE.show(v.input).text]);",
            json!([vectors]),
        )
        .await;
    let rust: Vec<Value> = vectors
        .iter()
        .map(|v| json!([v["name"], v["shown"], v["hidden"], v["shown"]]))
        .collect();
    assert_eq!(page, json!(rust));

    // Unicode tag characters: each one an escape, and a warning that names them.
    let shown = shown_for_approval(&browser, "tags").await;
    let payload = tags("open('tagged.txt', 'w')");
    let escaped: String = payload
        .chars()
        .map(|c| format!("<U+{:04X}>", c as u32))
        .collect();
    assert_eq!(
        shown["text"],
        json!(format!(
            "exec(''.join(chr(ord(c)-0xE0000) for c in '{escaped}'))"
        ))
    );
    assert_eq!(shown["escapes"], json!(escaped));
    assert_eq!(
        shown["warning"],
        json!(
            "This code holds characters you would not see; they are shown as escapes: 23 Unicode tag characters (<U+E006F> …)."
        )
    );

    // 400 blanks, then the payload: the code wraps, the payload is inside the panel.
    let shown = shown_for_approval(&browser, "blanks").await;
    assert_eq!(shown["overflows"], json!(false), "{shown}");
    let pre = shown["pre"].as_array().unwrap();
    let payload = shown["strings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["text"] == json!("'blank.txt'"))
        .unwrap_or_else(|| panic!("the payload is a string: {shown}"));
    let inside = payload["box"]
        .as_array()
        .unwrap()
        .iter()
        .zip(pre)
        .enumerate()
        .all(|(i, (p, b))| {
            let (p, b) = (p.as_f64().unwrap(), b.as_f64().unwrap());
            if i < 2 { p >= b } else { p <= b }
        });
    assert!(inside, "the payload's box is inside the code's: {shown}");

    // Shell: `#` inside a word is no comment; nothing of the line is coloured as one.
    let shown = shown_for_approval(&browser, "shell").await;
    assert_eq!(shown["text"], json!("ls -la notes#; touch X"));
    assert_eq!(shown["comments"], json!([]));
    // The page's highlighter knows bash's rule where it does colour comments (Markdown).
    let classes = browser
        .js(
            "const f = highlight(arguments[0], 'bash'); return [...f.childNodes].map((n) => [n.className || 'text', n.textContent]);",
            json!(["ls -la notes#; touch X # a comment\necho '#' \"#\"#x"]),
        )
        .await;
    assert_eq!(
        classes,
        json!([
            ["text", "ls -la notes#; touch X "],
            ["tok-com", "# a comment"],
            ["text", "\n"],
            ["tok-kw", "echo"],
            ["text", " "],
            ["tok-str", "'#'"],
            ["text", " "],
            ["tok-str", "\"#\""],
            ["text", "#x"]
        ])
    );

    // A right-to-left override: an escape, named in the warning.
    let shown = shown_for_approval(&browser, "override").await;
    assert_eq!(
        shown["text"],
        json!("name = 'report<U+202E>txt.exe'\nprint(name)")
    );
    assert_eq!(
        shown["warning"],
        json!(
            "This code holds characters you would not see; they are shown as escapes: 1 bidi control (<U+202E>)."
        )
    );

    let errors: Vec<Value> = browser
        .console()
        .await
        .into_iter()
        .filter(|e| e["level"] == json!("SEVERE"))
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
    assert!(!work.path().join("tagged.txt").exists());
    assert!(!work.path().join("blank.txt").exists());
    browser.quit().await;
}

/// The code panels the page shows: `[code, how many Run buttons, whether a bar waits]`.
async fn code_panels(browser: &Browser) -> Value {
    browser
        .js(
            "return [...document.querySelectorAll('.panel.code')].map((p) => [p.querySelector('pre').textContent, p.querySelectorAll('.run').length, !!p.querySelector('.approval.pending')]);",
            json!([]),
        )
        .await
}

/// F2: tab 1 waits on code A; tab 2 opens the same session (taking the socket over) and
/// sends a message, so that code B waits; tab 1 takes the session back. The server's `go`
/// runs whatever waits, so Run under A would run B, which tab 1 never showed. Tab 1's bar
/// is retired when the socket is taken over; taking it back loads the conversation again,
/// where only B has a bar, and Run there runs B.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn run_under_code_a_never_approves_code_b_another_tab_brought_in_chromium() {
    if webdriver::skip_reason().is_some() {
        return;
    }
    let model = ScriptedServer::start(model_script()).await.unwrap();
    let work = tempfile::tempdir().unwrap();
    let (a, b) = (work.path().join("a.txt"), work.path().join("b.txt"));
    let server = Launch::new(&model.base_url())
        .asking()
        .cwd(work.path())
        .start();
    let url = format!("http://{}/", server.addr());
    let one = Browser::start().await;
    one.goto(&url).await;
    one.wait_for(CONNECTED, 15, "tab 1's socket").await;
    send(&one, "alpha").await;
    one.wait_for(PENDING, 15, "A's approval").await;
    assert_eq!(code_panels(&one).await, json!([[CODE_A, 1, true]]));

    // Tab 2 takes the session over: tab 1's bar goes at once, Run and all.
    let two = Browser::start().await;
    two.goto(&url).await;
    two.wait_for(CONNECTED, 15, "tab 2's socket").await;
    let taken = "document.getElementById('status').textContent === 'taken over'";
    one.wait_for(taken, 15, "tab 1 to be taken over").await;
    let bar = one
        .js(
            "const bars = [...document.querySelectorAll('.approval')]; return {bars: bars.map((b) => b.textContent), pending: document.querySelectorAll('.approval.pending').length, buttons: bars.map((b) => b.querySelectorAll('button').length)};",
            json!([]),
        )
        .await;
    assert_eq!(bar, json!({"bars": [STALE], "pending": 0, "buttons": [0]}));

    // In tab 2, a message: A's turn stops and B waits.
    send(&two, "bravo").await;
    two.wait_for(
        &format!("{PENDING} && document.querySelector('.approval.pending').closest('.panel').querySelector('pre').textContent === {CODE_B:?}"),
        15,
        "B's approval in tab 2",
    )
    .await;

    // Tab 1 takes it back: it shows the conversation as it is now; A has no Run, and the
    // only bar is under B, which tab 1 now shows.
    one.click("#banner-action").await;
    one.wait_for(CONNECTED, 15, "tab 1 to take it back").await;
    assert_eq!(
        code_panels(&one).await,
        json!([[CODE_A, 0, false], [CODE_B, 1, true]])
    );
    two.wait_for(taken, 15, "tab 2 to be taken over").await;
    assert_eq!(
        code_panels(&two).await,
        json!([[CODE_A, 0, false], [CODE_B, 0, false]]),
        "tab 2's bar is retired too"
    );
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!b.exists(), "B ran without a person seeing it");
    assert!(!a.exists());

    // Run under B, in the tab that shows B, runs B (and only B).
    one.click(".approval.pending .run:enabled").await;
    assert!(
        eventually(Duration::from_secs(15), || b.exists()).await,
        "B ran"
    );
    one.wait_for(IDLE, 15, "the turn to end").await;
    assert!(!a.exists(), "A never ran");
    one.quit().await;
    two.quit().await;
}

/// The x positions of the characters (spaces left out) of the text under the element that
/// `find` (a function body returning it) finds, in their logical order.
async fn x_positions(browser: &Browser, find: &str) -> Vec<(String, f64)> {
    let script = format!(
        r"const root = (() => {{ {find} }})();
const out = [];
const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
while (walker.nextNode()) {{
  const node = walker.currentNode;
  for (let i = 0; i < node.data.length; i++) {{
    if (node.data[i] === ' ' || node.data[i] === '\n') continue;
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    const r = range.getBoundingClientRect();
    out.push([node.data[i], (r.left + r.right) / 2, r.top]);
  }}
}}
return out;"
    );
    let found = browser.js(&script, json!([RTL_CODE])).await;
    let found = found.as_array().unwrap_or_else(|| panic!("{found}"));
    let top = found[0][2].as_f64().unwrap();
    found
        .iter()
        .map(|c| {
            assert!(
                (c[2].as_f64().unwrap() - top).abs() < 1.0,
                "one line: {found:?}"
            );
            (c[0].as_str().unwrap().to_owned(), c[1].as_f64().unwrap())
        })
        .collect()
}

fn assert_in_order(what: &str, positions: &[(String, f64)]) {
    let text: String = positions.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(text, RTL_CODE.replace(' ', ""), "{what}");
    assert!(
        positions.windows(2).all(|w| w[0].1 < w[1].1),
        "{what}: the characters show in another order than they run: {positions:?}"
    );
}

/// F5: right-to-left letters in code are not reordered on the screen (`mv אב גד` showing as
/// `mv גד אב` would hide which file goes where): each character of the code waiting for
/// approval, and of a fenced block in a message, sits right of the one before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn right_to_left_letters_show_in_the_order_they_run_in_chromium() {
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

    send(&browser, "rtl").await;
    browser.wait_for(PENDING, 15, "the approval").await;
    let shown = x_positions(
        &browser,
        "return document.querySelector('.approval.pending').closest('.panel').querySelector('pre');",
    )
    .await;
    assert_in_order("the code waiting for approval", &shown);

    let fenced = x_positions(
        &browser,
        "const m = el('div', {class: 'msg assistant'}); m.append(markdown('```sh\\n' + arguments[0] + '\\n```')); log().append(m); return m.querySelector('pre');",
    )
    .await;
    assert_in_order("a fenced block in a message", &fenced);
    browser.click(".approval.pending .decline").await;
    browser.wait_for(IDLE, 15, "the declined turn to end").await;
    browser.quit().await;
}

/// F6 and F7: a press that began on Run while it was still disabled and was released after it
/// armed does not approve; nor does a press on Run dragged off and released elsewhere (the
/// usual way to take a click back), not even with Space or Enter afterwards, while Run keeps
/// the focus the press gave it. A plain click then does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "slow: drives headless Chromium; run with `cargo xtask web-tests`"]
async fn a_press_begun_too_early_or_dragged_off_never_approves_in_chromium() {
    if webdriver::skip_reason().is_some() {
        return;
    }
    let model = ScriptedServer::start(model_script()).await.unwrap();
    let work = tempfile::tempdir().unwrap();
    let marker = work.path().join("marker.txt");
    let server = Launch::new(&model.base_url())
        .asking()
        .cwd(work.path())
        .start();
    let browser = Browser::start().await;
    browser.goto(&format!("http://{}/", server.addr())).await;
    browser.wait_for(CONNECTED, 15, "the socket").await;
    // Where each press began, and whether Run was disabled then.
    browser
        .js(
            "window.presses = []; document.addEventListener('pointerdown', (e) => { const run = document.querySelector('.approval.pending .run'); presses.push({onRun: !!run && run.contains(e.target), disabled: !!run && run.disabled}); }, true);",
            json!([]),
        )
        .await;

    // F6: pressed as soon as Run shows (still disabled), held until it is armed, released on
    // it. Should this machine be too slow to press within Run's first 600 ms, the press is
    // taken back (released off Run) and the code asked for again.
    let mut asked = 0;
    loop {
        asked += 1;
        send(&browser, "write the marker").await;
        let deadline = Instant::now() + Duration::from_secs(20);
        while browser.js(&format!("return {PENDING};"), json!([])).await != json!(true) {
            assert!(Instant::now() < deadline, "no approval came");
        }
        let to_run = browser.at(".approval.pending .run", 0, 0).await;
        let down = json!({"type": "pointerDown", "button": 0});
        browser.pointer(vec![to_run, down]).await;
        let press = browser.js("return presses.at(-1);", json!([])).await;
        if press == json!({"onRun": true, "disabled": true}) {
            tokio::time::sleep(Duration::from_millis(1000)).await;
            let armed = browser
                .js(
                    "return !document.querySelector('.approval.pending .run').disabled;",
                    json!([]),
                )
                .await;
            assert_eq!(armed, json!(true), "Run is armed when the press ends");
            browser
                .pointer(vec![json!({"type": "pointerUp", "button": 0})])
                .await;
            break;
        }
        let off = browser.at("#input", 0, 0).await;
        browser
            .pointer(vec![off, json!({"type": "pointerUp", "button": 0})])
            .await;
        assert!(
            asked < 4,
            "never pressed within Run's first 600 ms: {press}"
        );
    }
    browser.press(" ").await;
    browser.press(ENTER).await;
    let state = approval_state(&browser).await;
    assert_eq!(state["approved"], json!(false), "{state}");
    assert_eq!(state["pending"], json!(1), "{state}");
    let note = browser
        .js(
            "return document.querySelector('.approval.pending span').textContent;",
            json!([]),
        )
        .await;
    assert_eq!(
        note,
        json!("Run was not ready when the press began: click it again to run this code.")
    );

    // F7: pressed on the armed Run, dragged off to the message box, released there; Run keeps
    // the focus, and Space and Enter there approve nothing.
    let to_run = browser.at(".approval.pending .run:enabled", 0, 0).await;
    let off = browser.at("#input", 0, 0).await;
    browser
        .pointer(vec![
            to_run,
            json!({"type": "pointerDown", "button": 0}),
            json!({"type": "pause", "duration": 100}),
            off,
            json!({"type": "pointerUp", "button": 0}),
        ])
        .await;
    let focus = browser
        .js(
            "return document.activeElement === document.querySelector('.approval.pending .run');",
            json!([]),
        )
        .await;
    assert_eq!(focus, json!(true), "the press gave Run the focus");
    browser.press(" ").await;
    browser.press(ENTER).await;
    let state = approval_state(&browser).await;
    assert_eq!(state["approved"], json!(false), "{state}");
    assert_eq!(state["pending"], json!(1), "{state}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!marker.exists(), "the code ran without a person's approval");
    assert_eq!(
        model.request_count(),
        asked,
        "nothing went back to the model"
    );

    // A plain click runs it.
    browser.click(".approval.pending .run:enabled").await;
    assert!(eventually(Duration::from_secs(15), || marker.exists()).await);
    browser.wait_for(IDLE, 15, "the turn to end").await;
    browser.quit().await;
}
