//! The session's log over the real binary (docs/protocol.md, "The log: `?replay=all`,
//! `?since=N`"): a client reads part of a turn and goes; a new connection with `?since=N`
//! gets exactly the frames after N, then live output; `?replay=all` gets the whole session,
//! the user's inputs included; a client that does not ask gets no `seq` and no header.
//! Pieces may be joined on the way (a joined frame carries its last piece's `seq`), so the
//! tests compare what was said, not how it was cut, and `seq` rises without going back.

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

/// Every `seq` above the one before it and above `after`.
fn rising_after(after: u64, frames: &[Value]) -> bool {
    let mut previous = after;
    seqs(frames).into_iter().all(|seq| {
        let rises = seq > previous;
        previous = seq;
        rises
    })
}

/// What was said: adjacent text pieces of one run joined into one, however they were cut.
fn said(frames: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for frame in without_seq(frames) {
        let joinable = |f: &Value| {
            f["content"].is_string() && f.get("start").is_none() && f.get("end").is_none()
        };
        if let Some(previous) = out.last_mut()
            && joinable(previous)
            && joinable(&frame)
            && ["role", "type", "format"]
                .iter()
                .all(|k| previous.get(k) == frame.get(k))
        {
            let joined = format!(
                "{}{}",
                previous["content"].as_str().unwrap(),
                frame["content"].as_str().unwrap()
            );
            previous["content"] = Value::String(joined);
            continue;
        }
        out.push(frame);
    }
    out
}

/// Frames until one carries `seq` `last` (a replay's end).
async fn until_seq(ws: &mut Ws, last: u64) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let frame = next(ws).await;
        let seq = frame["seq"].as_u64().unwrap();
        frames.push(frame);
        if seq >= last {
            return frames;
        }
    }
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
    let replayed = until_seq(&mut a, last).await;
    assert!(rising_after(0, &replayed), "{replayed:?}");
    assert_eq!(seqs(&replayed)[0], 1);
    assert_eq!(seqs(&replayed).last(), Some(&last));
    assert_eq!(
        replayed[0]["role"], "user",
        "the input is in the log: {replayed:?}"
    );
    assert_eq!(replayed[0]["content"], "one");
    assert_eq!(
        said(&replayed[1..]),
        said(&first_turn),
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
    assert!(
        rising_after(last + 1, &seen),
        "the input took {}: {seen:?}",
        last + 1
    );
    drop(a);

    // `since=N`: exactly what came after N (no duplicate, no gap), then live to `complete`.
    let mut b = connect(port, &format!("?since={n}")).await;
    let header = next(&mut b).await;
    assert_eq!(header["type"], "replay");
    let rest = until_complete(&mut b).await;
    assert!(rising_after(n, &rest), "after {n}: {rest:?}");
    let text: String = rest.iter().filter_map(|f| f["content"].as_str()).collect();
    assert!(text.contains("Part three."), "{rest:?}");
    assert!(!text.contains("Part one"), "nothing twice: {rest:?}");
    let before: String = seen
        .iter()
        .filter(|f| f["role"] == "assistant")
        .filter_map(|f| f["content"].as_str())
        .collect();
    assert_eq!(
        format!("{before}{text}")
            .matches("Part one. Part two. Part three.")
            .count(),
        1,
        "no gap, no duplicate: {seen:?} then {rest:?}"
    );
    drop(b);

    // `replay=all` again: the whole session, each frame once, in order.
    let mut c = connect(port, "?replay=all").await;
    let header = next(&mut c).await;
    let total = header["last"].as_u64().unwrap();
    let all = until_seq(&mut c, total).await;
    assert!(rising_after(0, &all), "{all:?}");
    let whole_text: String = all
        .iter()
        .filter(|f| f["role"] == "assistant")
        .filter_map(|f| f["content"].as_str())
        .collect();
    assert!(
        whole_text.contains("first answer")
            && whole_text.contains("Part one. Part two. Part three."),
        "{whole_text}"
    );
    assert_eq!(all.iter().filter(|f| is_complete(f)).count(), 2);
    let said: Vec<&str> = all
        .iter()
        .filter(|f| f["role"] == "user")
        .filter_map(|f| f["content"].as_str())
        .collect();
    assert_eq!(said, ["one", "two"]);
}
