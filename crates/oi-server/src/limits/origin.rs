//! Refuses requests that a web page could have made against the user's will, on every route
//! and before any WebSocket upgrade:
//!
//! - a `Host` that does not name this server (DNS rebinding: the attacker's name now resolves
//!   to the server's address, so the browser calls the page same-origin);
//! - an `Origin` that is not a page of this server (WebSocket upgrades are not covered by
//!   CORS, and a plain-text POST needs no preflight).
//!
//! Requests without `Origin` (curl, SDKs, the Python `websockets` and `openai` clients) pass
//! the second check; requests without `Host` (not a browser: HTTP/1.0 clients) pass the first.
//! `/heartbeat` is checked too: a client always sends the name it connected to, which is an
//! allowed name, and a page probing for the server learns nothing.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::limits::allowed_hosts::AllowedHosts;

/// The request's `Host` (the header, else the authority of an absolute-form target).
fn host_of(request: &Request) -> Option<Result<String, ()>> {
    match request.headers().get(header::HOST) {
        Some(value) => Some(value.to_str().map(str::to_owned).map_err(|_| ())),
        None => request.uri().authority().map(|a| Ok(a.as_str().to_owned())),
    }
}

/// Middleware: 403 when `Host` does not name this server or `Origin` is another site.
pub async fn allowed_host_and_origin(
    State(allowed): State<Arc<AllowedHosts>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(host) = host_of(&request) {
        let host = host.unwrap_or_default();
        if !allowed.host_ok(&host) {
            return ApiError::forbidden(format!(
                "Host {host:?} is not a name of this server, so the request was refused (a web page may be attempting DNS rebinding). Connect with localhost, 127.0.0.1, [::1] or the address the server is bound to, or start the server with --allowed-host NAME (or INTERPRETER_ALLOWED_HOSTS=NAME,…) to allow another name"
            ))
            .into_response();
        }
    }
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    if let Some(origin) = origin {
        if !allowed.origin_ok(&origin) {
            return ApiError::forbidden(format!(
                "cross-origin request from {origin} refused: only pages served by this server (http://ALLOWED-HOST:{}) and clients that send no Origin header may use it; start the server with --allowed-host NAME to allow a page on another name",
                allowed.port()
            ))
            .into_response();
        }
    }
    next.run(request).await
}
