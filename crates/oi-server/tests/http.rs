//! HTTP routes: in-process with `tower::ServiceExt::oneshot`, and over a real socket.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::TestServer;
use oi_core::{Interpreter, Message, Settings};
use oi_server::{AppState, ServerConfig, router};
use oi_testkit::{Reply, Script};
use serde_json::{Value, json};
use tower::ServiceExt;

/// A state whose interpreter never reaches a model (for routes that do not run turns).
fn offline_state(adjust: impl FnOnce(&mut ServerConfig)) -> AppState {
    let mut config = ServerConfig::default();
    adjust(&mut config);
    let factory: oi_server::InterpreterFactory = Arc::new(|| {
        let mut settings = Settings {
            conversation_history: false,
            ..Settings::default()
        };
        settings.llm.api_key = Some("server-key".into());
        let llm = Arc::new(oi_llm::OpenAiCompatible::new().with_env(oi_llm::Env::empty()));
        let computer = Arc::new(oi_computer::LocalComputer::new());
        Interpreter::new(settings, llm, computer, oi_judge::judge())
    });
    AppState::new(config, factory)
}

async fn call(state: &AppState, request: Request<Body>) -> (StatusCode, Value) {
    let response = router(state.clone()).oneshot(request).await.unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (status, value)
}

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

fn post(path: &str, body: &str) -> Request<Body> {
    Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap()
}

#[tokio::test]
async fn heartbeat_and_web_page() {
    let state = offline_state(|c| c.api_key = Some("k".into()));
    assert_eq!(
        call(&state, get("/heartbeat")).await,
        (StatusCode::OK, json!({"status": "alive"}))
    );
    // The page and its script load without the key (the page then asks for it).
    let (status, page) = call(&state, get("/")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.as_str()
            .unwrap()
            .contains(r#"<script src="/static/app.js" defer></script>"#)
    );
    let (status, script) = call(&state, get("/static/app.js")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(script.as_str().unwrap().contains("new WebSocket"));
}

/// What the web page uses besides the settings routes: `POST /sessions/{id}` to make a
/// session (a browser cannot put the key on a WebSocket upgrade) and
/// `GET /sessions/{id}/messages` to show its conversation again after a reload.
#[tokio::test]
async fn sessions_are_created_over_http_and_their_messages_read() {
    let state = offline_state(|_| {});
    let (status, entry) = call(
        &state,
        Request::post("/sessions/web-1")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{entry}");
    assert_eq!(
        (&entry["id"], &entry["messages"]),
        (&json!("web-1"), &json!(0))
    );
    let (status, list) = call(&state, get("/sessions")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        list["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == "web-1"),
        "{list}"
    );
    assert_eq!(
        call(&state, get("/sessions/web-1/messages")).await,
        (StatusCode::OK, json!({"messages": []}))
    );
    let said = json!([{"role": "user", "type": "message", "content": "hi"}]);
    let patch = json!({"messages": said}).to_string();
    assert_eq!(
        call(&state, post("/settings", &patch)).await.0,
        StatusCode::OK
    );
    assert_eq!(
        call(&state, get("/sessions/default/messages")).await,
        (StatusCode::OK, json!({"messages": said}))
    );
    let (status, _) = call(&state, get("/sessions/nobody/messages")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(
        &state,
        Request::post("/sessions/no%20spaces")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn settings_get_and_set() {
    let state = offline_state(|_| {});
    let (status, body) = call(&state, get("/settings/auto_run")).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"auto_run": false})));
    let patch = r#"{"custom_instructions": "be brief", "llm": {"model": "gpt-4o-mini"},
        "messages": [{"role": "user", "type": "message", "content": "hi"}]}"#;
    assert_eq!(
        call(&state, post("/settings", patch)).await,
        (StatusCode::OK, json!({"status": "success"}))
    );
    assert_eq!(
        call(&state, get("/settings/custom_instructions")).await.1,
        json!({"custom_instructions": "be brief"})
    );
    assert_eq!(
        call(&state, get("/settings/llm.model")).await.1,
        json!({"llm.model": "gpt-4o-mini"})
    );
    assert_eq!(
        call(&state, get("/settings/messages")).await.1,
        json!({"messages": [{"role": "user", "type": "message", "content": "hi"}]})
    );
    let (_, llm) = call(&state, get("/settings/llm")).await;
    assert_eq!(
        llm["llm"]["api_key"], "********",
        "the key never leaves the server"
    );
    let (status, body) = call(&state, get("/settings/nope")).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::NOT_FOUND,
            json!({"error": "Setting nope not found"})
        )
    );
}

