//! Scripts for the scripted model server read from a JSON file (`cargo xtask scripted-server
//! --script FILE`), so tests in other languages (the Python API's pytest suite) can say what
//! the model answers:
//!
//! ```json
//! [
//!   {"text": "Let me look.", "tool_call": {"language": "shell", "code": "uname -s"}},
//!   {"function_call": {"name": "calc__add", "arguments": "{\"a\": 2, \"b\": 40}"}},
//!   {"text": "We are on Linux.", "chunked": 4},
//!   {"status": 500, "body": "{\"error\": {\"message\": \"boom\"}}"},
//!   {"text": "slow", "stall_after": [1, 30]}
//! ]
//! ```
//!
//! or `"calculator"` for the built-in calculator. Each object is one reply, used by one
//! request, in order.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use oi_testkit::{Ending, Reply, Script};
use serde_json::Value;

/// The keys a reply object may have.
const KEYS: [&str; 8] = [
    "text",
    "tool_call",
    "function_call",
    "status",
    "body",
    "chunked",
    "stall_after",
    "endless",
];

/// Reads the script in `path`.
pub fn load(path: &Path) -> anyhow::Result<Script> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the script {}", path.display()))?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("the script {} is not JSON", path.display()))?;
    parse(&value).with_context(|| format!("in the script {}", path.display()))
}

/// The script `value` describes (see the module docs).
pub fn parse(value: &Value) -> anyhow::Result<Script> {
    match value {
        Value::String(name) if name == "calculator" => Ok(Script::calculator()),
        Value::Array(items) => {
            let replies = items
                .iter()
                .enumerate()
                .map(|(i, item)| reply(item).with_context(|| format!("reply #{}", i + 1)))
                .collect::<anyhow::Result<Vec<Reply>>>()?;
            Ok(Script::new(replies))
        }
        other => bail!("a script is a list of replies or \"calculator\", not {other}"),
    }
}

fn text_of<'a>(
    object: &'a serde_json::Map<String, Value>,
    key: &str,
) -> anyhow::Result<Option<&'a str>> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => bail!("`{key}` must be a string, not {other}"),
    }
}

fn number_of(value: &Value, what: &str) -> anyhow::Result<u64> {
    value
        .as_u64()
        .with_context(|| format!("`{what}` must be a whole number, not {value}"))
}

/// One reply object.
fn reply(item: &Value) -> anyhow::Result<Reply> {
    let Some(object) = item.as_object() else {
        bail!("a reply is an object like {{\"text\": \"Hi\"}}, not {item}");
    };
    if let Some(unknown) = object.keys().find(|k| !KEYS.contains(&k.as_str())) {
        bail!("unknown key `{unknown}` (the keys are {})", KEYS.join(", "));
    }
    let text = text_of(object, "text")?;
    let mut reply = if let Some(code) = object.get("status") {
        let code = u16::try_from(number_of(code, "status")?).context("`status` is too large")?;
        Reply::status(code, text_of(object, "body")?.unwrap_or(""))
    } else if let Some(call) = object.get("tool_call") {
        let language = call.get("language").and_then(Value::as_str);
        let code = call.get("code").and_then(Value::as_str);
        let (Some(language), Some(code)) = (language, code) else {
            bail!("`tool_call` must be {{\"language\": …, \"code\": …}}, not {call}");
        };
        let reply = Reply::tool_call(language, code);
        match text {
            Some(text) => reply.with_text_before(text),
            None => reply,
        }
    } else if let Some(call) = object.get("function_call") {
        // A call of a function other than `execute` (an MCP server's tool), raw arguments.
        let name = call.get("name").and_then(Value::as_str);
        let arguments = call.get("arguments").and_then(Value::as_str);
        let (Some(name), Some(arguments)) = (name, arguments) else {
            bail!("`function_call` must be {{\"name\": …, \"arguments\": \"…\"}}, not {call}");
        };
        Reply::tool_calls(text, vec![oi_testkit::ToolCall::raw(name, arguments)])
    } else if let Some(text) = text {
        Reply::text(text)
    } else {
        bail!("a reply needs `text`, `tool_call` or `status`");
    };
    if let Some(chars) = object.get("chunked") {
        reply = reply.chunked(usize::try_from(number_of(chars, "chunked")?)?);
    }
    if let Some(stall) = object.get("stall_after") {
        let pair = stall.as_array().filter(|p| p.len() == 2);
        let Some(pair) = pair else {
            bail!("`stall_after` must be [EVENTS, SECONDS], not {stall}");
        };
        let events = usize::try_from(number_of(&pair[0], "stall_after")?)?;
        let seconds = number_of(&pair[1], "stall_after")?;
        reply = reply.ending(Ending::StallAfter(events, Duration::from_secs(seconds)));
    }
    if object.get("endless") == Some(&Value::Bool(true)) {
        reply = reply.ending(Ending::Endless);
    }
    Ok(reply)
}
