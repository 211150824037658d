//! `POST /openai/chat/completions`: an OpenAI-compatible front for the default session
//! (spec c.8, fixed). Only the last message is used (the server keeps the history); code
//! blocks are rendered into the text as fenced blocks; no "." turn is injected. The request is
//! read into typed values and the reply written from them: no JSON is inspected in between.

use std::convert::Infallible;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use oi_core::{Chunk, Kind, Message, Role};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::error::ApiError;
use crate::sessions::settings_patch::AUTO_RUN_FLAG;
use crate::state::AppState;
use oi_session::TurnStart;

/// What the text shows when code waits for approval (answer "yes" to run it).
pub const APPROVAL_QUESTION: &str = "Do you want to run this code?";

/// Turns a turn's chunks into reply text: message text, code as fenced blocks (each fence on
/// its own line), and the approval question when code waits for a "yes".
#[derive(Debug, Default)]
pub struct Renderer {
    /// The last character emitted, if any.
    last: Option<char>,
}

impl Renderer {
    /// A renderer at the start of a reply.
    pub fn new() -> Self {
        Renderer::default()
    }

    /// The text `chunk` adds to the reply, if any.
    pub fn push(&mut self, chunk: &Chunk) -> Option<String> {
        let text = match Self::raw(chunk)? {
            Block::Inline(text) => text,
            Block::OwnLine(text) if self.last.is_some_and(|c| c != '\n') => format!("\n{text}"),
            Block::OwnLine(text) => text,
        };
        if text.is_empty() {
            return None;
        }
        self.last = text.chars().last();
        Some(text)
    }

    fn raw(chunk: &Chunk) -> Option<Block> {
        match (chunk.role, chunk.kind?) {
            (Role::Assistant, Kind::Message) => chunk.text().map(|t| Block::Inline(t.to_owned())),
            (Role::Assistant, Kind::Code) if chunk.start => {
                let format = chunk.format.as_deref().unwrap_or("");
                Some(Block::OwnLine(format!("```{format}\n")))
            }
            (Role::Assistant, Kind::Code) if chunk.end => Some(Block::OwnLine("```\n".to_owned())),
            (Role::Assistant, Kind::Code) => chunk.text().map(|t| Block::Inline(t.to_owned())),
            (Role::Computer, Kind::Confirmation) => {
                Some(Block::OwnLine(APPROVAL_QUESTION.to_owned()))
            }
            _ => None,
        }
    }
}

/// A piece of reply text, and whether it must start on its own line.
enum Block {
    Inline(String),
    OwnLine(String),
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

fn completion_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("chatcmpl-{nanos:x}")
}

/// The request body (the fields oi reads; others, like `temperature`, are accepted and
/// ignored).
#[derive(Debug, Deserialize)]
struct ChatRequest {
    #[serde(default = "default_model")]
    model: String,
    messages: Vec<ChatMessage>,
    #[serde(default)]
    stream: Option<bool>,
}

fn default_model() -> String {
    "open-interpreter".to_owned()
}

#[derive(Debug, Deserialize)]
struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Option<ChatContent>,
}

/// A message's content: a string or a list of parts.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ChatContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentPart {
    Text {
        #[serde(default)]
        text: String,
    },
    ImageUrl {
        image_url: ImageUrl,
    },
}

/// `image_url` as an object `{"url": …}` or a plain string.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ImageUrl {
    Object { url: String },
    Url(String),
}

impl ImageUrl {
    fn url(&self) -> &str {
        match self {
            ImageUrl::Object { url } | ImageUrl::Url(url) => url,
        }
    }
}

/// The user messages of an OpenAI `content`.
fn user_messages(content: &ChatContent) -> Result<Vec<Message>, ApiError> {
    match content {
        ChatContent::Text(text) => Ok(vec![Message::user(text.clone())]),
        ChatContent::Parts(parts) => parts.iter().map(part_message).collect(),
    }
}

fn part_message(part: &ContentPart) -> Result<Message, ApiError> {
    match part {
        ContentPart::Text { text } => Ok(Message::user(text.clone())),
        ContentPart::ImageUrl { image_url } => {
            let (head, data) = image_url.url().split_once("base64,").ok_or_else(|| {
                ApiError::bad_request(
                    "Image must be in the format: \"data:image/jpeg;base64,{base64_image}\"",
                )
            })?;
            let subtype = head
                .trim_start_matches("data:image/")
                .trim_end_matches(';')
                .trim();
            let subtype = if subtype.is_empty() { "png" } else { subtype };
            Ok(Message::new(Role::User, Kind::Image, data.to_owned())
                .with_format(format!("base64.{subtype}")))
        }
    }
}

