//! LMC ("Language Model Computer") messages and chunks, exactly as Open Interpreter 0.4.3 puts
//! them on the wire (spec a.1–a.5).
//!
//! A [`Message`] is what is stored in the conversation; a [`Chunk`] is a piece of a message as
//! it streams, possibly a `start`/`end` flag that carries no content.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Who a message or chunk comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person using the interpreter.
    User,
    /// The language model.
    Assistant,
    /// The machine that runs code (console output, images, confirmations).
    Computer,
    /// The synthetic first message sent to the model.
    System,
    /// Server status and error chunks.
    Server,
}

/// The `type` of a message or chunk (spec a.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Plain text.
    Message,
    /// Code written by the model (format = language) or rich code output (`html`, `javascript`).
    Code,
    /// Console output (`output`) or the running line (`active_line`).
    Console,
    /// Asks the consumer to approve a code block before it runs.
    Confirmation,
    /// A judge-layer review (`safe`, `warning`, `unsafe`); never stored.
    Review,
    /// An image (`base64`, `base64.png`, `base64.jpeg`, `path`, `description`).
    Image,
    /// A file reference (a path).
    File,
    /// A user command: `stop` or `go`.
    Command,
    /// A server status, e.g. `complete`.
    Status,
    /// An error report.
    Error,
    /// An audio reference (accepted, never sent to a model).
    Audio,
}

/// Who should see a piece of output (spec a.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Recipient {
    /// Shown to the person only, never sent to the model.
    User,
    /// Sent to the model only, not shown.
    Assistant,
}

/// The code described by a confirmation chunk:
/// `{"type": "code", "format": LANGUAGE, "content": CODE}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeContent {
    /// Always `"code"`.
    #[serde(rename = "type")]
    pub kind: CodeTag,
    /// The language.
    pub format: String,
    /// The code.
    pub content: String,
}

/// The fixed tag `"code"` inside a confirmation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodeTag {
    /// `"code"`.
    Code,
}

/// The `content` of a message or chunk: a string, an active-line number, `null`, or the code
/// object of a confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text (the common case).
    Text(String),
    /// A 1-based line number (`active_line`).
    Line(u64),
    /// `null` (`active_line` when a run has finished).
    Null,
    /// The code object of a confirmation chunk.
    Code(CodeContent),
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

impl Content {
    /// The text, if this is text.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(text) => Some(text),
            _ => None,
        }
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::Text(text.to_owned())
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::Text(text)
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(text) => serializer.serialize_str(text),
            Content::Line(line) => serializer.serialize_u64(*line),
            Content::Null => serializer.serialize_none(),
            Content::Code(code) => code.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        match value {
            serde_json::Value::String(text) => Ok(Content::Text(text)),
            serde_json::Value::Null => Ok(Content::Null),
            serde_json::Value::Number(number) => number.as_u64().map(Content::Line).ok_or_else(|| {
                D::Error::custom(format!(
                    "`content` {number} is not a valid line number: use a positive integer"
                ))
            }),
            serde_json::Value::Object(_) => serde_json::from_value(value)
                .map(Content::Code)
                .map_err(|e| {
                    D::Error::custom(format!(
                        "object `content` must be {{\"type\":\"code\",\"format\":LANGUAGE,\"content\":CODE}}: {e}"
                    ))
                }),
            other => Err(D::Error::custom(format!(
                "`content` must be a string, a line number, null or a code object, not {other}"
            ))),
        }
    }
}

/// One stored LMC message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Who it is from.
    pub role: Role,
    /// What it is.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// Its sub-type (language, `output`, `base64.png`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Its payload.
    #[serde(default)]
    pub content: Content,
    /// Who should see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipient: Option<Recipient>,
}

impl Message {
    /// A message with no format.
    pub fn new(role: Role, kind: Kind, content: impl Into<Content>) -> Self {
        Message {
            role,
            kind,
            format: None,
            content: content.into(),
            recipient: None,
        }
    }

    /// A user text message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::new(Role::User, Kind::Message, text.into())
    }

    /// An assistant text message.
    pub fn assistant(text: impl Into<String>) -> Self {
        Message::new(Role::Assistant, Kind::Message, text.into())
    }

    /// An assistant code message.
    pub fn code(language: impl Into<String>, code: impl Into<String>) -> Self {
        Message::new(Role::Assistant, Kind::Code, code.into()).with_format(language)
    }

    /// A computer console output message.
    pub fn console_output(text: impl Into<String>) -> Self {
        Message::new(Role::Computer, Kind::Console, text.into()).with_format("output")
    }

    /// The same message with a format.
    pub fn with_format(mut self, format: impl Into<String>) -> Self {
        self.format = Some(format.into());
        self
    }

    /// The text content, or `""` when the content is not text.
    pub fn text(&self) -> &str {
        self.content.as_text().unwrap_or("")
    }

    /// Parses one message from JSON, with an error that says what was wrong.
    pub fn from_json(json: &str) -> Result<Self, LmcError> {
        serde_json::from_str(json).map_err(|e| LmcError::Invalid(e.to_string()))
    }

    /// Parses a JSON list of messages (a saved conversation).
    pub fn list_from_json(json: &str) -> Result<Vec<Self>, LmcError> {
        serde_json::from_str(json).map_err(|e| LmcError::Invalid(e.to_string()))
    }
}

