//! The server's sessions are given the tools of the profile's `mcp_servers:` too: a WebSocket
//! client sees the model's call of a tool of a server written with the official Python MCP
//! SDK (crates/oi-mcp/tests/py/calc_server.py) as LMC code chunks of format `mcp`, and its
//! answer as console output (docs/protocol.md section 11).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use common::{say, until_complete};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::Launch;

const CALL: &str = r#"{"tool": "calc__add", "arguments": {"a": 2, "b": 40}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_sees_an_mcp_tool_call_as_lmc_chunks() {
    let has_mcp = std::process::Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !has_mcp {
        oi_testkit::skipped!(
            "skipped a_websocket_client_sees_an_mcp_tool_call_as_lmc_chunks: python3 lacks the mcp package (pip install mcp)"
        );
        return;
    }
    let model = ScriptedServer::start(Script::new([
        Reply::tool_call("mcp", CALL),
        Reply::text("The sum is 42."),
    ]))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("mcp.yaml");
    let script = format!(
        "{}/../oi-mcp/tests/py/calc_server.py",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::write(
        &profile,
        format!("mcp_servers:\n  calc:\n    command: python3\n    args: [\"{script}\"]\n"),
    )
    .unwrap();
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
    let bodies = model.requests();
    assert!(bodies[0].body.to_string().contains("calc__add"));
    assert!(bodies[1].body["messages"].to_string().contains("42"));
}
