//! Cost that clients see, through the real `oi-server` binary with the scripted model
//! reporting usage over HTTP: a connection opened with `?usage=true` gets each `complete`
//! with `"usage"` (its turn's and the session's tokens and cost), a plain one the original's
//! `complete` byte for byte, and `GET /sessions/{id}` says the same; a model whose price oi
//! does not know has a `cost` of `null`. The wire forms are snapshots.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use common::{Ws, say, until_complete};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess, get, raw};
use serde_json::Value;

/// The server with the scripted model as OpenAI's own endpoint (`OPENAI_BASE_URL`), so
/// that `model` is priced as OpenAI's (a model on a loopback `api_base` costs nothing).
fn launch(model_server: &ScriptedServer, model: &str) -> ServerProcess {
    Launch::new(&model_server.base_url())
        .without_model_flags()
        .args(&["--model", model])
        .env("OPENAI_BASE_URL", &model_server.base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .start()
}

async fn connect(port: u16, path: &str) -> Ws {
    tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}{path}"))
        .await
        .unwrap()
        .0
}

async fn session_summary(server: &ServerProcess, id: &str) -> Value {
    let answer = raw(&server.addr(), &get(&format!("/sessions/{id}"), &[])).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let mut summary: Value = serde_json::from_str(answer.body()).unwrap();
    summary["idle_seconds"] = Value::from(0);
    summary
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_complete_carries_usage_only_when_asked_and_the_session_says_it() {
    // gpt-4o: $2.50 per million prompt tokens, $10 per million reply tokens.
    let model = ScriptedServer::start(Script::new([
        Reply::text("One.").with_usage(1_000, 100),
        Reply::text("Two.").with_usage(2_000, 10),
    ]))
    .await
    .unwrap();
    let server = launch(&model, "gpt-4o");

    let mut asking = connect(server.port, "/sessions/priced?usage=true").await;
    say(&mut asking, "message", "first").await;
    let frames = until_complete(&mut asking, false).await;
    let complete = frames.last().unwrap();
    insta::assert_json_snapshot!("complete_with_usage", complete);
    assert_eq!(complete["usage"]["last_turn"]["cost"], 0.0035);
    drop(asking);

    let mut plain = connect(server.port, "/sessions/priced").await;
    say(&mut plain, "message", "second").await;
    let frames = until_complete(&mut plain, false).await;
    assert_eq!(
        frames.last().unwrap().to_string(),
        r#"{"content":"complete","role":"server","type":"status"}"#,
        "the original's complete"
    );

    let summary = session_summary(&server, "priced").await;
    insta::assert_json_snapshot!("session_summary_with_usage", summary);
    assert_eq!(summary["usage"]["session"]["requests"], 2);
    assert_eq!(summary["usage"]["last_turn"]["prompt_tokens"], 2_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_price_is_a_null_cost_with_its_tokens() {
    let model = ScriptedServer::start(Script::new([Reply::text("Hi.").with_usage(50, 5)]))
        .await
        .unwrap();
    let server = launch(&model, "openai/mystery-model");
    let mut ws = connect(server.port, "/sessions/unpriced?usage=1").await;
    say(&mut ws, "message", "hello").await;
    let frames = until_complete(&mut ws, false).await;
    let usage = &frames.last().unwrap()["usage"];
    assert_eq!(usage["last_turn"]["prompt_tokens"], 50);
    assert_eq!(usage["last_turn"]["reply_tokens"], 5);
    assert_eq!(usage["last_turn"]["cost"], Value::Null);
    assert_eq!(usage["session"]["cost"], Value::Null);
    assert_eq!(usage["spent"], 0.0);
}
