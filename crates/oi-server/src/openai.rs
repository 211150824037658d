//! `POST /openai/chat/completions`: an OpenAI-compatible front for the default session
//! (spec c.8, fixed). Only the last message is used (the server keeps the history); code
//! blocks are rendered into the text as fenced blocks; no "." turn is injected.

use std::convert::Infallible;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use oi_core::{Kind, Message, Role};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::async_interpreter::TurnStart;
use crate::error::{ApiError, parse_json};
use crate::settings_patch::AUTO_RUN_FLAG;
use crate::state::AppState;

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
    pub fn push(&mut self, chunk: &Value) -> Option<String> {
        let text = self.raw(chunk)?;
        let text = match text {
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

    fn raw(&self, chunk: &Value) -> Option<Block> {
        let kind = chunk.get("type")?.as_str()?;
        let role = chunk.get("role").and_then(Value::as_str);
        let flag = |name: &str| chunk.get(name) == Some(&Value::Bool(true));
        let content = chunk.get("content").and_then(Value::as_str);
        match (role, kind) {
            (Some("assistant"), "message") => content.map(|t| Block::Inline(t.to_owned())),
            (Some("assistant"), "code") if flag("start") => {
                let format = chunk.get("format").and_then(Value::as_str).unwrap_or("");
                Some(Block::OwnLine(format!("```{format}\n")))
            }
            (Some("assistant"), "code") if flag("end") => Some(Block::OwnLine("```\n".to_owned())),
            (Some("assistant"), "code") => content.map(|t| Block::Inline(t.to_owned())),
            (Some("computer"), "confirmation") => {
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

/// The user messages of an OpenAI `content` (a string or a list of parts).
fn user_messages(content: &Value) -> Result<Vec<Message>, ApiError> {
    match content {
        Value::String(text) => Ok(vec![Message::user(text.clone())]),
        Value::Array(parts) => parts.iter().map(part_message).collect(),
        other => Err(ApiError::bad_request(format!(
            "message content must be a string or a list of parts, not {other}"
        ))),
    }
}

fn part_message(part: &Value) -> Result<Message, ApiError> {
    match part.get("type").and_then(Value::as_str) {
        Some("text") => Ok(Message::user(
            part.get("text").and_then(Value::as_str).unwrap_or_default(),
        )),
        Some("image_url") => {
            let url = part
                .pointer("/image_url/url")
                .or_else(|| part.get("image_url"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let (head, data) = url.split_once("base64,").ok_or_else(|| {
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
        other => Err(ApiError::bad_request(format!(
            "unsupported content part type {other:?}: use \"text\" or \"image_url\""
        ))),
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

async fn handle(state: AppState, body: Bytes) -> Result<Response, ApiError> {
    let request = parse_json(&body)?;
    let last = request
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .ok_or_else(|| ApiError::bad_request("`messages` must be a non-empty list"))?;
    if last.get("role").and_then(Value::as_str) != Some("user") {
        return Err(ApiError::bad_request(
            "the last message must have role \"user\"",
        ));
    }
    let content = last.get("content").cloned().unwrap_or(Value::Null);
    let stream = request
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("open-interpreter")
        .to_owned();
    let session = state.sessions.default_session();
    let interpreter = session.interpreter();
    let oi = interpreter.interpreter();
    if let Some(text) = content.as_str() {
        match text.trim() {
            "{STOP}" => {
                interpreter.stop().await;
                return Ok(Json(Value::Null).into_response());
            }
            "{AUTO_RUN_ON}" => {
                if !state.config.allow_network_auto_run {
                    return Err(ApiError::forbidden(format!(
                        "auto_run cannot be turned on over the network unless the server is started with {AUTO_RUN_FLAG}"
                    )));
                }
                oi.settings_mut().auto_run = true;
                return Ok(Json(Value::Null).into_response());
            }
            "{AUTO_RUN_OFF}" => {
                oi.settings_mut().auto_run = false;
                return Ok(Json(Value::Null).into_response());
            }
            "{CONTEXT_MODE_ON}"
            | "{CONTEXT_MODE_OFF}"
            | "{REQUIRE_START_ON}"
            | "{REQUIRE_START_OFF}" => return Ok(Json(Value::Null).into_response()),
            _ => {}
        }
    }
    let pending_code = oi
        .messages()
        .last()
        .is_some_and(|m| m.role == Role::Assistant && m.kind == Kind::Code);
    let start = if pending_code && content.as_str().is_some_and(is_yes) {
        TurnStart::Go
    } else {
        TurnStart::Chat(user_messages(&content)?)
    };
    let chunks = interpreter.run_separately(start).await;
    let id = completion_id();
    let created = now_secs();
    if stream {
        Ok(sse_response(chunks, id, created, model))
    } else {
        complete_response(chunks, id, created, model).await
    }
}

fn chunk_event(id: &str, created: u64, model: &str, delta: Value, finish: Option<&str>) -> Bytes {
    let event = json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    });
    Bytes::from(format!("data: {event}\n\n"))
}

fn sse_response(
    mut chunks: mpsc::UnboundedReceiver<Value>,
    id: String,
    created: u64,
    model: String,
) -> Response {
    let (tx, rx) = mpsc::unbounded_channel::<Bytes>();
    tokio::spawn(async move {
        let first = chunk_event(
            &id,
            created,
            &model,
            json!({"role": "assistant", "content": ""}),
            None,
        );
        if tx.send(first).is_err() {
            return;
        }
        let mut renderer = Renderer::new();
        while let Some(chunk) = chunks.recv().await {
            let event = if chunk.get("role").and_then(Value::as_str) == Some("server") {
                match chunk.get("type").and_then(Value::as_str) {
                    Some("status") => break,
                    _ => {
                        let message = chunk.get("content").cloned().unwrap_or(Value::Null);
                        let error = json!({"error": {"message": message, "type": "server_error"}});
                        Bytes::from(format!("data: {error}\n\n"))
                    }
                }
            } else if let Some(text) = renderer.push(&chunk) {
                chunk_event(&id, created, &model, json!({ "content": text }), None)
            } else {
                continue;
            };
            if tx.send(event).is_err() {
                // The client went away: dropping `chunks` stops the turn.
                return;
            }
        }
        let _ = tx.send(chunk_event(&id, created, &model, json!({}), Some("stop")));
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

async fn complete_response(
    mut chunks: mpsc::UnboundedReceiver<Value>,
    id: String,
    created: u64,
    model: String,
) -> Result<Response, ApiError> {
    let mut text = String::new();
    let mut renderer = Renderer::new();
    let mut error = None;
    while let Some(chunk) = chunks.recv().await {
        if chunk.get("role").and_then(Value::as_str) == Some("server") {
            if chunk.get("type").and_then(Value::as_str) == Some("status") {
                break;
            }
            error = chunk
                .get("content")
                .and_then(Value::as_str)
                .map(str::to_owned);
            continue;
        }
        if let Some(piece) = renderer.push(&chunk) {
            text.push_str(&piece);
        }
    }
    if let (Some(error), true) = (&error, text.is_empty()) {
        return Err(ApiError::new(StatusCode::BAD_GATEWAY, error.clone()));
    }
    Ok(Json(json!({
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
        }],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }))
    .into_response())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn renders_code_as_fenced_blocks() {
        let chunks = [
            json!({"role": "assistant", "type": "message", "start": true}),
            json!({"role": "assistant", "type": "message", "content": "Sure."}),
            json!({"role": "assistant", "type": "code", "format": "python", "start": true}),
            json!({"role": "assistant", "type": "code", "format": "python", "content": "print(1)"}),
            json!({"role": "assistant", "type": "code", "format": "python", "end": true}),
            json!({"role": "computer", "type": "console", "format": "output", "content": "1\n"}),
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
        let messages = user_messages(&json!([
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAAA"}},
        ]))
        .unwrap();
        assert_eq!(messages[0], Message::user("look"));
        assert_eq!(messages[1].format.as_deref(), Some("base64.jpeg"));
        assert!(
            user_messages(&json!([{"type": "image_url", "image_url": {"url": "http://x"}}]))
                .is_err()
        );
    }
}
