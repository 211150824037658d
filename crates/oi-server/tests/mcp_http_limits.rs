//! `/mcp` under the server's live settings and bounded: a `POST /settings` that tightens the
//! rules reaches the next call of an MCP session opened before it; the server holds at most
//! `INTERPRETER_MCP_MAX_SESSIONS` MCP sessions (a new one past it is a 503 that says why), a
//! `DELETE` frees a place, and idle ones expire after `INTERPRETER_MCP_IDLE_SECONDS`. Plain
//! HTTP requests as any MCP client sends them, to the real `oi-server`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::time::Duration;

use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, RawResponse, post, raw};
use serde_json::{Value, json};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// One MCP request to `addr`'s `/mcp`, in MCP session `session` when given.
async fn mcp(addr: &str, session: Option<&str>, body: &str) -> RawResponse {
    let host = format!("Host: {addr}");
    let mut headers = vec![
        "Accept: application/json, text/event-stream".to_owned(),
        "Content-Type: application/json".to_owned(),
        "MCP-Protocol-Version: 2025-06-18".to_owned(),
        host,
    ];
    if let Some(id) = session {
        headers.push(format!("Mcp-Session-Id: {id}"));
    }
    let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let request = post("/mcp", &refs, body).replace("Content-Type: text/plain\r\n", "");
    raw(addr, &request).await
}

/// The `Mcp-Session-Id` an answer gives.
fn session_of(answer: &RawResponse) -> String {
    answer
        .text
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {}", answer.text))
}

/// Opens an MCP session (initialize, then initialized); its id.
async fn open(addr: &str) -> String {
    let answer = mcp(addr, None, INITIALIZE).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let id = session_of(&answer);
    let done = mcp(
        addr,
        Some(&id),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert!(done.status < 300, "{}", done.text);
    id
}

/// Calls `execute` with shell `code` in MCP session `id`; the result object.
async fn run_shell(addr: &str, id: &str, call: u64, code: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": call, "method": "tools/call",
        "params": {"name": "execute", "arguments": {"language": "shell", "code": code}}});
    let answer = mcp(addr, Some(id), &body.to_string()).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    answer
        .text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == call)
        .map(|message| message["result"].clone())
        .unwrap_or_else(|| panic!("no answer to call {call} in {}", answer.text))
}

fn text_of(result: &Value) -> String {
    result["content"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settings_tightening_reaches_mcp_sessions_opened_before_it() {
    let model = ScriptedServer::start(Script::new([Reply::text("unused")]))
        .await
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .env("INTERPRETER_MCP", "true")
        .cwd(work.path())
        .start();
    let addr = format!("127.0.0.1:{}", server.port);
    let id = open(&addr).await;
    let before = run_shell(&addr, &id, 2, "echo before-$((6*7))").await;
    assert_ne!(before["isError"], true, "{before}");
    assert!(text_of(&before).contains("before-42"), "{before}");

    // The operator adds a deny rule over the network (tightening needs no flag).
    let host = format!("Host: {addr}");
    let patch = post(
        "/settings",
        &["Content-Type: application/json", &host],
        r#"{"deny": ["echo"]}"#,
    )
    .replace("Content-Type: text/plain\r\n", "");
    let answer = raw(&addr, &patch).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let denied = run_shell(&addr, &id, 3, "echo after-$((6*7))").await;
    assert_eq!(denied["isError"], true, "{denied}");
    assert!(!text_of(&denied).contains("after-42"), "{denied}");

    // Then never-run: every call refused.
    let patch = post(
        "/settings",
        &["Content-Type: application/json", &host],
        r#"{"approval_policy": "never-run"}"#,
    )
    .replace("Content-Type: text/plain\r\n", "");
    let answer = raw(&addr, &patch).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let refused = run_shell(&addr, &id, 4, "printf x-$((6*7))").await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text_of(&refused).contains("never-run"), "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_sessions_are_capped_and_idle_ones_expire() {
    let model = ScriptedServer::start(Script::new([Reply::text("unused")]))
        .await
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .env("INTERPRETER_MCP", "true")
        .env("INTERPRETER_MCP_MAX_SESSIONS", "2")
        .env("INTERPRETER_MCP_IDLE_SECONDS", "2")
        .cwd(work.path())
        .start();
    let addr = format!("127.0.0.1:{}", server.port);
    let first = open(&addr).await;
    let _second = open(&addr).await;
    // Full: a clear refusal, and the open ones still work.
    let full = mcp(&addr, None, INITIALIZE).await;
    assert_eq!(full.status, 503, "{}", full.text);
    assert!(
        full.text.contains("holds 2 MCP sessions, its limit"),
        "{}",
        full.text
    );
    let still = run_shell(&addr, &first, 2, "echo still-$((6*7))").await;
    assert!(text_of(&still).contains("still-42"), "{still}");
    // Ending one frees its place.
    let host = format!("Host: {addr}");
    let session = format!("Mcp-Session-Id: {first}");
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\nConnection: close\r\n{host}\r\n{session}\r\nMCP-Protocol-Version: 2025-06-18\r\n\r\n"
    );
    let ended = raw(&addr, &delete).await;
    assert!(ended.status < 300, "{}", ended.text);
    let third = open(&addr).await;
    // Idle ones expire: after the idle time both places are free again.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let _fourth = open(&addr).await;
    let _fifth = open(&addr).await;
    let gone = mcp(
        &addr,
        Some(&third),
        &json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).to_string(),
    )
    .await;
    assert_eq!(gone.status, 404, "an expired session: {}", gone.text);
}
