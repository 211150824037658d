//! The provider-neutral prompt: what the model is asked, before any wire format. Types only;
//! [`Prompt::build`] (in `prompt_build.rs`) turns a [`ModelRequest`] (LMC messages, languages, settings, templates)
//! into a system text, messages made of parts (text, images, tool calls, tool results) and the
//! tools offered, following Open Interpreter's conversion (spec b.6) and trimmed to the
//! context window (b.7). Each wire then writes it in its own format: OpenAI chat completions
//! (`openai_body`), Anthropic Messages (`anthropic::messages_body`), the embedded model's chat
//! template (`local`). No wire reads another's JSON.

use serde_json::Value;

/// How code travels: as `execute` tool calls or as fenced blocks in text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Tool calls of `execute`.
    Tools,
    /// Fenced code blocks.
    Text,
}

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speaker {
    /// The person (and, in text mode, code output sent back as the person).
    User,
    /// The model.
    Assistant,
}

/// An image, as a URL (usually a `data:` URL with base64 content).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// `data:image/png;base64,…` or an ordinary URL.
    pub url: String,
}

impl Image {
    /// The media type and base64 data, for a `data:` URL.
    pub fn data(&self) -> Option<(&str, &str)> {
        self.url
            .strip_prefix("data:")
            .and_then(|rest| rest.split_once(";base64,"))
    }
}

/// A call of a tool the model made earlier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The call's id (`toolu_1`, …, numbered per request).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, as JSON text.
    pub arguments: String,
}

/// What a tool call gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    /// The id of the call it answers.
    pub call_id: String,
    /// The output text.
    pub content: String,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text.
    Text(String),
    /// An image.
    Image(Image),
    /// A tool call (assistant messages).
    ToolCall(ToolCall),
    /// A tool result (user side).
    ToolResult(ToolResult),
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMessage {
    /// Who says it.
    pub speaker: Speaker,
    /// Its parts, in order.
    pub parts: Vec<Part>,
}

impl PromptMessage {
    /// A message of one text part.
    pub fn text(speaker: Speaker, text: impl Into<String>) -> Self {
        PromptMessage {
            speaker,
            parts: vec![Part::Text(text.into())],
        }
    }

    /// The text, when the message is exactly one text part.
    pub fn as_text(&self) -> Option<&str> {
        match self.parts.as_slice() {
            [Part::Text(text)] => Some(text),
            _ => None,
        }
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its parameters, as a JSON schema.
    pub parameters: Value,
}

/// Everything one request asks, in no wire's format.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// The system text (empty when there is none).
    pub system: String,
    /// The conversation, oldest first.
    pub messages: Vec<PromptMessage>,
    /// The tools offered (the `execute` tool in tool mode, none in text mode).
    pub tools: Vec<ToolSpec>,
    /// How code comes back.
    pub mode: Mode,
    /// How many of the conversation's oldest messages trimming left out (0 when all fit).
    pub left_out: usize,
}