/// A streamed piece of a message, or a `start`/`end` flag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chunk {
    /// Who it is from.
    pub role: Role,
    /// What it is; user chunks may leave it out on `start`/`end`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    /// Its sub-type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Its payload; absent on flags (`null` is [`Content::Null`]).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present_content"
    )]
    pub content: Option<Content>,
    /// Who should see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recipient: Option<Recipient>,
    /// Opens a run of chunks of one role/type(/format).
    #[serde(default, skip_serializing_if = "is_false")]
    pub start: bool,
    /// Closes the run opened by `start`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub end: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

fn present_content<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Content>, D::Error> {
    Content::deserialize(deserializer).map(Some)
}

impl Chunk {
    /// A content chunk.
    pub fn new(role: Role, kind: Kind, format: Option<&str>, content: impl Into<Content>) -> Self {
        Chunk {
            role,
            kind: Some(kind),
            format: format.map(str::to_owned),
            content: Some(content.into()),
            recipient: None,
            start: false,
            end: false,
        }
    }

    /// An assistant text chunk.
    pub fn assistant_message(text: impl Into<String>) -> Self {
        Chunk::new(Role::Assistant, Kind::Message, None, text.into())
    }

    /// An assistant code chunk.
    pub fn assistant_code(language: &str, code: impl Into<String>) -> Self {
        Chunk::new(Role::Assistant, Kind::Code, Some(language), code.into())
    }

    /// A computer console output chunk.
    pub fn console_output(text: impl Into<String>) -> Self {
        Chunk::new(Role::Computer, Kind::Console, Some("output"), text.into())
    }

    /// A computer `active_line` chunk (`None` = the run finished).
    pub fn active_line(line: Option<u64>) -> Self {
        let content = line.map_or(Content::Null, Content::Line);
        Chunk::new(Role::Computer, Kind::Console, Some("active_line"), content)
    }

    /// The confirmation chunk asked before running `code`.
    pub fn confirmation(language: &str, code: &str) -> Self {
        Chunk::new(
            Role::Computer,
            Kind::Confirmation,
            Some("execution"),
            Content::Code(CodeContent {
                kind: CodeTag::Code,
                format: language.to_owned(),
                content: code.to_owned(),
            }),
        )
    }

    /// A `start` (or `end`, with `end = true`) flag.
    pub fn flag(role: Role, kind: Kind, format: Option<&str>, end: bool) -> Self {
        Chunk {
            role,
            kind: Some(kind),
            format: format.map(str::to_owned),
            content: None,
            recipient: None,
            start: !end,
            end,
        }
    }

    /// `{"role":"server","type":"status","content":"complete"}`.
    pub fn complete() -> Self {
        Chunk::new(Role::Server, Kind::Status, None, "complete")
    }

    /// `{"role":"server","type":"error","content":...}`.
    pub fn server_error(text: impl Into<String>) -> Self {
        Chunk::new(Role::Server, Kind::Error, None, text.into())
    }

    /// Whether this is a `start` or `end` flag.
    pub fn is_flag(&self) -> bool {
        self.start || self.end
    }

    /// Whether the format is `f`.
    pub fn has_format(&self, f: &str) -> bool {
        self.format.as_deref() == Some(f)
    }

    /// The text content, if the content is text.
    pub fn text(&self) -> Option<&str> {
        self.content.as_ref().and_then(Content::as_text)
    }

    /// Parses one chunk from JSON, with an error that says what was wrong.
    pub fn from_json(json: &str) -> Result<Self, LmcError> {
        serde_json::from_str(json).map_err(|e| LmcError::Invalid(e.to_string()))
    }

    /// Serialises the chunk as one line of JSON.
    pub fn to_json(&self) -> String {
        // Serialising these plain types cannot fail; fall back to an empty object to stay total.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }
}

/// Why a piece of LMC JSON was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LmcError {
    /// The JSON is not a valid LMC message or chunk.
    #[error(
        "not a valid LMC message: {0} (expected keys: role, type, format, content, recipient, start, end)"
    )]
    Invalid(String),
}
