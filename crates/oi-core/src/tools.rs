//! Tools offered to the model beside `execute` (an MCP server's tools, for one): what the
//! computer offers ([`OfferedTool`]) and how a call of one is written as a code block, so that
//! it is shown, judged, approved and stored like any code. A call of tool `NAME` with arguments
//! `ARGS` is a block in the tool's language whose code is one JSON object
//! `{"tool": NAME, "arguments": ARGS}` ([`call_code`], read back by [`parse_call`]). In tool
//! mode the model calls the tool as a provider function; in text mode it writes that block.

use serde_json::{Map, Value};

/// A tool the computer offers beside `execute`.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    /// The function name the model calls (`SERVER__TOOL`).
    pub name: String,
    /// What it does, in its own words.
    pub description: String,
    /// Its parameters, as a JSON schema (an object schema).
    pub parameters: Value,
    /// The language of the code block a call becomes (`mcp`).
    pub language: String,
}

/// The code of the block that calls `name` with `arguments`, spaced as Python's `json.dumps`
/// writes it (`{"tool": "calc__add", "arguments": {"a": 2, "b": 40}}`), as a model writes it
/// in text mode.
pub fn call_code(name: &str, arguments: &Map<String, Value>) -> String {
    let mut out = format!("{{\"tool\": {}, \"arguments\": ", Value::from(name));
    dumps(&Value::Object(arguments.clone()), &mut out);
    out.push('}');
    out
}

/// `value` as `json.dumps` writes it: `", "` between items, `": "` after keys.
fn dumps(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push_str(": ");
                dumps(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dumps(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The tool's name and arguments of a call block's code; `None` when the code is not one JSON
/// object with a string `tool` and an object (or absent) `arguments`.
pub fn parse_call(code: &str) -> Option<(String, Map<String, Value>)> {
    let Ok(Value::Object(mut call)) = serde_json::from_str::<Value>(code.trim()) else {
        return None;
    };
    let name = call.get("tool")?.as_str()?.to_owned();
    match call.remove("arguments") {
        Some(Value::Object(arguments)) => Some((name, arguments)),
        None | Some(Value::Null) => Some((name, Map::new())),
        Some(_) => None,
    }
}

/// The offered tool a block in `language` with `code` calls, and the call's arguments.
pub fn called<'a>(
    tools: &'a [OfferedTool],
    language: &str,
    code: &str,
) -> Option<(&'a OfferedTool, Map<String, Value>)> {
    let (name, arguments) = parse_call(code)?;
    let tool = tools
        .iter()
        .find(|t| t.name == name && t.language.eq_ignore_ascii_case(language.trim()))?;
    Some((tool, arguments))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_written_and_read_back() {
        let mut arguments = Map::new();
        arguments.insert("a".into(), Value::from(2));
        let code = call_code("calc__add", &arguments);
        assert_eq!(code, r#"{"tool": "calc__add", "arguments": {"a": 2}}"#);
        let nested: Map<String, Value> =
            serde_json::from_str(r#"{"x": [1, {"y": "z"}], "w": null}"#).unwrap();
        assert_eq!(parse_call(&code), Some(("calc__add".into(), arguments)));
        let nested_code = call_code("t", &nested);
        assert_eq!(parse_call(&nested_code), Some(("t".into(), nested)));
        assert_eq!(
            parse_call(r#"{"tool": "x"}"#),
            Some(("x".into(), Map::new()))
        );
        for bad in [
            "",
            "[1]",
            r#"{"tool": 1}"#,
            r#"{"tool": "x", "arguments": 3}"#,
        ] {
            assert_eq!(parse_call(bad), None, "{bad}");
        }
        let tools = [OfferedTool {
            name: "calc__add".into(),
            description: String::new(),
            parameters: Value::Null,
            language: "mcp".into(),
        }];
        assert!(called(&tools, "MCP", &code).is_some());
        assert!(called(&tools, "python", &code).is_none());
        assert!(called(&tools, "mcp", r#"{"tool": "calc__sub"}"#).is_none());
    }
}
