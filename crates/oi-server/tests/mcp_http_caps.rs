//! `/mcp` caps what runs, not what headers say (issue 34, item 8), against the real
//! `oi-server`: with `INTERPRETER_MCP_MAX_SESSIONS=2`, 40 concurrent stateless calls of the
//! newest protocol (2026-07-28), each with a made-up `Mcp-Session-Id`, start at most two
//! interpreters (the rest are refused at once, saying why); a stateful session's languages each
//! take a slot, and a reset gives them back; and a slow call never delays another client's
//! `initialize` (no lock is held while code runs).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::time::{Duration, Instant};

use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, RawResponse, post, raw};
use serde_json::{Value, json};

/// One request of the 2026-07-28 protocol (no handshake, no session: the protocol metadata
/// rides on each request), carrying a made-up session header.
async fn stateless_call(addr: &str, fake_session: &str, language: &str, code: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "execute", "arguments": {"language": language, "code": code},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let headers = [
        "Accept: application/json, text/event-stream".to_owned(),
        "Content-Type: application/json".to_owned(),
        "MCP-Protocol-Version: 2026-07-28".to_owned(),
        "Mcp-Method: tools/call".to_owned(),
        "Mcp-Name: execute".to_owned(),
        format!("Mcp-Session-Id: {fake_session}"),
        format!("Host: {addr}"),
    ];
    let answer = send(addr, &headers, &body.to_string()).await;
    result_of(&answer, 1)
}

/// A 2025-06-18 request in MCP session `session` (or none: an `initialize`).
async fn legacy(addr: &str, session: Option<&str>, body: &Value) -> RawResponse {
    let mut headers = vec![
        "Accept: application/json, text/event-stream".to_owned(),
        "Content-Type: application/json".to_owned(),
        "MCP-Protocol-Version: 2025-06-18".to_owned(),
        format!("Host: {addr}"),
    ];
    if let Some(id) = session {
        headers.push(format!("Mcp-Session-Id: {id}"));
    }
    send(addr, &headers, &body.to_string()).await
}

async fn send(addr: &str, headers: &[String], body: &str) -> RawResponse {
    let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let request = post("/mcp", &refs, body).replace("Content-Type: text/plain\r\n", "");
    raw(addr, &request).await
}

/// The result of call `id` in an SSE answer.
fn result_of(answer: &RawResponse, id: u64) -> Value {
    answer
        .text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == id)
        .map(|message| message["result"].clone())
        .unwrap_or_else(|| panic!("no answer to call {id} in {}", answer.text))
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// Opens a 2025-06-18 MCP session; its id.
async fn open(addr: &str) -> String {
    let answer = legacy(addr, None, &serde_json::from_str(INITIALIZE).unwrap()).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    let id = answer
        .text
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap();
    let done = legacy(
        addr,
        Some(&id),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert!(done.status < 300, "{}", done.text);
    id
}

async fn call_in(addr: &str, session: &str, id: u64, name: &str, arguments: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}});
    let answer = legacy(addr, Some(session), &body).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    result_of(&answer, id)
}

fn server_with_two_slots(work: &std::path::Path, model: &ScriptedServer) -> process::ServerProcess {
    Launch::new(&model.base_url())
        .env("INTERPRETER_MCP", "true")
        .env("INTERPRETER_MCP_MAX_SESSIONS", "2")
        .cwd(work)
        .start()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forty_stateless_calls_with_made_up_sessions_start_at_most_two_interpreters() {
    let model = ScriptedServer::start(Script::new([Reply::text("unused")]))
        .await
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = server_with_two_slots(work.path(), &model);
    let addr = format!("127.0.0.1:{}", server.port);
    let calls = (0..40).map(|n| {
        let addr = addr.clone();
        tokio::spawn(async move {
            let code = "import time\ntime.sleep(4)\nprint('ran')";
            stateless_call(&addr, &format!("made-up-{n}"), "python", code).await
        })
    });
    let results = futures::future::join_all(calls).await;
    let texts: Vec<String> = results.into_iter().map(|r| text_of(&r.unwrap())).collect();
    let ran = texts.iter().filter(|t| t.contains("ran")).count();
    let refused = texts
        .iter()
        .filter(|t| t.contains("runs 2 interpreters for MCP clients, its limit"))
        .count();
    assert!((1..=2).contains(&ran), "{ran} ran: {texts:#?}");
    assert_eq!(ran + refused, 40, "{texts:#?}");
    // Their slots were given back with their one-off sessions: a new call runs.
    let after = stateless_call(&addr, "made-up-again", "shell", "echo again-$((6*7))").await;
    assert!(text_of(&after).contains("again-42"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_language_of_a_session_takes_a_slot_until_the_session_is_reset() {
    let model = ScriptedServer::start(Script::new([Reply::text("unused")]))
        .await
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = server_with_two_slots(work.path(), &model);
    let addr = format!("127.0.0.1:{}", server.port);
    let first = open(&addr).await;
    let second = open(&addr).await;
    let shell = json!({"language": "shell", "code": "echo one"});
    let python = json!({"language": "python", "code": "print('two')"});
    assert!(text_of(&call_in(&addr, &first, 2, "execute", shell.clone()).await).contains("one"));
    assert!(text_of(&call_in(&addr, &first, 3, "execute", python.clone()).await).contains("two"));
    // The same interpreters again take nothing more.
    assert!(text_of(&call_in(&addr, &first, 4, "execute", shell.clone()).await).contains("one"));
    let full = call_in(&addr, &second, 5, "execute", shell.clone()).await;
    assert_eq!(full["isError"], true, "{full}");
    assert!(
        text_of(&full).contains("runs 2 interpreters for MCP clients, its limit"),
        "{full}"
    );
    let reset = call_in(&addr, &first, 6, "reset", json!({})).await;
    assert!(text_of(&reset).contains("ended"), "{reset}");
    let now = call_in(&addr, &second, 7, "execute", shell).await;
    assert!(text_of(&now).contains("one"), "{now}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_call_never_delays_another_clients_initialize() {
    let model = ScriptedServer::start(Script::new([Reply::text("unused")]))
        .await
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = server_with_two_slots(work.path(), &model);
    let addr = format!("127.0.0.1:{}", server.port);
    let slow = {
        let addr = addr.clone();
        tokio::spawn(async move {
            let code = "import time\ntime.sleep(6)\nprint('slow done')";
            stateless_call(&addr, "slow", "python", code).await
        })
    };
    // Wait until the slow call's interpreter runs (its sleep is under way).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!slow.is_finished());
    let started = Instant::now();
    let _id = open(&addr).await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "initialize took {took:?} while a call ran"
    );
    assert!(!slow.is_finished(), "the slow call ended before the check");
    assert!(text_of(&slow.await.unwrap()).contains("slow done"));
}
