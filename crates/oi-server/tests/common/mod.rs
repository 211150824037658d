//! A real oi-server on 127.0.0.1:0 over the real core, provider and computer, with the
//! scripted model server as the model; WebSocket and HTTP clients for it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use oi_core::{Interpreter, Settings};
use oi_server::{AppState, ServerConfig};
use oi_testkit::{Script, ScriptedServer};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// A WebSocket client connection.
pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a test waits for any one frame.
pub const FRAME_TIMEOUT: Duration = Duration::from_secs(15);

/// A running server and its scripted model.
pub struct TestServer {
    pub addr: SocketAddr,
    pub model: ScriptedServer,
    pub state: AppState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

/// Test settings: a short system message, no history files, the scripted model in tool mode.
pub fn settings(model: &ScriptedServer) -> Settings {
    let mut settings = Settings {
        auto_run: true,
        system_message: "You are oi under test.".to_owned(),
        conversation_history: false,
        ..Settings::default()
    };
    settings.llm.model = "gpt-4o".to_owned();
    settings.llm.api_base = Some(model.base_url());
    settings.llm.api_key = Some("test-key".to_owned());
    settings.llm.supports_functions = Some(true);
    settings
}

impl TestServer {
    /// Starts the scripted model and a server over it.
    pub async fn start(
        script: Script,
        adjust_settings: impl FnOnce(&mut Settings),
        adjust_config: impl FnOnce(&mut ServerConfig),
    ) -> TestServer {
        let model = ScriptedServer::start(script).await.expect("model starts");
        let mut base = settings(&model);
        adjust_settings(&mut base);
        let mut config = ServerConfig::default();
        adjust_config(&mut config);
        let factory: oi_server::InterpreterFactory = Arc::new(move || {
            let llm = Arc::new(oi_llm::OpenAiCompatible::new().with_env(oi_llm::Env::empty()));
            let computer = Arc::new(oi_computer::LocalComputer::new());
            Interpreter::new(base.clone(), llm, computer, oi_judge::judge())
        });
        let state = AppState::new(config, factory);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(oi_server::serve(listener, state.clone(), async move {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            model,
            state,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Opens a WebSocket on `path`, with optional extra headers.
    pub async fn connect_with(&self, path: &str, headers: &[(&str, &str)]) -> Result<Ws, String> {
        let mut request = format!("ws://{}{path}", self.addr)
            .into_client_request()
            .unwrap();
        for (name, value) in headers {
            request.headers_mut().insert(
                tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes())
                    .unwrap(),
                value.parse().unwrap(),
            );
        }
        tokio_tungstenite::connect_async(request)
            .await
            .map(|(ws, _)| ws)
            .map_err(|e| e.to_string())
    }

    /// Opens a WebSocket on `/`.
    pub async fn connect(&self) -> Ws {
        self.connect_with("/", &[]).await.expect("connects")
    }

    /// Stops the server and waits for it.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), task).await;
        }
    }
}

/// Sends one JSON frame.
pub async fn send(ws: &mut Ws, value: Value) {
    ws.send(Message::Text(value.to_string().into()))
        .await
        .unwrap();
}

/// Sends a user message as start / content / end frames (no auth frame).
pub async fn say(ws: &mut Ws, kind: &str, text: &str) {
    send(ws, json!({"role": "user", "type": kind, "start": true})).await;
    send(ws, json!({"role": "user", "type": kind, "content": text})).await;
    send(ws, json!({"role": "user", "type": kind, "end": true})).await;
}

/// What the next frame was.
#[derive(Debug)]
pub enum Frame {
    /// A JSON text frame.
    Json(Value),
    /// A close frame: code and reason.
    Close(u16, String),
    /// The stream ended.
    End,
}

/// Reads the next frame that is not a ping/pong.
pub async fn next_frame(ws: &mut Ws) -> Frame {
    loop {
        let frame = tokio::time::timeout(FRAME_TIMEOUT, ws.next())
            .await
            .expect("a frame in time");
        match frame {
            Some(Ok(Message::Text(text))) => {
                return Frame::Json(serde_json::from_str(text.as_str()).unwrap());
            }
            Some(Ok(Message::Close(close))) => {
                return match close {
                    Some(c) => Frame::Close(c.code.into(), c.reason.to_string()),
                    None => Frame::Close(1005, String::new()),
                };
            }
            Some(Ok(_)) => continue,
            Some(Err(_)) | None => return Frame::End,
        }
    }
}

/// Reads the next JSON frame.
pub async fn next_json(ws: &mut Ws) -> Value {
    match next_frame(ws).await {
        Frame::Json(value) => value,
        other => panic!("expected a JSON frame, got {other:?}"),
    }
}

fn is_complete(value: &Value) -> bool {
    value.get("role") == Some(&json!("server")) && value.get("content") == Some(&json!("complete"))
}

/// Reads JSON frames up to and including `complete`; in ack mode acks each id.
pub async fn until_complete(ws: &mut Ws, ack: bool) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let value = next_json(ws).await;
        if ack {
            if let Some(id) = value.get("id").and_then(Value::as_str) {
                send(ws, json!({ "ack": id })).await;
            }
        }
        let done = is_complete(&value);
        frames.push(value);
        if done {
            return frames;
        }
    }
}

/// The frames as JSON lines, `id`s redacted, consecutive text pieces of one run joined and
/// running lines that a later one replaces (with only output between) left out: how a
/// program's output is cut into reads depends on timing, and so does how many of the model's
/// pieces the server joins into one frame and which running lines it leaves out
/// (sessions/coalesce.rs).
pub fn wire(frames: &[Value]) -> String {
    let is_line = |v: &Value| {
        v.get("type") == Some(&json!("console"))
            && v.get("format") == Some(&json!("active_line"))
            && v.get("start").is_none()
            && v.get("end").is_none()
    };
    let is_output = |v: &Value| {
        v.get("type") == Some(&json!("console"))
            && v.get("format") == Some(&json!("output"))
            && v.get("start").is_none()
            && v.get("end").is_none()
    };
    let mut kept: Vec<&Value> = Vec::new();
    let mut replaced_later = false;
    for frame in frames.iter().rev() {
        if is_line(frame) {
            if replaced_later {
                continue;
            }
            replaced_later = true;
        } else if !is_output(frame) {
            replaced_later = false;
        }
        kept.push(frame);
    }
    kept.reverse();
    let mut joined: Vec<Value> = Vec::new();
    for frame in kept {
        let mut frame = frame.clone();
        if let Some(object) = frame.as_object_mut() {
            if object.contains_key("id") {
                object.insert("id".to_owned(), json!("[id]"));
            }
        }
        let is_piece = |v: &Value| {
            let text_run = match v.get("type").and_then(Value::as_str) {
                Some("message" | "code") => true,
                Some("console") => v.get("format") == Some(&json!("output")),
                _ => false,
            };
            text_run
                && v.get("content").is_some_and(Value::is_string)
                && v.get("start").is_none()
                && v.get("end").is_none()
        };
        let same_run = |a: &Value, b: &Value| {
            ["role", "type", "format", "recipient"]
                .iter()
                .all(|key| a.get(key) == b.get(key))
        };
        if let Some(prev) = joined
            .last_mut()
            .filter(|p| is_piece(p) && is_piece(&frame) && same_run(p, &frame))
        {
            let text = format!(
                "{}{}",
                prev["content"].as_str().unwrap_or(""),
                frame["content"].as_str().unwrap_or("")
            );
            prev["content"] = json!(text);
            continue;
        }
        joined.push(frame);
    }
    joined
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}
