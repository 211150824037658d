//! Reliability under churn (issue 18), through the real `oi-server` binary and real sockets:
//! a client that drops its socket mid-turn, with history in its session, and reconnects at
//! once gets its next message answered, every time, and can tell its own `complete` from one
//! left over from the dropped connection; closing a socket while a turn streams is answered
//! in milliseconds; a takeover neither mixes two clients' inputs nor waits for a client that
//! stopped reading.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess, get, raw};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a test waits for any one frame.
const FRAME_TIMEOUT: Duration = Duration::from_secs(20);

/// Ticks printed by the slow code: 12 lines, 50 ms apart.
const TICKS: &str =
    "import time\nfor i in range(12):\n    print('tick', i, flush=True)\n    time.sleep(0.05)";

/// The text of the last user message of a chat request, and whether code output follows it.
fn last_user(body: &Value) -> (String, bool) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let after_code = messages.last().is_some_and(|m| m["role"] == "tool");
    let text = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    (text, after_code)
}

/// A model that answers what it is asked: `ticks N` runs the slow code (then says
/// `ticked N`), `flood` prints 1 MB, anything else is answered `answer to: …`.
fn model_script() -> Script {
    Script::responder(|body| {
        let (text, after_code) = last_user(body);
        if after_code {
            return Reply::text(format!("ticked {text}"));
        }
        if text.starts_with("ticks") {
            Reply::tool_call("python", TICKS)
        } else if text == "flood" {
            Reply::tool_call("python", "for i in range(1000):\n    print('x' * 999)")
        } else {
            Reply::text(format!("answer to: {text}")).chunked(5)
        }
    })
}

async fn start(args: &[&str]) -> (ScriptedServer, ServerProcess) {
    let model = ScriptedServer::start(model_script()).await.unwrap();
    let server = Launch::new(&model.base_url()).args(args).start();
    (model, server)
}

/// Connects asking for numbered `complete`s (`?input_numbers=1`), as a client that reconnects
/// must, to tell its answer from what a dropped connection left over.
async fn connect(server: &ServerProcess, path: &str) -> Ws {
    let url = format!("ws://{}{path}?input_numbers=1", server.addr());
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

async fn say(ws: &mut Ws, kind: &str, text: &str) {
    for frame in [
        json!({"role": "user", "type": kind, "start": true}),
        json!({"role": "user", "type": kind, "content": text}),
        json!({"role": "user", "type": kind, "end": true}),
    ] {
        ws.send(Message::text(frame.to_string())).await.unwrap();
    }
}

/// The next JSON frame, or `None` when the connection closed.
async fn next_json(ws: &mut Ws) -> Option<Value> {
    loop {
        let frame = tokio::time::timeout(FRAME_TIMEOUT, ws.next())
            .await
            .expect("a frame in time: the server went silent");
        match frame {
            Some(Ok(Message::Text(text))) => return Some(serde_json::from_str(&text).unwrap()),
            Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return None,
            Some(Ok(_)) => {}
        }
    }
}

fn is_complete(frame: &Value) -> bool {
    frame["role"] == "server" && frame["content"] == "complete"
}

/// Reads until the `complete` that answers input `number` of this connection; returns every
/// frame read, that `complete` last.
async fn until_answer(ws: &mut Ws, number: u64) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let frame = next_json(ws).await.expect("the connection stays open");
        let done = is_complete(&frame) && frame["input"] == number;
        frames.push(frame);
        if done {
            return frames;
        }
    }
}

/// The assistant's text in `frames`.
fn said(frames: &[Value]) -> String {
    frames
        .iter()
        .filter(|f| f["role"] == "assistant" && f["type"] == "message")
        .filter_map(|f| f["content"].as_str())
        .collect()
}

/// Reads until the code's first line of output.
async fn until_output(ws: &mut Ws) {
    loop {
        let frame = next_json(ws).await.expect("the connection stays open");
        if frame["format"] == "output" {
            return;
        }
    }
}

