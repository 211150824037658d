//! Text-mode decoding: fenced code blocks (through [`FenceParser`]) plus tool calls that local
//! models print as JSON text (spec i.9). A reply that is
//! ```` ```json {"name":"execute","arguments":{"language":…,"code":…}} ``` ````, a bare
//! `{"language":…,"code":…}` or `{"name":"execute","arguments":…}` object, or Qwen's
//! `<tool_call>{…}</tool_call>` becomes [`ModelDelta::Code`], not a message.
//!
//! Costs: a ```` ```json ```` block is held until it closes (so it can be judged whole), and a
//! reply whose first non-blank character is `{` (or that starts with `<tool_call>`) is held
//! until the JSON value is complete. Every other reply streams as before. Held text longer
//! than a few kilobytes is re-read on the schedule of [`Reparse`] (linear time, not quadratic).

use crate::fence::FenceParser;
use oi_core::ModelDelta;
use oi_core::tools::OfferedTool;
use serde_json::Value;

use crate::reparse::Reparse;

/// Opening tag of Qwen/Hermes-style tool calls.
const TOOL_CALL_OPEN: &str = "<tool_call>";
/// Closing tag of Qwen/Hermes-style tool calls.
const TOOL_CALL_CLOSE: &str = "</tool_call>";

/// What is known about the message text at the start of the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lead {
    /// Only blanks so far.
    Undecided,
    /// It may be a JSON tool call: held.
    MaybeJson,
    /// Ordinary text: streamed.
    Plain,
}

/// Incremental text-mode decoder; same contract as [`FenceParser`].
#[derive(Debug, Clone)]
pub struct TextDecoder {
    parser: FenceParser,
    lead: Lead,
    held: String,
    /// Bytes at the start of `held` known to be whitespace.
    held_blank: usize,
    json_block: Option<String>,
    done: bool,
    schedule: Reparse,
    /// Tools offered beside `execute` (`SERVER__TOOL`, language `mcp`): a JSON call of one
    /// is its code block.
    offered: Vec<OfferedTool>,
}

impl Default for TextDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl TextDecoder {
    /// A decoder at the start of a reply.
    pub fn new() -> Self {
        TextDecoder {
            parser: FenceParser::with_json_blocks(),
            lead: Lead::Undecided,
            held: String::new(),
            held_blank: 0,
            json_block: None,
            done: false,
            schedule: Reparse::default(),
            offered: Vec::new(),
        }
    }

    /// A decoder that also reads a JSON call of one of `offered` (`{"name": "calc__add",
    /// "arguments": {…}}`, as local models print tool calls) as that tool's code block.
    pub fn offering(offered: Vec<OfferedTool>) -> Self {
        TextDecoder {
            offered,
            ..TextDecoder::new()
        }
    }

    /// Whether the reply is complete (one code block, or one JSON tool call, ends it).
    pub fn is_done(&self) -> bool {
        self.done || self.parser.is_done()
    }

    /// Feeds the next piece of the reply and returns what is now certain.
    pub fn push(&mut self, text: &str) -> Vec<ModelDelta> {
        if self.is_done() {
            return Vec::new();
        }
        let deltas = self.parser.push(text);
        let mut out = Vec::new();
        self.take(deltas, &mut out);
        while self.parser.is_done() && self.close_json_block(&mut out) {}
        out
    }

    /// Ends the reply: whatever was held back is released.
    pub fn finish(&mut self) -> Vec<ModelDelta> {
        let mut out = Vec::new();
        if self.is_done() {
            return out;
        }
        let deltas = self.parser.finish();
        self.take(deltas, &mut out);
        while self.close_json_block(&mut out) {
            let deltas = self.parser.finish();
            self.take(deltas, &mut out);
        }
        if self.lead == Lead::MaybeJson {
            let held = std::mem::take(&mut self.held);
            match call_from_text(&held, &self.offered) {
                Some((language, code)) => out.push(ModelDelta::Code { language, code }),
                None => out.push(ModelDelta::Message(held)),
            }
        } else if !self.held.is_empty() {
            out.push(ModelDelta::Message(std::mem::take(&mut self.held)));
        }
        self.done = true;
        out
    }

