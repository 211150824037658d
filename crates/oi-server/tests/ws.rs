//! The WebSocket protocol over real sockets, against the scripted model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{Frame, TestServer, next_frame, next_json, say, send, until_complete, wire};
use oi_core::{Kind, Message};
use oi_testkit::{Reply, Script};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_message_end_without_auth_frame() {
    let server = TestServer::start(
        Script::new([Reply::text("Hello, World!").chunked(5)]),
        |_| {},
        |_| {},
    )
    .await;
    let mut ws = server.connect().await;
    say(&mut ws, "message", "Say hello").await;
    let frames = until_complete(&mut ws, false).await;
    insta::assert_snapshot!("plain_turn", wire(&frames));
    // Clients written for the original stop at the chunk equal to this one, whole.
    assert_eq!(
        frames.last().unwrap(),
        &json!({"role": "server", "type": "status", "content": "complete"}),
        "a client that did not ask for input numbers gets the original's complete"
    );
    let messages = server
        .state
        .sessions
        .default_session()
        .interpreter()
        .interpreter()
        .messages();
    assert_eq!(
        messages,
        vec![
            Message::user("Say hello"),
            Message::assistant("Hello, World!")
        ]
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_turn_with_auto_run() {
    let script = Script::new([
        Reply::tool_call("python", "print(6*7)").with_text_before("Computing."),
        Reply::text("It is 42."),
    ]);
    let server = TestServer::start(script, |_| {}, |_| {}).await;
    let mut ws = server.connect().await;
    say(&mut ws, "message", "what is 6*7?").await;
    let frames = until_complete(&mut ws, false).await;
    insta::assert_snapshot!("code_turn", wire(&frames));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_frame_accepted_without_a_key() {
    let server = TestServer::start(Script::new([Reply::text("hi")]), |_| {}, |_| {}).await;
    let mut ws = server.connect().await;
    send(&mut ws, json!({"auth": "anything"})).await;
    assert_eq!(next_json(&mut ws).await, json!({"auth": true}));
    say(&mut ws, "message", "hello").await;
    let frames = until_complete(&mut ws, false).await;
    assert_eq!(frames.len(), 4, "{frames:?}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_by_header() {
    let server = TestServer::start(
        Script::new([Reply::text("hi")]),
        |_| {},
        |c| {
            c.api_key = Some("sekret".into());
        },
    )
    .await;
    let mut ws = server
        .connect_with("/", &[("x-api-key", "sekret")])
        .await
        .unwrap();
    say(&mut ws, "message", "hello").await;
    let frames = until_complete(&mut ws, false).await;
    insta::assert_snapshot!("auth_header_turn", wire(&frames));
    let refused = server.connect_with("/", &[("x-api-key", "wrong")]).await;
    assert!(refused.unwrap_err().contains("403"));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auth_by_frame_and_wrong_key() {
    let server = TestServer::start(
        Script::new([Reply::text("hi")]),
        |_| {},
        |c| {
            c.api_key = Some("sekret".into());
        },
    )
    .await;
    let mut ws = server.connect().await;
    send(&mut ws, json!({"auth": "sekret"})).await;
    assert_eq!(next_json(&mut ws).await, json!({"auth": true}));
    say(&mut ws, "message", "hello").await;
    let frames = until_complete(&mut ws, false).await;
    assert_eq!(frames.last().unwrap()["content"], "complete");

    let mut bad = server.connect().await;
    send(&mut bad, json!({"auth": "wrong"})).await;
    assert_eq!(next_json(&mut bad).await, json!({"auth": false}));
    match next_frame(&mut bad).await {
        Frame::Close(code, reason) => {
            assert_eq!(code, 1008);
            assert_eq!(reason, "Authentication failed");
        }
        other => panic!("expected a close frame, got {other:?}"),
    }

    let mut none = server.connect().await;
    // A first frame that is not `{"auth": KEY}` (the server closes right after answering it).
    send(
        &mut none,
        json!({"role": "user", "type": "message", "start": true}),
    )
    .await;
    assert_eq!(next_json(&mut none).await, json!({"auth": false}));
    assert!(matches!(next_frame(&mut none).await, Frame::Close(1008, _)));
    server.shutdown().await;
}

fn approval_script() -> Script {
    Script::new([
        Reply::tool_call("python", "print('ran')"),
        Reply::text("Done."),
        Reply::text("Fine, I will not run it."),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_with_go() {
    let server = TestServer::start(approval_script(), |s| s.auto_run = false, |_| {}).await;
    let mut ws = server.connect().await;
    say(&mut ws, "message", "run something").await;
    let asked = until_complete(&mut ws, false).await;
    insta::assert_snapshot!("approval_asked", wire(&asked));
    let oi = server.state.sessions.default_session();
    let pending = oi.interpreter().interpreter().messages();
    assert_eq!(pending.last().unwrap().kind, Kind::Code);
    say(&mut ws, "command", "go").await;
    let ran = until_complete(&mut ws, false).await;
    insta::assert_snapshot!("approval_go", wire(&ran));
    let messages = oi.interpreter().interpreter().messages();
    assert_eq!(messages.last().unwrap(), &Message::assistant("Done."));
    assert_eq!(server.model.requests().len(), 2);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_with_stop() {
    let server = TestServer::start(approval_script(), |s| s.auto_run = false, |_| {}).await;
    let mut ws = server
        .connect_with("/?input_numbers=1", &[])
        .await
        .expect("connects");
    say(&mut ws, "message", "run something").await;
    let asked = until_complete(&mut ws, false).await;
    assert_eq!(asked[asked.len() - 2]["type"], "confirmation");
    say(&mut ws, "command", "stop").await;
    let stopped = until_complete(&mut ws, false).await;
    assert_eq!(
        wire(&stopped),
        r#"{"content":"complete","input":2,"role":"server","type":"status"}"#,
        "the stop is the second input of this connection"
    );
    let oi = server.state.sessions.default_session();
    let messages = oi.interpreter().interpreter().messages();
    assert_eq!(
        messages.len(),
        2,
        "the code stays pending, never run: {messages:?}"
    );
    assert!(messages.iter().all(|m| m.kind != Kind::Console));
    assert_eq!(server.model.requests().len(), 1);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_message_interrupts_silent_code() {
    let script = Script::new([
        Reply::tool_call("python", "import time; time.sleep(600)"),
        Reply::text("OK, stopped."),
    ]);
    let server = TestServer::start(script, |_| {}, |_| {}).await;
    let mut ws = server.connect().await;
    say(&mut ws, "message", "sleep").await;
    // Wait until the code runs (its console block has started).
    loop {
        let frame = next_json(&mut ws).await;
        if frame["type"] == "console" && frame["start"] == true {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    say(&mut ws, "message", "never mind").await;
    let frames = until_complete(&mut ws, false).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    insta::assert_snapshot!("interrupted_then_answered", wire(&frames));
    let sent = &server.model.requests()[1].body["messages"];
    insta::assert_snapshot!(
        "interrupted_second_request",
        serde_json::to_string_pretty(sent).unwrap()
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_frames_keep_the_connection() {
    let server = TestServer::start(Script::new([Reply::text("still here")]), |_| {}, |_| {}).await;
    let mut ws = server.connect().await;
    ws_send_raw(&mut ws, "{not json").await;
    let error = until_complete(&mut ws, false).await;
    assert_eq!(error[0]["type"], "error");
    assert!(
        error[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("malformed JSON frame")
    );
    say(&mut ws, "message", "hello").await;
    let frames = until_complete(&mut ws, false).await;
    assert_eq!(frames[1]["content"], "still here");
    server.shutdown().await;
}

async fn ws_send_raw(ws: &mut common::Ws, text: &str) {
    use futures::SinkExt;
    ws.send(tokio_tungstenite::tungstenite::Message::Text(
        text.to_owned().into(),
    ))
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_error_is_an_error_chunk_then_complete() {
    let server = TestServer::start(
        Script::new([Reply::status(400, r#"{"error": {"message": "bad model"}}"#)]),
        |_| {},
        |_| {},
    )
    .await;
    let mut ws = server.connect().await;
    say(&mut ws, "message", "hello").await;
    let frames = until_complete(&mut ws, false).await;
    assert_eq!(frames.len(), 2, "{frames:?}");
    assert_eq!(frames[0]["role"], "server");
    assert_eq!(frames[0]["type"], "error");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_command_kills_running_code_at_once() {
    let script = Script::new([Reply::tool_call("python", "import time; time.sleep(600)")]);
    let server = TestServer::start(script, |_| {}, |_| {}).await;
    let mut ws = server.connect().await;
    say(&mut ws, "message", "sleep").await;
    loop {
        let frame = next_json(&mut ws).await;
        if frame["format"] == "active_line" {
            break;
        }
    }
    let started = Instant::now();
    say(&mut ws, "command", "stop").await;
    let frames = until_complete(&mut ws, false).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(frames.last().unwrap()["content"], "complete");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_mode_answers_both_messages_in_order() {
    let script = Script::new([
        Reply::tool_call(
            "python",
            "import time; time.sleep(0.5); print('first done')",
        ),
        Reply::text("First answered."),
        Reply::text("Second answered."),
    ]);
    let server = TestServer::start(
        script,
        |_| {},
        |c| {
            c.interrupt_mode = oi_server::InterruptMode::Queue;
        },
    )
    .await;
    let mut ws = server.connect().await;
    say(&mut ws, "message", "first").await;
    say(&mut ws, "message", "second").await;
    let mut frames = until_complete(&mut ws, false).await;
    frames.extend(until_complete(&mut ws, false).await);
    insta::assert_snapshot!("queued", wire(&frames));
    let messages = server
        .state
        .sessions
        .default_session()
        .interpreter()
        .interpreter()
        .messages();
    assert_eq!(
        messages.last().unwrap(),
        &Message::assistant("Second answered.")
    );
    server.shutdown().await;
}
