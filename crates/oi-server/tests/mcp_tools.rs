//! The server's sessions are given the tools of the profile's `mcp_servers:` too: the model
//! calls a tool of a server written with the official Python MCP SDK
//! (crates/oi-mcp/tests/py/calc_server.py) as a provider function, and a WebSocket client sees
//! the call as LMC code chunks of format `mcp` and its answer as console output — the chunks
//! docs/protocol.md section 11 documents (snapshot).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use common::{say, until_complete};
use oi_testkit::mcp::{calc_profile, require_python_mcp};
use oi_testkit::{Reply, Script, ScriptedServer, ToolCall};
use process::Launch;
use serde_json::Value;

const CALL: &str = r#"{"tool": "calc__add", "arguments": {"a": 2, "b": 40}}"#;

/// The frames without what changes from run to run (ids).
fn shapes(frames: &[Value]) -> Vec<Value> {
    frames
        .iter()
        .map(|frame| {
            let mut frame = frame.clone();
            if let Some(map) = frame.as_object_mut() {
                map.remove("id");
            }
            frame
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_sees_an_mcp_tool_call_as_lmc_chunks() {
    if !require_python_mcp("a_websocket_client_sees_an_mcp_tool_call_as_lmc_chunks") {
        return;
    }
    let model = ScriptedServer::start(Script::new([
        Reply::tool_calls(
            None,
            vec![ToolCall::raw("calc__add", r#"{"a": 2, "b": 40}"#)],
        ),
        Reply::text("The sum is 42."),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let profile = calc_profile(dir.path(), "");
    let server = Launch::new(&model.base_url())
        .args(&["-p", profile.to_str().unwrap()])
        .start();
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{}/", server.port))
        .await
        .unwrap();
    say(&mut ws, "message", "add 2 and 40").await;
    let frames = until_complete(&mut ws, false).await;
    let code: String = frames
        .iter()
        .filter(|f| f["type"] == "code" && f["format"] == "mcp")
        .filter_map(|f| f["content"].as_str())
        .collect();
    assert_eq!(code, CALL, "{frames:?}");
    let console: String = frames
        .iter()
        .filter(|f| f["role"] == "computer" && f["type"] == "console")
        .filter_map(|f| f["content"].as_str())
        .collect();
    assert_eq!(console.trim(), "42", "{frames:?}");
    insta::assert_json_snapshot!("mcp_tool_call_chunks", shapes(&frames));
    let bodies = model.requests();
    assert!(bodies[0].body.to_string().contains("calc__add"));
    assert!(bodies[1].body["messages"].to_string().contains("42"));
}
