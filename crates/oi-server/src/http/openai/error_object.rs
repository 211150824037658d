//! The OpenAI-compatible endpoint's errors, as OpenAI sends them: a status and
//! `{"error": {"message", "type", "param", "code"}}`, so OpenAI's own clients raise the right
//! exception (`RateLimitError` for 429, `AuthenticationError` for 401, …).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use oi_core::{Failure, FailureKind};
use serde::Serialize;

use crate::error::ApiError;

/// OpenAI's error object (the value of `"error"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorObject {
    /// What went wrong, for a person.
    pub message: String,
    /// OpenAI's `type` (`invalid_request_error`, `requests`, `server_error`, …).
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The request field at fault, if one is.
    pub param: Option<&'static str>,
    /// OpenAI's `code` (`rate_limit_exceeded`, `invalid_api_key`, …), if one fits.
    pub code: Option<&'static str>,
}

/// `{"error": ErrorObject}`: the body of an error response, and of an SSE error event.
#[derive(Debug, Serialize)]
pub struct Envelope<'a> {
    /// The error.
    pub error: &'a ErrorObject,
}

/// An error of the OpenAI-compatible endpoint: the HTTP status and OpenAI's error object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The error object.
    pub body: ErrorObject,
}

impl OpenAiError {
    fn new(
        status: StatusCode,
        message: impl Into<String>,
        kind: &'static str,
        param: Option<&'static str>,
        code: Option<&'static str>,
    ) -> Self {
        OpenAiError {
            status,
            body: ErrorObject {
                message: message.into(),
                kind,
                param,
                code,
            },
        }
    }

    /// A failed turn: the status its kind stands for (a quota 429, the model server's 401, …).
    pub fn from_failure(failure: &Failure) -> Self {
        use FailureKind as K;
        const INVALID: &str = "invalid_request_error";
        const SERVER: &str = "server_error";
        let upstream = failure.status.and_then(|s| StatusCode::from_u16(s).ok());
        let (status, kind, param, code) = match failure.kind {
            K::RateLimit => (
                StatusCode::TOO_MANY_REQUESTS,
                "requests",
                None,
                Some("rate_limit_exceeded"),
            ),
            K::Budget => (
                StatusCode::TOO_MANY_REQUESTS,
                "insufficient_quota",
                None,
                Some("insufficient_quota"),
            ),
            K::Authentication if upstream == Some(StatusCode::FORBIDDEN) => {
                (StatusCode::FORBIDDEN, INVALID, None, None)
            }
            K::Authentication => (
                StatusCode::UNAUTHORIZED,
                INVALID,
                None,
                Some("invalid_api_key"),
            ),
            K::ContextWindow => (
                StatusCode::BAD_REQUEST,
                INVALID,
                Some("messages"),
                Some("context_length_exceeded"),
            ),
            K::Upstream => match upstream.filter(passed_on) {
                Some(status) => (status, INVALID, None, None),
                None => (StatusCode::BAD_GATEWAY, SERVER, None, None),
            },
            K::Unreachable | K::Stream => (StatusCode::BAD_GATEWAY, SERVER, None, None),
            K::NoMessage => (StatusCode::BAD_REQUEST, INVALID, Some("messages"), None),
            K::Config | K::History | K::Internal => {
                (StatusCode::INTERNAL_SERVER_ERROR, SERVER, None, None)
            }
        };
        OpenAiError::new(status, failure.message.clone(), kind, param, code)
    }

    /// An error chunk that carries no failure: the model server's fault (502).
    pub fn bad_gateway(message: impl Into<String>) -> Self {
        OpenAiError::new(StatusCode::BAD_GATEWAY, message, "server_error", None, None)
    }

    /// The SSE event that ends a stream that failed after it started.
    pub fn sse_event(&self) -> String {
        let json = serde_json::to_string(&Envelope { error: &self.body })
            .unwrap_or_else(|_| "{}".to_owned());
        format!("data: {json}\n\n")
    }
}

/// The model server's refusals that mean the same to this endpoint's client (the request it
/// sent was wrong: bad, unknown model, conflict, too large, unprocessable). Any other status
/// of the model server (a proxy's 407, 426, 499, …) is the gateway's fault: 502.
fn passed_on(status: &StatusCode) -> bool {
    matches!(status.as_u16(), 400 | 404 | 409 | 413 | 422)
}

impl From<ApiError> for OpenAiError {
    fn from(error: ApiError) -> Self {
        let kind = if error.status.is_server_error() {
            "server_error"
        } else {
            "invalid_request_error"
        };
        OpenAiError::new(error.status, error.message, kind, None, None)
    }
}

impl IntoResponse for OpenAiError {
    fn into_response(self) -> Response {
        (self.status, Json(Envelope { error: &self.body })).into_response()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn answer(kind: FailureKind, status: Option<u16>) -> (u16, serde_json::Value) {
        let failure = Failure {
            kind,
            status,
            message: "m".into(),
        };
        let error = OpenAiError::from_failure(&failure);
        let body = serde_json::to_value(Envelope { error: &error.body }).unwrap();
        (error.status.as_u16(), body)
    }

    fn object(kind: &str, param: Option<&str>, code: Option<&str>) -> serde_json::Value {
        json!({"error": {"message": "m", "type": kind, "param": param, "code": code}})
    }

    #[test]
    fn each_kind_has_its_status() {
        use FailureKind as K;
        let invalid = "invalid_request_error";
        let cases = [
            (
                K::RateLimit,
                Some(429),
                429,
                object("requests", None, Some("rate_limit_exceeded")),
            ),
            (
                K::Budget,
                None,
                429,
                object("insufficient_quota", None, Some("insufficient_quota")),
            ),
            (
                K::Authentication,
                Some(401),
                401,
                object(invalid, None, Some("invalid_api_key")),
            ),
            (
                K::Authentication,
                Some(403),
                403,
                object(invalid, None, None),
            ),
            (
                K::ContextWindow,
                Some(400),
                400,
                object(invalid, Some("messages"), Some("context_length_exceeded")),
            ),
            (K::Upstream, Some(404), 404, object(invalid, None, None)),
            (K::Upstream, Some(422), 422, object(invalid, None, None)),
            (
                K::Upstream,
                Some(407),
                502,
                object("server_error", None, None),
            ),
            (
                K::Upstream,
                Some(426),
                502,
                object("server_error", None, None),
            ),
            (
                K::Upstream,
                Some(499),
                502,
                object("server_error", None, None),
            ),
            (
                K::Upstream,
                Some(503),
                502,
                object("server_error", None, None),
            ),
            (
                K::Unreachable,
                None,
                502,
                object("server_error", None, None),
            ),
            (K::Stream, None, 502, object("server_error", None, None)),
            (K::Config, None, 500, object("server_error", None, None)),
            (
                K::NoMessage,
                None,
                400,
                object(invalid, Some("messages"), None),
            ),
        ];
        for (kind, upstream, status, body) in cases {
            assert_eq!(answer(kind, upstream), (status, body), "{kind:?}");
        }
    }

    #[test]
    fn the_endpoints_own_errors_use_the_same_object() {
        let error = OpenAiError::from(ApiError::bad_request("no"));
        assert_eq!(
            (error.status, error.sse_event()),
            (
                StatusCode::BAD_REQUEST,
                "data: {\"error\":{\"message\":\"no\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}\n\n".to_owned()
            )
        );
    }
}
