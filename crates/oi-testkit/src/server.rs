//! The HTTP server: routes, request recording, and streamed bodies.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::anthropic::{self, AnthropicWire};
use crate::reply::{Body as ReplyBody, Ending, Reply};
use crate::script::{Next, Script};
use crate::sse::{Wire, data_event};

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The query string, if any (e.g. `api-version=2024-02-01`).
    pub query: Option<String>,
    /// The `authorization` header, if any.
    pub authorization: Option<String>,
    /// The `x-api-key` header (Anthropic), if any.
    pub api_key: Option<String>,
    /// The `anthropic-version` header, if any.
    pub anthropic_version: Option<String>,
    /// Every header, names in lower case, sorted by name (for wires with their own headers).
    pub headers: Vec<(String, String)>,
    /// The JSON body (a JSON string holding the raw text when the body was not JSON).
    pub body: Value,
}

#[derive(Debug)]
struct Inner {
    script: Script,
    requests: Vec<RecordedRequest>,
    /// Chat requests received (also when they are not recorded).
    count: usize,
    ollama: Vec<Value>,
    /// Models pulled through `/api/pull` (listed by `/api/tags` from then on).
    pulled: Vec<String>,
}

/// The largest request body the server reads.
const REQUEST_BODY_LIMIT: usize = 256 << 20;

/// The context length the scripted server's Ollama `/api/show` reports.
pub const OLLAMA_CONTEXT_LENGTH: u64 = 2048;

type Shared = Arc<Mutex<Inner>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Inner> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A running scripted server on `127.0.0.1`; it stops when dropped.
#[derive(Debug)]
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Shared,
    task: JoinHandle<()>,
}

impl ScriptedServer {
    /// Starts a server on `127.0.0.1` with a free port.
    pub async fn start(script: Script) -> std::io::Result<ScriptedServer> {
        ScriptedServer::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), script).await
    }

    /// Starts a server on `addr` (port 0 picks a free port).
    pub async fn start_on(addr: SocketAddr, script: Script) -> std::io::Result<ScriptedServer> {
        let listener = listen(addr)?;
        let addr = listener.local_addr()?;
        let shared: Shared = Arc::new(Mutex::new(Inner {
            script,
            requests: Vec::new(),
            count: 0,
            ollama: Vec::new(),
            pulled: Vec::new(),
        }));
        let app = router(shared.clone());
        let task = tokio::spawn(async move {
            // The server runs until the task is aborted; an accept error ends it.
            // Each SSE event is its own small write: without TCP_NODELAY, Nagle's algorithm
            // would hold every second one back until the first is acknowledged (~40 ms).
            let listener =
                axum::serve::ListenerExt::tap_io(listener, |stream: &mut tokio::net::TcpStream| {
                    let _ = stream.set_nodelay(true);
                });
            let _ = axum::serve(listener, app).await;
        });
        Ok(ScriptedServer { addr, shared, task })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The OpenAI-style base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The Anthropic-style base URL, `http://127.0.0.1:PORT` (requests go to `/v1/messages`;
    /// [`base_url`](Self::base_url) works too).
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The bodies of Ollama `/api/show` requests received so far (kept apart from
    /// [`requests`](Self::requests)).
    pub fn ollama_show_requests(&self) -> Vec<Value> {
        lock(&self.shared).ollama.clone()
    }

    /// The models pulled through Ollama's `/api/pull` so far.
    pub fn ollama_pulled(&self) -> Vec<String> {
        lock(&self.shared).pulled.clone()
    }

    /// Every chat-completions or messages request received so far, in order (none for a
    /// script [without recording](Script::without_recording)).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared).requests.clone()
    }

    /// How many chat-completions or messages requests were received so far.
    pub fn request_count(&self) -> usize {
        lock(&self.shared).count
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A listener on `addr` with the longest backlog the system grants (`somaxconn`): a load test
/// that sends a thousand requests at once must not lose connections to the default 128.
fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    let backlog = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(1024);
    socket.listen(backlog)
}

/// Runs a scripted server on `addr` until CTRL-C (for a standalone binary).
pub async fn serve(addr: SocketAddr, script: Script) -> std::io::Result<()> {
    let server = ScriptedServer::start_on(addr, script).await?;
    eprintln!(
        "scripted model server listening on {} (CTRL-C to stop)",
        server.base_url()
    );
    tokio::signal::ctrl_c().await?;
    drop(server);
    Ok(())
}

fn router(shared: Shared) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(chat_completions))
        .route("/chat/completions", post(chat_completions))
        .route("/v1/models", get(models))
        .route("/models", get(models))
        .route("/api/show", post(ollama_show))
        .route("/api/tags", get(ollama_tags))
        .route("/api/pull", post(ollama_pull))
        .route("/v1/messages", post(messages))
        .route("/messages", post(messages))
        // Providers put their APIs under other paths (`/openai/v1`, `/api/v1`, …).
        .fallback(post(any_path))
        // Real model servers accept large requests (and judge them by tokens); axum's 2 MB
        // default would turn a long conversation into a 413.
        .layer(DefaultBodyLimit::max(REQUEST_BODY_LIMIT))
        .with_state(shared)
}

