//! The router: every route of spec c.3 (fixed), plus sessions.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequestParts, Path, Request, State, WebSocketUpgrade};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, delete, get, post};
use serde_json::{Value, json};

use crate::error::{ApiError, parse_json};
use crate::http::auth::{header_key, is_websocket_upgrade, require_key};
use crate::sessions::settings_patch::{PatchError, apply_each, get_setting};
use crate::sessions::{DEFAULT_SESSION, Session};
use crate::state::AppState;
use crate::{http::insecure, http::openai, http::ws};

/// What a WebSocket connection reads into at first.
const READ_BUFFER_BYTES: usize = 4096;

/// One route the server registers: its path pattern (axum's syntax) and its methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteSpec {
    /// The path pattern, e.g. `/sessions/{id}`.
    pub path: &'static str,
    /// The methods it answers (`GET` also answers `HEAD`).
    pub methods: &'static [&'static str],
}

const fn spec(path: &'static str, methods: &'static [&'static str]) -> RouteSpec {
    RouteSpec { path, methods }
}

/// The routes of spec c.3 plus sessions.
const ROUTES: &[RouteSpec] = &[
    spec("/", &["GET"]),
    spec("/heartbeat", &["GET"]),
    spec("/settings", &["GET", "POST"]),
    spec("/settings/{name}", &["GET"]),
    spec("/sessions", &["GET"]),
    spec("/sessions/{id}", &["GET", "POST", "DELETE"]),
    spec("/sessions/{id}/messages", &["GET"]),
    spec("/openai/chat/completions", &["POST"]),
    // MCP over Streamable HTTP (oi-mcp): POST messages, GET the event stream, DELETE the
    // MCP session. Behind the same door as every route.
    spec("/mcp", &["GET", "POST", "DELETE"]),
];

/// The routes that run code or touch files directly (`INTERPRETER_INSECURE_ROUTES=true`).
const INSECURE_ROUTES: &[RouteSpec] = &[
    spec("/run", &["POST"]),
    spec("/upload", &["POST"]),
    spec("/download/{*path}", &["GET"]),
];

/// Every route [`router`] registers, and nothing else: the router is built from this list,
/// so a test that tries each of them cannot miss one.
pub fn route_table(insecure_routes: bool) -> Vec<RouteSpec> {
    let mut routes = ROUTES.to_vec();
    // The web page's static files (web.rs; `/` above is its HTML).
    routes.extend(crate::http::web::asset_paths().map(|path| spec(path, &["GET"])));
    if insecure_routes {
        routes.extend_from_slice(INSECURE_ROUTES);
    }
    routes
}

/// The handler of `method` on `path`, for each pair of the route table.
fn endpoint(path: &str, method: &str) -> Option<MethodRouter<AppState>> {
    Some(match (path, method) {
        ("/", "GET") => get(root),
        ("/heartbeat", "GET") => get(heartbeat),
        ("/settings", "GET") => get(get_all_settings),
        ("/settings", "POST") => post(post_settings),
        ("/settings/{name}", "GET") => get(get_settings),
        ("/sessions", "GET") => get(list_sessions),
        ("/sessions/{id}", "GET") => get(session_socket),
        ("/sessions/{id}", "POST") => post(create_session),
        ("/sessions/{id}", "DELETE") => delete(delete_session),
        ("/sessions/{id}/messages", "GET") => get(session_messages),
        ("/openai/chat/completions", "POST") => post(openai::chat_completions),
        ("/mcp", "GET") => get(mcp),
        ("/mcp", "POST") => post(mcp),
        ("/mcp", "DELETE") => delete(mcp),
        ("/run", "POST") => post(insecure::run),
        ("/upload", "POST") => post(insecure::upload),
        ("/download/{*path}", "GET") => get(insecure::download),
        (asset, "GET") if crate::http::web::is_asset(asset) => get(crate::http::web::serve),
        _ => return None,
    })
}

/// The whole application: the routes of [`route_table`] behind one door. The key check
/// (auth.rs) wraps the router as a whole, so it runs before routing, on the raw path, for
/// every request: matched or not, any method.
pub fn router(state: AppState) -> Router {
    let mut routes = Router::new();
    for spec in route_table(state.config.insecure_routes) {
        let methods = spec
            .methods
            .iter()
            .filter_map(|method| endpoint(spec.path, method))
            .reduce(MethodRouter::merge);
        if let Some(methods) = methods {
            routes = routes.route(spec.path, methods);
        }
    }
    let routes = routes.fallback(not_found).with_state(state.clone());
    Router::new()
        .fallback_service(routes)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            require_key,
        ))
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            state.hosts.clone(),
            crate::limits::origin::allowed_host_and_origin,
        ))
}

