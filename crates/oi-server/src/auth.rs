//! HTTP authentication: the `X-API-KEY` header, checked on every route but `/heartbeat` and
//! the test page (spec c.4). WebSocket upgrades without the header authenticate in-band.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;

/// The header that carries the key.
pub const API_KEY_HEADER: &str = "x-api-key";

/// The key in the request's `X-API-KEY` header.
pub fn header_key(headers: &HeaderMap) -> Option<&str> {
    headers.get(API_KEY_HEADER).and_then(|v| v.to_str().ok())
}

fn is_websocket_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// Refuses requests with a wrong or missing key (403), except `/heartbeat`, the test page
/// (`GET /` without an upgrade) and WebSocket upgrades without the header (they authenticate
/// with their first frame).
pub async fn require_key(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let headers = request.headers();
    let exempt = path == "/heartbeat"
        || (request.method() == Method::GET && path == "/" && !is_websocket_upgrade(headers))
        || (is_websocket_upgrade(headers) && header_key(headers).is_none());
    if exempt || state.config.key_ok(header_key(headers)) {
        next.run(request).await
    } else {
        ApiError::forbidden("Authentication failed").into_response()
    }
}
