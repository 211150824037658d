//! `/mcp`: oi's MCP server over Streamable HTTP in the real `oi-server`, behind the same door
//! as every route (the key, then Host and Origin), driven by a client nobody here wrote: the
//! official Python MCP SDK (`pip install mcp`) through crates/oi-mcp/tests/py/oi_client.py.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::process::Command;

use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, post, raw};

#[path = "../../oi-mcp/tests/py/check_report.rs"]
mod check_report;

const KEY: &str = "mcp-door-key";

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

fn python_mcp() -> bool {
    Command::new("python3")
        .args(["-c", "import mcp, matplotlib"])
        .output()
        .is_ok_and(|out| out.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_is_behind_the_door_and_serves_the_python_sdk() {
    let model = ScriptedServer::start(Script::new([Reply::text("unused")]))
        .await
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .env("INTERPRETER_API_KEY", KEY)
        .env("INTERPRETER_MCP", "true")
        .cwd(work.path())
        .start();
    let addr = format!("127.0.0.1:{}", server.port);
    let host = format!("Host: {addr}");
    let mcp_headers = ["Accept: application/json, text/event-stream", host.as_str()];
    let json = |extra: &[&str]| -> Vec<String> {
        let mut headers: Vec<String> = mcp_headers.iter().map(|h| (*h).to_owned()).collect();
        headers.push("Content-Type: application/json".to_owned());
        headers.extend(extra.iter().map(|h| (*h).to_owned()));
        headers
    };
    let send = |headers: Vec<String>| {
        let refs: Vec<&str> = headers.iter().map(String::as_str).collect();
        post("/mcp", &refs, INITIALIZE).replace("Content-Type: text/plain\r\n", "")
    };

    // No key, a wrong key, a foreign Host, a foreign Origin: refused before MCP sees them.
    let no_key = raw(&addr, &send(json(&[]))).await;
    assert_eq!(no_key.status, 403, "{}", no_key.text);
    let wrong = raw(&addr, &send(json(&["X-API-KEY: nope"]))).await;
    assert_eq!(wrong.status, 403, "{}", wrong.text);
    let key = format!("X-API-KEY: {KEY}");
    let mut foreign_host = json(&[&key]);
    foreign_host.retain(|h| !h.starts_with("Host:"));
    foreign_host.push("Host: evil.example".to_owned());
    let refused = raw(&addr, &send(foreign_host)).await;
    assert!(refused.status >= 400, "{}", refused.text);
    let origin = raw(&addr, &send(json(&[&key, "Origin: https://evil.example"]))).await;
    assert!(origin.status >= 400, "{}", origin.text);
    // With the key: an MCP answer.
    let ok = raw(&addr, &send(json(&[&key]))).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert!(ok.text.contains("\"serverInfo\""), "{}", ok.text);

    if !python_mcp() {
        oi_testkit::skipped!(
            "skipped the Python SDK half of mcp_is_behind_the_door_and_serves_the_python_sdk: python3 lacks mcp or matplotlib (pip install mcp matplotlib)"
        );
        return;
    }
    let url = format!("http://{addr}/mcp");
    let script = format!(
        "{}/../oi-mcp/tests/py/oi_client.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .arg(script)
            .args(["http", &url, KEY])
            .env("MPLBACKEND", "Agg")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "client failed:\n{stdout}\n{stderr}\nserver:\n{}",
        server.stderr()
    );
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON report");
    check_report::check_report(&report);
    assert_eq!(
        std::fs::read_to_string(work.path().join("mcp/note.txt")).unwrap(),
        "hi"
    );
}

/// `/mcp` runs code with no model and no approval of the server's, so a server serves it only
/// when its operator asked (`--mcp`, `INTERPRETER_MCP=true`): without, even the key gets 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_is_off_unless_the_operator_turns_it_on() {
    let model = ScriptedServer::start(Script::new([Reply::text("unused")]))
        .await
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .env("INTERPRETER_API_KEY", KEY)
        .cwd(work.path())
        .start();
    let addr = format!("127.0.0.1:{}", server.port);
    let host = format!("Host: {addr}");
    let key = format!("X-API-KEY: {KEY}");
    let headers = [
        "Accept: application/json, text/event-stream",
        "Content-Type: application/json",
        host.as_str(),
        key.as_str(),
    ];
    let request = post("/mcp", &headers, INITIALIZE).replace("Content-Type: text/plain\r\n", "");
    let answer = raw(&addr, &request).await;
    assert_eq!(answer.status, 404, "{}", answer.text);
    assert!(!answer.text.contains("serverInfo"), "{}", answer.text);
}
