//! oi as an MCP client: a profile's `mcp_servers:` names a server written with the official
//! Python MCP SDK (crates/oi-mcp/tests/py/calc_server.py) and one that cannot start. In tool
//! mode the scripted model calls the server's tool as a provider function `calc__add` (offered
//! beside `execute` with the server's schema); in text mode it writes a fenced ```mcp block.
//! Either way the call is approved like code and the tool's answer goes back to the model.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod oi_common;

use std::process::Output;

use oi_common::{Oi, text};
use oi_testkit::mcp::{calc_profile, require_python_mcp};
use oi_testkit::{Reply, Script, ScriptedServer, ToolCall};
use serde_json::Value;

/// The call as a code block (text mode, and what the user is shown in both modes).
const CALL: &str = r#"{"tool": "calc__add", "arguments": {"a": 2, "b": 40}}"#;

/// The model calls `calc__add` as a provider function.
fn function_call() -> Reply {
    Reply::tool_calls(
        None,
        vec![ToolCall::raw("calc__add", r#"{"a": 2, "b": 40}"#)],
    )
}

/// One run of `oi -p PROFILE ARGS... "add them"` against `replies`.
struct Scenario<'a> {
    replies: Vec<Reply>,
    args: &'a [&'a str],
    /// `-y`.
    auto: bool,
    /// The user's answers.
    answer: &'a str,
}

impl Scenario<'_> {
    /// Its output and the request bodies the model got.
    fn run(self) -> (Output, Vec<Value>) {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let model = runtime
            .block_on(ScriptedServer::start(Script::new(self.replies)))
            .unwrap();
        let home = tempfile::tempdir().unwrap();
        let profile = calc_profile(
            home.path(),
            "  broken:\n    command: /nonexistent/mcp-server\n",
        );
        let base = model.base_url();
        let mut args = vec!["--api_base", &base, "-p", profile.to_str().unwrap()];
        if self.auto {
            args.push("-y");
        }
        args.extend_from_slice(self.args);
        args.push("add them");
        let out = Oi {
            args,
            stdin: self.answer,
            ..Oi::default()
        }
        .run(home.path());
        let bodies = model.requests().into_iter().map(|r| r.body).collect();
        (out, bodies)
    }
}

/// `-y`, no answers.
fn auto(replies: Vec<Reply>, args: &[&str]) -> (Output, Vec<Value>) {
    Scenario {
        replies,
        args,
        auto: true,
        answer: "",
    }
    .run()
}

/// What the model got after its first reply (nothing when the turn ended there).
fn after_first(bodies: &[Value]) -> String {
    bodies
        .iter()
        .skip(1)
        .map(|b| b["messages"].to_string())
        .collect()
}

fn check(out: &Output, bodies: &[Value]) {
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
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

/// The function named `name` among the tools offered in `body`.
fn offered<'a>(body: &'a Value, name: &str) -> Option<&'a Value> {
    body["tools"]
        .as_array()?
        .iter()
        .find(|t| t["function"]["name"] == name)
}

#[test]
fn the_model_calls_a_python_sdk_servers_tool_as_a_provider_function() {
    if !require_python_mcp("the_model_calls_a_python_sdk_servers_tool_as_a_provider_function") {
        return;
    }
    let (out, bodies) = auto(vec![function_call(), Reply::text("The sum is 42.")], &[]);
    check(&out, &bodies);
    // Offered beside `execute`, with the server's schema; `execute` no longer lists `mcp`.
    let add = offered(&bodies[0], "calc__add").expect("calc__add offered");
    assert_eq!(add["function"]["description"], "Add two integers.");
    let schema = &add["function"]["parameters"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["a"]["type"], "integer", "{schema}");
    assert_eq!(
        schema["required"],
        serde_json::json!(["a", "b"]),
        "{schema}"
    );
    let execute = offered(&bodies[0], "execute").expect("execute offered");
    let languages = execute["function"]["parameters"]["properties"]["language"]["enum"].to_string();
    assert!(!languages.contains("mcp"), "{languages}");
    // The call goes back as a call of `calc__add`, its result as that call's tool result.
    let messages = bodies[1]["messages"].as_array().unwrap();
    let call = messages
        .iter()
        .find_map(|m| m["tool_calls"].as_array().and_then(|c| c.first()))
        .expect("the call in the history");
    assert_eq!(call["function"]["name"], "calc__add", "{call}");
    let arguments: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, serde_json::json!({"a": 2, "b": 40}));
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call["id"])
        .expect("the tool result");
    assert_eq!(result["content"], "42", "{result}");
}

