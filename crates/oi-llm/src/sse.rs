//! Reading a chat-completions SSE body: JSON chunks, `[DONE]`, idle and overall timeouts, and
//! the size limits of [`ReplyLimits`] (one line, the whole body).

use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use oi_core::ModelError;
use serde_json::Value;
use tokio::time::Instant;

use crate::reply_limits::ReplyLimits;
use crate::sse_events::{EventParser, SseError};
use crate::text::{printable, shorten};

/// One item of the body.
#[derive(Debug)]
pub(crate) enum SseItem {
    /// A JSON chunk.
    Data(Value),
    /// `data: [DONE]`.
    Done,
}

/// Why reading the body stopped.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The connection broke (worth a retry before anything was passed on).
    Broken(String),
    /// No bytes for too long, or the overall deadline passed.
    TimedOut(String),
    /// The body is not what a chat-completions stream looks like.
    Invalid(String),
    /// The reply passed a size limit (not worth a retry: the server would do it again).
    TooLarge(String),
}

impl ReadError {
    /// As the error the caller sees.
    pub fn into_model_error(self) -> ModelError {
        match self {
            ReadError::Broken(m)
            | ReadError::TimedOut(m)
            | ReadError::Invalid(m)
            | ReadError::TooLarge(m) => ModelError::Stream(m),
        }
    }

    /// Whether trying again may help.
    pub fn retryable(&self) -> bool {
        matches!(self, ReadError::Broken(_) | ReadError::TimedOut(_))
    }
}

/// Time limits for reading.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Longest time without any byte (keep-alive comments count as bytes).
    pub idle: Option<Duration>,
    /// When the whole reply must be done.
    pub deadline: Option<Instant>,
}

impl Limits {
    /// How long the next wait may take, and whether the deadline (not idleness) sets it.
    pub fn next_wait(&self) -> Option<(Duration, bool)> {
        let until_deadline = self
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now()));
        match (self.idle, until_deadline) {
            (Some(idle), Some(left)) if left < idle => Some((left, true)),
            (Some(idle), _) => Some((idle, false)),
            (None, Some(left)) => Some((left, true)),
            (None, None) => None,
        }
    }

    /// The message for a timeout.
    pub fn timeout_message(&self, by_deadline: bool) -> String {
        if by_deadline {
            "the reply took longer than the overall time limit".to_owned()
        } else {
            let secs = self.idle.map_or(0.0, |d| d.as_secs_f64());
            format!("the server sent nothing for {secs} seconds")
        }
    }
}

/// The SSE items of `response`'s body, read within `sizes`.
pub(crate) fn read_events(
    response: reqwest::Response,
    limits: Limits,
    sizes: ReplyLimits,
) -> impl Stream<Item = Result<SseItem, ReadError>> + Send + 'static {
    async_stream::stream! {
        let mut bytes = Box::pin(timed(response.bytes_stream(), limits));
        let mut parser = EventParser::new(sizes.max_line_bytes);
        let mut read: u64 = 0;
        while let Some(piece) = bytes.next().await {
            let piece = match piece {
                Ok(piece) => piece,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            read = read.saturating_add(piece.len() as u64);
            if read > sizes.max_body_bytes {
                yield Err(ReadError::TooLarge(sizes.body_exceeded()));
                return;
            }
            let mut events = Vec::new();
            let failure = parser.push_into(&piece, &mut events).err();
            for event in events {
                let data = event.data.trim();
                if data.is_empty() {
                    continue;
                }
                if data == "[DONE]" {
                    yield Ok(SseItem::Done);
                    return;
                }
                match serde_json::from_str::<Value>(data) {
                    Ok(value) => yield Ok(SseItem::Data(value)),
                    Err(e) => {
                        yield Err(ReadError::Invalid(format!("a line is not JSON ({e}): {}", printable(&shorten(data, 200)))));
                        return;
                    }
                }
            }
            match failure {
                None => {}
                Some(error @ SseError::NotUtf8 { .. }) => {
                    yield Err(ReadError::Invalid(sizes.stream_error(&error)));
                    return;
                }
                Some(error) => {
                    yield Err(ReadError::TooLarge(sizes.stream_error(&error)));
                    return;
                }
            }
        }
    }
}

/// The body's bytes, ending with a [`ReadError::TimedOut`] when a limit passes.
fn timed(
    body: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
    limits: Limits,
) -> impl Stream<Item = Result<Bytes, ReadError>> + Send + 'static {
    async_stream::stream! {
        let mut body = Box::pin(body);
        loop {
            let next = match limits.next_wait() {
                Some((wait, by_deadline)) => match tokio::time::timeout(wait, body.next()).await {
                    Ok(next) => next,
                    Err(_) => {
                        yield Err(ReadError::TimedOut(limits.timeout_message(by_deadline)));
                        return;
                    }
                },
                None => body.next().await,
            };
            match next {
                Some(Ok(bytes)) => yield Ok(bytes),
                Some(Err(e)) => {
                    yield Err(ReadError::Broken(format!("the connection broke: {}", crate::text::error_chain(&e))));
                    return;
                }
                None => return,
            }
        }
    }
}