/// Any path the router does not have: 404 with `{"detail": "Not Found"}`, as FastAPI answers.
async fn not_found() -> Response {
    not_found_response()
}

fn not_found_response() -> Response {
    (
        axum::http::StatusCode::NOT_FOUND,
        Json(json!({"detail": "Not Found"})),
    )
        .into_response()
}

/// `/mcp`: handed to oi-mcp's Streamable HTTP service once the door let the request in; 404
/// when this server does not offer MCP; 503 for a new MCP session (a `POST` without
/// `Mcp-Session-Id`) when the server holds as many as it may.
async fn mcp(State(state): State<AppState>, request: Request) -> Response {
    use tower::ServiceExt as _;
    let Some(mcp) = state.mcp.clone() else {
        return not_found_response();
    };
    // A POST without a session header may open an MCP session: refused when the server holds
    // its limit. Nothing is held while the request runs; the interpreters a call starts are
    // capped by oi-mcp's slots, whatever the headers say.
    let opens_one = request.method() == axum::http::Method::POST
        && !request.headers().contains_key("mcp-session-id")
        && !stateless_protocol(request.headers());
    if opens_one && let Err(full) = mcp.admit().await {
        return (
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"error": full})),
        )
            .into_response();
    }
    match mcp.service().oneshot(request).await {
        Ok(response) => response.into_response(),
        Err(never) => match never {},
    }
}

/// Whether a request names an MCP protocol without sessions (2026-07-28 and later): it opens
/// no MCP session, so only the interpreter slots bound it.
fn stateless_protocol(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|version| version.trim() >= "2026-07-28")
}

async fn heartbeat() -> Json<Value> {
    Json(json!({"status": "alive"}))
}

/// Upgrades to a WebSocket on `session`, or `None` when the request is not an upgrade.
async fn upgrade(state: AppState, session: Arc<Session>, request: Request) -> Option<Response> {
    let (mut parts, _body) = request.into_parts();
    let authenticated = header_key(&parts.headers).is_some();
    let upgrade = WebSocketUpgrade::from_request_parts(&mut parts, &state)
        .await
        .ok()?;
    let max = state.config.max_frame_bytes;
    let asks = crate::sessions::outbox::Asks {
        input_numbers: wants_input_numbers(parts.uri.query()),
        usage: asks_for(parts.uri.query(), "usage"),
        replay: replay_from(parts.uri.query()),
    };
    let guard = (!ws::needs_auth_frame(&state, authenticated))
        .then(|| crate::sessions::AttachGuard::new(session.clone()));
    Some(
        upgrade
            .max_frame_size(max)
            .max_message_size(max)
            // 128 KiB by default, allocated for every connection up front: most of what an
            // idle session cost. Larger frames grow the buffer as they come.
            .read_buffer_size(READ_BUFFER_BYTES)
            .on_upgrade(move |socket| ws::serve_socket(socket, state, session, guard, asks))
            .into_response(),
    )
}

/// Whether the upgrade's query asks for numbered `complete`s (`?input_numbers=true` or `=1`):
/// opt-in, so that clients written for the original, which compare the whole `complete`
/// chunk, get it exactly as the original sends it.
fn wants_input_numbers(query: Option<&str>) -> bool {
    asks_for(query, "input_numbers")
}

/// Whether the query turns the opt-in `name` on (`name`, `name=true`, `=1` or `=yes`):
/// `input_numbers`, and `usage` (each `complete` carries the turn's and the session's
/// tokens and cost).
fn asks_for(query: Option<&str>, name: &str) -> bool {
    query
        .unwrap_or_default()
        .split('&')
        .filter_map(|pair| pair.split_once('=').or(Some((pair, "true"))))
        .any(|(key, value)| key == name && matches!(value, "1" | "true" | "yes"))
}

/// Where the log replay starts, if the query asks for one: `replay=all` (from the start, 0)
/// or `since=N` (after entry N).
fn replay_from(query: Option<&str>) -> Option<u64> {
    let mut from = None;
    for (key, value) in query
        .unwrap_or_default()
        .split('&')
        .filter_map(|pair| pair.split_once('='))
    {
        match (key, value) {
            ("replay", "all") => from = from.or(Some(0)),
            ("since", n) => from = n.parse::<u64>().ok().or(from),
            _ => {}
        }
    }
    from
}

