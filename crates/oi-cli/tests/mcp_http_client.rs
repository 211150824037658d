//! oi as a client of a Streamable HTTP MCP server: a profile's `{url, headers}` server, served by
//! the official Python MCP SDK on 127.0.0.1 (crates/oi-mcp/tests/py/calc_http_server.py), which
//! answers only requests carrying its key header. The model calls its tool as a provider
//! function; the key never appears in what oi prints, `%mcp` included; the same server without
//! the header is one line and the rest goes on.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod oi_common;

use oi_common::{Oi, text};
use oi_testkit::mcp::{CalcHttpServer, require_python_mcp};
use oi_testkit::{Reply, Script, ScriptedServer, ToolCall};

const KEY: &str = "calc-secret-7f3a9b2c";

fn profile(dir: &std::path::Path, url: &str) -> std::path::PathBuf {
    let path = dir.join("http.yaml");
    std::fs::write(
        &path,
        format!(
            "mcp_servers:\n  calc:\n    url: {url}\n    headers:\n      X-Calc-Key: {KEY}\n  nokey:\n    url: {url}\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn the_model_calls_a_streamable_http_servers_tool_with_the_profiles_headers() {
    if !require_python_mcp(
        "the_model_calls_a_streamable_http_servers_tool_with_the_profiles_headers",
    ) {
        return;
    }
    let calc = CalcHttpServer::start(KEY);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let model = runtime
        .block_on(ScriptedServer::start(Script::new([
            Reply::tool_calls(
                None,
                vec![ToolCall::raw("calc__add", r#"{"a": 2, "b": 40}"#)],
            ),
            Reply::text("The sum is 42."),
        ])))
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let profile = profile(home.path(), &calc.url);
    let base = model.base_url();
    let out = Oi {
        args: vec![
            "--api_base",
            &base,
            "-p",
            profile.to_str().unwrap(),
            "-y",
            "add them",
        ],
        ..Oi::default()
    }
    .run(home.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let bodies: Vec<_> = model.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), 2, "{stderr}");
    let tools = bodies[0]["tools"].to_string();
    assert!(tools.contains("calc__add"), "{tools}");
    assert!(!tools.contains("nokey__"), "{tools}");
    assert!(bodies[1]["messages"].to_string().contains("42"));
    // The server without its key: one line, and it names no header value.
    let nokey: Vec<_> = stderr
        .lines()
        .filter(|l| l.contains("MCP server nokey"))
        .collect();
    assert_eq!(nokey.len(), 1, "{stderr}");
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "{stdout}\n{stderr}"
    );

    // `%mcp` lists the tools and shows no header value either.
    let out = Oi {
        args: vec!["--plain", "-p", profile.to_str().unwrap()],
        env: vec![("OPENAI_API_KEY", "sk-unused")],
        stdin: "%mcp\n",
        ..Oi::default()
    }
    .run(home.path());
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains("calc (3 tools)"), "{stdout}\n{stderr}");
    assert!(stdout.contains("calc__add  Add two integers."), "{stdout}");
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "{stdout}\n{stderr}"
    );
}
