//! HTTP authentication: one default-deny door in front of the whole router. Every request is
//! checked before it is routed (so unmatched paths and methods too), on its raw path: only
//! `GET /heartbeat`, `GET /` (the web page, or the default session's socket), `GET` of the
//! page's static files (their exact paths, web.rs: they hold no data, and the page must load
//! before the user can type the key) and a real
//! WebSocket upgrade of `/sessions/{id}` pass without the `X-API-KEY` header; the sockets then
//! demand the `{"auth": KEY}` frame before anything else (ws.rs). `//heartbeat`, `/heartbeat/`,
//! `/%68eartbeat` or `/HEARTBEAT` are not `/heartbeat`: they need the key like any other path.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::sessions::valid_id;
use crate::state::AppState;

/// The header that carries the key.
pub const API_KEY_HEADER: &str = "x-api-key";

/// The key in the request's `X-API-KEY` header.
pub fn header_key(headers: &HeaderMap) -> Option<&str> {
    headers.get(API_KEY_HEADER).and_then(|v| v.to_str().ok())
}

/// Whether `name`'s comma-separated value holds `token` (case-insensitive).
fn header_has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|value| {
        value.to_str().is_ok_and(|v| {
            v.split(',')
                .any(|part| part.trim().eq_ignore_ascii_case(token))
        })
    })
}

/// Whether `method` and `headers` make a real WebSocket upgrade (RFC 6455 4.1): `GET`,
/// `Upgrade: websocket`, `Connection: upgrade`, a `Sec-WebSocket-Key` and version 13. A
/// request that merely says `Upgrade: websocket` is not one.
pub fn is_websocket_upgrade(method: &Method, headers: &HeaderMap) -> bool {
    method == Method::GET
        && header_has_token(headers, header::UPGRADE, "websocket")
        && header_has_token(headers, header::CONNECTION, "upgrade")
        && headers.contains_key(header::SEC_WEBSOCKET_KEY)
        && headers
            .get(header::SEC_WEBSOCKET_VERSION)
            .is_some_and(|v| v.as_bytes() == b"13")
}

/// Whether a request may pass the door without the key: `GET /heartbeat`, `GET /` (the web
/// page; as an upgrade, the socket then asks for the auth frame), `GET` of exactly one of the
/// page's static files ([`crate::http::web::asset_paths`]), and a real WebSocket upgrade of
/// `/sessions/{id}` with a valid id. `path` is the raw path, as sent.
pub fn open_without_key(method: &Method, path: &str, headers: &HeaderMap) -> bool {
    if method != Method::GET {
        return false;
    }
    if path == "/heartbeat" || path == "/" || crate::http::web::is_asset(path) {
        return true;
    }
    path.strip_prefix("/sessions/")
        .is_some_and(|id| valid_id(id) && is_websocket_upgrade(method, headers))
}

/// The door, in front of the whole router (routes.rs): refuses (403) a request without the
/// right key unless [`open_without_key`] lets it through without one. A key that is sent is
/// always checked, even where none is needed.
pub async fn require_key(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let key = header_key(request.headers());
    let open = match key {
        Some(_) => state.config.key_ok(key),
        None => {
            state.config.key_ok(None)
                || open_without_key(request.method(), request.uri().path(), request.headers())
        }
    };
    if open {
        next.run(request).await
    } else {
        ApiError::forbidden("Authentication failed").into_response()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    const REAL: &[(&str, &str)] = &[
        ("upgrade", "websocket"),
        ("connection", "keep-alive, Upgrade"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("sec-websocket-version", "13"),
    ];

    #[test]
    fn only_the_heartbeat_the_page_and_real_upgrades_pass_without_a_key() {
        let none = HeaderMap::new();
        let real = headers(REAL);
        let fake = headers(&[("upgrade", "websocket"), ("connection", "Upgrade")]);
        assert!(open_without_key(&Method::GET, "/heartbeat", &none));
        assert!(open_without_key(&Method::GET, "/", &none));
        assert!(open_without_key(&Method::GET, "/sessions/a-1_B", &real));
        assert!(open_without_key(&Method::GET, "/static/app.js", &none));
        assert!(open_without_key(&Method::GET, "/favicon.svg", &none));
        for (method, path, h) in [
            (Method::GET, "/sessions/a", &fake),
            (Method::GET, "/sessions/a", &none),
            (Method::POST, "/sessions/a", &real),
            (Method::POST, "/", &real),
            (Method::POST, "/openai/chat/completions", &fake),
            (Method::HEAD, "/heartbeat", &none),
            (Method::GET, "//heartbeat", &none),
            (Method::GET, "/heartbeat/", &none),
            (Method::GET, "/%68eartbeat", &none),
            (Method::GET, "/HEARTBEAT", &none),
            (Method::GET, "//", &none),
            (Method::GET, "/sessions/a/", &real),
            (Method::GET, "/sessions/%2e%2e", &real),
            (Method::GET, "/sessions/../settings", &real),
            (Method::GET, "/sessions//settings", &real),
            (Method::GET, "/settings", &real),
            (Method::POST, "/static/app.js", &none),
            (Method::HEAD, "/static/app.css", &none),
            (Method::GET, "/static/app.js/", &none),
            (Method::GET, "//static/app.js", &none),
            (Method::GET, "/static/%61pp.js", &none),
            (Method::GET, "/static/../settings", &none),
            (Method::GET, "/static/", &none),
            (Method::GET, "/sessions/a/messages", &real),
        ] {
            assert!(!open_without_key(&method, path, h), "{method} {path}");
        }
    }

    #[test]
    fn an_upgrade_needs_every_part_of_the_handshake() {
        assert!(is_websocket_upgrade(&Method::GET, &headers(REAL)));
        for missing in 0..REAL.len() {
            let partial: Vec<_> = REAL
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != missing)
                .map(|(_, h)| *h)
                .collect();
            assert!(!is_websocket_upgrade(&Method::GET, &headers(&partial)));
        }
        assert!(!is_websocket_upgrade(&Method::POST, &headers(REAL)));
    }
}
