//! Building user messages from streamed user chunks, as Open Interpreter's `accumulate`
//! (spec c.5): `start` opens a message (possibly type-less), `content` chunks of the same
//! type/format extend it, a chunk of another type/format opens the next part of a multi-part
//! input, `active_line` chunks are ignored.

use oi_core::{Content, Kind, Message, Role};
use serde_json::{Map, Value};

/// Why a user chunk could not be accumulated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccumulateError {
    /// The chunk is not a JSON object.
    #[error("a chunk must be a JSON object, not {0}")]
    NotAnObject(String),
    /// A field has a value oi does not know.
    #[error("invalid `{field}` in chunk: {reason}")]
    BadField {
        /// The field.
        field: &'static str,
        /// What was wrong.
        reason: String,
    },
}

/// One message being built: the JSON keys seen so far.
#[derive(Debug, Clone, Default, PartialEq)]
struct Partial {
    role: Option<Value>,
    kind: Option<Value>,
    format: Option<Value>,
    content: String,
    recipient: Option<Value>,
    /// What this part holds, in bytes (approximately).
    bytes: usize,
}

/// The user messages of one input, built chunk by chunk.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Accumulator {
    parts: Vec<Partial>,
    bytes: usize,
}

/// Bytes counted for every part besides its text (its place in memory).
const PART_OVERHEAD: usize = 128;

/// Roughly how many bytes `value` holds in memory.
fn value_bytes(value: &Value) -> usize {
    match value {
        Value::String(text) => text.len() + 24,
        Value::Array(items) => items.iter().map(value_bytes).sum::<usize>() + 24,
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| k.len() + value_bytes(v) + 32)
            .sum::<usize>(),
        _ => 16,
    }
}

fn as_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl Accumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Accumulator::default()
    }

    /// Whether nothing has been accumulated.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// Roughly how many bytes everything accumulated holds.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Roughly how many bytes the message being built (the last one) holds.
    pub fn last_message_bytes(&self) -> usize {
        self.parts.last().map_or(0, |p| p.bytes)
    }

    /// Drops everything accumulated.
    pub fn clear(&mut self) {
        self.parts.clear();
        self.bytes = 0;
    }

    /// Adds one user chunk (spec c.5 `accumulate`); chunks with neither `start` nor `content`
    /// add nothing.
    pub fn push(&mut self, chunk: &Map<String, Value>) {
        if chunk.get("format").and_then(Value::as_str) == Some("active_line") {
            return;
        }
        let kind = chunk.get("type").cloned();
        let format = chunk.get("format").cloned();
        let differs = |last: &Partial| {
            last.kind.as_ref().is_some_and(|k| Some(k) != kind.as_ref())
                || last
                    .format
                    .as_ref()
                    .is_some_and(|f| Some(f) != format.as_ref())
        };
        let is_start = chunk.contains_key("start");
        if let Some(content) = chunk.get("content") {
            if !is_start {
                if let Some(last) = self.parts.last_mut().filter(|last| !differs(last)) {
                    let mut added = 0;
                    if last.kind.is_none() {
                        added += kind.as_ref().map_or(0, value_bytes);
                        last.kind = kind;
                    }
                    if last.format.is_none() {
                        added += format.as_ref().map_or(0, value_bytes);
                        last.format = format;
                    }
                    let text = as_text(content);
                    added += text.len();
                    last.bytes += added;
                    self.bytes += added;
                    last.content.push_str(&text);
                    return;
                }
            }
        } else if !is_start {
            // An `end` flag or a stray chunk: nothing to add.
            return;
        }
        let mut part = Partial {
            role: chunk.get("role").cloned(),
            kind,
            format,
            content: chunk.get("content").map(as_text).unwrap_or_default(),
            recipient: chunk.get("recipient").cloned(),
            bytes: 0,
        };
        part.bytes = PART_OVERHEAD
            + part.content.len()
            + [&part.role, &part.kind, &part.format, &part.recipient]
                .into_iter()
                .flatten()
                .map(value_bytes)
                .sum::<usize>();
        self.bytes += part.bytes;
        self.parts.push(part);
    }

    /// Takes the accumulated messages, leaving the accumulator empty. A part with no type is a
    /// `message`, with no role a `user` message.
    pub fn take(&mut self) -> Result<Vec<Message>, AccumulateError> {
        let parts = std::mem::take(&mut self.parts);
        self.bytes = 0;
        parts.into_iter().map(into_message).collect()
    }
}

