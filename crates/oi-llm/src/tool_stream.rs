//! Tool mode: turns a streamed reply's text and tool-call pieces into [`ModelDelta`]s
//! (spec b.4), linearly.
//!
//! Tool-call pieces are keyed by `index` (the id and name come only in the first one). Only the
//! first tool call is used, as in the original. Its arguments are scanned once, as they arrive
//! ([`ArgumentsScanner`]), and code is emitted piece by piece as soon as `language` is known.
//! The legacy hallucinated names `python` and `functions` mean the raw arguments are Python
//! code. A call of one of the computer's other tools ([`oi_core::tools`], an MCP server's) is
//! gathered whole and becomes one code block in the tool's language holding
//! `{"tool": NAME, "arguments": ARGS}`, so it is shown, judged and approved like code. Text
//! before the first tool call is a message; text after it is dropped. Each wire (OpenAI chat
//! deltas, Anthropic content blocks) feeds the same typed pieces.

use oi_core::{ModelDelta, OfferedTool};
use serde_json::Value;

use crate::tool_args::ArgumentsScanner;

/// One piece of a streamed tool call, as every wire has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCallPiece<'a> {
    /// Which call (calls are numbered from 0 in the reply).
    pub index: u64,
    /// A piece of the function's name (usually whole, in the first piece).
    pub name: Option<&'a str>,
    /// A piece of the JSON arguments.
    pub arguments: Option<&'a str>,
}

/// How the first call's arguments are read.
#[derive(Debug)]
enum Arguments {
    /// No argument seen yet (the name may still be growing).
    Waiting(String),
    /// JSON arguments of `execute`.
    Json(ArgumentsScanner),
    /// Raw Python (legacy names `python`, `functions`).
    Raw,
    /// The arguments of an offered tool's call (this one of `tools`), gathered until the end.
    Offered(usize, String),
}

/// Accumulates the pieces of one streamed reply in tool mode.
#[derive(Debug)]
pub struct ToolCallReader {
    first: Option<u64>,
    arguments: Arguments,
    language: Option<String>,
    /// Code scanned before the language was known.
    held: String,
    /// Every argument character of the first call (only kept for the end-of-reply fallback
    /// when the arguments turn out not to be a JSON object).
    raw: String,
    emitted_any: bool,
    /// The tools offered beside `execute`.
    tools: Vec<OfferedTool>,
}

impl Default for ToolCallReader {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolCallReader {
    /// A reader at the start of a reply.
    pub fn new() -> Self {
        ToolCallReader {
            first: None,
            arguments: Arguments::Waiting(String::new()),
            language: None,
            held: String::new(),
            raw: String::new(),
            emitted_any: false,
            tools: Vec::new(),
        }
    }

    /// A reader at the start of a reply to a request that offered `tools` beside `execute`.
    pub fn offering(tools: Vec<OfferedTool>) -> Self {
        ToolCallReader {
            tools,
            ..ToolCallReader::new()
        }
    }

    /// Assistant text; kept only before the first tool call.
    pub fn text(&mut self, text: &str) -> Vec<ModelDelta> {
        if self.first.is_some() || text.is_empty() {
            return Vec::new();
        }
        vec![ModelDelta::Message(text.to_owned())]
    }