    fn take(&mut self, deltas: Vec<ModelDelta>, out: &mut Vec<ModelDelta>) {
        for delta in deltas {
            if self.done {
                return;
            }
            match delta {
                ModelDelta::Message(text) => self.message(text, out),
                ModelDelta::Code { language, code } => {
                    self.release_held(out);
                    if is_json_language(&language) {
                        self.json_block
                            .get_or_insert_with(String::new)
                            .push_str(&code);
                    } else {
                        out.push(ModelDelta::Code { language, code });
                    }
                }
                ModelDelta::Usage(usage) => out.push(ModelDelta::Usage(usage)),
            }
        }
    }

    fn message(&mut self, text: String, out: &mut Vec<ModelDelta>) {
        if self.lead == Lead::Plain {
            out.push(ModelDelta::Message(text));
            return;
        }
        self.held.push_str(&text);
        let unread = &self.held[self.held_blank..];
        let start = unread.trim_start();
        self.held_blank += unread.len() - start.len();
        self.lead = if start.is_empty() {
            Lead::Undecided
        } else if start.starts_with('{')
            || start.starts_with(TOOL_CALL_OPEN)
            || TOOL_CALL_OPEN.starts_with(start)
        {
            Lead::MaybeJson
        } else {
            Lead::Plain
        };
        match self.lead {
            Lead::Plain => self.release_held(out),
            Lead::MaybeJson => match self
                .schedule
                .read(self.held.len(), || complete_json(&self.held, &self.offered))
            {
                None | Some(JsonState::Incomplete) => {}
                Some(JsonState::ToolCall(language, code)) => {
                    self.held.clear();
                    out.push(ModelDelta::Code { language, code });
                    self.done = true;
                }
                Some(JsonState::NotToolCall) => {
                    self.lead = Lead::Plain;
                    self.release_held(out);
                }
            },
            Lead::Undecided => {}
        }
    }

    /// Held text turns out to be ordinary text: send it.
    fn release_held(&mut self, out: &mut Vec<ModelDelta>) {
        self.lead = Lead::Plain;
        self.held_blank = 0;
        if !self.held.is_empty() {
            out.push(ModelDelta::Message(std::mem::take(&mut self.held)));
        }
    }

    /// A `json` block ended: a tool call is the reply's code; other JSON is part of the
    /// message (an example is not run), and the reply is read on after it — whether it was.
    fn close_json_block(&mut self, out: &mut Vec<ModelDelta>) -> bool {
        let Some(block) = self.json_block.take() else {
            return false;
        };
        if let Some((language, code)) = call_from_text(&block, &self.offered) {
            out.push(ModelDelta::Code { language, code });
            self.done = true;
            return false;
        }
        out.push(ModelDelta::Message(format!("```json\n{block}\n```")));
        let rest = self.parser.take_rest();
        self.parser = FenceParser::with_json_blocks();
        let deltas = self.parser.push(&rest);
        self.take(deltas, out);
        true
    }
}

fn is_json_language(language: &str) -> bool {
    matches!(language, "json" | "jsonc" | "json5" | "tool_call")
}

enum JsonState {
    Incomplete,
    ToolCall(String, String),
    NotToolCall,
}

/// Whether the held text is a complete JSON value yet, and if so what it is.
fn complete_json(text: &str, offered: &[OfferedTool]) -> JsonState {
    if TOOL_CALL_OPEN.starts_with(text.trim()) {
        return JsonState::Incomplete;
    }
    let body = strip_tool_call_tags(text);
    if body.is_empty() {
        return JsonState::Incomplete;
    }
    let mut values = serde_json::Deserializer::from_str(body).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => {
            match tool_call_from_value(&value).or_else(|| offered_value(&value, offered)) {
                Some((language, code)) => JsonState::ToolCall(language, code),
                None => JsonState::NotToolCall,
            }
        }
        Some(Err(error)) if error.is_eof() => JsonState::Incomplete,
        _ => JsonState::NotToolCall,
    }
}

fn strip_tool_call_tags(text: &str) -> &str {
    let text = text.trim();
    let text = text
        .strip_prefix(TOOL_CALL_OPEN)
        .unwrap_or(text)
        .trim_start();
    match text.find(TOOL_CALL_CLOSE) {
        Some(end) => text[..end].trim_end(),
        None => text,
    }
}

