//! `/openai/chat/completions` answers a failed turn as OpenAI would, so OpenAI's own Python
//! client (`pip install openai`) raises the right exception: the real `oi-server` binary over
//! a scripted model server that answers 429, 401 or a context-length 400.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::process::Command;

use oi_testkit::{Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::{Value, json};

/// Calls the endpoint with OpenAI's client (no retries) and prints what it raised.
const CLIENT: &str = r#"
import json, sys, openai
base, content, stream = sys.argv[1], sys.argv[2], sys.argv[3] == "stream"
client = openai.OpenAI(base_url=base, api_key="unused", max_retries=0, timeout=60)
try:
    reply = client.chat.completions.create(
        model="oi", messages=[{"role": "user", "content": content}], stream=stream)
    if stream:
        text = "".join(c.choices[0].delta.content or "" for c in reply if c.choices)
    else:
        text = reply.choices[0].message.content
    print(json.dumps({"ok": text}))
except openai.APIStatusError as e:
    print(json.dumps({"class": type(e).__name__, "status": e.status_code, "body": e.response.json()}))
except openai.APIError as e:
    print(json.dumps({"class": type(e).__name__, "body": e.body}))
"#;

fn python_openai() -> bool {
    Command::new("python3")
        .args(["-c", "import openai"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// The model server's reply to a request whose last user message is `said`.
fn upstream(said: &str) -> Reply {
    match said {
        "quota" => Reply::status(429, r#"{"error":{"message":"quota"}}"#).with_retry_after(0),
        "key" => Reply::status(401, r#"{"error":{"message":"bad key"}}"#),
        "long" => Reply::status(
            400,
            r#"{"error":{"message":"This model's maximum context length is 8 tokens","code":"context_length_exceeded"}}"#,
        ),
        _ => Reply::text("hello"),
    }
}

fn last_user_text(request: &Value) -> String {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn ask(port: u16, content: &str, stream: bool) -> Value {
    let out = Command::new("python3")
        .args([
            "-c",
            CLIENT,
            &format!("http://127.0.0.1:{port}/openai"),
            content,
            if stream { "stream" } else { "whole" },
        ])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn error(class: &str, status: u16, message: &str, kind: &str, param: Value, code: Value) -> Value {
    json!({
        "class": class,
        "status": status,
        "body": {"error": {"message": message, "type": kind, "param": param, "code": code}},
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_client_raises_what_the_model_server_meant() {
    if !python_openai() {
        oi_testkit::skipped!("skipped: python3 has no `openai` (pip install openai)");
        return;
    }
    let model = ScriptedServer::start(Script::responder(|request| {
        upstream(&last_user_text(request))
    }))
    .await
    .unwrap();
    let server = Launch::new(&model.base_url()).start();
    let port = server.port;
    let run = move |content: &'static str, stream: bool| {
        tokio::task::spawn_blocking(move || ask(port, content, stream))
    };
    for stream in [false, true] {
        let limited = run("quota", stream).await.unwrap();
        let message = limited["body"]["error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(message.contains("quota"), "{limited}");
        assert_eq!(
            limited,
            error(
                "RateLimitError",
                429,
                &message,
                "requests",
                Value::Null,
                json!("rate_limit_exceeded")
            ),
            "stream: {stream}"
        );
        let refused = run("key", stream).await.unwrap();
        let message = refused["body"]["error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(message.contains("bad key"), "{refused}");
        assert_eq!(
            refused,
            error(
                "AuthenticationError",
                401,
                &message,
                "invalid_request_error",
                Value::Null,
                json!("invalid_api_key")
            ),
            "stream: {stream}"
        );
        let long = run("long", stream).await.unwrap();
        let message = long["body"]["error"]["message"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(message.contains("context length"), "{long}");
        assert_eq!(
            long,
            error(
                "BadRequestError",
                400,
                &message,
                "invalid_request_error",
                json!("messages"),
                json!("context_length_exceeded")
            ),
            "stream: {stream}"
        );
        assert_eq!(run("hi", stream).await.unwrap(), json!({"ok": "hello"}));
    }
    // The endpoint's own errors are OpenAI's error object too.
    let host = format!("Host: {}", server.addr());
    let request = process::post("/openai/chat/completions", &[&host], "{}");
    let answer = process::raw(&server.addr(), &request).await;
    let (status, body) = (answer.status, answer.body());
    let body: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {}", answer.text));
    let message = body["error"]["message"].as_str().unwrap_or("").to_owned();
    assert_eq!(
        (status, body),
        (
            400,
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}})
        )
    );
}
