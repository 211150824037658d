//! Fault injection on the WebSocket side of a real server (real core, provider and computer,
//! scripted model): oversized frames, binary frames, invalid UTF-8, a burst of 10 000 frames,
//! a client that disconnects mid-turn in acknowledge mode. Each time the server keeps
//! answering, the session's stored messages stay valid LMC, and memory stays bounded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{Frame, TestServer, next_json, say, send, until_complete};
use futures::SinkExt;
use oi_core::Message;
use oi_testkit::{Reply, Script};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_tungstenite::tungstenite::protocol::frame::Frame as RawFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};

/// The default session's stored messages, checked to survive an LMC round trip.
fn stored_valid(server: &TestServer) -> Vec<Message> {
    let messages = server
        .state
        .sessions
        .default_session()
        .interpreter()
        .interpreter()
        .messages();
    let json = serde_json::to_string(&messages).unwrap();
    let again = Message::list_from_json(&json).expect("stored messages are valid LMC");
    assert_eq!(again, messages);
    messages
}

/// A fresh connection can still hold a conversation, answered with `expected`.
async fn assert_server_answers(server: &TestServer, expected: &str) {
    let mut ws = server.connect().await;
    say(&mut ws, "message", "are you there?").await;
    let frames = until_complete(&mut ws, false).await;
    assert!(
        frames.iter().any(|f| f["content"] == expected),
        "{frames:?}"
    );
    stored_valid(server);
}

/// Resident memory of this test process, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn is_error(frame: &Value) -> bool {
    frame["type"] == "error"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_10_mb_frame_over_the_limit_closes_only_that_connection() {
    let server = TestServer::start(
        Script::new([Reply::text("still here")]),
        |_| {},
        |c| c.max_frame_bytes = 1024 * 1024,
    )
    .await;
    let mut ws = server.connect().await;
    let big = format!(
        "{{\"role\":\"user\",\"type\":\"message\",\"content\":\"{}\"}}",
        "x".repeat(10 * 1024 * 1024)
    );
    // The server may close while the frame is still being written.
    let _ = ws.send(WsMessage::Text(big.into())).await;
    match tokio::time::timeout(Duration::from_secs(15), next_frame_lenient(&mut ws)).await {
        Ok(Frame::Close(code, _)) => assert_eq!(code, 1009, "message too big"),
        Ok(Frame::End) => {}
        Ok(Frame::Json(v)) => panic!("the oversized frame was accepted: {v}"),
        Err(_) => panic!("the connection was not closed"),
    }
    assert!(stored_valid(&server).is_empty(), "nothing of it was stored");
    assert_server_answers(&server, "still here").await;
    server.shutdown().await;
}