/// `(language, code)` when `text` is a JSON tool call of `execute`, or of a tool in `offered`
/// (its language and [`oi_core::tools::call_code`]).
fn call_from_text(text: &str, offered: &[OfferedTool]) -> Option<(String, String)> {
    tool_call_from_text(text).or_else(|| offered_call(text, offered))
}

/// `(language, code)` when `text` is `{"name": NAME, "arguments": {…}}` for an offered tool.
fn offered_call(text: &str, offered: &[OfferedTool]) -> Option<(String, String)> {
    if offered.is_empty() {
        return None;
    }
    let body = strip_tool_call_tags(text);
    let value = serde_json::Deserializer::from_str(body)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    offered_value(&value, offered)
}

/// [`offered_call`] of a parsed value (also `{"function": {…}}`; arguments as an object or
/// as JSON text).
fn offered_value(value: &Value, offered: &[OfferedTool]) -> Option<(String, String)> {
    let object = value.as_object()?;
    let object = match object.get("function").and_then(Value::as_object) {
        Some(function) => function,
        None => object,
    };
    let name = object.get("name").and_then(Value::as_str)?;
    let tool = offered.iter().find(|t| t.name == name)?;
    let arguments = match object.get("arguments").or_else(|| object.get("parameters")) {
        Some(Value::String(text)) => serde_json::from_str::<Value>(text).ok()?,
        Some(other) => other.clone(),
        None => Value::Object(serde_json::Map::new()),
    };
    let arguments = arguments.as_object()?;
    Some((
        tool.language.clone(),
        oi_core::tools::call_code(&tool.name, arguments),
    ))
}

/// `(language, code)` when `text` is a JSON tool call of `execute` (see the module docs).
pub fn tool_call_from_text(text: &str) -> Option<(String, String)> {
    let body = strip_tool_call_tags(text);
    let value = serde_json::Deserializer::from_str(body)
        .into_iter::<Value>()
        .next()?
        .ok()?;
    tool_call_from_value(&value)
}

