//! oi as an MCP client: a profile's `mcp_servers:` names a server written with the official
//! Python MCP SDK (crates/oi-mcp/tests/py/calc_server.py) and one that cannot start; the
//! scripted model calls the server's tool (as `execute` with language `mcp`) in tool mode and in
//! text mode (a fenced ```mcp block), and the tool's answer goes back to the model.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

use oi_testkit::{Reply, Script, ScriptedServer};

const CALL: &str = r#"{"tool": "calc__add", "arguments": {"a": 2, "b": 40}}"#;

fn python_mcp() -> bool {
    Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Runs `oi -p PROFILE ARGS... "add them"` against `replies` (`-y` when `auto`), `answer` on its
/// standard input; its output and the requests the model got.
fn run_with(
    replies: Vec<Reply>,
    args: &[&str],
    auto: bool,
    answer: &str,
) -> (Output, Vec<serde_json::Value>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let model = runtime
        .block_on(ScriptedServer::start(Script::new(replies)))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let profile = home.path().join("mcp.yaml");
    let script = format!(
        "{}/../oi-mcp/tests/py/calc_server.py",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::write(
        &profile,
        format!(
            "mcp_servers:\n  calc:\n    command: python3\n    args: [\"{script}\"]\n  broken:\n    command: /nonexistent/mcp-server\n"
        ),
    )
    .unwrap();
    let base = model.base_url();
    let mut child = Command::new(env!("CARGO_BIN_EXE_oi"))
        .args(["--api_base", &base, "-p", profile.to_str().unwrap()])
        .args(auto.then_some("-y"))
        .args(args)
        .arg("add them")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let bodies = model.requests().into_iter().map(|r| r.body).collect();
    (out, bodies)
}

fn run(replies: Vec<Reply>, args: &[&str]) -> (Output, Vec<serde_json::Value>) {
    run_with(replies, args, true, "")
}

/// What the model got after its first reply (nothing when the turn ended there).
fn after_first(bodies: &[serde_json::Value]) -> String {
    bodies
        .iter()
        .skip(1)
        .map(|b| b["messages"].to_string())
        .collect()
}

fn check(out: &Output, bodies: &[serde_json::Value]) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // The server that cannot start: one line, and the rest goes on.
    let broken: Vec<_> = stderr
        .lines()
        .filter(|l| l.contains("MCP server broken"))
        .collect();
    assert_eq!(broken.len(), 1, "{stderr}");
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    let first = bodies[0].to_string();
    assert!(
        first.contains("calc__add") && first.contains("Add two integers."),
        "{first}"
    );
    // The tool's answer is in what the model gets next.
    let second = bodies[1]["messages"].to_string();
    assert!(second.contains("42"), "{second}");
    assert!(stdout.contains("42"), "{stdout}");
}

#[test]
fn the_model_calls_a_python_sdk_servers_tool_in_tool_mode() {
    if !python_mcp() {
        oi_testkit::skipped!(
            "skipped the_model_calls_a_python_sdk_servers_tool_in_tool_mode: python3 lacks the mcp package (pip install mcp)"
        );
        return;
    }
    let (out, bodies) = run(
        vec![Reply::tool_call("mcp", CALL), Reply::text("The sum is 42.")],
        &[],
    );
    check(&out, &bodies);
    let tools = bodies[0]["tools"].to_string();
    assert!(tools.contains("\"mcp\""), "{tools}");
}

#[test]
fn the_model_calls_a_python_sdk_servers_tool_in_text_mode() {
    if !python_mcp() {
        oi_testkit::skipped!(
            "skipped the_model_calls_a_python_sdk_servers_tool_in_text_mode: python3 lacks the mcp package (pip install mcp)"
        );
        return;
    }
    let (out, bodies) = run(
        vec![
            Reply::text(format!("Adding.\n```mcp\n{CALL}\n```\n")),
            Reply::text("The sum is 42."),
        ],
        &["--no-llm-supports-functions", "-m", "openai/local"],
    );
    check(&out, &bodies);
}

#[test]
fn a_call_is_approved_like_code_asked_and_denied() {
    if !python_mcp() {
        oi_testkit::skipped!(
            "skipped a_call_is_approved_like_code_asked_and_denied: python3 lacks the mcp package (pip install mcp)"
        );
        return;
    }
    let replies = || vec![Reply::tool_call("mcp", CALL), Reply::text("Fine.")];
    // Without -y the user is asked, sees the arguments, and says no: nothing is called.
    let (out, bodies) = run_with(replies(), &[], false, "n\n");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("calc__add") && stdout.contains("\"b\": 40"),
        "{stdout}"
    );
    assert!(!after_first(&bodies).contains("42"), "{bodies:?}");
    // A deny rule refuses the call even with -y.
    let (out, bodies) = run_with(replies(), &["--deny", "calc__add"], true, "");
    assert!(out.status.success());
    assert!(!after_first(&bodies).contains("42"), "{bodies:?}");
}

#[test]
fn percent_mcp_lists_the_servers_and_their_tools() {
    if !python_mcp() {
        oi_testkit::skipped!(
            "skipped percent_mcp_lists_the_servers_and_their_tools: python3 lacks the mcp package (pip install mcp)"
        );
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let profile = home.path().join("mcp.yaml");
    let script = format!(
        "{}/../oi-mcp/tests/py/calc_server.py",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::write(
        &profile,
        format!("mcp_servers:\n  calc:\n    command: python3\n    args: [\"{script}\"]\n"),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_oi"))
        .args(["--plain", "-p", profile.to_str().unwrap()])
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("OPENAI_API_KEY", "sk-unused")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"%mcp\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("calc (3 tools)"), "{stdout}");
    assert!(stdout.contains("calc__add  Add two integers."), "{stdout}");
}