#[tokio::test]
async fn settings_refusals() {
    let state = offline_state(|_| {});
    let (status, body) = call(&state, post("/settings", r#"{"auto_run": true}"#)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("--allow-network-auto-run"),
        "{body}"
    );
    let (status, body) = call(
        &state,
        post("/settings", r#"{"llm": {"api_base": "http://evil"}}"#),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("--allow-network-credentials"),
        "{body}"
    );
    let (status, body) = call(&state, post("/settings", r#"{"nope": 1}"#)).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"error": "Setting nope not found"})
        )
    );
    let (status, body) = call(&state, post("/settings", r#"{"max_output": "x"}"#)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("invalid value for max_output"),
        "{body}"
    );
    let (status, _) = call(&state, post("/settings", "{oops")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let settings = state
        .sessions
        .default_session()
        .interpreter()
        .interpreter()
        .settings();
    assert!(!settings.auto_run && settings.llm.api_base.is_none());

    let allowed = offline_state(|c| c.allow_network_auto_run = true);
    assert_eq!(
        call(&allowed, post("/settings", r#"{"auto_run": true}"#))
            .await
            .0,
        StatusCode::OK
    );
}

#[tokio::test]
async fn api_key_on_http_routes() {
    let state = offline_state(|c| c.api_key = Some("k".into()));
    let (status, body) = call(&state, get("/settings/auto_run")).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::FORBIDDEN,
            json!({"error": "Authentication failed"})
        )
    );
    let request = Request::get("/settings/auto_run")
        .header("X-API-KEY", "k")
        .body(Body::empty())
        .unwrap();
    assert_eq!(call(&state, request).await.0, StatusCode::OK);
}

#[tokio::test]
async fn insecure_routes_off_by_default() {
    let state = offline_state(|_| {});
    let run = post("/run", r#"{"language": "shell", "code": "echo hi"}"#);
    assert_eq!(call(&state, run).await.0, StatusCode::NOT_FOUND);
    assert_eq!(
        call(&state, get("/download/Cargo.toml")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        call(&state, post("/upload", "")).await.0,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn insecure_routes_when_enabled() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "hello file").unwrap();
    let root = dir.path().to_path_buf();
    let state = offline_state(move |c| {
        c.insecure_routes = true;
        c.working_dir = root;
    });
    let (status, body) = call(
        &state,
        post("/run", r#"{"language": "shell", "code": "echo hi"}"#),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"output": [{"role": "computer", "type": "console", "format": "output", "content": "hi\n"}]})
    );
    let (status, body) = call(&state, post("/run", r#"{"language": "shell"}"#)).await;
    assert_eq!(
        (status, body),
        (
            StatusCode::BAD_REQUEST,
            json!({"error": "Both 'language' and 'code' are required."})
        )
    );

    let response = router(state.clone())
        .oneshot(get("/download/hello.txt"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    assert_eq!(&bytes[..], b"hello file");
    assert_eq!(
        call(&state, get("/download/missing.txt")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        call(&state, get("/download/../etc/passwd")).await.0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        call(&state, get("/download/%2Fetc%2Fpasswd")).await.0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        call(&state, get("/download/a/..%2F..%2Fx")).await.0,
        StatusCode::FORBIDDEN
    );

    let upload = |path: &str| {
        let body = format!(
            "--B\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\n{path}\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\nuploaded\r\n--B--\r\n"
        );
        Request::post("/upload")
            .header("content-type", "multipart/form-data; boundary=B")
            .body(Body::from(body))
            .unwrap()
    };
    assert_eq!(
        call(&state, upload("sub/up.txt")).await,
        (StatusCode::OK, json!({"status": "success"}))
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/up.txt")).unwrap(),
        "uploaded"
    );
    assert_eq!(
        call(&state, upload("../escape.txt")).await.0,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        call(&state, upload("/tmp/escape.txt")).await.0,
        StatusCode::FORBIDDEN
    );
    assert!(!dir.path().parent().unwrap().join("escape.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_not_streaming() {
    let script = Script::new([
        Reply::tool_call("python", "print(6*7)").with_text_before("Computing."),
        Reply::text("It is 42."),
    ]);
    let server = TestServer::start(script, |_| {}, |_| {}).await;
    let client = reqwest::Client::new();
    let response = client
        .post(server.url("/openai/chat/completions"))
        .json(&json!({"model": "oi", "messages": [
            {"role": "user", "content": "ignored: the server keeps the history"},
            {"role": "user", "content": "what is 6*7?"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut body: Value = response.json().await.unwrap();
    assert!(body["id"].as_str().unwrap().starts_with("chatcmpl-"));
    assert!(body["created"].is_u64());
    body["id"] = json!("[id]");
    body["created"] = json!(0);
    insta::assert_snapshot!(
        "openai_completion",
        serde_json::to_string_pretty(&body).unwrap()
    );
    let messages = server
        .state
        .sessions
        .default_session()
        .interpreter()
        .interpreter()
        .messages();
    assert_eq!(
        messages[0],
        Message::user("what is 6*7?"),
        "only the last message, no \".\""
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_streaming_and_approval() {
    let script = Script::new([
        Reply::tool_call("python", "print('ran')").with_text_before("Sure."),
        Reply::text("Done."),
    ]);
    let server = TestServer::start(script, |s| s.auto_run = false, |_| {}).await;
    let client = reqwest::Client::new();
    let ask = |content: &str| {
        client
            .post(server.url("/openai/chat/completions"))
            .json(&json!({"model": "oi", "stream": true, "messages": [{"role": "user", "content": content}]}))
            .send()
    };
    let response = ask("run it").await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    insta::assert_snapshot!("openai_stream_asks", redact_sse(&text));
    let response = ask("Yes!").await.unwrap();
    let text = response.text().await.unwrap();
    insta::assert_snapshot!("openai_stream_yes", redact_sse(&text));
    let messages = server
        .state
        .sessions
        .default_session()
        .interpreter()
        .interpreter()
        .messages();
    assert_eq!(messages.last().unwrap(), &Message::assistant("Done."));
    assert_eq!(messages[0], Message::user("run it"));
    assert!(
        messages.iter().all(|m| m.text() != "Yes!"),
        "yes is an approval, not a message"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_special_contents() {
    let server = TestServer::start(Script::new([]), |s| s.auto_run = false, |_| {}).await;
    let client = reqwest::Client::new();
    let send = |content: &str| {
        client
            .post(server.url("/openai/chat/completions"))
            .json(&json!({"messages": [{"role": "user", "content": content}]}))
            .send()
    };
    let refused = send("{AUTO_RUN_ON}").await.unwrap();
    assert_eq!(refused.status(), 403);
    let ok = send("{AUTO_RUN_OFF}").await.unwrap();
    assert_eq!(
        (ok.status().as_u16(), ok.text().await.unwrap()),
        (200, "null".to_owned())
    );
    let ok = send("{STOP}").await.unwrap();
    assert_eq!(ok.status(), 200);
    let bad = client
        .post(server.url("/openai/chat/completions"))
        .json(&json!({"messages": [{"role": "assistant", "content": "x"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    server.shutdown().await;
}

/// SSE text with ids and timestamps redacted, one event per line pair kept as is.
fn redact_sse(text: &str) -> String {
    assert!(text.ends_with("data: [DONE]\n\n"), "{text:?}");
    text.split("\n\n")
        .filter(|event| !event.is_empty())
        .map(|event| {
            let data = event
                .strip_prefix("data: ")
                .expect("every event is `data: `");
            match serde_json::from_str::<Value>(data) {
                Ok(mut value) => {
                    value["id"] = json!("[id]");
                    value["created"] = json!(0);
                    format!("data: {value}")
                }
                Err(_) => format!("data: {data}"),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn cross_origin_requests_are_refused_and_same_origin_ones_pass() {
    let state = offline_state(|_| {});
    let request = Request::post("/settings")
        .header("content-type", "text/plain")
        .header("origin", "http://evil.example")
        .header("host", "127.0.0.1:8000")
        .body(Body::from(r#"{"max_output": 10}"#))
        .unwrap();
    let (status, body) = call(&state, request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("cross-origin request from http://evil.example refused"),
        "{body}"
    );
    let request = Request::get("/heartbeat")
        .header("origin", "http://127.0.0.1:8000")
        .header("host", "127.0.0.1:8000")
        .body(Body::empty())
        .unwrap();
    assert_eq!(call(&state, request).await.0, StatusCode::OK);
}

#[tokio::test]
async fn new_sessions_need_the_key_header_when_a_key_is_set() {
    let state = offline_state(|c| c.api_key = Some("k".into()));
    let request = Request::get("/sessions/new-one")
        .header("connection", "upgrade")
        .header("upgrade", "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==")
        .body(Body::empty())
        .unwrap();
    let (status, body) = call(&state, request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body["error"].as_str().unwrap().contains("X-API-KEY"),
        "{body}"
    );
    assert!(
        state.sessions.list().iter().all(|s| s.id != "new-one"),
        "no session was created"
    );
}