fn tool_call_from_value(value: &Value) -> Option<(String, String)> {
    let object = value.as_object()?;
    if let (Some(language), Some(code)) = (
        object.get("language").and_then(Value::as_str),
        object.get("code").and_then(Value::as_str),
    ) {
        let language = language.trim().to_lowercase();
        return (!language.is_empty()).then(|| (language, code.to_owned()));
    }
    if let Some(function) = object.get("function") {
        return tool_call_from_value(function);
    }
    let name = object.get("name").and_then(Value::as_str).unwrap_or("");
    if !matches!(name, "" | "execute" | "functions.execute") {
        return None;
    }
    let arguments = object
        .get("arguments")
        .or_else(|| object.get("parameters"))?;
    match arguments {
        Value::String(text) => tool_call_from_text(text),
        other => tool_call_from_value(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A local model prints its call of an offered tool as JSON text: it becomes the tool's
    /// `mcp` block; a name not offered stays text.
    #[test]
    fn a_json_call_of_an_offered_tool_is_its_block() {
        let offered = vec![OfferedTool {
            name: "calc__add".to_owned(),
            description: "adds".to_owned(),
            parameters: serde_json::json!({"type": "object"}),
            language: "mcp".to_owned(),
        }];
        let reply = "```json\n{\"name\": \"calc__add\", \"arguments\": {\"a\": 2, \"b\": 40}}\n```";
        let mut decoder = TextDecoder::offering(offered.clone());
        let mut out = decoder.push(reply);
        out.extend(decoder.finish());
        assert_eq!(
            out,
            vec![ModelDelta::Code {
                language: "mcp".to_owned(),
                code: "{\"tool\": \"calc__add\", \"arguments\": {\"a\": 2, \"b\": 40}}".to_owned(),
            }]
        );
        let bare = "{\"name\": \"calc__add\", \"arguments\": \"{\\\"a\\\": 1}\"}";
        let mut decoder = TextDecoder::offering(offered.clone());
        let mut out = decoder.push(bare);
        out.extend(decoder.finish());
        assert_eq!(
            out,
            vec![ModelDelta::Code {
                language: "mcp".to_owned(),
                code: "{\"tool\": \"calc__add\", \"arguments\": {\"a\": 1}}".to_owned(),
            }]
        );
        let other = "{\"name\": \"calc__sub\", \"arguments\": {}}";
        let mut decoder = TextDecoder::offering(offered);
        let mut out = decoder.push(other);
        out.extend(decoder.finish());
        assert_eq!(out, vec![ModelDelta::Message(other.to_owned())]);
    }

    fn decode_in_pieces(text: &str, size: usize) -> Vec<ModelDelta> {
        let mut decoder = TextDecoder::new();
        let mut out = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(size) {
            out.extend(decoder.push(&piece.iter().collect::<String>()));
            if decoder.is_done() {
                return merge(out);
            }
        }
        out.extend(decoder.finish());
        merge(out)
    }

    /// Adjacent deltas of the same kind joined.
    fn merge(deltas: Vec<ModelDelta>) -> Vec<ModelDelta> {
        let mut out: Vec<ModelDelta> = Vec::new();
        for delta in deltas {
            match (out.last_mut(), delta) {
                (Some(ModelDelta::Message(a)), ModelDelta::Message(b)) => a.push_str(&b),
                (
                    Some(ModelDelta::Code { language, code }),
                    ModelDelta::Code {
                        language: l,
                        code: c,
                    },
                ) if *language == l => code.push_str(&c),
                (_, delta) => out.push(delta),
            }
        }
        out
    }

    fn code(language: &str, code: &str) -> ModelDelta {
        ModelDelta::Code {
            language: language.into(),
            code: code.into(),
        }
    }

    #[test]
    fn fenced_json_tool_call_runs_as_code() {
        let reply = "```json\n{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"print('hello world')\"}}\n```\nmore";
        for size in [1, 2, 3, 7, 1000] {
            assert_eq!(
                decode_in_pieces(reply, size),
                vec![code("python", "print('hello world')")],
                "size {size}"
            );
        }
    }

    #[test]
    fn bare_json_and_tool_call_tags() {
        for reply in [
            "{\"language\": \"Python\", \"code\": \"print(1)\"}",
            "  {\"name\":\"execute\",\"arguments\":\"{\\\"language\\\":\\\"python\\\",\\\"code\\\":\\\"print(1)\\\"}\"}",
            "<tool_call>\n{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"print(1)\"}}\n</tool_call>",
            "{\"function\": {\"name\": \"execute\", \"parameters\": {\"language\": \"python\", \"code\": \"print(1)\"}}} trailing",
        ] {
            for size in [1, 4, 1000] {
                assert_eq!(
                    decode_in_pieces(reply, size),
                    vec![code("python", "print(1)")],
                    "{reply} / {size}"
                );
            }
        }
    }

    #[test]
    fn other_json_and_text_are_untouched() {
        assert_eq!(
            decode_in_pieces("{\"a\": 1} is JSON", 3),
            vec![ModelDelta::Message("{\"a\": 1} is JSON".into())]
        );
        assert_eq!(
            decode_in_pieces("{not json", 3),
            vec![ModelDelta::Message("{not json".into())]
        );
        assert_eq!(
            decode_in_pieces("```json\n{\"a\": 1}\n```", 2),
            vec![ModelDelta::Message("```json\n{\"a\": 1}\n```".into())]
        );
        // JSON that is not a tool call is an example: shown, not run, and the reply goes on
        // (its next block is the code).
        for size in [1, 3, 1000] {
            assert_eq!(
                decode_in_pieces(
                    "Config:\n```json\n{\"a\": 1}\n```\nthen\n```python\nprint(3)\n```",
                    size
                ),
                vec![
                    ModelDelta::Message("Config:\n```json\n{\"a\": 1}\n```\nthen\n".into()),
                    code("python", "print(3)")
                ],
                "size {size}"
            );
        }
        assert_eq!(
            decode_in_pieces("Sure:\n```python\nprint(2)\n```", 2),
            vec![
                ModelDelta::Message("Sure:\n".into()),
                code("python", "print(2)")
            ]
        );
        assert_eq!(
            decode_in_pieces("  plain answer", 1),
            vec![ModelDelta::Message("  plain answer".into())]
        );
    }

    #[test]
    fn unfinished_json_block_is_still_judged() {
        assert_eq!(
            decode_in_pieces("```json\n{\"language\": \"shell\", \"code\": \"ls\"}", 5),
            vec![code("shell", "ls")]
        );
    }
}