async fn ollama_show(State(shared): State<Shared>, raw: Bytes) -> Response {
    let body = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    lock(&shared).ollama.push(body);
    axum::Json(json!({
        "modelfile": "",
        "details": { "family": "llama" },
        "model_info": {
            "general.architecture": "llama",
            "llama.context_length": OLLAMA_CONTEXT_LENGTH,
        },
    }))
    .into_response()
}

async fn ollama_tags(State(shared): State<Shared>) -> Response {
    let mut models = vec![
        json!({ "name": "scripted:latest", "model": "scripted:latest" }),
        json!({ "name": "llama3.1:8b", "model": "llama3.1:8b" }),
    ];
    for name in &lock(&shared).pulled {
        models.push(json!({ "name": name, "model": name }));
    }
    axum::Json(json!({ "models": models })).into_response()
}

/// Ollama's `/api/pull`: newline-delimited JSON progress (manifest, one layer in four steps,
/// success); the model is listed by `/api/tags` afterwards. A name containing `missing` is
/// answered with Ollama's error line.
async fn ollama_pull(State(shared): State<Shared>, raw: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let name = body
        .get("model")
        .or_else(|| body.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut lines = vec![json!({ "status": "pulling manifest" })];
    if name.contains("missing") {
        lines.push(json!({ "error": "pull model manifest: file does not exist" }));
    } else {
        let total = 4_000_000_u64;
        for completed in [0, 1_000_000, 2_500_000, total] {
            lines.push(json!({
                "status": "pulling 6a0746a1ec1a",
                "digest": "sha256:6a0746a1ec1a",
                "total": total,
                "completed": completed,
            }));
        }
        lines.push(json!({ "status": "verifying sha256 digest" }));
        lines.push(json!({ "status": "writing manifest" }));
        lines.push(json!({ "status": "success" }));
        let tagged = if name.contains(':') {
            name
        } else {
            format!("{name}:latest")
        };
        lock(&shared).pulled.push(tagged);
    }
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    ([(header::CONTENT_TYPE, "application/x-ndjson")], text).into_response()
}

/// Chat completions or messages under any path that ends like them.
async fn any_path(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let path = uri.path();
    if path.ends_with("/chat/completions") {
        handle(&shared, &uri, &headers, &raw, WireKind::OpenAi)
    } else if path.ends_with("/messages") {
        handle(&shared, &uri, &headers, &raw, WireKind::Anthropic)
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

async fn models() -> Response {
    axum::Json(json!({
        "object": "list",
        "data": [{ "id": "scripted", "object": "model", "created": 0, "owned_by": "oi-testkit" }],
    }))
    .into_response()
}

/// Which wire a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WireKind {
    OpenAi,
    Anthropic,
}

async fn chat_completions(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    handle(&shared, &uri, &headers, &raw, WireKind::OpenAi)
}

async fn messages(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    handle(&shared, &uri, &headers, &raw, WireKind::Anthropic)
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn all_headers(headers: &HeaderMap) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = headers
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    all.sort();
    all
}

fn handle(
    shared: &Shared,
    uri: &Uri,
    headers: &HeaderMap,
    raw: &Bytes,
    wire: WireKind,
) -> Response {
    let parsed: Result<Value, _> = serde_json::from_slice(raw);
    let body = match &parsed {
        Ok(value) => value.clone(),
        Err(_) => Value::String(String::from_utf8_lossy(raw).into_owned()),
    };
    let next = {
        let mut inner = lock(shared);
        inner.count += 1;
        if inner.script.records() {
            inner.requests.push(RecordedRequest {
                path: uri.path().to_owned(),
                query: uri.query().map(str::to_owned),
                authorization: header_text(headers, header::AUTHORIZATION.as_str()),
                api_key: header_text(headers, "x-api-key"),
                anthropic_version: header_text(headers, "anthropic-version"),
                headers: all_headers(headers),
                body: body.clone(),
            });
        }
        let count = inner.count;
        match &parsed {
            Ok(_) => (inner.script.next(&body), count),
            Err(e) => {
                let message = format!("oi-testkit: the request body is not JSON: {e}");
                return error_response(
                    wire,
                    StatusCode::BAD_REQUEST,
                    &message,
                    "invalid_request_error",
                );
            }
        }
    };
    match next {
        (Next::Reply(reply), count) => respond(reply, &body, count, wire),
        (Next::Exhausted { total }, count) => {
            let message = format!(
                "oi-testkit: the script ran out of replies: request #{count} arrived but the script had only {total}"
            );
            error_response(
                wire,
                StatusCode::INTERNAL_SERVER_ERROR,
                &message,
                "script_exhausted",
            )
        }
    }
}

fn error_response(wire: WireKind, status: StatusCode, message: &str, kind: &str) -> Response {
    let body = match wire {
        WireKind::OpenAi => json!({ "error": { "message": message, "type": kind, "code": null } }),
        WireKind::Anthropic => anthropic::error_body(kind, message),
    };
    (status, axum::Json(body)).into_response()
}

fn respond(reply: Reply, request: &Value, count: usize, wire_kind: WireKind) -> Response {
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("scripted")
        .to_owned();
    let streaming = request
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let wire = Wire {
        id: format!("chatcmpl-scripted-{count}"),
        model: &model,
    };
    match &reply.body {
        ReplyBody::Status {
            code,
            body,
            retry_after,
        } => {
            let status = StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let content_type = if serde_json::from_str::<Value>(body).is_ok() {
                "application/json"
            } else {
                "text/plain; charset=utf-8"
            };
            let mut response = (status, body.clone()).into_response();
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            if let Some(secs) = retry_after {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(*secs));
            }
            response
        }
        ReplyBody::Assistant {
            text,
            text_pieces,
            tool_calls,
        } => {
            let (events, done) = match wire_kind {
                WireKind::OpenAi => {
                    if !streaming {
                        return axum::Json(wire.completion(text.as_deref(), tool_calls))
                            .into_response();
                    }
                    let mut chunks = wire.chunks(
                        text.as_deref(),
                        text_pieces.as_deref(),
                        tool_calls,
                        &reply.cut,
                    );
                    if reply.ending == Ending::Endless && chunks.len() > 1 {
                        // The finish chunk goes: the last content chunk is repeated instead.
                        chunks.pop();
                    } else if let Some(usage) = reply.usage.filter(|_| {
                        request
                            .pointer("/stream_options/include_usage")
                            .and_then(Value::as_bool)
                            == Some(true)
                    }) {
                        chunks.push(wire.usage_chunk(usage));
                    }
                    let events = chunks.iter().map(|c| data_event(&c.to_string())).collect();
                    (events, data_event("[DONE]"))
                }
                WireKind::Anthropic => {
                    let wire = AnthropicWire {
                        id: format!("msg_scripted_{count}"),
                        model: &model,
                    };
                    if !streaming {
                        return axum::Json(wire.message(text.as_deref(), tool_calls))
                            .into_response();
                    }
                    let mut events = wire.events(
                        text.as_deref(),
                        text_pieces.as_deref(),
                        tool_calls,
                        &reply.cut,
                        reply.usage.unwrap_or((0, 0)),
                    );
                    if reply.ending == Ending::Endless {
                        // Everything after the last delta goes: that delta is repeated.
                        if let Some(last) = events
                            .iter()
                            .rposition(|(name, _)| name == "content_block_delta")
                        {
                            events.truncate(last + 1);
                        }
                    }
                    let events = events
                        .iter()
                        .map(|(name, data)| anthropic::named_event(name, data))
                        .collect();
                    (events, anthropic::message_stop())
                }
            };
            let frames = frames(&reply, events, done);
            let mut response = Body::from_stream(frame_stream(frames)).into_response();
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            response
        }
    }
}

/// One step of a streamed body.
#[derive(Debug)]
enum Frame {
    Bytes(String),
    Sleep(Duration),
    Drop,
    /// These bytes, forever.
    Repeat(Bytes),
}

/// Events sent in one write by [`Ending::Endless`].
const ENDLESS_BATCH: usize = 64;

/// The steps of a streamed reply: events, pings, the malformed line and the ending (`done`
/// is the wire's final event: `[DONE]` or `message_stop`).
fn frames(reply: &Reply, events: Vec<String>, done: String) -> VecDeque<Frame> {
    let mut frames = VecDeque::new();
    let ping = |frames: &mut VecDeque<Frame>| {
        if reply.pings {
            frames.push_back(Frame::Bytes(": ping\n\n".to_owned()));
        }
    };
    let mut events = events;
    let limit = match reply.ending {
        Ending::CutAfter(n) | Ending::DropAfter(n) | Ending::StallAfter(n, _) => Some(n),
        Ending::Complete | Ending::NoDone | Ending::Endless => None,
    };
    if !matches!(reply.ending, Ending::NoDone | Ending::Endless) {
        events.push(done);
    }
    let repeated = match reply.ending {
        Ending::Endless => events.last().map(|last| last.repeat(ENDLESS_BATCH)),
        _ => None,
    };
    for (i, event) in events.into_iter().enumerate() {
        if reply.malformed_after == Some(i) {
            frames.push_back(Frame::Bytes(data_event("{\"choices\": [")));
        }
        if limit == Some(i) {
            match reply.ending {
                Ending::CutAfter(_) => return frames,
                Ending::DropAfter(_) => {
                    // Let what was sent reach the client before the connection goes.
                    frames.push_back(Frame::Sleep(Duration::from_millis(50)));
                    frames.push_back(Frame::Drop);
                    return frames;
                }
                Ending::StallAfter(_, pause) => frames.push_back(Frame::Sleep(pause)),
                Ending::Complete | Ending::NoDone | Ending::Endless => {}
            }
        }
        ping(&mut frames);
        frames.push_back(Frame::Bytes(event));
    }
    if let Some(repeated) = repeated {
        frames.push_back(Frame::Repeat(Bytes::from(repeated)));
    }
    frames
}

fn frame_stream(
    frames: VecDeque<Frame>,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    futures::stream::unfold(frames, |mut frames| async move {
        loop {
            match frames.pop_front()? {
                Frame::Bytes(text) => return Some((Ok(Bytes::from(text)), frames)),
                Frame::Repeat(bytes) => {
                    frames.push_front(Frame::Repeat(bytes.clone()));
                    return Some((Ok(bytes), frames));
                }
                Frame::Sleep(pause) => tokio::time::sleep(pause).await,
                Frame::Drop => {
                    let error =
                        std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "scripted drop");
                    frames.clear();
                    return Some((Err(error), frames));
                }
            }
        }
    })
}