fn is_yes(text: &str) -> bool {
    let cleaned: String = text
        .to_lowercase()
        .chars()
        .filter(|c| !matches!(c, '.' | '!' | '?' | ' '))
        .collect();
    cleaned == "yes"
}

/// `POST /openai/chat/completions`.
pub async fn chat_completions(State(state): State<AppState>, body: Bytes) -> Response {
    match handle(state, body).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

fn read_request(body: &[u8]) -> Result<ChatRequest, ApiError> {
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "not a chat-completions request: {e}; send {{\"model\": …, \"messages\": [{{\"role\": \"user\", \"content\": …}}]}}"
        ))
    })
}

async fn handle(state: AppState, body: Bytes) -> Result<Response, ApiError> {
    let request = read_request(&body)?;
    let last = request
        .messages
        .last()
        .ok_or_else(|| ApiError::bad_request("`messages` must be a non-empty list"))?;
    if last.role != "user" {
        return Err(ApiError::bad_request(
            "the last message must have role \"user\"",
        ));
    }
    let content = last
        .content
        .as_ref()
        .ok_or_else(|| ApiError::bad_request("the last message has no `content`"))?;
    let session = state.sessions.default_session();
    let interpreter = session.interpreter();
    let oi = interpreter.interpreter();
    if let ChatContent::Text(text) = content {
        let null = || Json(serde_json::Value::Null).into_response();
        match text.trim() {
            "{STOP}" => {
                interpreter.stop().await;
                return Ok(null());
            }
            "{AUTO_RUN_ON}" => {
                if !state.config.allow_network_auto_run {
                    return Err(ApiError::forbidden(format!(
                        "auto_run cannot be turned on over the network unless the server is started with {AUTO_RUN_FLAG}"
                    )));
                }
                oi.settings_mut().auto_run = true;
                return Ok(null());
            }
            "{AUTO_RUN_OFF}" => {
                oi.settings_mut().auto_run = false;
                return Ok(null());
            }
            "{CONTEXT_MODE_ON}"
            | "{CONTEXT_MODE_OFF}"
            | "{REQUIRE_START_ON}"
            | "{REQUIRE_START_OFF}" => return Ok(null()),
            _ => {}
        }
    }
    let pending_code = oi
        .messages_mut()
        .last()
        .is_some_and(|m| m.role == Role::Assistant && m.kind == Kind::Code);
    let start = match content {
        ChatContent::Text(text) if pending_code && is_yes(text) => TurnStart::Go,
        content => TurnStart::Chat(user_messages(content)?),
    };
    let chunks = interpreter.run_separately(start).await;
    let reply = Reply {
        id: completion_id(),
        created: now_secs(),
        model: request.model,
    };
    if request.stream.unwrap_or(false) {
        Ok(sse_response(chunks, reply))
    } else {
        complete_response(chunks, reply).await
    }
}

/// What every event of one reply shares.
struct Reply {
    id: String,
    created: u64,
    model: String,
}

#[derive(Serialize)]
struct Delta<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
}

#[derive(Serialize)]
struct StreamChoice<'a> {
    index: u32,
    delta: Delta<'a>,
    finish_reason: Option<&'static str>,
}

#[derive(Serialize)]
struct StreamEvent<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: [StreamChoice<'a>; 1],
}

#[derive(Serialize)]
struct StreamError<'a> {
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
}

fn sse(value: &impl Serialize) -> Bytes {
    let json = serde_json::to_string(value).unwrap_or_else(|_| "{}".to_owned());
    Bytes::from(format!("data: {json}\n\n"))
}

impl Reply {
    fn event(&self, delta: Delta<'_>, finish_reason: Option<&'static str>) -> Bytes {
        sse(&StreamEvent {
            id: &self.id,
            object: "chat.completion.chunk",
            created: self.created,
            model: &self.model,
            choices: [StreamChoice {
                index: 0,
                delta,
                finish_reason,
            }],
        })
    }
}

/// Whether `chunk` ends the reply (`complete`), or is an error, or neither.
fn server_status(chunk: &Chunk) -> Option<Result<(), &str>> {
    if chunk.role != Role::Server {
        return None;
    }
    match chunk.kind {
        Some(Kind::Status) => Some(Ok(())),
        Some(Kind::Error) => Some(Err(chunk.text().unwrap_or(""))),
        _ => None,
    }
}