/// Like `next_frame`, but a broken connection counts as its end.
async fn next_frame_lenient(ws: &mut common::Ws) -> Frame {
    use futures::StreamExt;
    loop {
        match ws.next().await {
            Some(Ok(WsMessage::Text(text))) => {
                return Frame::Json(serde_json::from_str(text.as_str()).unwrap());
            }
            Some(Ok(WsMessage::Close(close))) => {
                return match close {
                    Some(c) => Frame::Close(c.code.into(), c.reason.to_string()),
                    None => Frame::Close(1005, String::new()),
                };
            }
            Some(Ok(_)) => continue,
            Some(Err(_)) | None => return Frame::End,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_10_mb_garbage_frame_under_the_limit_is_an_error_and_memory_stays_bounded() {
    let server = TestServer::start(Script::new([Reply::text("still here")]), |_| {}, |_| {}).await;
    let mut ws = server.connect().await;
    let before = rss_kib();
    for _ in 0..3 {
        let garbage = format!("{{\"content\": \"{}", "y".repeat(10 * 1024 * 1024));
        ws.send(WsMessage::Text(garbage.into())).await.unwrap();
        let frames = until_complete(&mut ws, false).await;
        assert!(is_error(&frames[0]), "{frames:?}");
        let text = frames[0]["content"].as_str().unwrap();
        assert!(
            text.starts_with("malformed JSON frame"),
            "{}",
            &text[..text.len().min(200)]
        );
        assert!(text.len() < 4096, "the error does not echo the frame");
    }
    let grown_mib = rss_kib().saturating_sub(before) / 1024;
    assert!(
        grown_mib < 200,
        "memory grew by {grown_mib} MiB for 3 × 10 MB frames"
    );
    say(&mut ws, "message", "hello").await;
    let frames = until_complete(&mut ws, false).await;
    assert!(
        frames.iter().any(|f| f["content"] == "still here"),
        "{frames:?}"
    );
    stored_valid(&server);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_binary_frames_are_refused_and_the_connection_keeps_working() {
    let server = TestServer::start(Script::new([Reply::text("still here")]), |_| {}, |_| {}).await;
    let mut ws = server.connect().await;
    ws.send(WsMessage::Binary(vec![0xff, 0xfe, 0x00, 0x01, 0x80].into()))
        .await
        .unwrap();
    let frames = until_complete(&mut ws, false).await;
    assert!(is_error(&frames[0]), "{frames:?}");
    assert!(
        frames[0]["content"]
            .as_str()
            .unwrap()
            .contains("binary frames"),
        "{frames:?}"
    );
    say(&mut ws, "message", "hello").await;
    let frames = until_complete(&mut ws, false).await;
    assert!(
        frames.iter().any(|f| f["content"] == "still here"),
        "{frames:?}"
    );
    stored_valid(&server);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_invalid_utf8_text_frame_closes_only_that_connection() {
    let server = TestServer::start(Script::new([Reply::text("still here")]), |_| {}, |_| {}).await;
    let mut ws = server.connect().await;
    let payload: Vec<u8> = b"{\"role\":\"user\",\"content\":\"\xc3\x28\xff\"}".to_vec();
    let frame = RawFrame::message(payload, OpCode::Data(Data::Text), true);
    let _ = ws.send(WsMessage::Frame(frame)).await;
    match tokio::time::timeout(Duration::from_secs(15), next_frame_lenient(&mut ws)).await {
        Ok(Frame::Close(code, _)) => assert_eq!(code, 1007, "invalid frame payload data"),
        Ok(Frame::End) => {}
        Ok(Frame::Json(v)) => panic!("invalid UTF-8 was accepted: {v}"),
        Err(_) => panic!("the connection was not closed"),
    }
    assert!(stored_valid(&server).is_empty());
    assert_server_answers(&server, "still here").await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_burst_of_10000_frames_is_handled_in_time() {
    let server = TestServer::start(
        Script::new([Reply::text("got it"), Reply::text("still here")]),
        |_| {},
        |_| {},
    )
    .await;
    let mut ws = server.connect().await;
    let started = Instant::now();
    // 5 000 acks for ids that do not exist (ignored), then one message in 5 000 frames.
    for i in 0..5_000 {
        ws.feed(WsMessage::Text(
            json!({"ack": format!("nope-{i}")}).to_string().into(),
        ))
        .await
        .unwrap();
    }
    ws.feed(WsMessage::Text(
        json!({"role": "user", "type": "message", "start": true})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    for _ in 0..4_998 {
        ws.feed(WsMessage::Text(
            json!({"role": "user", "type": "message", "content": "x"})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    }
    ws.send(WsMessage::Text(
        json!({"role": "user", "type": "message", "end": true})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let sent = started.elapsed();
    let frames = until_complete(&mut ws, false).await;
    assert!(frames.iter().all(|f| !is_error(f)), "{frames:?}");
    assert!(
        frames.iter().any(|f| f["content"] == "got it"),
        "{frames:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "sent in {sent:?}, answered in {:?}",
        started.elapsed()
    );
    let messages = stored_valid(&server);
    assert_eq!(messages[0], Message::user("x".repeat(4_998)));
    say(&mut ws, "message", "and now?").await;
    let frames = until_complete(&mut ws, false).await;
    assert!(
        frames.iter().any(|f| f["content"] == "still here"),
        "{frames:?}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ws_disconnect_mid_ack_then_reconnect_keeps_the_session_valid() {
    let script = Script::new([
        Reply::tool_call(
            "python",
            "for i in range(5):\n    print('line', i, flush=True)",
        ),
        Reply::text("done").chunked(1),
        Reply::text("still here"),
    ]);
    let server = TestServer::start(
        script,
        |_| {},
        |c| {
            c.require_acknowledge = true;
            c.ack_timeout = Duration::from_secs(30);
        },
    )
    .await;
    let mut first = server.connect().await;
    say(&mut first, "message", "count").await;
    // Ack the first two frames, read a third without acking, then vanish.
    for _ in 0..2 {
        let frame = next_json(&mut first).await;
        send(&mut first, json!({"ack": frame["id"].clone()})).await;
    }
    let unacked = next_json(&mut first).await;
    drop(first);

    let mut second = server.connect().await;
    let rest = until_complete(&mut second, true).await;
    assert_eq!(
        rest[0]["id"], unacked["id"],
        "the unacked frame is replayed first"
    );
    let messages = stored_valid(&server);
    assert_eq!(
        messages.last(),
        Some(&Message::assistant("done")),
        "{messages:?}"
    );
    say(&mut second, "message", "again").await;
    let frames = until_complete(&mut second, true).await;
    assert!(
        frames.iter().any(|f| f["content"] == "still here"),
        "{frames:?}"
    );
    stored_valid(&server);
    server.shutdown().await;
}
