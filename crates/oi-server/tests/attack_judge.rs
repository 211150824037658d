//! A judge bomb against the real `oi-server` binary (issue 21 item 5): four sessions at once
//! get code built to make the approval judge explode (a variable doubled 40 times, Python
//! doubling, nesting past the limit, a 16 MiB block). Each is "cannot tell" — blocked,
//! since the server runs with `-y` — the server stays up, and `/heartbeat` keeps answering
//! while they are judged (judging runs off the runtime's threads, within a budget).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess, get, raw};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// The bomb session `n` is sent: (language, code).
fn bomb(n: usize) -> (&'static str, String) {
    match n % 4 {
        0 => ("shell", format!("X=ab{}; echo $X", "; X=$X$X".repeat(40))),
        1 => (
            "python",
            format!(
                "x = 'ab'\n{}import os\nos.system(x)\n",
                "x = x + x\n".repeat(60)
            ),
        ),
        2 => (
            "shell",
            format!("{}ls{}", "$(".repeat(5_000), ")".repeat(5_000)),
        ),
        _ => (
            "shell",
            "echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n".repeat(16 << 20 >> 5),
        ),
    }
}

/// Sends one message on session `n` and reads to `complete`: the text of every frame.
async fn bombed_session(server: &ServerProcess, n: usize) -> String {
    let url = format!("ws://{}/sessions/bomb-{n}", server.addr());
    // The 16 MiB block comes back as one code chunk, past the client's default frame size.
    let config = WebSocketConfig::default()
        .max_frame_size(Some(64 << 20))
        .max_message_size(Some(64 << 20));
    let (mut ws, _) = tokio_tungstenite::connect_async_with_config(url, Some(config), false)
        .await
        .unwrap();
    for frame in [
        r#"{"role":"user","type":"message","start":true}"#.to_owned(),
        format!(r#"{{"role":"user","type":"message","content":"bomb {n}"}}"#),
        r#"{"role":"user","type":"message","end":true}"#.to_owned(),
    ] {
        ws.send(Message::text(frame)).await.unwrap();
    }
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while let Ok(Some(Ok(frame))) = tokio::time::timeout_at(deadline.into(), ws.next()).await {
        if let Ok(text) = frame.to_text() {
            if text.len() < 4096 {
                seen.push_str(text);
                seen.push('\n');
            }
            if text.contains("\"complete\"") {
                break;
            }
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judge_bombs_from_four_sessions_are_blocked_and_heartbeat_keeps_answering() {
    // The model answers a user's "bomb N" with bomb N, and anything else (the block's
    // output) with text, so each session's turn ends.
    let model = ScriptedServer::start(
        Script::responder(|body| {
            let last = body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .cloned()
                .unwrap_or_default();
            let asked = (last["role"] == "user")
                .then(|| last["content"].clone())
                .and_then(|content| {
                    content
                        .as_str()
                        .and_then(|t| t.strip_prefix("bomb "))
                        .and_then(|n| n.trim().parse::<usize>().ok())
                });
            match asked {
                Some(n) => {
                    let (language, code) = bomb(n);
                    Reply::tool_call(language, &code)
                }
                None => Reply::text("done"),
            }
        })
        .without_recording(),
    )
    .await
    .unwrap();
    let server = Launch::new(&model.base_url())
        .args(&["--max_sessions", "16"])
        // The 16 MiB block arrives as one line of the model's event stream.
        .env("OI_MAX_SSE_LINE_BYTES", "64MiB")
        .env("OI_MAX_REPLY_BYTES", "64MiB")
        .start();
    let addr = server.addr();
    let done = Arc::new(AtomicBool::new(false));
    let poller = {
        let done = done.clone();
        tokio::spawn(async move {
            let mut latencies = Vec::new();
            let host = format!("Host: {addr}");
            while !done.load(Ordering::Relaxed) {
                let started = Instant::now();
                let status = tokio::time::timeout(
                    Duration::from_secs(10),
                    raw(&addr, &get("/heartbeat", &[&host])),
                )
                .await
                .map_or(0, |answer| answer.status);
                latencies.push((started.elapsed(), status));
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            latencies
        })
    };
    let started = Instant::now();
    let sessions = futures::future::join_all((0..4).map(|n| bombed_session(&server, n))).await;
    let bombed_for = started.elapsed();
    done.store(true, Ordering::Relaxed);
    let mut latencies = poller.await.unwrap();

    for (n, seen) in sessions.iter().enumerate() {
        assert!(
            seen.contains("cannot tell") || seen.contains("hard-deny list"),
            "session {n} was not blocked:\n{}",
            seen.chars().take(3000).collect::<String>()
        );
        assert!(
            seen.contains("\"complete\""),
            "session {n} did not complete"
        );
    }
    assert!(
        latencies.iter().all(|(_, status)| *status == 200),
        "a heartbeat failed: {:?}",
        latencies
            .iter()
            .filter(|(_, s)| *s != 200)
            .take(5)
            .collect::<Vec<_>>()
    );
    let check = raw(
        &server.addr(),
        &get("/heartbeat", &[&format!("Host: {}", server.addr())]),
    )
    .await;
    assert_eq!(check.status, 200, "the server is alive after the bombs");
    latencies.sort();
    let p = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize].0;
    let (p50, p99, max) = (p(0.5), p(0.99), p(1.0));
    eprintln!(
        "judge bombs from 4 sessions for {bombed_for:?}: {} heartbeats, p50 {p50:?}, p99 {p99:?}, max {max:?}; server rss {} KiB",
        latencies.len(),
        server.rss_kib()
    );
    // The goal is under 100 ms (measured in docs/benchmarks.md); the assert is generous
    // for a loaded CI machine.
    assert!(p99 < Duration::from_secs(1), "heartbeat p99 {p99:?}");
}