fn field<T: serde::de::DeserializeOwned>(
    value: Option<Value>,
    field: &'static str,
) -> Result<Option<T>, AccumulateError> {
    value
        .filter(|v| !v.is_null())
        .map(|v| {
            serde_json::from_value(v).map_err(|e| AccumulateError::BadField {
                field,
                reason: e.to_string(),
            })
        })
        .transpose()
}

fn into_message(part: Partial) -> Result<Message, AccumulateError> {
    let role: Role = field(part.role, "role")?.unwrap_or(Role::User);
    let kind: Kind = field(part.kind, "type")?.unwrap_or(Kind::Message);
    let format: Option<String> = field(part.format, "format")?;
    let recipient = field(part.recipient, "recipient")?;
    Ok(Message {
        role,
        kind,
        format,
        content: Content::Text(part.content),
        recipient,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn feed(chunks: &[Value]) -> Vec<Message> {
        let mut acc = Accumulator::new();
        for chunk in chunks {
            acc.push(chunk.as_object().unwrap());
        }
        acc.take().unwrap()
    }

    #[test]
    fn canonical_multi_part_input() {
        let messages = feed(&[
            json!({"role": "user", "start": true}),
            json!({"role": "user", "type": "message", "content": "Analyze this image:"}),
            json!({"role": "user", "type": "image", "format": "path", "content": "a.jpg"}),
            json!({"role": "user", "end": true}),
        ]);
        assert_eq!(
            messages,
            vec![
                Message::user("Analyze this image:"),
                Message::new(Role::User, Kind::Image, "a.jpg").with_format("path"),
            ]
        );
    }

    #[test]
    fn typed_start_and_content_pieces_join() {
        let messages = feed(&[
            json!({"role": "user", "type": "message", "start": true}),
            json!({"role": "user", "type": "message", "content": "Hello, "}),
            json!({"role": "user", "type": "message", "content": "World"}),
            json!({"role": "user", "type": "message", "end": true}),
        ]);
        assert_eq!(messages, vec![Message::user("Hello, World")]);
    }

    #[test]
    fn command_message() {
        let messages = feed(&[
            json!({"role": "user", "type": "command", "start": true}),
            json!({"role": "user", "type": "command", "content": "go"}),
            json!({"role": "user", "type": "command", "end": true}),
        ]);
        assert_eq!(
            messages,
            vec![Message::new(Role::User, Kind::Command, "go")]
        );
    }

    #[test]
    fn active_line_ignored_and_content_without_start_opens_a_message() {
        let messages = feed(&[
            json!({"role": "user", "type": "console", "format": "active_line", "content": 1}),
            json!({"role": "user", "type": "message", "content": "hi"}),
        ]);
        assert_eq!(messages, vec![Message::user("hi")]);
    }

    #[test]
    fn sizes_are_counted_and_cleared() {
        let mut acc = Accumulator::new();
        acc.push(json!({"role": "user", "start": true}).as_object().unwrap());
        let empty = acc.bytes();
        assert!(empty >= PART_OVERHEAD);
        let text = "x".repeat(1000);
        acc.push(
            json!({"role": "user", "content": text})
                .as_object()
                .unwrap(),
        );
        acc.push(
            json!({"role": "user", "content": text})
                .as_object()
                .unwrap(),
        );
        assert_eq!(acc.bytes(), empty + 2000);
        acc.push(
            json!({"role": "user", "type": "message", "content": "."})
                .as_object()
                .unwrap(),
        );
        assert!(acc.bytes() > empty + 2001, "the type counts");
        assert_eq!(acc.last_message_bytes(), acc.bytes());
        let format = "f".repeat(5000);
        acc.push(
            json!({"role": "user", "type": "image", "format": format, "content": "a"})
                .as_object()
                .unwrap(),
        );
        assert!(acc.bytes() > empty + 7000, "a new part, with its fields");
        assert!(acc.last_message_bytes() > 5000 && acc.last_message_bytes() < 6000);
        acc.clear();
        assert_eq!((acc.bytes(), acc.is_empty()), (0, true));
    }

    #[test]
    fn bad_role_is_reported() {
        let mut acc = Accumulator::new();
        acc.push(
            json!({"role": "robot", "content": "x"})
                .as_object()
                .unwrap(),
        );
        assert!(matches!(
            acc.take(),
            Err(AccumulateError::BadField { field: "role", .. })
        ));
    }
}
