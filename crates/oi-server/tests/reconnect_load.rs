//! Every message sent after a reconnect is answered, under load, through the real `oi-server`
//! binary: six clients, each on its own session, loop — a three-step Python task, a few
//! chunks read, a close handshake (while the model streams or while the code runs silently),
//! a new connection to the same session at once, a new message that must get its own answer.
//! The close must be answered at once and the new message answered, every time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use std::time::{Duration, Instant};

use common::{Ws, say};
use futures::{SinkExt, StreamExt};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

const CLIENTS: usize = 6;
const ROUNDS: usize = 10;

/// The model: `task` gets three silent code steps, then a text; `again N` gets `answer N`.
fn reply(body: &Value) -> Reply {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last_user = messages
        .iter()
        .rposition(|m| m["role"] == "user")
        .unwrap_or(0);
    let text = messages
        .get(last_user)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    if let Some(n) = text.strip_prefix("again ") {
        return Reply::text(format!("answer {n}, streamed in small pieces.")).chunked(4);
    }
    let steps = messages[last_user..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .count();
    if steps < 3 {
        Reply::tool_call("python", "import time\ntime.sleep(0.3)\nx = 1")
    } else {
        Reply::text("The three steps ran.").chunked(4)
    }
}

async fn connect(port: u16, session: &str) -> Ws {
    tokio_tungstenite::connect_async(format!(
        "ws://127.0.0.1:{port}/sessions/{session}?input_numbers=true"
    ))
    .await
    .unwrap()
    .0
}

/// The next JSON frame within `within`, or `None`.
async fn next_json(ws: &mut Ws, within: Duration) -> Option<Value> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Ok(Some(Ok(Message::Text(text)))) => return serde_json::from_str(&text).ok(),
            Ok(Some(Ok(_))) => continue,
            _ => return None,
        }
    }
}

/// Sends a close frame; how long until the server's close frame came (`None`: never).
async fn close(ws: &mut Ws) -> Option<Duration> {
    let started = Instant::now();
    let frame = CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    };
    ws.send(Message::Close(Some(frame))).await.ok()?;
    let answered = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(Ok(message)) = ws.next().await {
            if let Message::Close(_) = message {
                return true;
            }
        }
        false
    })
    .await;
    matches!(answered, Ok(true)).then(|| started.elapsed())
}

/// One client's rounds; the problems it saw.
async fn client(port: u16, index: usize) -> Vec<String> {
    let session = format!("load-{index}");
    let mut problems = Vec::new();
    let mut ws = connect(port, &session).await;
    for round in 0..ROUNDS {
        say(&mut ws, "message", "task").await;
        // Close while the model streams (a few chunks in) or while the code sleeps.
        let silent = (index + round) % 2 == 0;
        for read in 1..=200 {
            let Some(frame) = next_json(&mut ws, Duration::from_secs(20)).await else {
                break;
            };
            let code_whole = frame["type"] == "code" && frame.get("end").is_some();
            if (!silent && read >= 3) || (silent && code_whole) {
                break;
            }
        }
        if silent {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        match close(&mut ws).await {
            Some(took) if took < Duration::from_secs(1) => {}
            other => problems.push(format!(
                "client {index} round {round}: the close was answered after {other:?}"
            )),
        }
        ws = connect(port, &session).await;
        let text = format!("again {index}-{round}");
        say(&mut ws, "message", &text).await;
        let expected = format!("answer {index}-{round}, streamed in small pieces.");
        let mut answer = String::new();
        let answered = loop {
            let Some(frame) = next_json(&mut ws, Duration::from_secs(30)).await else {
                break false;
            };
            if frame["role"] == "assistant" && frame["type"] == "message" {
                answer.push_str(frame["content"].as_str().unwrap_or_default());
            }
            if frame["content"] == "complete" && frame["input"] == 1 {
                break true;
            }
        };
        if !answered || !answer.ends_with(&expected) {
            problems.push(format!(
                "client {index} round {round}: the message after the reconnect was not answered \
                 (answered {answered}, text {answer:?})"
            ));
        }
    }
    problems
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_message_after_a_reconnect_is_answered_under_load() {
    let model = ScriptedServer::start(Script::responder(reply).without_recording())
        .await
        .unwrap();
    let server = Launch::new(&model.base_url()).start();
    let runs = (0..CLIENTS).map(|i| tokio::spawn(client(server.port, i)));
    let problems: Vec<String> = futures::future::join_all(runs)
        .await
        .into_iter()
        .flat_map(Result::unwrap)
        .collect();
    assert!(
        problems.is_empty(),
        "{} problems:\n{}\n{}",
        problems.len(),
        problems.join("\n"),
        server.stderr()
    );
}