    /// One piece of a tool call.
    pub fn call(&mut self, piece: ToolCallPiece<'_>) -> Vec<ModelDelta> {
        let first = *self.first.get_or_insert(piece.index);
        if piece.index != first {
            return Vec::new();
        }
        if let (Arguments::Waiting(name), Some(more)) = (&mut self.arguments, piece.name) {
            name.push_str(more);
        }
        let Some(arguments) = piece.arguments.filter(|a| !a.is_empty()) else {
            return Vec::new();
        };
        if let Arguments::Waiting(name) = &self.arguments {
            self.arguments = if let Some(tool) = self.offered(name) {
                Arguments::Offered(tool, String::new())
            } else if matches!(name.as_str(), "python" | "functions") {
                self.language = Some("python".to_owned());
                Arguments::Raw
            } else {
                Arguments::Json(ArgumentsScanner::new())
            };
        }
        match &mut self.arguments {
            Arguments::Offered(_, gathered) => {
                gathered.push_str(arguments);
                Vec::new()
            }
            Arguments::Raw => self.code(arguments.to_owned()),
            Arguments::Json(scanner) => {
                self.raw.push_str(arguments);
                let delta = scanner.push(arguments);
                if let Some(language) = delta.language {
                    self.language.get_or_insert(language);
                }
                self.code(delta.code)
            }
            Arguments::Waiting(_) => Vec::new(),
        }
    }

    /// One OpenAI chat-completions `choices[0].delta` object.
    pub fn push(&mut self, delta: &Value) -> Vec<ModelDelta> {
        let mut out = self.text(delta.get("content").and_then(Value::as_str).unwrap_or(""));
        let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) else {
            return out;
        };
        for call in calls {
            let function = call.get("function");
            out.extend(
                self.call(ToolCallPiece {
                    index: call.get("index").and_then(Value::as_u64).unwrap_or(0),
                    name: function.and_then(|f| f.get("name")).and_then(Value::as_str),
                    arguments: function
                        .and_then(|f| f.get("arguments"))
                        .and_then(Value::as_str),
                }),
            );
        }
        out
    }

