//! The HTTP server: routes, request recording, and streamed bodies.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

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
    /// The JSON body (a JSON string holding the raw text when the body was not JSON).
    pub body: Value,
}

#[derive(Debug)]
struct Inner {
    script: Script,
    requests: Vec<RecordedRequest>,
}

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
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let shared: Shared = Arc::new(Mutex::new(Inner {
            script,
            requests: Vec::new(),
        }));
        let app = router(shared.clone());
        let task = tokio::spawn(async move {
            // The server runs until the task is aborted; an accept error ends it.
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

    /// Every chat-completions request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared).requests.clone()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
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
        .with_state(shared)
}

async fn models() -> Response {
    axum::Json(json!({
        "object": "list",
        "data": [{ "id": "scripted", "object": "model", "created": 0, "owned_by": "oi-testkit" }],
    }))
    .into_response()
}

async fn chat_completions(
    State(shared): State<Shared>,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let parsed: Result<Value, _> = serde_json::from_slice(&raw);
    let body = match &parsed {
        Ok(value) => value.clone(),
        Err(_) => Value::String(String::from_utf8_lossy(&raw).into_owned()),
    };
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let next = {
        let mut inner = lock(&shared);
        inner.requests.push(RecordedRequest {
            path: uri.path().to_owned(),
            query: uri.query().map(str::to_owned),
            authorization,
            body: body.clone(),
        });
        let count = inner.requests.len();
        match &parsed {
            Ok(_) => (inner.script.next(&body), count),
            Err(e) => {
                let message = format!("oi-testkit: the request body is not JSON: {e}");
                return error_response(StatusCode::BAD_REQUEST, &message, "invalid_request_error");
            }
        }
    };
    match next {
        (Next::Reply(reply), count) => respond(reply, &body, count),
        (Next::Exhausted { total }, count) => {
            let message = format!(
                "oi-testkit: the script ran out of replies: request #{count} arrived but the script had only {total}"
            );
            error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &message,
                "script_exhausted",
            )
        }
    }
}

fn error_response(status: StatusCode, message: &str, kind: &str) -> Response {
    let body = json!({ "error": { "message": message, "type": kind, "code": null } });
    (status, axum::Json(body)).into_response()
}

fn respond(reply: Reply, request: &Value, count: usize) -> Response {
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
            if !streaming {
                return axum::Json(wire.completion(text.as_deref(), tool_calls)).into_response();
            }
            let chunks = wire.chunks(
                text.as_deref(),
                text_pieces.as_deref(),
                tool_calls,
                &reply.cut,
            );
            let frames = frames(&reply, chunks);
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
}

/// The steps of a streamed reply: events, pings, the malformed line and the ending.
fn frames(reply: &Reply, chunks: Vec<Value>) -> VecDeque<Frame> {
    let mut frames = VecDeque::new();
    let ping = |frames: &mut VecDeque<Frame>| {
        if reply.pings {
            frames.push_back(Frame::Bytes(": ping\n\n".to_owned()));
        }
    };
    let mut events: Vec<String> = chunks.iter().map(|c| data_event(&c.to_string())).collect();
    let limit = match reply.ending {
        Ending::CutAfter(n) | Ending::DropAfter(n) | Ending::StallAfter(n, _) => Some(n),
        Ending::Complete | Ending::NoDone => None,
    };
    if !matches!(reply.ending, Ending::NoDone) {
        events.push(data_event("[DONE]"));
    }
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
                Ending::Complete | Ending::NoDone => {}
            }
        }
        ping(&mut frames);
        frames.push_back(Frame::Bytes(event));
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
