//! `POST /openai/chat/completions`: an OpenAI-compatible front for the default session
//! (spec c.8, fixed). Only the last message is used (the server keeps the history); code
//! blocks are rendered into the text as fenced blocks; no "." turn is injected. The request is
//! read into typed values and the reply written from them: no JSON is inspected in between.

use std::convert::Infallible;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use oi_core::{Chunk, Kind, Message, Role};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::error::ApiError;
use crate::sessions::settings_patch::AUTO_RUN_FLAG;
use crate::state::AppState;
use oi_session::{Outgoing, TurnOutput, TurnStart};

mod error_object;
pub use error_object::{ErrorObject, OpenAiError};

/// What the text shows when code waits for approval (answer "yes" to run it).
pub const APPROVAL_QUESTION: &str = "Do you want to run this code?";

/// Turns a turn's chunks into reply text: message text, code as fenced blocks (each fence on
/// its own line), and the approval question when code waits for a "yes".
///
/// Not the terminal's plain text ([`oi_core::visible::PlainText`]): this is a reply for an
/// API client, so the model's words and code go out as written (neither filtered nor shown
/// with escapes), the code's output and images are left out, and the last message ends
/// without a line break.
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

/// `POST /openai/chat/completions`. Every error, the endpoint's own and a failed turn's,
/// answers with OpenAI's error object and the status OpenAI would send.
pub async fn chat_completions(
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejected) => {
            let error = ApiError::new(rejected.status(), rejected.body_text());
            return OpenAiError::from(error).into_response();
        }
    };
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

async fn handle(state: AppState, body: Bytes) -> Result<Response, OpenAiError> {
    let request = read_request(&body)?;
    let last = request
        .messages
        .last()
        .ok_or_else(|| ApiError::bad_request("`messages` must be a non-empty list"))?;
    if last.role != "user" {
        return Err(ApiError::bad_request("the last message must have role \"user\"").into());
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
                    ))
                    .into());
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
        sse_response(chunks, reply).await
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

/// What one chunk of the turn means for the reply.
enum Step {
    /// Reply text.
    Text(String),
    /// The turn is over (its `complete`).
    Done,
    /// The turn failed.
    Failed(OpenAiError),
    /// Nothing for the reply.
    Skip,
}

fn step(out: &Outgoing, renderer: &mut Renderer) -> Step {
    let chunk = &out.chunk;
    match (chunk.role, chunk.kind) {
        (Role::Server, Some(Kind::Status)) => Step::Done,
        (Role::Server, Some(Kind::Error)) => Step::Failed(match &out.failure {
            Some(failure) => OpenAiError::from_failure(failure),
            None => OpenAiError::bad_gateway(chunk.text().unwrap_or("")),
        }),
        _ => renderer.push(chunk).map_or(Step::Skip, Step::Text),
    }
}

/// Reads the rest of a turn that already failed, up to its `complete`.
async fn drain(chunks: &mut TurnOutput) {
    while let Some(out) = chunks.recv_out().await {
        if matches!(step(&out, &mut Renderer::new()), Step::Done) {
            break;
        }
    }
}

/// A streamed reply. It starts (200, SSE) with the turn's first text: a turn that fails
/// before it answers with the failure's status and error object; one that fails later ends
/// the stream with a `data: {"error": …}` event, as OpenAI does.
async fn sse_response(mut chunks: TurnOutput, reply: Reply) -> Result<Response, OpenAiError> {
    let mut renderer = Renderer::new();
    let first = loop {
        let Some(out) = chunks.recv_out().await else {
            break None;
        };
        match step(&out, &mut renderer) {
            Step::Text(text) => break Some(text),
            Step::Done => break None,
            Step::Failed(error) => {
                drain(&mut chunks).await;
                return Err(error);
            }
            Step::Skip => {}
        }
    };
    let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
    tokio::spawn(async move {
        let role = Delta {
            role: Some("assistant"),
            content: Some(""),
        };
        if tx.send(reply.event(role, None)).is_err() {
            return;
        }
        let mut next = first.map(Step::Text).unwrap_or(Step::Done);
        loop {
            let event = match next {
                Step::Done => break,
                Step::Skip => None,
                Step::Text(text) => Some(reply.event(
                    Delta {
                        role: None,
                        content: Some(&text),
                    },
                    None,
                )),
                Step::Failed(error) => {
                    let _ = tx.send(Bytes::from(error.sse_event()));
                    drop(tx);
                    drain(&mut chunks).await;
                    return;
                }
            };
            if event.is_some_and(|event| tx.send(event).is_err()) {
                // The client went away: dropping `chunks` stops the turn.
                return;
            }
            next = match chunks.recv_out().await {
                Some(out) => step(&out, &mut renderer),
                None => Step::Done,
            };
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
    Ok((
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(body),
    )
        .into_response())
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

/// A whole reply; a turn that failed answers with the failure's status and error object.
async fn complete_response(mut chunks: TurnOutput, reply: Reply) -> Result<Response, OpenAiError> {
    let mut text = String::new();
    let mut renderer = Renderer::new();
    let mut failed = None;
    while let Some(out) = chunks.recv_out().await {
        match step(&out, &mut renderer) {
            Step::Done => break,
            Step::Failed(error) => failed = failed.or(Some(error)),
            Step::Text(piece) => text.push_str(&piece),
            Step::Skip => {}
        }
    }
    if let Some(error) = failed {
        return Err(error);
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
