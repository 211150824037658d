//! Acknowledge mode over real sockets: ids, resends, replay to the next connection.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::{TestServer, next_json, say, send, until_complete, wire};
use oi_testkit::{Reply, Script};
use serde_json::{Value, json};

fn id(frame: &Value) -> String {
    frame["id"]
        .as_str()
        .expect("every frame has an id")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_chunk_has_its_own_id() {
    let server = TestServer::start(
        Script::new([Reply::text("one"), Reply::text("two")]),
        |_| {},
        |c| c.require_acknowledge = true,
    )
    .await;
    let mut ws = server.connect().await;
    say(&mut ws, "message", "first").await;
    let mut frames = until_complete(&mut ws, true).await;
    say(&mut ws, "message", "second").await;
    frames.extend(until_complete(&mut ws, true).await);
    let ids: HashSet<String> = frames.iter().map(id).collect();
    assert_eq!(
        ids.len(),
        frames.len(),
        "ids are unique, completes included"
    );
    insta::assert_snapshot!("two_turns_with_ids", wire(&frames));
    let outbox_empty = async {
        while server.state.sessions.default_session().outbox().waiting() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), outbox_empty)
        .await
        .expect("every ack is recorded");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unacked_chunk_is_resent_with_the_same_id() {
    let server = TestServer::start(
        Script::new([Reply::text("hello")]),
        |_| {},
        |c| {
            c.require_acknowledge = true;
            c.ack_timeout = Duration::from_millis(200);
        },
    )
    .await;
    let mut ws = server.connect().await;
    say(&mut ws, "message", "hi").await;
    let first = next_json(&mut ws).await;
    // Do not ack: the frames that follow, then the same first frame again.
    let mut seen = vec![first.clone()];
    loop {
        let frame = next_json(&mut ws).await;
        if frame == first {
            break;
        }
        assert!(seen.len() < 20, "no resend: {seen:?}");
        seen.push(frame);
    }
    send(&mut ws, json!({"ack": id(&first)})).await;
    for frame in &seen[1..] {
        send(&mut ws, json!({"ack": id(frame)})).await;
    }
    let outbox_empty = async {
        while server.state.sessions.default_session().outbox().waiting() > 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(5), outbox_empty)
        .await
        .expect("every ack is recorded");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socket_killed_mid_turn_the_rest_goes_to_the_next_connection_once() {
    let script = Script::new([
        Reply::tool_call(
            "python",
            "import time\nprint('a', flush=True)\ntime.sleep(1)\nprint('b')",
        ),
        Reply::text("Done."),
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
    say(&mut first, "message", "print a and b").await;
    let mut acked = Vec::new();
    loop {
        let frame = next_json(&mut first).await;
        send(&mut first, json!({"ack": id(&frame)})).await;
        let is_active_line = frame["format"] == "active_line";
        acked.push(frame);
        if is_active_line {
            break;
        }
    }
    // One more frame read but never acked, then the socket dies.
    let unacked = next_json(&mut first).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(first);

    let mut second = server.connect().await;
    let rest = until_complete(&mut second, true).await;
    assert_eq!(
        rest[0], unacked,
        "the unacked frame comes first, with its id"
    );
    let acked_ids: HashSet<String> = acked.iter().map(id).collect();
    assert!(
        rest.iter().all(|f| !acked_ids.contains(&id(f))),
        "nothing acked comes again"
    );
    let rest_ids: HashSet<String> = rest.iter().map(id).collect();
    assert_eq!(rest_ids.len(), rest.len(), "nothing twice");
    let mut all = acked;
    all.extend(rest);
    insta::assert_snapshot!("killed_and_resumed", wire(&all));
    server.shutdown().await;
}
