//! oi as an MCP client of a server nobody here wrote: tests/py/calc_server.py, built with the
//! official Python MCP SDK (`pip install mcp`), named in the `mcp_servers:` shape other agents
//! use; beside it a server that cannot start and one oi cannot reach, each one line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use oi_mcp::client::{McpClients, ServerSpec};
use serde_json::json;

fn python_mcp() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|out| out.status.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_of_a_python_sdk_server_are_offered_and_called() {
    if !python_mcp() {
        oi_testkit::skipped!(
            "skipped tools_of_a_python_sdk_server_are_offered_and_called: python3 lacks the mcp package (pip install mcp)"
        );
        return;
    }
    let script = format!("{}/tests/py/calc_server.py", env!("CARGO_MANIFEST_DIR"));
    let specs: BTreeMap<String, ServerSpec> = serde_json::from_value(json!({
        "calc": {"command": "python3", "args": [script], "env": {"GIVEN": "yes"}},
        "broken": {"command": "/nonexistent/mcp-server"},
        "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"X-API-KEY": "k"}},
    }))
    .unwrap();
    let clients = McpClients::connect(&specs).await;

    let failures = clients.failures();
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert!(failures[0].starts_with("MCP server broken: cannot start /nonexistent/mcp-server"));
    assert!(failures[1].starts_with("MCP server remote: http://127.0.0.1:9/mcp"));
    assert!(failures.iter().all(|line| !line.contains('\n')));

    let names: Vec<_> = clients.tools().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["calc__add", "calc__fail", "calc__env"]);
    let add = clients.tools().into_iter().next().unwrap();
    assert_eq!(add.description, "Add two integers.");
    assert_eq!(add.input_schema["required"], json!(["a", "b"]));

    let sum = clients
        .call(
            "calc__add",
            json!({"a": 2, "b": 40}).as_object().unwrap().clone(),
        )
        .await
        .unwrap();
    assert_eq!((sum.text.as_str(), sum.is_error), ("42", false));
    let failed = clients
        .call(
            "calc__fail",
            json!({"reason": "on purpose"}).as_object().unwrap().clone(),
        )
        .await
        .unwrap();
    // The SDK words the error itself ("Error executing tool fail").
    assert!(
        failed.is_error && failed.text.contains("fail"),
        "{failed:?}"
    );
    assert!(
        clients
            .call("calc__nope", serde_json::Map::new())
            .await
            .is_err()
    );

    // The server gets its own `env` and a few basics, not the rest of oi's environment (this
    // test process has CARGO_MANIFEST_DIR; provider keys would be withheld alike).
    let env = |name: &str| json!({"name": name}).as_object().unwrap().clone();
    let given = clients.call("calc__env", env("GIVEN")).await.unwrap();
    assert_eq!(given.text, "yes");
    let path = clients.call("calc__env", env("PATH")).await.unwrap();
    assert!(!path.text.is_empty());
    let withheld = clients
        .call("calc__env", env("CARGO_MANIFEST_DIR"))
        .await
        .unwrap();
    assert_eq!(withheld.text, "<unset>", "{withheld:?}");

    let listing = clients.listing();
    assert!(
        listing.starts_with("calc (3 tools)\n  calc__add  Add two integers.\n"),
        "{listing}"
    );
    clients.close().await;
}