#[test]
fn the_model_calls_a_python_sdk_servers_tool_in_text_mode() {
    if !require_python_mcp("the_model_calls_a_python_sdk_servers_tool_in_text_mode") {
        return;
    }
    let (out, bodies) = auto(
        vec![
            Reply::text(format!("Adding.\n```mcp\n{CALL}\n```\n")),
            Reply::text("The sum is 42."),
        ],
        &["--no-llm-supports-functions", "-m", "openai/local"],
    );
    check(&out, &bodies);
    // Text mode offers no functions: the system text says how to call the tools.
    assert!(bodies[0].get("tools").is_none(), "{}", bodies[0]);
    let system = bodies[0]["messages"][0]["content"].to_string();
    assert!(system.contains("```mcp"), "{system}");
}

/// A local model in text mode prints its call as a JSON object (bare, or in a ```json
/// block): oi reads it as the tool's call too.
#[test]
fn a_json_call_in_text_mode_calls_the_tool() {
    if !require_python_mcp("a_json_call_in_text_mode_calls_the_tool") {
        return;
    }
    let json_calls = [
        r#"{"name": "calc__add", "arguments": {"a": 2, "b": 40}}"#.to_owned(),
        "```json\n{\"name\": \"calc__add\", \"arguments\": {\"a\": 2, \"b\": 40}}\n```\n"
            .to_owned(),
    ];
    for call in json_calls {
        let (out, bodies) = auto(
            vec![Reply::text(call), Reply::text("The sum is 42.")],
            &["--no-llm-supports-functions", "-m", "openai/local"],
        );
        check(&out, &bodies);
    }
}

#[test]
fn a_provider_call_is_approved_like_code_asked_approved_declined_and_denied() {
    if !require_python_mcp(
        "a_provider_call_is_approved_like_code_asked_approved_declined_and_denied",
    ) {
        return;
    }
    let replies = || vec![function_call(), Reply::text("Fine.")];
    let asked = |answer| {
        Scenario {
            replies: replies(),
            args: &[],
            auto: false,
            answer,
        }
        .run()
    };
    // Without -y the user is asked and sees the arguments; yes: the tool is called.
    let (out, bodies) = asked("y\n");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("Would you like to run this code?"),
        "{stdout}"
    );
    assert!(
        stdout.contains("calc__add") && stdout.contains("\"b\": 40"),
        "{stdout}"
    );
    assert!(after_first(&bodies).contains("42"), "{bodies:?}");
    // No: nothing is called.
    let (out, bodies) = asked("n\n");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains("calc__add") && stdout.contains("\"b\": 40"),
        "{stdout}"
    );
    assert!(!after_first(&bodies).contains("42"), "{bodies:?}");
    // A deny rule refuses the call even with -y.
    let (out, bodies) = auto(replies(), &["--deny", "calc__add"]);
    assert!(out.status.success());
    assert!(!after_first(&bodies).contains("42"), "{bodies:?}");
}

#[test]
fn an_execute_call_in_language_mcp_still_calls_the_tool() {
    if !require_python_mcp("an_execute_call_in_language_mcp_still_calls_the_tool") {
        return;
    }
    let (out, bodies) = auto(
        vec![Reply::tool_call("mcp", CALL), Reply::text("The sum is 42.")],
        &[],
    );
    check(&out, &bodies);
}

#[test]
fn percent_mcp_lists_the_servers_and_their_tools() {
    if !require_python_mcp("percent_mcp_lists_the_servers_and_their_tools") {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let profile = calc_profile(home.path(), "");
    let out = Oi {
        args: vec!["--plain", "-p", profile.to_str().unwrap()],
        env: vec![("OPENAI_API_KEY", "sk-unused")],
        stdin: "%mcp\n",
        ..Oi::default()
    }
    .run(home.path());
    let stdout = text(&out.stdout);
    assert!(stdout.contains("calc (3 tools)"), "{stdout}");
    assert!(stdout.contains("calc__add  Add two integers."), "{stdout}");
}
