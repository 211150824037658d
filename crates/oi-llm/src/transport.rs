//! One streamed HTTP request to a model server, whatever its wire: sending with retries
//! (before anything of the reply was passed on), reading server-sent events with idle and
//! overall time limits and the size limits of [`ReplyLimits`], and handing each JSON event to
//! a wire-specific [`Decode`].

use std::time::Duration;

use futures::{Stream, StreamExt};
use oi_core::{ModelDelta, ModelError, UnreachableKind};
use serde_json::Value;
use tokio::time::Instant;

use crate::reply_limits::ReplyLimits;
use crate::retry::{RetryPolicy, parse_retry_after, retryable_status};
use crate::sse::{Limits, ReadError, SseItem, read_events};
use crate::text::{printable, shorten};
use crate::unreachable;

/// Characters of an HTTP error body kept in [`ModelError::Status`].
const STATUS_BODY_CHARS: usize = 500;

/// Bytes of an HTTP error body read at most (the rest is not needed for the message).
const STATUS_BODY_BYTES: usize = 64 << 10;

/// Turns a wire's JSON events into deltas.
pub(crate) trait Decode: Send + 'static {
    /// Bytes of text and code in one event (message text, tool-call names and arguments):
    /// what counts towards [`ReplyLimits::max_reply_bytes`].
    fn content_len(&self, event: &Value) -> usize;
    /// Feeds one event.
    fn push(&mut self, event: &Value) -> Result<Vec<ModelDelta>, ModelError>;
    /// Whether the reply is complete (nothing more is read).
    fn is_done(&self) -> bool;
    /// Ends the reply: whatever was held back.
    fn finish(&mut self) -> Vec<ModelDelta>;
}

