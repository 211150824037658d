//! Refuses cross-site requests: a browser page from another origin must not drive the server
//! (WebSocket upgrades are not covered by CORS, and a plain-text POST needs no preflight).
//! Requests without an `Origin` header (curl, SDKs, scripts) are not affected.

use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Whether `origin` (e.g. `http://127.0.0.1:8000`) names the same host and port as `host`.
pub fn same_origin(origin: &str, host: &str) -> bool {
    let authority = origin
        .split_once("://")
        .map_or(origin, |(_, rest)| rest)
        .trim_end_matches('/');
    authority.eq_ignore_ascii_case(host)
}

/// Middleware: 403 when the request carries an `Origin` that is not this server.
pub async fn same_origin_only(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    match origin {
        Some(origin) if !same_origin(origin, host) => ApiError::forbidden(format!(
            "cross-origin request from {origin} refused: only pages served by this server (or clients that send no Origin header) may use it"
        ))
        .into_response(),
        _ => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::same_origin;

    #[test]
    fn same_host_and_port_only() {
        assert!(same_origin("http://127.0.0.1:8000", "127.0.0.1:8000"));
        assert!(same_origin("http://LOCALHOST:8000/", "localhost:8000"));
        assert!(!same_origin("http://evil.example", "127.0.0.1:8000"));
        assert!(!same_origin("http://127.0.0.1:9999", "127.0.0.1:8000"));
        assert!(!same_origin("null", "127.0.0.1:8000"));
    }
}
