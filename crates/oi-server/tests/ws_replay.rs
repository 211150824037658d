//! The session's log over the real binary (docs/protocol.md, "The log: `?replay=all`,
//! `?since=N`"): a client reads part of a turn and goes; a new connection with `?since=N`
//! gets exactly the frames after N, then live output; `?replay=all` gets the whole session,
//! the user's inputs included; a client that does not ask gets no `seq` and no header.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use oi_testkit::{Ending, Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(port: u16, query: &str) -> Ws {
    let url = format!("ws://127.0.0.1:{port}/sessions/r{query}");
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

async fn next(ws: &mut Ws) -> Value {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("a frame in time")
            .expect("the socket is open")
            .unwrap();
        if let Message::Text(text) = frame {
            return serde_json::from_str(text.as_str()).unwrap();
        }
    }
}

async fn say(ws: &mut Ws, text: &str) {
    for frame in [
        json!({"role": "user", "type": "message", "start": true}),
        json!({"role": "user", "type": "message", "content": text}),
        json!({"role": "user", "type": "message", "end": true}),
    ] {
        ws.send(Message::Text(frame.to_string().into()))
            .await
            .unwrap();
    }
}

fn is_complete(frame: &Value) -> bool {
    frame["role"] == "server" && frame["content"] == "complete"
}

async fn until_complete(ws: &mut Ws) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let frame = next(ws).await;
        let done = is_complete(&frame);
        frames.push(frame);
        if done {
            return frames;
        }
    }
}

fn without_seq(frames: &[Value]) -> Vec<Value> {
    frames
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.as_object_mut().unwrap().remove("seq");
            f
        })
        .collect()
}

fn seqs(frames: &[Value]) -> Vec<u64> {
    frames.iter().map(|f| f["seq"].as_u64().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn since_resumes_exactly_and_all_replays_the_session() {
    let model = ScriptedServer::start(Script::new([
        Reply::text("first answer"),
        Reply::text_pieces(["Part one. ", "Part two. ", "Part three."])
            .ending(Ending::StallAfter(2, Duration::from_millis(1500))),
    ]))
    .await
    .unwrap();
    let server = Launch::new(&model.base_url()).start();
    let port = server.port;

    // A client that does not ask gets what it always got: no header, no `seq`.
    let mut plain = connect(port, "").await;
    say(&mut plain, "one").await;
    let first_turn = until_complete(&mut plain).await;
    assert!(
        first_turn.iter().all(|f| f.get("seq").is_none()),
        "{first_turn:?}"
    );
    drop(plain);

    // A client that asks for all: the header, then the whole session so far, numbered.
    let mut a = connect(port, "?replay=all").await;
    let header = next(&mut a).await;
    assert_eq!(header["type"], "replay", "{header}");
    assert_eq!(header["first"], 1);
    assert_eq!(header["whole"], true);
    let last = header["last"].as_u64().unwrap();
    let mut replayed = Vec::new();
    for _ in 0..last {
        replayed.push(next(&mut a).await);
    }
    assert_eq!(seqs(&replayed), (1..=last).collect::<Vec<_>>());
    assert_eq!(
        replayed[0]["role"], "user",
        "the input is in the log: {replayed:?}"
    );
    assert_eq!(replayed[0]["content"], "one");
    assert_eq!(
        without_seq(&replayed[1..]),
        first_turn,
        "what the first client saw"
    );

    // Part of a turn, then the client goes in the middle of it.
    say(&mut a, "two").await;
    let mut seen = Vec::new();
    loop {
        let frame = next(&mut a).await;
        let text = frame["content"].as_str().unwrap_or_default().to_owned();
        seen.push(frame);
        if text.contains("Part one") {
            break;
        }
    }
    let n = seen.last().unwrap()["seq"].as_u64().unwrap();
    assert_eq!(
        seqs(&seen),
        ((last + 2)..=n).collect::<Vec<_>>(),
        "the input took {}",
        last + 1
    );
    drop(a);

    // `since=N`: exactly what came after N (no duplicate, no gap), then live to `complete`.
    let mut b = connect(port, &format!("?since={n}")).await;
    let header = next(&mut b).await;
    assert_eq!(header["type"], "replay");
    let rest = until_complete(&mut b).await;
    assert_eq!(
        seqs(&rest),
        ((n + 1)..=(n + rest.len() as u64)).collect::<Vec<_>>()
    );
    let text: String = rest.iter().filter_map(|f| f["content"].as_str()).collect();
    assert!(text.contains("Part three."), "{rest:?}");
    assert!(!text.contains("Part one"), "nothing twice: {rest:?}");
    drop(b);

    // `replay=all` again: the whole session, each frame once, in order.
    let mut c = connect(port, "?replay=all").await;
    let header = next(&mut c).await;
    let total = header["last"].as_u64().unwrap();
    let mut all = Vec::new();
    for _ in 0..total {
        all.push(next(&mut c).await);
    }
    assert_eq!(seqs(&all), (1..=total).collect::<Vec<_>>());
    assert_eq!(all.iter().filter(|f| is_complete(f)).count(), 2);
    let said: Vec<&str> = all
        .iter()
        .filter(|f| f["role"] == "user")
        .filter_map(|f| f["content"].as_str())
        .collect();
    assert_eq!(said, ["one", "two"]);
}
