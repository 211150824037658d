//! rmcp's Streamable HTTP client transport over oi's own reqwest (0.12). rmcp's built-in
//! client is for reqwest 0.13, which would put a second HTTP stack (hyper, rustls, their
//! dependencies) into every oi binary; implementing rmcp's [`StreamableHttpClient`] trait here
//! is about a hundred lines and keeps one. It is also narrower than rmcp's: no redirect is ever
//! followed (a profile's `headers` often carry a key, and must not be replayed elsewhere), the
//! standalone GET event stream is not opened (oi asks servers nothing but `tools/list` and
//! `tools/call`, whose answers come on the POST), and every response body is bounded.
//! Header values are marked sensitive and never logged.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt as _, TryStreamExt as _};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

/// Why a request to an HTTP MCP server failed.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The request could not be made or its body read (its URL, which may hold a key in its
    /// query, is left out; so are the headers).
    #[error("{0}")]
    Request(reqwest::Error),
    /// The server sent more than the limit in one message.
    #[error("the server sent more than {0} bytes in one message")]
    TooLarge(usize),
}

impl From<reqwest::Error> for HttpError {
    fn from(error: reqwest::Error) -> HttpError {
        HttpError::Request(error.without_url())
    }
}

type Failure = StreamableHttpError<HttpError>;

/// oi's HTTP client, as rmcp's Streamable HTTP transport needs it.
#[derive(Clone, Debug)]
pub struct OiHttp {
    client: reqwest::Client,
}

impl OiHttp {
    /// A client that follows no redirect.
    pub fn new() -> Result<OiHttp, HttpError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(0)
            .build()?;
        Ok(OiHttp { client })
    }

    fn request(
        &self,
        builder: reqwest::RequestBuilder,
        session_id: Option<&str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> reqwest::RequestBuilder {
        let mut builder = builder;
        if let Some(session) = session_id {
            builder = builder.header(HEADER_SESSION_ID, session);
        }
        if let Some(token) = auth_token {
            builder = builder.bearer_auth(token);
        }
        for (name, mut value) in custom_headers {
            value.set_sensitive(true);
            builder = builder.header(name, value);
        }
        builder
    }
}

fn unexpected(text: String) -> Failure {
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(text))
}

fn media_type_is(value: Option<&HeaderValue>, expected: &str) -> bool {
    value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(expected))
}

/// The whole body, refused past `limit` bytes.
async fn bounded_body(response: reqwest::Response, limit: usize) -> Result<Vec<u8>, Failure> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| StreamableHttpError::Client(e.into()))?;
        if body.len() + chunk.len() > limit {
            return Err(StreamableHttpError::Client(HttpError::TooLarge(limit)));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The body's bytes, failing once more than `limit` arrive without a blank line (the end of
/// an event).
fn bounded_events(
    bytes: impl Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
    limit: usize,
) -> impl Stream<Item = Result<Bytes, HttpError>> + Send + 'static {
    let mut pending = 0usize;
    bytes.map_err(HttpError::from).and_then(move |chunk| {
        let after_blank = chunk
            .windows(2)
            .rposition(|w| w == b"\n\n")
            .map(|at| chunk.len() - at - 2);
        pending = match after_blank {
            Some(rest) => rest,
            None => pending + chunk.len(),
        };
        let result = if pending > limit {
            Err(HttpError::TooLarge(limit))
        } else {
            Ok(chunk)
        };
        futures::future::ready(result)
    })
}

fn sse(response: reqwest::Response, limit: usize) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(bounded_events(response.bytes_stream(), limit)).boxed()
}

impl StreamableHttpClient for OiHttp {
    type Error = HttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let attached = session_id.is_some();
        let builder = self
            .client
            .post(uri.as_ref())
            .header(
                ACCEPT,
                format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}"),
            )
            .json(&message);
        let response = self
            .request(builder, session_id.as_deref(), auth_token, custom_headers)
            .send()
            .await
            .map_err(|e| StreamableHttpError::Client(e.into()))?;
        let status = response.status();
        if matches!(
            status,
            reqwest::StatusCode::ACCEPTED | reqwest::StatusCode::NO_CONTENT
        ) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == reqwest::StatusCode::NOT_FOUND && attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let awaits_nothing = !matches!(message, ClientJsonRpcMessage::Request(_));
        if !status.is_success() {
            // Only the status: a body or a header could be anything (and is the server's).
            return Err(unexpected(format!("HTTP {status}")));
        }
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let content_type = response.headers().get(CONTENT_TYPE).cloned();
        if media_type_is(content_type.as_ref(), EVENT_STREAM_MIME_TYPE) {
            return Ok(StreamableHttpPostResponse::Sse(
                sse(response, limits.max_sse_event_size),
                session,
            ));
        }
        if media_type_is(content_type.as_ref(), JSON_MIME_TYPE) {
            let body = bounded_body(response, limits.max_json_response_size).await?;
            return match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session)),
                Err(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
                Err(error) => Err(unexpected(format!("not a JSON-RPC message: {error}"))),
            };
        }
        if awaits_nothing {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(
            content_type.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        ))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        let builder = self.client.delete(uri.as_ref());
        let response = self
            .request(builder, Some(&session_id), auth_token, custom_headers)
            .send()
            .await
            .map_err(|e| StreamableHttpError::Client(e.into()))?;
        let status = response.status();
        if status.is_success() || status == reqwest::StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        Err(unexpected(format!("HTTP {status}")))
    }

    async fn get_stream(
        &self,
        _uri: Arc<str>,
        _session_id: Option<Arc<str>>,
        _last_event_id: Option<String>,
        _auth_token: Option<String>,
        _custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        // Not opened: see the module's comment.
        Err(StreamableHttpError::ServerDoesNotSupportSse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_endless_event_is_cut_at_the_limit() {
        let pieces: Vec<Result<Bytes, reqwest::Error>> = vec![
            Ok(Bytes::from_static(b"data: 1\n\n")),
            Ok(Bytes::from(vec![b'x'; 60])),
            Ok(Bytes::from(vec![b'x'; 60])),
        ];
        let out: Vec<_> = bounded_events(futures::stream::iter(pieces), 100)
            .collect()
            .await;
        assert!(out[0].is_ok() && out[1].is_ok(), "{out:?}");
        assert!(matches!(out[2], Err(HttpError::TooLarge(100))), "{out:?}");
    }
}
