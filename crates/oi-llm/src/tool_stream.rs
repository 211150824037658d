//! Tool mode: turns streamed chat-completion deltas into [`ModelDelta`]s (spec b.4).
//!
//! Tool-call deltas are accumulated by `index` (the id and name come only in the first one).
//! Only the first tool call is used, as in the original. Its arguments are parsed as partial
//! JSON on every delta, so code is emitted piece by piece as soon as `language` is known.
//! The legacy hallucinated names `python` and `functions` mean the raw arguments are Python
//! code. Text before the first tool call is a message; text after it is dropped.
//!
//! Re-parsing the arguments follows [`Reparse`]: on every delta while they are short, then
//! when they grew by an eighth or a tenth of a second passed, so a long (or endless) call costs
//! linear time; the end of the reply always reads them whole.

use std::collections::BTreeMap;

use oi_core::ModelDelta;
use serde_json::Value;

use crate::partial_json::parse_partial;
use crate::reparse::Reparse;

#[derive(Debug, Default)]
struct Call {
    name: String,
    arguments: String,
}

/// Accumulates the deltas of one streamed reply in tool mode.
#[derive(Debug, Default)]
pub struct ToolCallReader {
    calls: BTreeMap<u64, Call>,
    first: Option<u64>,
    language: Option<String>,
    emitted: String,
    schedule: Reparse,
}

impl ToolCallReader {
    /// A reader at the start of a reply.
    pub fn new() -> Self {
        ToolCallReader::default()
    }

    /// Feeds one `choices[0].delta` object and returns what is new.
    pub fn push(&mut self, delta: &Value) -> Vec<ModelDelta> {
        let mut out = Vec::new();
        if self.first.is_none() {
            if let Some(text) = delta
                .get("content")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                out.push(ModelDelta::Message(text.to_owned()));
            }
        }
        let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) else {
            return out;
        };
        for call in calls {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            self.first.get_or_insert(index);
            let entry = self.calls.entry(index).or_default();
            if let Some(function) = call.get("function") {
                if let Some(name) = function.get("name").and_then(Value::as_str) {
                    entry.name.push_str(name);
                }
                if let Some(arguments) = function.get("arguments").and_then(Value::as_str) {
                    entry.arguments.push_str(arguments);
                }
            }
        }
        out.extend(self.code_delta(false));
        out
    }

    /// Ends the reply. A call whose arguments carry code but never named a language is taken
    /// as Python.
    pub fn finish(&mut self) -> Vec<ModelDelta> {
        self.code_delta(true).into_iter().collect()
    }

    /// The new suffix of the first call's code, if any.
    fn code_delta(&mut self, at_end: bool) -> Option<ModelDelta> {
        let call = self.calls.get(&self.first?)?;
        if call.arguments.is_empty() {
            return None;
        }
        if matches!(call.name.as_str(), "python" | "functions") {
            let language = self
                .language
                .get_or_insert_with(|| "python".to_owned())
                .clone();
            let new = call.arguments.get(self.emitted.len()..)?;
            if new.is_empty() {
                return None;
            }
            self.emitted.push_str(new);
            return Some(ModelDelta::Code {
                language,
                code: new.to_owned(),
            });
        }
        let parsed = if at_end {
            parse_partial(&call.arguments)
        } else {
            self.schedule
                .read(call.arguments.len(), || parse_partial(&call.arguments))?
        };
        let code = {
            let parsed = parsed?;
            let code = parsed.get("code").and_then(Value::as_str);
            if self.language.is_none() {
                let language = parsed
                    .get("language")
                    .and_then(Value::as_str)
                    .map(|l| l.trim().to_lowercase())
                    .filter(|l| !l.is_empty());
                self.language = match (language, code) {
                    (Some(language), Some(_)) => Some(language),
                    (None, Some(_)) if at_end => Some("python".to_owned()),
                    _ => None,
                };
            }
            code?.to_owned()
        };
        let language = self.language.clone()?;
        let new = code.strip_prefix(self.emitted.as_str())?;
        if new.is_empty() {
            return None;
        }
        let delta = ModelDelta::Code {
            language,
            code: new.to_owned(),
        };
        self.emitted = code;
        Some(delta)
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
}
