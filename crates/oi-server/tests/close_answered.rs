//! A close (and a ping) is answered within milliseconds whatever the session does, through the real
//! `oi-server` binary and Python's `websockets` library (the client Open Interpreter's users
//! write): while code runs silently, while a block waits for approval, while the model
//! streams. The library sends its close frame and waits for the server's; an unanswered close
//! would cost its whole `close_timeout` and end with 1006.
//!
//! Needs `python3` with `websockets` (`pip install websockets`); without it the tests skip
//! with a reason, or fail when `OI_TEST_REQUIRE_ALL=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::process::Command;
use std::time::Duration;

use oi_testkit::{Ending, Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::Value;

/// How long the answer to a close may take (the issue's goal is "milliseconds"; this bound is
/// generous for a loaded machine, and far below the 10 s an unanswered close costs).
const CLOSE_LIMIT_MS: f64 = 250.0;

/// The client: connects, sends a message, reads until a frame matching the trigger, waits a
/// little, pings, closes; prints what the pong and the close took, the close code, and
/// whether the server's close frame came.
const CLIENT: &str = r#"
import asyncio, json, sys, time
import websockets

async def main(url, trigger, pause):
    async with websockets.connect(url, close_timeout=10) as ws:
        for frame in ({"role": "user", "type": "message", "start": True},
                      {"role": "user", "type": "message", "content": "do it"},
                      {"role": "user", "type": "message", "end": True}):
            await ws.send(json.dumps(frame))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 20))
            if frame.get("type") == trigger:
                break
        await asyncio.sleep(pause)
        started = time.monotonic()
        await asyncio.wait_for(await ws.ping(), 10)
        pong_ms = (time.monotonic() - started) * 1000
        started = time.monotonic()
        await ws.close()
        ms = (time.monotonic() - started) * 1000
        received = ws.protocol.close_rcvd
        print(json.dumps({"ms": ms, "pong_ms": pong_ms, "code": ws.close_code,
                          "answered": received is not None}))

asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))
"#;

/// A Python with `websockets`, or `None` (after saying why) when the test must skip.
fn python() -> Option<String> {
    let candidates = [
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/oi-python-venv/bin/python"
        ),
        "python3",
    ];
    for python in candidates {
        let ok = Command::new(python)
            .args(["-c", "import websockets"])
            .output()
            .is_ok_and(|out| out.status.success());
        if ok {
            return Some(python.to_owned());
        }
    }
    let reason = "skipped: no python3 with the websockets library (pip install websockets)";
    assert!(
        std::env::var("OI_TEST_REQUIRE_ALL").as_deref() != Ok("1"),
        "{reason}, and OI_TEST_REQUIRE_ALL=1"
    );
    eprintln!("{reason}");
    None
}

