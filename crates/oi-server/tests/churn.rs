//! Reliability under churn (issue 18): a client that drops its socket mid-turn and reconnects
//! at once gets its next message answered, every time; closing a socket while a turn streams
//! completes in milliseconds.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{Frame, TestServer, next_frame, say, until_complete};
use futures::{SinkExt, StreamExt};
use oi_testkit::{Reply, Script};
use tokio_tungstenite::tungstenite::Message;

/// A slow code turn (0.6 s of output), then an answer per later message.
fn script(rounds: usize) -> Script {
    let mut replies = Vec::new();
    for i in 0..rounds {
        replies.push(Reply::tool_call(
            "python",
            "import time\nfor i in range(12):\n    print('tick', i, flush=True)\n    time.sleep(0.05)",
        ));
        replies.push(Reply::text(format!("counted {i}")));
        replies.push(Reply::text(format!("answer {i}")));
    }
    Script::new(replies)
}

fn texts(frames: &[serde_json::Value]) -> String {
    frames
        .iter()
        .filter(|f| f["role"] == "assistant" && f["type"] == "message")
        .filter_map(|f| f["content"].as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_after_a_dropped_socket_is_always_answered() {
    let rounds = 8;
    let server = TestServer::start(
        script(rounds),
        |_| {},
        |c| {
            c.interrupt_mode = oi_server::InterruptMode::Queue;
        },
    )
    .await;
    for round in 0..rounds {
        let mut ws = server.connect().await;
        say(&mut ws, "message", "count slowly").await;
        // Read into the running code, then vanish without a close handshake.
        loop {
            if let Frame::Json(f) = next_frame(&mut ws).await {
                if f["format"] == "output" {
                    break;
                }
            }
        }
        drop(ws);
        let mut again = server.connect().await;
        say(&mut again, "message", "and now?").await;
        let mut seen = String::new();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !seen.contains(&format!("answer {round}")) {
            assert!(
                Instant::now() < deadline,
                "round {round}: the message after the reconnect was never answered; saw {seen:?}"
            );
            seen.push_str(&texts(&until_complete(&mut again, false).await));
        }
        drop(again);
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_socket_mid_turn_completes_at_once() {
    let server = TestServer::start(script(1), |_| {}, |_| {}).await;
    let mut ws = server.connect().await;
    say(&mut ws, "message", "count slowly").await;
    loop {
        if let Frame::Json(f) = next_frame(&mut ws).await {
            if f["format"] == "output" {
                break;
            }
        }
    }
    let started = Instant::now();
    ws.send(Message::Close(None)).await.unwrap();
    // The close handshake ends when the server answers with its close frame (a client such
    // as Python's `websockets` waits for it, up to its close timeout, before it reconnects).
    loop {
        match tokio::time::timeout(Duration::from_secs(15), ws.next()).await {
            Ok(Some(Ok(Message::Close(_)))) => break,
            Ok(Some(Ok(_))) => continue,
            Ok(None) | Ok(Some(Err(_))) => panic!("the connection ended without a close frame"),
            Err(_) => panic!("no close answer within 15 s"),
        }
    }
    let took = started.elapsed();
    assert!(took < Duration::from_millis(500), "the close took {took:?}");
    server.shutdown().await;
}
