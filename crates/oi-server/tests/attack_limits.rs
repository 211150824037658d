//! Slow and large clients against the real `oi-server` binary: connections that never finish
//! their headers, floods of idle connections, and input that grows without an `end`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess, get, raw};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

async fn heartbeat(server: &ServerProcess) -> u16 {
    let host = format!("Host: {}", server.addr());
    tokio::time::timeout(
        Duration::from_secs(10),
        raw(&server.addr(), &get("/heartbeat", &[&host])),
    )
    .await
    .map_or(0, |answer| answer.status)
}

/// Waits until the server closes `stream` (EOF or reset); how long that took.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buf = [0u8; 256];
    loop {
        match tokio::time::timeout_at((started + limit).into(), stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0) | Err(_)) => return Some(started.elapsed()),
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_are_cut_off_by_the_header_timeout() {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let server = Launch::new(&model.base_url())
        .args(&["--header-timeout", "1"])
        .start();
    // Slowloris: headers that never end, one byte at a time.
    let mut slow = TcpStream::connect(server.addr()).await.unwrap();
    slow.write_all(b"GET /heartbeat HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let dribble = async {
        for _ in 0..20 {
            if slow.write_all(b"X").await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    // And a connection that sends nothing at all.
    let mut silent = TcpStream::connect(server.addr()).await.unwrap();
    let (_, silent_closed) =
        tokio::join!(dribble, closed_within(&mut silent, Duration::from_secs(6)));
    let silent_closed = silent_closed.expect("the silent connection is closed");
    assert!(
        silent_closed >= Duration::from_millis(800),
        "{silent_closed:?}"
    );
    let slow_closed = closed_within(&mut slow, Duration::from_secs(3)).await;
    assert!(slow_closed.is_some(), "the slow connection is closed");
    assert_eq!(heartbeat(&server).await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connection_flood_hits_the_cap_with_503_and_heartbeat_recovers() {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let server = Launch::new(&model.base_url())
        .args(&["--max-connections", "50", "--header-timeout", "3"])
        .start();
    let mut idle = Vec::new();
    for _ in 0..50 {
        idle.push(TcpStream::connect(server.addr()).await.unwrap());
    }
    // Past the cap: refused with a reason, then closed, however many come.
    let mut refused = Vec::new();
    for _ in 0..200 {
        refused.push(TcpStream::connect(server.addr()).await.unwrap());
    }
    // The refused ones are closed by the server while the client still holds them.
    let bounded = process::eventually(Duration::from_secs(5), || server.open_fds() < 50 + 40).await;
    assert!(
        bounded,
        "the server holds {} descriptors",
        server.open_fds()
    );
    let mut answer = String::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        refused[199].read_to_string(&mut answer),
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("connection limit"), "{answer}");
    drop(refused);
    // While the idle ones hold every slot, /heartbeat is refused the same way…
    let host = format!("Host: {}", server.addr());
    let busy = raw(&server.addr(), &get("/heartbeat", &[&host])).await;
    assert_eq!(busy.status, 503, "{}", busy.text);
    // …and answers again once the header timeout has closed them.
    for stream in &mut idle {
        assert!(
            closed_within(stream, Duration::from_secs(8))
                .await
                .is_some()
        );
    }
    assert!(process::eventually(Duration::from_secs(5), || server.open_fds() < 40).await);
    assert_eq!(heartbeat(&server).await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descriptor_limit_is_raised_and_the_cap_fits_under_it() {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    // Soft limit 256 under a hard limit of 400: raised to 400; the cap becomes (400-128)/2.
    let server = Launch::new(&model.base_url())
        .shell_prefix("ulimit -S -n 256 && ulimit -H -n 400")
        .args(&["--header-timeout", "5"])
        .start();
    let open_files = || {
        let limits = std::fs::read_to_string(format!("/proc/{}/limits", server.pid())).unwrap();
        let line = limits
            .lines()
            .find(|l| l.starts_with("Max open files"))
            .unwrap()
            .to_owned();
        line.split_whitespace()
            .skip(3)
            .take(2)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let raised = process::eventually(Duration::from_secs(5), || open_files() == ["400", "400"]);
    assert!(raised.await, "soft and hard limit: {:?}", open_files());
    assert!(
        process::eventually(Duration::from_secs(5), || server
            .stderr()
            .contains("at most 136 connections"))
        .await,
        "{}",
        server.stderr()
    );
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(server.addr()).await.unwrap());
    }
    let busy = raw(
        &server.addr(),
        &get("/heartbeat", &[&format!("Host: {}", server.addr())]),
    )
    .await;
    assert_eq!(busy.status, 503, "the cap, not the kernel, refuses");
    drop(idle);
    assert!(process::eventually(Duration::from_secs(5), || server.open_fds() < 40).await);
    assert_eq!(heartbeat(&server).await, 200);
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

async fn connect(server: &ServerProcess, path: &str) -> Ws {
    let url = format!("ws://{}{path}", server.addr());
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// Reads JSON frames until `complete`.
async fn until_complete(ws: &mut Ws) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(30), ws.next())
            .await
            .expect("a frame in time");
        let Some(Ok(Message::Text(text))) = frame else {
            continue;
        };
        let value: Value = serde_json::from_str(text.as_str()).unwrap();
        let done = value["role"] == "server" && value["content"] == "complete";
        frames.push(value);
        if done {
            return frames;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_without_end_is_capped_with_an_error_and_memory_stays_bounded() {
    let model = ScriptedServer::start(Script::new([Reply::text("still here")]))
        .await
        .unwrap();
    let server = Launch::new(&model.base_url()).start();
    let mut ws = connect(&server, "/").await;
    let before = server.rss_kib();
    let piece = "y".repeat(15 * 1024 * 1024);
    let content =
        serde_json::json!({"role": "user", "type": "message", "content": piece}).to_string();
    ws.send(Message::text(
        r#"{"role":"user","type":"message","start":true}"#,
    ))
    .await
    .unwrap();
    for _ in 0..40 {
        ws.send(Message::text(content.clone())).await.unwrap();
    }
    let frames = until_complete(&mut ws).await;
    let error = frames[0]["content"].as_str().unwrap_or_default();
    assert_eq!(frames[0]["type"], "error", "{frames:?}");
    assert!(error.contains("over the limit"), "{error}");
    assert!(error.contains("--max-message-bytes"), "{error}");
    let grown_mib = server.rss_kib().saturating_sub(before) / 1024;
    eprintln!("server RSS grew by {grown_mib} MiB for 40 × 15 MiB without `end`");
    assert!(grown_mib < 200, "grew by {grown_mib} MiB");
    // The rest of that input up to its `end` is ignored; the next input works.
    ws.send(Message::text(
        r#"{"role":"user","type":"message","end":true}"#,
    ))
    .await
    .unwrap();
    ws.send(Message::text(
        r#"{"role":"user","type":"message","start":true}"#,
    ))
    .await
    .unwrap();
    ws.send(Message::text(
        r#"{"role":"user","type":"message","content":"hello"}"#,
    ))
    .await
    .unwrap();
    ws.send(Message::text(
        r#"{"role":"user","type":"message","end":true}"#,
    ))
    .await
    .unwrap();
    let frames = until_complete(&mut ws).await;
    assert!(
        frames.iter().any(|f| f["content"] == "still here"),
        "{frames:?}"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].body.to_string().len() < 100_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_parts_without_end_hit_the_pending_cap() {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let server = Launch::new(&model.base_url())
        .args(&["--max-pending-bytes", "4000000"])
        .start();
    let mut ws = connect(&server, "/").await;
    // Each chunk opens a new part (the type alternates), each well under the message cap.
    for i in 0..40 {
        let kind = if i % 2 == 0 { "message" } else { "code" };
        let chunk =
            serde_json::json!({"role": "user", "type": kind, "content": "p".repeat(200_000)});
        ws.send(Message::text(chunk.to_string())).await.unwrap();
    }
    let frames = until_complete(&mut ws).await;
    let error = frames[0]["content"].as_str().unwrap_or_default();
    assert!(error.contains("--max-pending-bytes"), "{frames:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_input_is_freed_when_its_connection_closes() {
    let model = ScriptedServer::start(Script::new([Reply::text("hi")]))
        .await
        .unwrap();
    let server = Launch::new(&model.base_url()).start();
    let mut first = connect(&server, "/sessions/s1").await;
    first
        .send(Message::text(
            r#"{"role":"user","type":"message","start":true}"#,
        ))
        .await
        .unwrap();
    let blob =
        serde_json::json!({"role": "user", "type": "message", "content": "A".repeat(2_000_000)});
    first.send(Message::text(blob.to_string())).await.unwrap();
    // Let the server take the frames in, then vanish without `end`.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(first);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut second = connect(&server, "/sessions/s1").await;
    for frame in [
        r#"{"role":"user","type":"message","start":true}"#,
        r#"{"role":"user","type":"message","content":"hello"}"#,
        r#"{"role":"user","type":"message","end":true}"#,
    ] {
        second.send(Message::text(frame)).await.unwrap();
    }
    let frames = until_complete(&mut second).await;
    assert!(frames.iter().any(|f| f["content"] == "hi"), "{frames:?}");
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let sent = requests[0].body.to_string();
    assert!(
        !sent.contains("AAAAAAAA"),
        "the abandoned input reached the model ({} bytes)",
        sent.len()
    );
}
