//! Sessions: isolation, listing, deletion, takeover, and shutdown over real sockets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Frame, TestServer, next_frame, say, until_complete};
use oi_core::Message;
use oi_testkit::{Reply, Script};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_isolated_listed_and_deleted() {
    let server = TestServer::start(
        Script::new([Reply::text("to a"), Reply::text("to b")]),
        |_| {},
        |_| {},
    )
    .await;
    let mut a = server.connect_with("/sessions/a", &[]).await.unwrap();
    say(&mut a, "message", "I am a").await;
    until_complete(&mut a, false).await;
    let mut b = server.connect_with("/sessions/b", &[]).await.unwrap();
    say(&mut b, "message", "I am b").await;
    until_complete(&mut b, false).await;
    let sessions = &server.state.sessions;
    let messages = |id: &str| {
        sessions
            .get(id)
            .unwrap()
            .interpreter()
            .interpreter()
            .messages()
    };
    assert_eq!(
        messages("a"),
        vec![Message::user("I am a"), Message::assistant("to a")]
    );
    assert_eq!(
        messages("b"),
        vec![Message::user("I am b"), Message::assistant("to b")]
    );
    assert!(messages("default").is_empty());

    let client = reqwest::Client::new();
    let list: Value = client
        .get(server.url("/sessions"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["a", "b", "default"]);

    let deleted = client
        .delete(server.url("/sessions/a"))
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 200);
    match next_frame(&mut a).await {
        Frame::Close(code, reason) => assert_eq!((code, reason.as_str()), (4001, "session ended")),
        other => panic!("expected a close frame, got {other:?}"),
    }
    let gone = client
        .delete(server.url("/sessions/a"))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    let body: Value = gone.json().await.unwrap();
    assert_eq!(body, json!({"error": "no session a"}));
    let invalid = server.connect_with("/sessions/bad%20id", &[]).await;
    assert!(invalid.unwrap_err().contains("400"));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_connection_takes_over() {
    let server = TestServer::start(Script::new([Reply::text("hi")]), |_| {}, |_| {}).await;
    let mut first = server.connect_with("/sessions/x", &[]).await.unwrap();
    let mut second = server.connect_with("/sessions/x", &[]).await.unwrap();
    match next_frame(&mut first).await {
        Frame::Close(code, reason) => {
            assert_eq!(
                (code, reason.as_str()),
                (4000, "another connection took over this session")
            );
        }
        other => panic!("expected a close frame, got {other:?}"),
    }
    say(&mut second, "message", "hello").await;
    let frames = until_complete(&mut second, false).await;
    assert_eq!(frames[1]["content"], "hi");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_registry_refuses_new_sessions() {
    let server = TestServer::start(Script::new([]), |_| {}, |c| c.max_sessions = 2).await;
    let _a = server.connect_with("/sessions/a", &[]).await.unwrap();
    // The default session and `a` (connected) fill the registry.
    let refused = server.connect_with("/sessions/b", &[]).await;
    assert!(refused.unwrap_err().contains("503"));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_connections_with_a_close_frame() {
    let server = TestServer::start(Script::new([]), |_| {}, |_| {}).await;
    let mut ws = server.connect().await;
    let state = server.state.clone();
    let waiting = tokio::spawn(async move { next_frame(&mut ws).await });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    state.shutdown.cancel();
    match waiting.await.unwrap() {
        Frame::Close(code, _) => assert_eq!(code, 1001),
        other => panic!("expected a close frame, got {other:?}"),
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_are_reaped() {
    let server = TestServer::start(
        Script::new([]),
        |_| {},
        |c| {
            c.session_idle_timeout = std::time::Duration::from_millis(200);
        },
    )
    .await;
    let ws = server.connect_with("/sessions/r", &[]).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    assert!(
        server.state.sessions.get("r").is_some(),
        "a connected session stays"
    );
    drop(ws);
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    assert!(
        server.state.sessions.get("r").is_none(),
        "an idle one is reaped"
    );
    assert!(
        server.state.sessions.get("default").is_some(),
        "never the default session"
    );
    server.shutdown().await;
}