fn sse_response(mut chunks: crate::outgoing::TurnOutput, reply: Reply) -> Response {
    let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
    tokio::spawn(async move {
        let first = reply.event(
            Delta {
                role: Some("assistant"),
                content: Some(""),
            },
            None,
        );
        if tx.send(first).is_err() {
            return;
        }
        let mut renderer = Renderer::new();
        while let Some(chunk) = chunks.recv().await {
            let event = match server_status(&chunk) {
                Some(Ok(())) => break,
                Some(Err(message)) => sse(&StreamError {
                    error: ErrorBody {
                        message,
                        kind: "server_error",
                    },
                }),
                None => match renderer.push(&chunk) {
                    Some(text) => reply.event(
                        Delta {
                            role: None,
                            content: Some(&text),
                        },
                        None,
                    ),
                    None => continue,
                },
            };
            if tx.send(event).is_err() {
                // The client went away: dropping `chunks` stops the turn.
                return;
            }
        }
        let last = reply.event(
            Delta {
                role: None,
                content: None,
            },
            Some("stop"),
        );
        let _ = tx.send(last);
        let _ = tx.send(Bytes::from_static(b"data: [DONE]\n\n"));
    });
    let body = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|bytes| (Ok::<_, Infallible>(bytes), rx))
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response()
}

#[derive(Serialize)]
struct Completion<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    model: &'a str,
    choices: [CompletionChoice<'a>; 1],
    usage: Usage,
}

#[derive(Serialize)]
struct CompletionChoice<'a> {
    index: u32,
    message: CompletionMessage<'a>,
    finish_reason: &'static str,
}

#[derive(Serialize)]
struct CompletionMessage<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Serialize, Default)]
struct Usage {
    prompt_tokens: u64,
    completion_tokens: u64,
    total_tokens: u64,
}

async fn complete_response(
    mut chunks: crate::outgoing::TurnOutput,
    reply: Reply,
) -> Result<Response, ApiError> {
    let mut text = String::new();
    let mut renderer = Renderer::new();
    let mut error = None;
    while let Some(chunk) = chunks.recv().await {
        match server_status(&chunk) {
            Some(Ok(())) => break,
            Some(Err(message)) => error = Some(message.to_owned()),
            None => {
                if let Some(piece) = renderer.push(&chunk) {
                    text.push_str(&piece);
                }
            }
        }
    }
    if let (Some(error), true) = (&error, text.is_empty()) {
        return Err(ApiError::new(StatusCode::BAD_GATEWAY, error.clone()));
    }
    Ok(Json(Completion {
        id: &reply.id,
        object: "chat.completion",
        created: reply.created,
        model: &reply.model,
        choices: [CompletionChoice {
            index: 0,
            message: CompletionMessage {
                role: "assistant",
                content: &text,
            },
            finish_reason: "stop",
        }],
        usage: Usage::default(),
    })
    .into_response())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn renders_code_as_fenced_blocks() {
        let chunks = [
            Chunk::flag(Role::Assistant, Kind::Message, None, false),
            Chunk::assistant_message("Sure."),
            Chunk::flag(Role::Assistant, Kind::Code, Some("python"), false),
            Chunk::assistant_code("python", "print(1)"),
            Chunk::flag(Role::Assistant, Kind::Code, Some("python"), true),
            Chunk::console_output("1\n"),
        ];
        let mut renderer = Renderer::new();
        let text: String = chunks.iter().filter_map(|c| renderer.push(c)).collect();
        assert_eq!(text, "Sure.\n```python\nprint(1)\n```\n");
    }

    #[test]
    fn yes_is_forgiving() {
        assert!(is_yes("Yes!") && is_yes(" yes. ") && !is_yes("yes please"));
    }

    #[test]
    fn image_parts() {
        let request = read_request(
            br#"{"messages": [{"role": "user", "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}}
            ]}]}"#,
        )
        .unwrap();
        let messages = user_messages(request.messages[0].content.as_ref().unwrap()).unwrap();
        assert_eq!(messages[0], Message::user("look"));
        assert_eq!(messages[1].format.as_deref(), Some("base64.jpeg"));
        let url_only = read_request(
            br#"{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "http://x"}]}]}"#,
        )
        .unwrap();
        assert!(user_messages(url_only.messages[0].content.as_ref().unwrap()).is_err());
    }
}