/// Runs the client against `port`; what it printed.
fn close_after(python: &str, port: u16, trigger: &str, pause: f64) -> Value {
    let out = Command::new(python)
        .arg("-c")
        .arg(CLIENT)
        .arg(format!("ws://127.0.0.1:{port}/"))
        .arg(trigger)
        .arg(pause.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn assert_answered(result: &Value, while_: &str) {
    assert_eq!(result["answered"], true, "{while_}: {result}");
    assert_eq!(result["code"], 1000, "{while_}: {result}");
    let ms = result["ms"].as_f64().unwrap();
    let pong_ms = result["pong_ms"].as_f64().unwrap();
    assert!(
        ms < CLOSE_LIMIT_MS && pong_ms < CLOSE_LIMIT_MS,
        "{while_}: the close took {ms:.1} ms, the pong {pong_ms:.1} ms ({result})"
    );
    eprintln!("{while_}: the ping was answered in {pong_ms:.1} ms, the close in {ms:.1} ms");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_is_answered_while_code_runs_silently() {
    let Some(python) = python() else { return };
    let model = ScriptedServer::start(Script::new([
        Reply::tool_call("python", "import time\ntime.sleep(3)"),
        Reply::text("Slept."),
    ]))
    .await
    .unwrap();
    let server = Launch::new(&model.base_url()).start();
    // Once the code's console output starts (its first active line), it sleeps silently.
    let result = close_after(&python, server.port, "console", 0.5);
    assert_answered(&result, "while code runs silently");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_is_answered_while_a_block_waits_for_approval() {
    let Some(python) = python() else { return };
    let model = ScriptedServer::start(Script::new([Reply::tool_call("python", "print('never')")]))
        .await
        .unwrap();
    let server = Launch::new(&model.base_url()).start();
    let response = process::raw(
        &server.addr(),
        &process::post(
            "/settings",
            &["Content-Type: application/json"],
            r#"{"auto_run": false}"#,
        ),
    )
    .await;
    assert_eq!(response.status, 200, "{}", response.body());
    let result = close_after(&python, server.port, "confirmation", 0.3);
    assert_answered(&result, "while a block waits for approval");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_is_answered_while_the_model_streams() {
    let Some(python) = python() else { return };
    let model = ScriptedServer::start(Script::new([Reply::text(
        "A long answer that streams in small pieces and then stalls for a while.",
    )
    .chunked(4)
    .ending(Ending::StallAfter(3, Duration::from_secs(3)))]))
    .await
    .unwrap();
    let server = Launch::new(&model.base_url()).start();
    let result = close_after(&python, server.port, "message", 0.3);
    assert_answered(&result, "while the model streams");
}

/// The issue's client, exactly (issue 35): five connections in a row, each sends a message
/// whose turn streams a burst and then runs a 2 s block (or waits for its approval), reads
/// `k` frames (1 to 5) and closes at once — no ping, no pause. Python's `websockets` stops
/// reading the socket when more than 16 frames wait unread, so a server that sends a burst
/// of small frames is never heard answering the close (10 s, then 1006).
const READ_K_THEN_CLOSE: &str = r#"
import asyncio, json, sys, time
import websockets

async def main(base):
    results = []
    for k in (1, 2, 3, 4, 5):
        url = base.replace("{k}", str(k))
        ws = await websockets.connect(url)
        for m in ({"role": "user", "type": "message", "start": True},
                  {"role": "user", "type": "message", "content": "sleep a little in python"},
                  {"role": "user", "type": "message", "end": True}):
            await ws.send(json.dumps(m))
        for _ in range(k):
            await ws.recv()
        t0 = time.monotonic()
        await ws.close()
        results.append({"k": k, "ms": (time.monotonic() - t0) * 1000, "code": ws.close_code})
    print(json.dumps(results))

asyncio.run(main(sys.argv[1]))
"#;

/// A reply that streams its text in 2-character pieces (a burst of about 100 chunks), then
/// calls `execute` with a block that sleeps.
fn bursty_sleeper() -> Reply {
    Reply::tool_call("python", "import time\ntime.sleep(2)\nprint('slept')")
        .with_text_before("I will sleep now, as you asked, for a little while. ".repeat(4))
        .chunked(2)
}

fn read_k_then_close(python: &str, url: &str) -> Vec<Value> {
    let out = Command::new(python)
        .arg("-c")
        .arg(READ_K_THEN_CLOSE)
        .arg(url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn assert_all_answered(results: &[Value], what: &str) {
    assert_eq!(results.len(), 5, "{what}: {results:?}");
    for result in results {
        let ms = result["ms"].as_f64().unwrap();
        assert!(
            result["code"] == 1000 && ms < 1000.0,
            "{what}: a close was not answered at once: {result} (all: {results:?})"
        );
    }
    let slowest = results
        .iter()
        .filter_map(|r| r["ms"].as_f64())
        .fold(0.0, f64::max);
    eprintln!("{what}: five closes answered, the slowest in {slowest:.1} ms");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_issues_client_closes_at_once_and_every_close_is_answered() {
    let Some(python) = python() else { return };
    let model = ScriptedServer::start(Script::new(std::iter::repeat_with(bursty_sleeper).take(40)))
        .await
        .unwrap();
    let running = Launch::new(&model.base_url())
        .args(&["--llm_supports_functions"])
        .start();
    let asking = Launch::new(&model.base_url())
        .args(&["--llm_supports_functions"])
        .asking()
        .start();
    for (server, mode) in [(&running, "with -y"), (&asking, "asking before it runs")] {
        let sessions = format!("ws://127.0.0.1:{}/sessions/c{{k}}", server.port);
        assert_all_answered(
            &read_k_then_close(&python, &sessions),
            &format!("/sessions/{{id}}, {mode}"),
        );
        let root = format!("ws://127.0.0.1:{}/", server.port);
        assert_all_answered(&read_k_then_close(&python, &root), &format!("/, {mode}"));
    }
}

/// Reads a whole turn with the library's defaults (frames up to 1 MiB), starting a second after
/// it asked (a busy client: the server's frames wait meanwhile), and prints how much of the
/// model's message came, the largest frame, and how the connection ended.
const READ_WHOLE_TURN: &str = r#"
import asyncio, json, sys
import websockets

async def main(url):
    text_bytes, largest = 0, 0
    async with websockets.connect(url) as ws:
        for m in ({"role": "user", "type": "message", "start": True},
                  {"role": "user", "type": "message", "content": "write a lot"},
                  {"role": "user", "type": "message", "end": True}):
            await ws.send(json.dumps(m))
        await asyncio.sleep(1)
        while True:
            text = await asyncio.wait_for(ws.recv(), 60)
            largest = max(largest, len(text.encode()))
            frame = json.loads(text)
            if frame.get("role") == "assistant" and frame.get("type") == "message":
                text_bytes += len(frame.get("content") or "")
            if frame.get("role") == "server" and frame.get("content") == "complete":
                break
    print(json.dumps({"text": text_bytes, "largest": largest, "code": ws.close_code}))

asyncio.run(main(sys.argv[1]))
"#;

/// Joining a burst's pieces never makes a frame the client refuses (issue 35's review: a
/// long answer streamed in small pieces to a client busy for a moment was joined into a frame
/// over the 1 MiB Python's `websockets` accepts, which closed the connection with 1009).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_burst_reaches_a_busy_client_in_frames_it_accepts() {
    let Some(python) = python() else { return };
    let answer = "All work and no play makes a long answer. ".repeat(50_000);
    let model = ScriptedServer::start(Script::new([Reply::text(answer.clone()).chunked(20_000)]))
        .await
        .unwrap();
    let server = Launch::new(&model.base_url()).start();
    let out = Command::new(&python)
        .arg("-c")
        .arg(READ_WHOLE_TURN)
        .arg(format!("ws://127.0.0.1:{}/", server.port))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    eprintln!("a 2 MB answer in 20 KB pieces: {result}");
    assert_eq!(
        (result["text"].as_u64(), result["code"].as_u64()),
        (Some(answer.len() as u64), Some(1000)),
        "{result}"
    );
    assert!(result["largest"].as_u64().unwrap() < 1 << 20, "{result}");
}

/// A single 2 MB piece of the model's answer reaches the client in frames it accepts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_huge_piece_is_cut_into_frames_the_client_accepts() {
    let Some(python) = python() else { return };
    let answer = "One piece, \"quoted\", two megabytes. ".repeat(55_000);
    let model = ScriptedServer::start(Script::new([Reply::text(answer.clone())]))
        .await
        .unwrap();
    let server = Launch::new(&model.base_url()).start();
    let out = Command::new(&python)
        .arg("-c")
        .arg(READ_WHOLE_TURN)
        .arg(format!("ws://127.0.0.1:{}/", server.port))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (result["text"].as_u64(), result["code"].as_u64()),
        (Some(answer.len() as u64), Some(1000)),
        "{result}"
    );
    assert!(result["largest"].as_u64().unwrap() < 1 << 20, "{result}");
}

/// The issue's client after it has been away (issue 35's second review): it leaves mid-turn,
/// comes back a second later to the turn's backlog, sends a message, reads `k` frames and
/// closes at once. (A client that asks for a long log with `?replay=all` and closes before
/// reading it is a known limit: docs/protocol.md, the log.) Measured 0.4–0.7 s, above the
/// fresh client's milliseconds: the backlog's frames already on their way come first; the
/// bound here is 2 s, far below the 10 s of an unanswered close.
const COME_BACK_THEN_CLOSE: &str = r#"
import asyncio, json, sys, time
import websockets

def message(text):
    return ({"role": "user", "type": "message", "start": True},
            {"role": "user", "type": "message", "content": text},
            {"role": "user", "type": "message", "end": True})

async def main(base, query):
    results = []
    for k in (1, 3, 5):
        url = base.replace("{k}", str(k))
        ws = await websockets.connect(url)
        for m in message("write a long answer"):
            await ws.send(json.dumps(m))
        await ws.recv()
        await ws.close()
        await asyncio.sleep(1)
        ws = await websockets.connect(url + query)
        for m in message("and another"):
            await ws.send(json.dumps(m))
        for _ in range(k):
            await ws.recv()
        t0 = time.monotonic()
        await ws.close()
        results.append({"k": k, "ms": (time.monotonic() - t0) * 1000, "code": ws.close_code})
    print(json.dumps(results))

asyncio.run(main(sys.argv[1], sys.argv[2]))
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_close_after_coming_back_to_a_backlog_is_answered() {
    let Some(python) = python() else { return };
    let long = || Reply::text("word ".repeat(60_000)).chunked(3);
    let model = ScriptedServer::start(Script::new(std::iter::repeat_with(long).take(40)))
        .await
        .unwrap();
    let server = Launch::new(&model.base_url()).start();
    for query in [""] {
        let url = format!("ws://127.0.0.1:{}/sessions/back{{k}}", server.port);
        let out = Command::new(&python)
            .arg("-c")
            .arg(COME_BACK_THEN_CLOSE)
            .arg(&url)
            .arg(query)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the client failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let results: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        eprintln!("coming back{query}: {results:?}");
        assert_eq!(results.len(), 3, "{results:?}");
        for result in &results {
            assert!(
                result["code"] == 1000 && result["ms"].as_f64().unwrap() < 2000.0,
                "coming back{query}: a close was not answered in time: {results:?}"
            );
        }
    }
}
