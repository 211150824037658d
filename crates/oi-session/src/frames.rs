//! The edge where JSON meets the session: frames clients send are parsed once into typed
//! values (outgoing frames are written by oi-server's `sessions/wire.rs`, one typed struct).
//! Nothing behind this module reads JSON.

use serde::Deserialize;
use serde_json::Value;

/// One user chunk as a client sends it (spec c.5). The flags count when present, whatever
/// their value (as the original tests `"start" in chunk`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct UserChunk {
    /// `user` (or another role, refused when the input is taken).
    #[serde(default)]
    pub role: Option<String>,
    /// `message`, `image`, `command`, …
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// A sub-type such as `path` or `base64.png`.
    #[serde(default)]
    pub format: Option<String>,
    /// The payload: text; other JSON values are kept as their JSON text.
    #[serde(default, deserialize_with = "present")]
    pub content: Option<Value>,
    /// Who should see it.
    #[serde(default)]
    pub recipient: Option<String>,
    /// Opens a message.
    #[serde(default, deserialize_with = "flag")]
    pub start: bool,
    /// Closes the input: the turn starts.
    #[serde(default, deserialize_with = "flag")]
    pub end: bool,
}

/// `content: null` is present (empty text), unlike a missing `content`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A flag counts when its key is there, whatever the value.
fn flag<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Value::deserialize(d).map(|_| true)
}

impl UserChunk {
    /// The content as text (`null` is empty; numbers and objects are their JSON text).
    pub fn text(&self) -> Option<String> {
        self.content.as_ref().map(|value| match value {
            Value::String(text) => text.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        })
    }
}

/// A frame from a WebSocket client.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientFrame {
    /// `{"auth": KEY}` (a key that is not a string is no key).
    Auth(Option<String>),
    /// `{"ack": ID}` in acknowledge mode (an id that is not a string acknowledges nothing).
    Ack(Option<String>),
    /// An LMC user chunk.
    Chunk(UserChunk),
}

/// Why a frame could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Not JSON at all.
    #[error("malformed JSON frame: {0}")]
    Json(String),
    /// JSON, but not an object.
    #[error("a chunk must be a JSON object, not {0}")]
    NotAnObject(String),
    /// An object whose fields have the wrong types.
    #[error("invalid chunk: {0}")]
    Invalid(String),
}

/// Reads one text frame.
pub fn parse_client_frame(text: &str) -> Result<ClientFrame, FrameError> {
    let value: Value = serde_json::from_str(text).map_err(|e| FrameError::Json(e.to_string()))?;
    client_frame(value)
}

/// Reads one frame already parsed as JSON (the Python API passes dicts).
pub fn client_frame(value: Value) -> Result<ClientFrame, FrameError> {
    let Value::Object(mut object) = value else {
        let shown = shorten(&value.to_string());
        return Err(FrameError::NotAnObject(shown));
    };
    if let Some(key) = object.remove("auth") {
        return Ok(ClientFrame::Auth(key.as_str().map(str::to_owned)));
    }
    if let Some(id) = object.remove("ack") {
        return Ok(ClientFrame::Ack(id.as_str().map(str::to_owned)));
    }
    serde_json::from_value(Value::Object(object))
        .map(ClientFrame::Chunk)
        .map_err(|e| FrameError::Invalid(e.to_string()))
}

fn shorten(text: &str) -> String {
    if text.len() <= 200 {
        return text.to_owned();
    }
    let mut end = 200;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn frames_are_read_once_into_types() {
        assert_eq!(
            parse_client_frame(r#"{"auth": "k"}"#),
            Ok(ClientFrame::Auth(Some("k".into())))
        );
        assert_eq!(
            parse_client_frame(r#"{"ack": 3}"#),
            Ok(ClientFrame::Ack(None))
        );
        let ClientFrame::Chunk(chunk) =
            parse_client_frame(r#"{"role":"user","type":"message","start":false,"content":null}"#)
                .unwrap()
        else {
            panic!("a chunk")
        };
        assert!(chunk.start && !chunk.end);
        assert_eq!(chunk.text(), Some(String::new()));
        assert!(matches!(
            parse_client_frame("[1]"),
            Err(FrameError::NotAnObject(_))
        ));
        assert!(matches!(parse_client_frame("{"), Err(FrameError::Json(_))));
        assert!(matches!(
            parse_client_frame(r#"{"type": 5}"#),
            Err(FrameError::Invalid(_))
        ));
    }
}
