//! The single `execute` tool (spec b.4), word for word.

use oi_core::prompts::EXECUTE_TOOL_DESCRIPTION;
use serde_json::{Value, json};

/// The tool's name.
pub const EXECUTE: &str = "execute";

/// The JSON schema of the `execute` tool's parameters; the `language` enum is `languages` in
/// order.
pub fn execute_parameters(languages: &[String]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "language": {
                "type": "string",
                "description": "The programming language (required parameter to the `execute` function)",
                "enum": languages,
            },
            "code": { "type": "string", "description": "The code to execute (required)" },
        },
        "required": ["language", "code"],
    })
}

/// The OpenAI `tools` entry for the `execute` tool.
pub fn execute_tool(languages: &[String]) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": EXECUTE,
            "description": EXECUTE_TOOL_DESCRIPTION,
            "parameters": execute_parameters(languages),
        },
    })
}
