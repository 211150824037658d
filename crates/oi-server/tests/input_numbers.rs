//! Which input a `complete` answers, through the real `oi-server` binary: a client drops its
//! connection in the middle of a turn, the turn ends while no one is connected, and the
//! client reconnects and sends a new message. The rest of the old turn comes first (the
//! original's leftover rule), with its `complete`; then the answer to the new message. On a
//! connection opened with `?input_numbers=true` the old `complete` names no input and the new
//! one says `"input": 1`; on a plain connection both are the original's `complete`, byte for
//! byte. The wire forms are snapshots.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use std::time::Duration;

use common::{Ws, next_json, say, until_complete, wire};
use futures::SinkExt;
use oi_testkit::{Ending, Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

/// How long the model stalls in the middle of the first answer.
const STALL: Duration = Duration::from_millis(700);

fn reply(body: &Value) -> Reply {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    if last == "first" {
        // Event 0 opens the message, 1 is "Part one. "; the stall comes before "Part two.".
        Reply::text_pieces(["Part one. ", "Part two."]).ending(Ending::StallAfter(2, STALL))
    } else {
        Reply::text("Second answer.")
    }
}

async fn connect(port: u16, path: &str) -> Ws {
    tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}{path}"))
        .await
        .unwrap()
        .0
}

/// Drops a connection in the middle of a turn, waits until the turn ended, reconnects with
/// `query` and sends a new message; what the new connection received, from the rest of the
/// old answer on.
async fn reconnect_after_a_dropped_turn(port: u16, session: &str, query: &str) -> Vec<Value> {
    let path = format!("/sessions/{session}{query}");
    let mut first = connect(port, &path).await;
    say(&mut first, "message", "first").await;
    loop {
        let frame = next_json(&mut first).await;
        if frame["content"] == "Part one. " {
            break;
        }
    }
    first.send(Message::Close(None)).await.unwrap();
    drop(first);
    // The old turn ends while no one is connected: its rest waits for the next connection.
    tokio::time::sleep(STALL * 2).await;
    let mut second = connect(port, &path).await;
    say(&mut second, "message", "second").await;
    let mut frames = until_complete(&mut second, false).await;
    frames.extend(until_complete(&mut second, false).await);
    // What was written to the first socket before it closed is not the second's: start at
    // the old answer's second part.
    let start = frames
        .iter()
        .position(|f| f["content"] == "Part two.")
        .unwrap_or_else(|| panic!("the rest of the old turn never came: {frames:?}"));
    frames.split_off(start)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnecting_client_tells_the_old_turns_complete_from_its_own() {
    let model = ScriptedServer::start(Script::responder(reply).without_recording())
        .await
        .unwrap();
    let server = Launch::new(&model.base_url()).start();

    let numbered =
        reconnect_after_a_dropped_turn(server.port, "numbered", "?input_numbers=true").await;
    insta::assert_snapshot!("reconnect_with_input_numbers", wire(&numbered));
    let completes: Vec<&Value> = numbered
        .iter()
        .filter(|f| f["content"] == "complete")
        .collect();
    assert_eq!(completes.len(), 2, "{numbered:?}");
    assert!(
        completes[0].get("input").is_none(),
        "the old turn's complete"
    );
    assert_eq!(
        completes[1]["input"], 1,
        "the new message is this connection's input 1"
    );

    let plain = reconnect_after_a_dropped_turn(server.port, "plain", "").await;
    insta::assert_snapshot!("reconnect_without_input_numbers", wire(&plain));
    for frame in plain.iter().filter(|f| f["content"] == "complete") {
        assert_eq!(
            frame.to_string(),
            r#"{"content":"complete","role":"server","type":"status"}"#,
            "the original's complete"
        );
    }
}