async fn dropped_socket_then_message(args: &[&str]) {
    let (_model, server) = start(args).await;
    for round in 0..6 {
        let mut ws = connect(&server, "/sessions/churn").await;
        say(&mut ws, "message", &format!("ticks {round}")).await;
        until_output(&mut ws).await;
        // Vanish mid-turn without a close handshake, and come back at once.
        drop(ws);
        let mut again = connect(&server, "/sessions/churn").await;
        let question = format!("and now? {round}");
        say(&mut again, "message", &question).await;
        let frames = until_answer(&mut again, 1).await;
        let answer = format!("answer to: {question}");
        assert!(
            said(&frames).ends_with(&answer),
            "round {round}: the message after the reconnect was not answered before its complete: {frames:?}"
        );
        for earlier in frames.iter().filter(|f| is_complete(f)) {
            assert!(
                earlier == frames.last().unwrap() || earlier.get("input").is_none(),
                "round {round}: a complete of the dropped connection names an input: {earlier}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_after_a_dropped_socket_is_answered_in_queue_mode() {
    dropped_socket_then_message(&["--queue"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_after_a_dropped_socket_is_answered_when_it_interrupts() {
    dropped_socket_then_message(&[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_socket_mid_turn_is_answered_at_once_and_the_next_message_too() {
    let (_model, server) = start(&[]).await;
    let mut ws = connect(&server, "/sessions/close").await;
    say(&mut ws, "message", "hello").await;
    until_answer(&mut ws, 1).await;
    say(&mut ws, "message", "ticks").await;
    until_output(&mut ws).await;
    let started = Instant::now();
    ws.send(Message::Close(None)).await.unwrap();
    // Like Python's `websockets`: the close ends when the server's close frame arrives; the
    // client reconnects only then.
    loop {
        match tokio::time::timeout(FRAME_TIMEOUT, ws.next()).await {
            Ok(Some(Ok(Message::Close(_)))) => break,
            Ok(Some(Ok(_))) => continue,
            Ok(None) | Ok(Some(Err(_))) => panic!("the connection ended without a close frame"),
            Err(_) => panic!("no close answer in time"),
        }
    }
    let took = started.elapsed();
    assert!(took < Duration::from_millis(500), "the close took {took:?}");
    let mut again = connect(&server, "/sessions/close").await;
    say(&mut again, "message", "still there?").await;
    let frames = until_answer(&mut again, 1).await;
    assert!(
        said(&frames).ends_with("answer to: still there?"),
        "{frames:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_complete_left_over_from_a_dropped_connection_names_no_input() {
    let (_model, server) = start(&[]).await;
    let mut ws = connect(&server, "/sessions/left").await;
    say(&mut ws, "message", "ticks").await;
    until_output(&mut ws).await;
    drop(ws);
    // The turn ends while nobody is connected (user, code, output, answer: 4 messages): its
    // rest and its complete wait for the next connection.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info = raw(&server.addr(), &get("/sessions/left", &[])).await;
        if info.body().contains("\"messages\":4") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the turn did not end: {}",
            info.text
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut again = connect(&server, "/sessions/left").await;
    say(&mut again, "message", "next").await;
    let frames = until_answer(&mut again, 1).await;
    let completes: Vec<&Value> = frames.iter().filter(|f| is_complete(f)).collect();
    assert_eq!(completes.len(), 2, "{frames:?}");
    assert!(completes[0].get("input").is_none(), "{:?}", completes[0]);
    assert_eq!(
        said(&frames),
        "ticked ticksanswer to: next",
        "the rest of the old turn first, then the answer"
    );
    assert!(said(&frames).ends_with("answer to: next"), "{frames:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inputs_are_numbered_per_connection_and_an_interrupted_one_gets_no_complete() {
    let (_model, server) = start(&[]).await;
    let mut ws = connect(&server, "/sessions/numbers").await;
    say(&mut ws, "message", "ticks").await;
    until_output(&mut ws).await;
    // A second input interrupts the first: only the second is answered.
    say(&mut ws, "message", "second").await;
    let frames = until_answer(&mut ws, 2).await;
    let completes: Vec<&Value> = frames.iter().filter(|f| is_complete(f)).collect();
    assert_eq!(completes.len(), 1, "{frames:?}");
    assert!(said(&frames).ends_with("answer to: second"));
    // A stop with nothing running, an unknown command, then a message: 3, 4, 5.
    say(&mut ws, "command", "stop").await;
    assert_eq!(until_answer(&mut ws, 3).await.len(), 1);
    say(&mut ws, "command", "jump").await;
    let frames = until_answer(&mut ws, 4).await;
    assert!(
        frames[0]["content"]
            .as_str()
            .is_some_and(|c| c.contains("unknown command")),
        "{frames:?}"
    );
    say(&mut ws, "message", "fifth").await;
    let frames = until_answer(&mut ws, 5).await;
    assert!(said(&frames).ends_with("answer to: fifth"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_does_not_mix_the_half_input_of_the_old_connection_into_the_new_one() {
    let (model, server) = start(&[]).await;
    let mut first = connect(&server, "/sessions/mix").await;
    for frame in [
        json!({"role": "user", "type": "message", "start": true}),
        json!({"role": "user", "type": "message", "content": "half of an input, never ended"}),
    ] {
        first.send(Message::text(frame.to_string())).await.unwrap();
    }
    // The old connection stays open (its reader is still there) while a new one takes over.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut second = connect(&server, "/sessions/mix").await;
    say(&mut second, "message", "whole").await;
    let frames = until_answer(&mut second, 1).await;
    assert!(said(&frames).ends_with("answer to: whole"), "{frames:?}");
    let sent = model.requests().last().unwrap().body.to_string();
    assert!(
        !sent.contains("half of an input"),
        "the old connection's half input reached the model: {sent}"
    );
    drop(first);
}

/// A WebSocket over a socket with a tiny receive buffer, so the server's sends block as soon
/// as this client stops reading.
async fn connect_small_buffer(server: &ServerProcess, path: &str) -> Ws {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket
        .connect(server.addr().parse().unwrap())
        .await
        .unwrap();
    let url = format!("ws://{}{path}", server.addr());
    tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(stream))
        .await
        .unwrap()
        .0
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_is_not_held_up_by_a_client_that_stopped_reading() {
    let (_model, server) = start(&["--queue"]).await;
    let mut stuck = connect_small_buffer(&server, "/sessions/stuck").await;
    // Eight floods of 1 MB, queued: more than the kernel buffers (4 MB for the server's
    // socket) hold while this client does not read.
    for _ in 0..8 {
        say(&mut stuck, "message", "flood").await;
    }
    until_output(&mut stuck).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let started = Instant::now();
    let mut fresh = connect(&server, "/sessions/stuck").await;
    say(&mut fresh, "command", "stop").await;
    until_answer(&mut fresh, 1).await;
    say(&mut fresh, "message", "over here").await;
    let frames = until_answer(&mut fresh, 2).await;
    assert!(said(&frames).ends_with("answer to: over here"));
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "the newcomer waited {took:?} for the stuck connection"
    );
    drop(stuck);
}
