//! The tools oi offers over MCP, with their input schemas (docs/protocol.md shows them).

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

/// Runs code in a persistent session.
pub const EXECUTE: &str = "execute";
/// Interrupts the code running in a session.
pub const STOP: &str = "stop";
/// Ends a session and everything it started (its state is lost).
pub const RESET: &str = "reset";
/// Lists the languages and the sessions.
pub const LANGUAGES: &str = "languages";
/// Reads a text file inside the workspace.
pub const READ_FILE: &str = "read_file";
/// Writes a text file inside the workspace.
pub const WRITE_FILE: &str = "write_file";

/// The session a call names when it names none.
pub const DEFAULT_SESSION: &str = "default";

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn session_property() -> Value {
    json!({
        "type": "string",
        "description": "The session's name (default: \"default\"). Each session keeps its own state: variables, imports, the shell's working directory.",
        "maxLength": 64
    })
}

/// Every tool, in the order `tools/list` gives them; `languages` names the languages
/// `execute` takes.
pub fn all(languages: &[String]) -> Vec<Tool> {
    let execute = Tool::new(
        EXECUTE,
        "Run code on this machine in a persistent session of its language (state is kept between calls of the same session) and return its output: text, images (e.g. matplotlib figures) as image content, and isError when the code raised an error or was refused. Cancelling the call stops the code.",
        schema(json!({
            "type": "object",
            "properties": {
                "language": {
                    "type": "string",
                    "description": "The language (any case; aliases such as py and bash work).",
                    "enum": languages,
                },
                "code": {"type": "string", "description": "The code to run."},
                "session": session_property(),
            },
            "required": ["language", "code"],
        })),
    )
    .annotate(ToolAnnotations::new().read_only(false).destructive(true).open_world(true));
    let stop = Tool::new(
        STOP,
        "Interrupt the code running in a session (its state is kept).",
        schema(json!({"type": "object", "properties": {"session": session_property()}})),
    );
    let reset = Tool::new(
        RESET,
        "End a session's interpreters and every process they started; its state is lost and the next call starts afresh.",
        schema(json!({"type": "object", "properties": {"session": session_property()}})),
    );
    let list = Tool::new(
        LANGUAGES,
        "List the languages execute takes and the sessions open now.",
        schema(json!({"type": "object", "properties": {}})),
    )
    .annotate(ToolAnnotations::new().read_only(true));
    let read = Tool::new(
        READ_FILE,
        "Read a UTF-8 text file inside the workspace (a path relative to it, or absolute inside it).",
        schema(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        })),
    )
    .annotate(ToolAnnotations::new().read_only(true));
    let write = Tool::new(
        WRITE_FILE,
        "Write (create or replace) a UTF-8 text file inside the workspace; missing parent folders are created.",
        schema(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        })),
    )
    .annotate(ToolAnnotations::new().read_only(false).destructive(true));
    vec![execute, stop, reset, list, read, write]
}
