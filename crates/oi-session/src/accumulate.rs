//! Building user messages from streamed user chunks, as Open Interpreter's `accumulate`
//! (spec c.5): `start` opens a message (possibly type-less), `content` chunks of the same
//! type/format extend it, a chunk of another type/format opens the next part of a multi-part
//! input, `active_line` chunks are ignored.

use oi_core::{Content, Kind, Message, Role};

use crate::frames::UserChunk;

/// Why a user chunk could not be accumulated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccumulateError {
    /// A field has a value oi does not know.
    #[error("invalid `{field}` in chunk: {reason}")]
    BadField {
        /// The field.
        field: &'static str,
        /// What was wrong.
        reason: String,
    },
}

/// One message being built: the fields seen so far.
#[derive(Debug, Clone, Default, PartialEq)]
struct Partial {
    role: Option<String>,
    kind: Option<String>,
    format: Option<String>,
    content: String,
    recipient: Option<String>,
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

/// Roughly how many bytes a field holds in memory.
fn field_bytes(field: &Option<String>) -> usize {
    field.as_ref().map_or(0, |text| text.len() + 24)
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
    pub fn push(&mut self, chunk: &UserChunk) {
        if chunk.format.as_deref() == Some("active_line") {
            return;
        }
        let differs = |last: &Partial| {
            last.kind
                .as_ref()
                .is_some_and(|k| Some(k) != chunk.kind.as_ref())
                || last
                    .format
                    .as_ref()
                    .is_some_and(|f| Some(f) != chunk.format.as_ref())
        };
        let text = chunk.text();
        if let Some(text) = &text {
            if !chunk.start {
                if let Some(last) = self.parts.last_mut().filter(|last| !differs(last)) {
                    let mut added = 0;
                    if last.kind.is_none() {
                        added += field_bytes(&chunk.kind);
                        last.kind.clone_from(&chunk.kind);
                    }
                    if last.format.is_none() {
                        added += field_bytes(&chunk.format);
                        last.format.clone_from(&chunk.format);
                    }
                    added += text.len();
                    last.bytes += added;
                    self.bytes += added;
                    last.content.push_str(text);
                    return;
                }
            }
        } else if !chunk.start {
            // An `end` flag or a stray chunk: nothing to add.
            return;
        }
        let mut part = Partial {
            role: chunk.role.clone(),
            kind: chunk.kind.clone(),
            format: chunk.format.clone(),
            content: text.unwrap_or_default(),
            recipient: chunk.recipient.clone(),
            bytes: 0,
        };
        part.bytes = PART_OVERHEAD
            + part.content.len()
            + [&part.role, &part.kind, &part.format, &part.recipient]
                .into_iter()
                .map(field_bytes)
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

/// Reads a field into its LMC type; an unknown name says which field and which values exist.
fn field<T: serde::de::DeserializeOwned>(
    value: Option<String>,
    field: &'static str,
) -> Result<Option<T>, AccumulateError> {
    value
        .map(|v| {
            serde_json::from_value(serde_json::Value::String(v)).map_err(|e| {
                AccumulateError::BadField {
                    field,
                    reason: e.to_string(),
                }
            })
        })
        .transpose()
}

fn into_message(part: Partial) -> Result<Message, AccumulateError> {
    let role: Role = field(part.role, "role")?.unwrap_or(Role::User);
    let kind: Kind = field(part.kind, "type")?.unwrap_or(Kind::Message);
    let recipient = field(part.recipient, "recipient")?;
    Ok(Message {
        role,
        kind,
        format: part.format,
        content: Content::Text(part.content),
        recipient,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::{Value, json};

    fn chunk(value: Value) -> UserChunk {
        serde_json::from_value(value).unwrap()
    }

    fn feed(chunks: &[Value]) -> Vec<Message> {
        let mut acc = Accumulator::new();
        for value in chunks {
            acc.push(&chunk(value.clone()));
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
        acc.push(&chunk(json!({"role": "user", "start": true})));
        let empty = acc.bytes();
        assert!(empty >= PART_OVERHEAD);
        let text = "x".repeat(1000);
        acc.push(&chunk(json!({"role": "user", "content": text})));
        acc.push(&chunk(json!({"role": "user", "content": text})));
        assert_eq!(acc.bytes(), empty + 2000);
        acc.push(&chunk(
            json!({"role": "user", "type": "message", "content": "."}),
        ));
        assert!(acc.bytes() > empty + 2001, "the type counts");
        assert_eq!(acc.last_message_bytes(), acc.bytes());
        let format = "f".repeat(5000);
        acc.push(&chunk(
            json!({"role": "user", "type": "image", "format": format, "content": "a"}),
        ));
        assert!(acc.bytes() > empty + 7000, "a new part, with its fields");
        assert!(acc.last_message_bytes() > 5000 && acc.last_message_bytes() < 6000);
        acc.clear();
        assert_eq!((acc.bytes(), acc.is_empty()), (0, true));
    }

    #[test]
    fn bad_role_is_reported() {
        let mut acc = Accumulator::new();
        acc.push(&chunk(json!({"role": "robot", "content": "x"})));
        assert!(matches!(
            acc.take(),
            Err(AccumulateError::BadField { field: "role", .. })
        ));
    }
}