/// `GET /`: the WebSocket of the default session, or the web page (web.rs).
async fn root(State(state): State<AppState>, request: Request) -> Response {
    let session = state.sessions.default_session();
    match upgrade(state, session, request).await {
        Some(response) => response,
        None => crate::http::web::asset("/").unwrap_or_else(not_found_response),
    }
}

/// `GET /sessions/{id}`: the WebSocket of session `id` (created on first use), or its summary.
async fn session_socket(
    State(state): State<AppState>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let is_upgrade = is_websocket_upgrade(request.method(), request.headers());
    if !is_upgrade {
        return match state.sessions.list().into_iter().find(|s| s.id == id) {
            Some(info) => Json(info).into_response(),
            None => ApiError::not_found(format!("no session {id}")).into_response(),
        };
    }
    let exists = state.sessions.list().iter().any(|s| s.id == id);
    if !exists
        && state.config.api_key.is_some()
        && !state.config.key_ok(header_key(request.headers()))
    {
        return ApiError::forbidden(
            "creating a session needs the X-API-KEY header on the upgrade request when INTERPRETER_API_KEY is set",
        )
        .into_response();
    }
    let session = match open_session(&state, &id).await {
        Ok(session) => session,
        Err(refusal) => return refusal,
    };
    match upgrade(state, session, request).await {
        Some(response) => response,
        None => ApiError::bad_request("expected a WebSocket upgrade").into_response(),
    }
}

/// Session `id`, created if needed (claimed first when replicas share a store); an evicted
/// session is shut down aside.
async fn open_session(state: &AppState, id: &str) -> Result<Arc<Session>, Response> {
    if let Some(cluster) = state.sessions.cluster().cloned() {
        crate::sessions::cluster::claim(&state.sessions, &cluster, id)
            .await
            .map_err(IntoResponse::into_response)?;
    }
    let (session, evicted) = state.sessions.get_or_create(id).map_err(|e| {
        let status = match e {
            crate::sessions::SessionError::InvalidId(_) => axum::http::StatusCode::BAD_REQUEST,
            crate::sessions::SessionError::Full(_) => axum::http::StatusCode::SERVICE_UNAVAILABLE,
        };
        ApiError::new(status, e.to_string()).into_response()
    })?;
    if let Some(evicted) = evicted {
        tokio::spawn(async move { evicted.shutdown().await });
    }
    Ok(session)
}

/// `POST /sessions/{id}`: creates session `id` (or finds it) and answers its entry. Behind
/// the key like every route: a browser cannot put `X-API-KEY` on a WebSocket upgrade, so the
/// web page creates a session this way and then connects to it.
async fn create_session(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    if let Err(refusal) = open_session(&state, &id).await {
        return refusal;
    }
    match state.sessions.list().into_iter().find(|s| s.id == id) {
        Some(info) => Json(info).into_response(),
        None => ApiError::not_found(format!("no session {id}")).into_response(),
    }
}

/// `GET /sessions/{id}/messages`: the conversation of session `id` (`default`: the default
/// session), as `GET /settings/messages` shows the default session's: `{"messages": [...]}`.
async fn session_messages(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let session = if id == DEFAULT_SESSION {
        Some(state.sessions.default_session())
    } else {
        state.sessions.get(&id)
    };
    let session = session.ok_or_else(|| ApiError::not_found(format!("no session {id}")))?;
    let interpreter = session.interpreter().interpreter();
    let messages =
        serde_json::to_value(&*interpreter.messages_mut()).unwrap_or(Value::Array(Vec::new()));
    Ok(Json(json!({ "messages": messages })))
}

async fn list_sessions(State(state): State<AppState>) -> Json<Value> {
    Json(json!({"sessions": state.sessions.list()}))
}

async fn delete_session(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    if let Some(cluster) = state.sessions.cluster().cloned() {
        if id != DEFAULT_SESSION {
            // The session may live in the store, served here, elsewhere or nowhere.
            return crate::sessions::cluster::delete(&state.sessions, &cluster, &id).await;
        }
    }
    delete_local(state, id).await.into_response()
}

async fn delete_local(state: AppState, id: String) -> Result<Json<Value>, ApiError> {
    if id == DEFAULT_SESSION {
        let session = state.sessions.default_session();
        session.interpreter().stop().await;
        session.interpreter().interpreter().reset().await;
        return Ok(Json(json!({"status": "success"})));
    }
    let session = state
        .sessions
        .remove(&id)
        .ok_or_else(|| ApiError::not_found(format!("no session {id}")))?;
    session.shutdown().await;
    state.sessions.remove_file(&id).await;
    Ok(Json(json!({"status": "success"})))
}