/// What to send.
#[derive(Debug, Clone)]
pub(crate) struct HttpCall {
    /// The full URL.
    pub url: String,
    /// Extra headers.
    pub headers: Vec<(&'static str, String)>,
    /// A bearer token for `Authorization`.
    pub bearer: Option<String>,
    /// The JSON body, as the text sent (shared by every attempt).
    pub body: bytes::Bytes,
}

/// How requests are sent: the client, retries and time limits.
#[derive(Debug, Clone)]
pub(crate) struct Transport {
    pub client: reqwest::Client,
    pub retry: RetryPolicy,
    pub idle_timeout: Option<Duration>,
    pub deadline: Option<Duration>,
    /// Size limits (an error when the environment set them wrongly).
    pub sizes: Result<ReplyLimits, ModelError>,
}

impl Transport {
    /// Sends `call` and streams its reply through decoders made by `decoder` (one per
    /// attempt).
    pub fn stream<D: Decode>(
        self,
        call: HttpCall,
        decoder: impl Fn() -> D + Send + 'static,
    ) -> impl Stream<Item = Result<ModelDelta, ModelError>> + Send + 'static {
        async_stream::stream! {
            let sizes = match self.sizes.clone() {
                Ok(sizes) => sizes,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            let limits = Limits {
                idle: self.idle_timeout,
                deadline: self.deadline.map(|d| Instant::now() + d),
            };
            let mut retry = 0;
            tracing::info!(url = %call.url, body_bytes = call.body.len(), "sending the model request");
            tracing::debug!(body = %String::from_utf8_lossy(&call.body), "the request body");
            'attempts: loop {
                let failure = 'attempt: {
                    let response = match self.send(&call, limits).await {
                        Ok(response) => response,
                        Err(failure) => break 'attempt failure,
                    };
                    let mut decoder = decoder();
                    let mut events = Box::pin(read_events(response, limits, sizes));
                    let (mut received, mut yielded) = (false, false);
                    let mut content: usize = 0;
                    while let Some(item) = events.next().await {
                        match item {
                            Ok(SseItem::Done) => break,
                            Ok(SseItem::Data(chunk)) => {
                                received = true;
                                content = content.saturating_add(decoder.content_len(&chunk));
                                if content > sizes.max_reply_bytes {
                                    yield Err(ModelError::Stream(sizes.reply_exceeded()));
                                    return;
                                }
                                match decoder.push(&chunk) {
                                    Ok(deltas) => {
                                        for delta in deltas {
                                            yielded = true;
                                            yield Ok(delta);
                                        }
                                    }
                                    Err(error) => {
                                        yield Err(error);
                                        return;
                                    }
                                }
                                if decoder.is_done() {
                                    break;
                                }
                            }
                            Err(error) => {
                                let failure = Failure::from(error);
                                if yielded {
                                    yield Err(failure.error);
                                    return;
                                }
                                break 'attempt failure;
                            }
                        }
                    }
                    if !received {
                        break 'attempt Failure::retry(
                            ModelError::Stream("the server ended the reply without sending anything".to_owned()),
                            None,
                        );
                    }
                    for delta in decoder.finish() {
                        yield Ok(delta);
                    }
                    return;
                };
                let delay = match (failure.retryable, failure.refused) {
                    (false, _) => None,
                    (true, false) => self.retry.delay(retry, failure.retry_after),
                    (true, true) => self.retry.refused_delay(retry),
                };
                match delay {
                    Some(delay) => {
                        tracing::info!(attempt = retry + 1, ?delay, error = %failure.error, "retrying the model request");
                        retry += 1;
                        tokio::time::sleep(delay).await;
                        continue 'attempts;
                    }
                    None => {
                        yield Err(failure.error);
                        return;
                    }
                }
            }
        }
    }

    /// Sends the request and checks the status; errors say whether a retry may help.
    async fn send(&self, call: &HttpCall, limits: Limits) -> Result<reqwest::Response, Failure> {
        let mut builder = self
            .client
            .post(&call.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(call.body.clone());
        for (name, value) in &call.headers {
            builder = builder.header(*name, value);
        }
        if let Some(key) = &call.bearer {
            builder = builder.bearer_auth(key);
        }
        let sent = match limits.next_wait() {
            Some((wait, by_deadline)) => match tokio::time::timeout(wait, builder.send()).await {
                Ok(sent) => sent,
                Err(_) => {
                    let reason = limits.timeout_message(by_deadline);
                    let error = unreachable::said(&call.url, reason, UnreachableKind::TimedOut);
                    return Err(Failure::retry(error, None));
                }
            },
            None => builder.send().await,
        };
        let response = sent.map_err(|e| Failure {
            refused: unreachable::is_refused(&e),
            ..Failure::retry(unreachable::from_reqwest(&call.url, &e), None)
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = match limits.next_wait() {
            Some((wait, _)) => tokio::time::timeout(wait, read_capped(response, STATUS_BODY_BYTES))
                .await
                .unwrap_or_default(),
            None => read_capped(response, STATUS_BODY_BYTES).await,
        };
        let error = status_error(status.as_u16(), &redacted(text, call));
        if retryable_status(status.as_u16()) {
            Err(Failure::retry(error, retry_after))
        } else {
            Err(Failure::fatal(error))
        }
    }
}

/// At most `max` bytes of a body, as text (invalid UTF-8 replaced; a broken connection ends
/// it early). A server cannot make oi hold more than `max` bytes of an answer it only quotes.
pub(crate) async fn read_capped(mut response: reqwest::Response, max: usize) -> String {
    let mut body: Vec<u8> = Vec::new();
    while let Ok(Some(piece)) = response.chunk().await {
        let room = max - body.len();
        body.extend_from_slice(&piece[..piece.len().min(room)]);
        if body.len() >= max {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// `text` (a model server's error body) without the credentials `call` sent: a server that
/// echoes the key it was given must not make oi pass it on to whoever sees the error (a
/// network client of oi-server, an OpenAI client of its endpoint, a log).
fn redacted(mut text: String, call: &HttpCall) -> String {
    let credential = |name: &str| {
        let name = name.to_ascii_lowercase();
        name.contains("key") || name.contains("auth") || name.contains("token")
    };
    let secrets = call.bearer.iter().map(String::as_str).chain(
        call.headers
            .iter()
            .filter(|(name, _)| credential(name))
            .map(|(_, value)| value.as_str()),
    );
    for secret in secrets {
        if secret.len() >= 4 {
            text = text.replace(secret, "[the API key]");
        }
    }
    text
}

/// The error for an HTTP `status` answered with `text`: what it means when the status or the
/// provider's error body says (credentials refused, rate limited, the context window
/// exceeded), else [`ModelError::Status`].
pub(crate) fn status_error(status: u16, text: &str) -> ModelError {
    let body = status_body(text);
    match status {
        401 | 403 => ModelError::Unauthorized { status, body },
        429 => ModelError::RateLimited { status, body },
        400..=499 if exceeds_context(text) => ModelError::ContextWindowExceeded { status, body },
        _ => ModelError::Status { status, body },
    }
}

/// Whether a provider's error body says the prompt is longer than the model's context
/// window (OpenAI and compatible servers, Anthropic, llama.cpp, vLLM, Ollama, Gemini).
fn exceeds_context(text: &str) -> bool {
    const SAID: &[&str] = &[
        "context_length_exceeded",
        "maximum context length",
        "context window",
        "exceed_context_size",
        "exceeds the available context size",
        "prompt is too long",
        "input token count exceeds",
    ];
    let lower = text.to_ascii_lowercase();
    SAID.iter().any(|said| lower.contains(said))
}

/// The readable part of an HTTP error body: `error.message` (OpenAI and Anthropic) when there
/// is one, with control characters escaped.
fn status_body(text: &str) -> String {
    let message = serde_json::from_str::<Value>(text).ok().and_then(|v| {
        v.pointer("/error/message")
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    printable(&shorten(
        message.as_deref().unwrap_or(text),
        STATUS_BODY_CHARS,
    ))
}

/// A failed attempt.
struct Failure {
    error: ModelError,
    retryable: bool,
    retry_after: Option<Duration>,
    /// The connection was refused.
    refused: bool,
}

impl Failure {
    fn retry(error: ModelError, retry_after: Option<Duration>) -> Self {
        Failure {
            error,
            retryable: true,
            retry_after,
            refused: false,
        }
    }

    fn fatal(error: ModelError) -> Self {
        Failure {
            error,
            retryable: false,
            retry_after: None,
            refused: false,
        }
    }
}

impl From<ReadError> for Failure {
    fn from(error: ReadError) -> Self {
        let retryable = error.retryable();
        Failure {
            error: error.into_model_error(),
            retryable,
            retry_after: None,
            refused: false,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_model_server_echoing_the_key_does_not_pass_it_on() {
        let call = HttpCall {
            url: "http://model/v1/chat/completions".into(),
            headers: vec![
                ("x-api-key", "sk-ant-SECRET".into()),
                ("anthropic-version", "2023-06-01".into()),
            ],
            bearer: Some("sk-SECRETKEY123".into()),
            body: bytes::Bytes::new(),
        };
        let text =
            r#"{"error": {"message": "bad key=sk-SECRETKEY123 or sk-ant-SECRET (2023-06-01)"}}"#;
        assert_eq!(
            redacted(text.to_owned(), &call),
            r#"{"error": {"message": "bad key=[the API key] or [the API key] (2023-06-01)"}}"#
        );
    }
}
