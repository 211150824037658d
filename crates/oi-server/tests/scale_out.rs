//! Scale-out end to end: a real redis-server and nginx, three real oi-server replicas, and
//! clients that go through nginx. The owner of a session is killed with SIGKILL mid-turn in
//! acknowledge mode; the client reconnects and gets every unacknowledged chunk exactly once,
//! the earlier messages, and a next turn that remembers the first. Redis is killed and
//! restarted in between (AOF, fsync always): nothing written before is lost. Two clients
//! racing for one session on two replicas never both get it. SIGTERM drains a replica: its
//! turn finishes and the session moves on at once.
//!
//! Each test skips (with a reason) where redis-server or nginx is not installed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;
mod scale;

use std::collections::HashSet;
use std::time::Duration;

use common::{next_json, say, send, until_complete};
use oi_testkit::{Reply, Script, ScriptedServer};
use scale::{Nginx, Redis, free_port, have, open, open_retrying, owner, replica, signal};
use serde_json::{Value, json};

fn id(frame: &Value) -> String {
    frame["id"]
        .as_str()
        .expect("every frame has an id")
        .to_owned()
}

fn is_output(frame: &Value) -> bool {
    frame["type"] == "console" && frame["format"] == "output"
}

/// Everything the model was sent in its last request, as text.
fn last_request(model: &ScriptedServer) -> String {
    model.requests().last().unwrap().body.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_killed_mid_turn_the_session_goes_on_elsewhere() {
    if !have("redis-server") || !have("nginx") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut redis = Redis::start(dir.path());
    let model = ScriptedServer::start(Script::new([
        Reply::text("I will remember the word kiwi."),
        Reply::tool_call("shell", "echo one; echo two; sleep 5; echo never"),
        Reply::text("The word was kiwi."),
    ]))
    .await
    .unwrap();
    let front_port = free_port();
    let front = format!("127.0.0.1:{front_port}");
    let replicas: Vec<_> = (0..3)
        .map(|_| replica(&model.base_url(), &redis.url(), &front, 1500))
        .collect();
    let ports: Vec<u16> = replicas.iter().map(|r| r.port).collect();
    let _nginx = Nginx::start(dir.path(), front_port, &ports);

    // Turn 1 through nginx, every chunk acknowledged.
    let (mut ws, _) = open_retrying(&front, "kiwi", Duration::from_secs(10)).await;
    say(&mut ws, "message", "Remember the word kiwi.").await;
    let first = until_complete(&mut ws, true).await;
    assert!(
        first
            .iter()
            .any(|f| f["content"] == "I will remember the word kiwi.")
    );

    // The first turn is written (in the background) and every chunk's ack recorded.
    redis
        .wait_for("HGET oi:{kiwi}:state messages", |m| {
            m.contains("I will remember the word kiwi.")
        })
        .await;
    redis.wait_for("HLEN oi:{kiwi}:outbox", |n| n == ":0").await;
    // The settings are stored without the replica's model credentials (`--api_key x` and the
    // scripted model's URL).
    let settings = redis.command("HGET oi:{kiwi}:state settings");
    assert!(settings.contains("\"system_message\""), "{settings}");
    assert!(
        settings.contains("\"api_key\":null") && settings.contains("\"api_base\":null"),
        "{settings}"
    );
    assert!(!settings.contains(&model.base_url()), "{settings}");

    // Redis dies (SIGKILL) and comes back: what was written before is still there, and the
    // owner's connection comes back by itself (it renews the lease again).
    redis.restart();
    assert!(
        redis
            .command("HGET oi:{kiwi}:state messages")
            .contains("I will remember the word kiwi."),
        "the first turn survived the restart"
    );
    let left: i64 = redis.command("PTTL oi:{kiwi}:lease")[1..].parse().unwrap();
    redis
        .wait_for("PTTL oi:{kiwi}:lease", |ttl| {
            ttl[1..].parse::<i64>().is_ok_and(|now| now > left + 100)
        })
        .await;

    // Turn 2: ack every chunk up to the code's output, none after it.
    say(&mut ws, "message", "Now run something.").await;
    let mut acked = Vec::new();
    let mut unacked: Vec<Value> = Vec::new();
    let mut output = String::new();
    while !output.contains("two") {
        let frame = next_json(&mut ws).await;
        if is_output(&frame) {
            output.push_str(frame["content"].as_str().unwrap_or(""));
        }
        if is_output(&frame) || !unacked.is_empty() {
            if !unacked.iter().any(|f| id(f) == id(&frame)) {
                unacked.push(frame);
            }
        } else {
            send(&mut ws, json!({"ack": id(&frame)})).await;
            acked.push(frame);
        }
    }
    assert!(!acked.is_empty() && !unacked.is_empty());
    // The acks reach the owner and the store (as they would before a real crash).
    for frame in &acked {
        let id = id(frame);
        let seq = id.rsplit('-').next().unwrap().to_owned();
        redis
            .wait_for(&format!("HEXISTS oi:{{kiwi}}:outbox {seq}"), |n| n == ":0")
            .await;
    }
    let dead = owner(&replicas, "kiwi").await.expect("a replica owns kiwi");
    signal(replicas[dead].pid(), "KILL");
    drop(ws);

    // Reconnect through nginx: refused while the dead owner's lease runs out, then served.
    let (mut ws, refusals) = open_retrying(&front, "kiwi", Duration::from_secs(15)).await;
    let rest = until_complete(&mut ws, true).await;
    let now = owner(&replicas, "kiwi")
        .await
        .expect("a replica owns kiwi again");
    assert_ne!(now, dead);
    assert!(
        refusals
            .iter()
            .all(|r| r.contains("409") || r.contains("50")),
        "{refusals:?}"
    );
    assert!(
        refusals.iter().any(|r| r.contains("409")),
        "the dead owner's lease held the session for a while: {refusals:?}"
    );

    let ids: Vec<String> = rest
        .iter()
        .filter(|f| f.get("id").is_some())
        .map(id)
        .collect();
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "nothing comes twice: {rest:#?}");
    let acked_ids: HashSet<String> = acked.iter().map(id).collect();
    assert!(
        ids.iter().all(|i| !acked_ids.contains(i)),
        "nothing acknowledged comes again: {rest:#?}"
    );
    let replayed: Vec<&Value> = rest.iter().take(unacked.len()).collect();
    assert_eq!(
        replayed,
        unacked.iter().collect::<Vec<_>>(),
        "every unacknowledged chunk, in order, first"
    );
    let note = rest
        .iter()
        .position(|f| is_output(f) && f["content"] == oi_server::cluster::LOST_RUN_NOTE)
        .expect("the new owner says the code is gone");
    assert_eq!(
        rest.iter()
            .filter(|f| f["content"] == oi_server::cluster::LOST_RUN_NOTE)
            .count(),
        1
    );
    assert!(note >= unacked.len());
    assert!(
        !rest
            .iter()
            .any(|f| f["content"].as_str().is_some_and(|c| c.contains("never")))
    );

    // Turn 3 on the new owner remembers turns 1 and 2.
    say(&mut ws, "message", "Which word?").await;
    let third = until_complete(&mut ws, true).await;
    assert!(third.iter().any(|f| f["content"] == "The word was kiwi."));
    let sent = last_request(&model);
    for remembered in [
        "Remember the word kiwi.",
        "I will remember the word kiwi.",
        "echo one; echo two",
        "Now run something.",
    ] {
        assert!(
            sent.contains(remembered),
            "{remembered:?} missing from {sent}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_racing_for_one_session_never_both_get_it() {
    if !have("redis-server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let replicas: Vec<_> = (0..3)
        .map(|_| replica(&model.base_url(), &redis.url(), "localhost", 1500))
        .collect();
    for round in 0..10 {
        let session = format!("race-{round}");
        let (a, b) = (replicas[round % 3].addr(), replicas[(round + 1) % 3].addr());
        let (first, second) = tokio::join!(open(&a, &session), open(&b, &session));
        let won = [first.is_ok(), second.is_ok()];
        assert_eq!(
            won.iter().filter(|w| **w).count(),
            1,
            "round {round}: exactly one wins ({first:?}, {second:?})"
        );
        let refusal = first.err().or(second.err()).unwrap();
        assert!(refusal.contains("409"), "a clear refusal: {refusal}");
    }
    // Deleting: refused by a replica that does not serve the session, done by the one that
    // does (the store forgets it), then there is nothing to delete.
    let client = reqwest::Client::new();
    let holder = owner(&replicas, "race-0").await.expect("race-0 is served");
    let other = (holder + 1) % 3;
    let delete = |i: usize| {
        client
            .delete(format!("http://{}/sessions/race-0", replicas[i].addr()))
            .send()
    };
    assert_eq!(delete(other).await.unwrap().status(), 409);
    assert_eq!(delete(holder).await.unwrap().status(), 200);
    assert_eq!(redis.command("EXISTS oi:{race-0}:state"), ":0");
    assert_eq!(delete(other).await.unwrap().status(), 404);
    // The refusal says why and what to do.
    let holder = owner(&replicas, "race-1").await.expect("race-1 is served");
    let other = replicas[(holder + 1) % 3].addr();
    let refused = client
        .get(format!("http://{other}/sessions/race-1"))
        .header("connection", "upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 409);
    assert!(refused.headers().contains_key("retry-after"));
    let text = refused.text().await.unwrap();
    assert!(
        text.contains("another replica") && text.contains("retry"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_the_turn_and_hands_the_session_over_at_once() {
    if !have("redis-server") || !have("nginx") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let model = ScriptedServer::start(Script::new([
        Reply::tool_call("shell", "sleep 1; echo finished"),
        Reply::text("Ran it."),
        Reply::text("Still here."),
    ]))
    .await
    .unwrap();
    let front_port = free_port();
    let front = format!("127.0.0.1:{front_port}");
    // A lease that would take 30 s to run out: the session moves on only because it is
    // released.
    let replicas: Vec<_> = (0..3)
        .map(|_| replica(&model.base_url(), &redis.url(), &front, 30_000))
        .collect();
    let ports: Vec<u16> = replicas.iter().map(|r| r.port).collect();
    let _nginx = Nginx::start(dir.path(), front_port, &ports);

    let (mut ws, _) = open_retrying(&front, "drain", Duration::from_secs(10)).await;
    say(&mut ws, "message", "Run it.").await;
    // The code has started: drain the owner now.
    loop {
        let frame = next_json(&mut ws).await;
        send(&mut ws, json!({"ack": id(&frame)})).await;
        if frame["format"] == "active_line" {
            break;
        }
    }
    let drained = owner(&replicas, "drain").await.unwrap();
    signal(replicas[drained].pid(), "TERM");
    let rest = until_complete(&mut ws, true).await;
    assert!(
        rest.iter().any(|f| f["content"]
            .as_str()
            .is_some_and(|c| c.contains("finished"))),
        "the running turn finished before the replica stopped: {rest:#?}"
    );
    drop(ws);

    let started = std::time::Instant::now();
    let (mut ws, _) = open_retrying(&front, "drain", Duration::from_secs(10)).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the lease was released"
    );
    assert_ne!(owner(&replicas, "drain").await, Some(drained));
    say(&mut ws, "message", "Still there?").await;
    let next = until_complete(&mut ws, true).await;
    assert!(next.iter().any(|f| f["content"] == "Still here."));
    assert!(
        !next
            .iter()
            .any(|f| f["content"] == oi_server::cluster::LOST_RUN_NOTE)
    );
    assert!(last_request(&model).contains("sleep 1; echo finished"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_goes_away_is_reported_and_refused_clearly() {
    if !have("redis-server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut redis = Redis::start(dir.path());
    let model = ScriptedServer::start(Script::new([Reply::text("First."), Reply::text("Second.")]))
        .await
        .unwrap();
    let server = replica(&model.base_url(), &redis.url(), "localhost", 1500);
    let mut ws = open(&server.addr(), "gone").await.unwrap();
    say(&mut ws, "message", "One.").await;
    until_complete(&mut ws, true).await;

    redis.stop();
    let started = std::time::Instant::now();
    say(&mut ws, "message", "Two.").await;
    // The turn goes on; the failure is reported once; past the lease's TTL without the store
    // the replica can no longer prove it owns the session and ends it there.
    let mut frames = Vec::new();
    let close = loop {
        match common::next_frame(&mut ws).await {
            common::Frame::Json(frame) => {
                if let Some(id) = frame.get("id").and_then(Value::as_str) {
                    send(&mut ws, json!({ "ack": id })).await;
                }
                frames.push(frame);
            }
            common::Frame::Close(code, _) => break code,
            common::Frame::End => panic!("closed without a close frame: {frames:#?}"),
        }
    };
    eprintln!(
        "from the store's death to the close: {:?}",
        started.elapsed()
    );
    assert_eq!(close, oi_server::ws::CLOSE_SESSION_ENDED);
    let errors: Vec<&Value> = frames.iter().filter(|f| f["type"] == "error").collect();
    assert_eq!(errors.len(), 1, "reported once: {frames:#?}");
    let error = errors[0]["content"].as_str().unwrap();
    assert!(error.contains("session store failed"), "{error}");
    assert!(
        frames.iter().any(|f| f["content"] == "Second."),
        "the turn went on"
    );
    assert!(frames.iter().any(|f| f["content"] == "complete"));
    let refused = open(&server.addr(), "gone").await.unwrap_err();
    assert!(refused.contains("503"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_store_serves_sessions_as_before() {
    let model = ScriptedServer::start(Script::new([Reply::text("Hi."), Reply::text("Again.")]))
        .await
        .unwrap();
    let server = replica(&model.base_url(), "memory", "localhost", 1500);
    let mut ws = open(&server.addr(), "mem").await.unwrap();
    say(&mut ws, "message", "Hello.").await;
    assert!(
        until_complete(&mut ws, true)
            .await
            .iter()
            .any(|f| f["content"] == "Hi.")
    );
    // A second connection takes over as without a store, and the conversation is there.
    let mut second = open(&server.addr(), "mem").await.unwrap();
    match common::next_frame(&mut ws).await {
        common::Frame::Close(code, _) => assert_eq!(code, oi_server::ws::CLOSE_TAKEN_OVER),
        other => panic!("expected a takeover, got {other:?}"),
    }
    say(&mut second, "message", "Hello again.").await;
    until_complete(&mut second, true).await;
    assert!(last_request(&model).contains("Hello."));
    // Past several lease renewals the session is still served here.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(owner(std::slice::from_ref(&server), "mem").await, Some(0));
    let bad = scale::Launch::new(&model.base_url())
        .args(&["--store", "postgres://db"])
        .try_start()
        .err()
        .expect("refuses to start");
    assert!(bad.1.contains("redis://HOST:PORT/DB"), "{}", bad.1);
    let port = free_port();
    let unreachable = format!("redis://127.0.0.1:{port}/0");
    let down = scale::Launch::new(&model.base_url())
        .args(&["--store", &unreachable])
        .try_start()
        .err()
        .expect("refuses to start");
    assert!(
        down.1.contains("cannot reach Redis") && down.1.contains("start it or fix --store"),
        "{}",
        down.1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_lost_its_lease_changes_nothing_in_redis() {
    use oi_server::store::{Acquired, SessionStore, Snapshot, StoredOutbox};
    if !have("redis-server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start(dir.path());
    let store = oi_server::redis_store::RedisStore::connect(&redis.url())
        .await
        .unwrap();
    let short = Duration::from_millis(100);
    let long = Duration::from_secs(30);
    let snapshot = |text: &str| Snapshot {
        messages: text.to_owned(),
        settings: String::new(),
        busy: false,
    };
    let frames = |seq: u64, text: &str| StoredOutbox {
        prefix: "p".to_owned(),
        next_seq: seq,
        frames: vec![(seq, text.to_owned())],
    };
    assert_eq!(
        store.acquire("f", "old", short).await.unwrap(),
        Acquired::Won
    );
    assert!(store.save("f", "old", snapshot("[1]")).await.unwrap());
    assert!(
        store
            .put_frames("f", "old", frames(1, "one"))
            .await
            .unwrap()
    );
    // The old owner pauses past its TTL; a new owner takes the session.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        store.acquire("f", "new", long).await.unwrap(),
        Acquired::Won
    );
    assert!(matches!(
        store.acquire("f", "old", long).await.unwrap(),
        Acquired::Held(_)
    ));
    // Everything the old owner tries is refused and changes nothing.
    assert!(!store.renew("f", "old", long).await.unwrap());
    assert!(!store.save("f", "old", snapshot("[stale]")).await.unwrap());
    assert!(
        !store
            .put_frames("f", "old", frames(2, "stale"))
            .await
            .unwrap()
    );
    assert!(!store.ack("f", "old", vec![1]).await.unwrap());
    store.release("f", "old").await.unwrap();
    let stored = store.load("f").await.unwrap();
    assert_eq!(stored.snapshot.unwrap().messages, "[1]");
    assert_eq!(stored.outbox.unwrap().frames, vec![(1, "one".to_owned())]);
    assert_eq!(redis.command("GET oi:{f}:lease"), "new");
    // The new owner's writes go through.
    assert!(store.ack("f", "new", vec![1]).await.unwrap());
    assert!(store.renew("f", "new", long).await.unwrap());
}