/// `POST /settings`: changes settings of the default session, key by key: a refused key is
/// named with its reason and the others are applied (`{"status": "partial", …}`); when no
/// key could be applied the answer is the refusal's status (403 or 422).
async fn post_settings(
    State(state): State<AppState>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let patch = parse_json(&body)?;
    let session = state.sessions.default_session();
    let interpreter = session.interpreter().interpreter();
    // Read, checked and written under one lock: two clients' patches cannot interleave, and
    // what a turn records meanwhile (the conversation's file) lives beside the settings.
    let runtime = interpreter.runtime();
    let mut settings = interpreter.settings_mut();
    let applied = apply_each(&settings, &runtime, &patch, state.policy())
        .map_err(|e| ApiError::unprocessable(e.to_string()))?;
    if applied.applied.is_empty() {
        if let Some((_, first)) = applied.refused.first() {
            let message = applied
                .refused
                .iter()
                .map(|(_, e)| e.to_string())
                .collect::<Vec<_>>()
                .join("; ");
            return Err(match first {
                PatchError::Forbidden { .. } | PatchError::Refused { .. } => {
                    ApiError::forbidden(message)
                }
                _ => ApiError::unprocessable(message),
            });
        }
    }
    *settings = applied.settings;
    drop(settings);
    if let Some(messages) = applied.messages {
        interpreter.set_messages(messages);
    }
    if applied.refused.is_empty() {
        return Ok(Json(json!({"status": "success"})));
    }
    let refused: serde_json::Map<String, Value> = applied
        .refused
        .iter()
        .map(|(key, e)| (key.clone(), Value::String(e.to_string())))
        .collect();
    Ok(Json(json!({
        "status": "partial",
        "applied": applied.applied,
        "refused": refused,
    })))
}

/// `GET /settings/{name}`: `{name: value}`.
async fn get_settings(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let session = state.sessions.default_session();
    let interpreter = session.interpreter().interpreter();
    let value = get_setting(
        &interpreter.settings(),
        &interpreter.runtime(),
        &interpreter.messages(),
        &name,
    )
    .ok_or_else(|| ApiError::not_found(format!("Setting {name} not found")))?;
    Ok(Json(json!({ name: value })))
}

/// `GET /settings`: every setting (the API key redacted).
async fn get_all_settings(State(state): State<AppState>) -> Json<Value> {
    let session = state.sessions.default_session();
    let interpreter = session.interpreter().interpreter();
    Json(crate::sessions::settings_patch::settings_json(
        &interpreter.settings(),
        &interpreter.runtime(),
    ))
}

#[cfg(test)]
mod tests {
    use super::{endpoint, route_table, wants_input_numbers};

    #[test]
    fn every_route_in_the_table_has_a_handler() {
        for spec in route_table(true) {
            for method in spec.methods {
                assert!(
                    endpoint(spec.path, method).is_some(),
                    "{method} {}",
                    spec.path
                );
            }
        }
        assert_eq!(route_table(false).len() + 3, route_table(true).len());
    }

    #[test]
    fn input_numbers_are_asked_for_only_by_the_query() {
        assert!(!wants_input_numbers(None));
        assert!(!wants_input_numbers(Some("")));
        assert!(!wants_input_numbers(Some("input_numbers=0")));
        assert!(!wants_input_numbers(Some("input_numbers=false")));
        assert!(!wants_input_numbers(Some("other=1")));
        assert!(wants_input_numbers(Some("input_numbers=1")));
        assert!(wants_input_numbers(Some("input_numbers=true")));
        assert!(wants_input_numbers(Some("a=b&input_numbers")));
        assert!(super::asks_for(Some("input_numbers=1&usage=true"), "usage"));
        assert!(!super::asks_for(Some("usage=false"), "usage"));
        assert_eq!(super::replay_from(None), None);
        assert_eq!(super::replay_from(Some("input_numbers=1")), None);
        assert_eq!(super::replay_from(Some("replay=all")), Some(0));
        assert_eq!(super::replay_from(Some("replay=all&since=7")), Some(7));
        assert_eq!(super::replay_from(Some("since=12")), Some(12));
        assert_eq!(super::replay_from(Some("since=x")), None);
    }
}