    /// Ends the reply. Code whose language never came is Python; arguments that were not a
    /// JSON object are read once more, leniently (the original's partial-JSON repair).
    pub fn finish(&mut self) -> Vec<ModelDelta> {
        let scanner = match &self.arguments {
            Arguments::Json(scanner) => scanner,
            Arguments::Offered(tool, gathered) => return self.offered_call(*tool, gathered),
            // A call of an offered tool with no arguments at all.
            Arguments::Waiting(name) => match self.offered(name) {
                Some(tool) => return self.offered_call(tool, ""),
                None => return Vec::new(),
            },
            Arguments::Raw => return Vec::new(),
        };
        if scanner.gave_up() && !self.emitted_any {
            let parsed = crate::partial_json::parse_partial(&self.raw);
            let field = |key: &str| {
                parsed
                    .as_ref()
                    .and_then(|p| p.get(key))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            if let Some(code) = field("code") {
                let language = field("language")
                    .map(|l| l.trim().to_lowercase())
                    .filter(|l| !l.is_empty())
                    .unwrap_or_else(|| "python".to_owned());
                self.language = Some(language);
                return self.code(code);
            }
            return Vec::new();
        }
        if self.language.is_none() && scanner.saw_code() {
            self.language = Some("python".to_owned());
            return self.code(String::new());
        }
        Vec::new()
    }

    /// Which offered tool `name` calls.
    fn offered(&self, name: &str) -> Option<usize> {
        self.tools.iter().position(|tool| tool.name == name.trim())
    }

    /// The code block of a whole call of offered tool `tool` with the JSON `arguments` (read
    /// leniently; arguments that are not an object are sent as none, and the server says what
    /// is missing).
    fn offered_call(&self, tool: usize, arguments: &str) -> Vec<ModelDelta> {
        let Some(tool) = self.tools.get(tool) else {
            return Vec::new();
        };
        let arguments = match serde_json::from_str::<Value>(arguments)
            .ok()
            .or_else(|| crate::partial_json::parse_partial(arguments))
        {
            Some(Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        vec![ModelDelta::Code {
            language: tool.language.clone(),
            code: oi_core::tools::call_code(&tool.name, &arguments),
        }]
    }

    /// Emits `more` code (with any held back) once the language is known.
    fn code(&mut self, more: String) -> Vec<ModelDelta> {
        let Some(language) = self.language.clone() else {
            self.held.push_str(&more);
            return Vec::new();
        };
        let mut code = std::mem::take(&mut self.held);
        code.push_str(&more);
        if code.is_empty() {
            return Vec::new();
        }
        self.emitted_any = true;
        vec![ModelDelta::Code { language, code }]
    }
}
#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(deltas: &[Value]) -> Vec<ModelDelta> {
        let mut reader = ToolCallReader::new();
        let mut out: Vec<ModelDelta> = deltas.iter().flat_map(|d| reader.push(d)).collect();
        out.extend(reader.finish());
        out
    }

    fn first(name: &str) -> Value {
        json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": ""}}]})
    }

    fn args(index: u64, piece: &str) -> Value {
        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    }

    fn code(language: &str, code: &str) -> ModelDelta {
        ModelDelta::Code {
            language: language.into(),
            code: code.into(),
        }
    }

    #[test]
    fn code_streams_once_language_is_known() {
        let out = run(&[
            json!({"content": "Sure."}),
            first("execute"),
            args(0, "{\"language\": \"Python\", \"co"),
            args(0, "de\": \"print("),
            args(0, "1)\\n\"}"),
            json!({"content": "after"}),
        ]);
        assert_eq!(
            out,
            vec![
                ModelDelta::Message("Sure.".into()),
                code("python", "print("),
                code("python", "1)\n")
            ]
        );
    }

    #[test]
    fn code_before_language_waits_for_it() {
        let out = run(&[
            first("execute"),
            args(0, "{\"code\": \"ls\", "),
            args(0, "\"language\": \"shell\"}"),
        ]);
        assert_eq!(out, vec![code("shell", "ls")]);
    }

    #[test]
    fn legacy_names_are_raw_python() {
        let out = run(&[first("python"), args(0, "import os\n"), args(0, "print(1)")]);
        assert_eq!(
            out,
            vec![code("python", "import os\n"), code("python", "print(1)")]
        );
    }

    #[test]
    fn only_the_first_call_counts() {
        let out = run(&[
            first("execute"),
            args(0, "{\"language\": \"python\", \"code\": \"a\"}"),
            json!({"tool_calls": [{"index": 1, "id": "call_2", "function": {"name": "execute", "arguments": "{\"language\": \"python\", \"code\": \"b\"}"}}]}),
        ]);
        assert_eq!(out, vec![code("python", "a")]);
    }

    #[test]
    fn missing_language_defaults_to_python_at_the_end() {
        assert_eq!(
            run(&[first("execute"), args(0, "{\"code\": \"x = 1\"}")]),
            vec![code("python", "x = 1")]
        );
    }

    #[test]
    fn a_call_of_an_offered_tool_becomes_one_block_in_its_language() {
        let tools = vec![oi_core::OfferedTool {
            name: "calc__add".into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
            language: "mcp".into(),
        }];
        let mut reader = ToolCallReader::offering(tools.clone());
        let mut out: Vec<ModelDelta> = [
            first("calc__add"),
            args(0, "{\"b\": 40, "),
            args(0, "\"a\": 2}"),
        ]
        .iter()
        .flat_map(|d| reader.push(d))
        .collect();
        out.extend(reader.finish());
        assert_eq!(
            out,
            [code(
                "mcp",
                r#"{"tool": "calc__add", "arguments": {"a": 2, "b": 40}}"#
            )]
        );
        // No arguments at all: an empty object.
        let mut reader = ToolCallReader::offering(tools);
        let mut out = reader.push(&first("calc__add"));
        out.extend(reader.finish());
        assert_eq!(
            out,
            [code("mcp", r#"{"tool": "calc__add", "arguments": {}}"#)]
        );
        // Without the offer the name is an ordinary (unknown) function.
        assert!(
            run(&[first("calc__add"), args(0, "{\"a\": 2}")])
                .iter()
                .all(|d| !matches!(d, ModelDelta::Code { language, .. } if language == "mcp"))
        );
    }
}
