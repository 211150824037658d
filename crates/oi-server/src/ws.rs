//! One WebSocket connection to a session: in-band auth, then chunks in (to the session's
//! [`AsyncInterpreter`](crate::AsyncInterpreter)) and chunks out (through its outbox, with ids
//! and acks in acknowledge mode), both at once.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::async_interpreter::{complete_json, error_json};
use crate::sessions::{AttachGuard, Attachment, CloseReason, Session};
use crate::state::AppState;

/// How long one frame may take to go out before the connection is given up.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client that must authenticate has to send its auth frame.
const AUTH_TIMEOUT: Duration = Duration::from_secs(30);

/// Close code for a bad or missing key.
pub const CLOSE_POLICY: u16 = 1008;
/// Close code when the server shuts down.
pub const CLOSE_GOING_AWAY: u16 = 1001;
/// Close code when another connection took over the session.
pub const CLOSE_TAKEN_OVER: u16 = 4000;
/// Close code when the session was deleted or reaped.
pub const CLOSE_SESSION_ENDED: u16 = 4001;

/// How long a connection that was taken over keeps reading what its client already sent
/// (acks above all), so that the newcomer's replay does not resend what was acknowledged.
const TAKEOVER_DRAIN: Duration = Duration::from_millis(250);

type Sink = SplitSink<WebSocket, Message>;

fn text(value: &Value) -> Message {
    Message::Text(Utf8Bytes::from(value.to_string()))
}

fn close(code: u16, reason: &str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: Utf8Bytes::from(reason),
    }))
}

async fn send(sink: &mut Sink, message: Message) -> bool {
    matches!(
        tokio::time::timeout(SEND_TIMEOUT, sink.send(message)).await,
        Ok(Ok(()))
    )
}

/// Whether a connection must authenticate in-band before it may attach to its session.
pub fn needs_auth_frame(state: &AppState, header_authenticated: bool) -> bool {
    state.config.ws_auth_required() && !header_authenticated
}

/// Serves one upgraded socket on `session`. `guard` is the attachment made when the upgrade
/// was accepted (so that connections take over in the order they were accepted), or `None`
/// when the client must first authenticate with a frame.
pub async fn serve_socket(
    mut socket: WebSocket,
    state: AppState,
    session: Arc<Session>,
    guard: Option<AttachGuard>,
) {
    let guard = match guard {
        Some(guard) => guard,
        None => {
            if !authenticate(&mut socket, &state).await {
                return;
            }
            AttachGuard::new(session.clone())
        }
    };
    let attachment = guard.attachment().clone();
    let (sink, stream) = socket.split();
    let (direct_tx, direct_rx) = mpsc::unbounded_channel();
    let reader_done = CancellationToken::new();
    let sender = tokio::spawn(send_loop(
        sink,
        direct_rx,
        session.clone(),
        attachment.clone(),
        state.clone(),
        reader_done.clone(),
    ));
    receive_loop(stream, &direct_tx, &session, &attachment, &state).await;
    reader_done.cancel();
    if session.is_attached(&attachment) {
        // Input this connection started and never ended would otherwise stay in memory.
        session.interpreter().discard_pending().await;
    }
    attachment.token.cancel();
    let _ = sender.await;
    drop(guard);
}

/// Waits for `{"auth": KEY}`; answers `{"auth": true|false}`; a bad key closes with 1008.
async fn authenticate(socket: &mut WebSocket, state: &AppState) -> bool {
    let first = tokio::time::timeout(AUTH_TIMEOUT, socket.recv()).await;
    let key = match first {
        Ok(Some(Ok(Message::Text(frame)))) => serde_json::from_str::<Value>(frame.as_str())
            .ok()
            .and_then(|v| v.get("auth").cloned()),
        _ => None,
    };
    let ok = key
        .as_ref()
        .and_then(Value::as_str)
        .is_some_and(|k| state.config.key_ok(Some(k)));
    let _ = socket.send(text(&json!({ "auth": ok }))).await;
    if !ok {
        let reason = if key.is_some() {
            "Authentication failed"
        } else {
            "Authentication required: send {\"auth\": KEY} first or the X-API-KEY header"
        };
        let _ = socket.send(close(CLOSE_POLICY, reason)).await;
    }
    ok
}

async fn receive_loop(
    mut stream: SplitStream<WebSocket>,
    direct: &mpsc::UnboundedSender<Value>,
    session: &Session,
    attachment: &Attachment,
    state: &AppState,
) {
    let interpreter = session.interpreter();
    loop {
        let frame = tokio::select! {
            () = attachment.token.cancelled() => {
                drain_acks(&mut stream, session).await;
                return;
            }
            () = state.shutdown.cancelled() => return,
            frame = stream.next() => frame,
        };
        let Some(Ok(frame)) = frame else {
            return;
        };
        session.touch();
        let value = match frame {
            Message::Text(text) => match serde_json::from_str::<Value>(text.as_str()) {
                Ok(value) => value,
                Err(e) => {
                    report(session, format!("malformed JSON frame: {e}")).await;
                    continue;
                }
            },
            Message::Binary(_) => {
                report(
                    session,
                    "binary frames are not supported: send JSON text frames",
                )
                .await;
                continue;
            }
            Message::Close(_) => return,
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        if let Some(id) = value.get("ack") {
            if let Some(id) = id.as_str() {
                session.outbox().ack(id);
            }
            continue;
        }
        if let Some(key) = value.get("auth") {
            let ok = !state.config.ws_auth_required()
                || key.as_str().is_some_and(|k| state.config.key_ok(Some(k)));
            let _ = direct.send(json!({ "auth": ok }));
            continue;
        }
        if let Err(e) = interpreter.input(&value).await {
            report(session, e.to_string()).await;
        }
    }
}

/// After a takeover: reads what the client already sent, for a short while, taking its acks
/// into account (the client vanished; its last acks may still be in the socket).
async fn drain_acks(stream: &mut SplitStream<WebSocket>, session: &Session) {
    let deadline = Instant::now() + TAKEOVER_DRAIN;
    while let Ok(Some(Ok(frame))) = tokio::time::timeout_at(deadline, stream.next()).await {
        let Message::Text(text) = frame else {
            continue;
        };
        let ack = serde_json::from_str::<Value>(text.as_str())
            .ok()
            .and_then(|v| v.get("ack").and_then(Value::as_str).map(str::to_owned));
        if let Some(id) = ack {
            session.outbox().ack(&id);
        }
    }
}

/// Sends a server error; then `complete` if no turn is running (a client waiting for the end
/// of its request learns it failed; a running turn is not cut short).
async fn report(session: &Session, message: impl Into<String>) {
    let interpreter = session.interpreter();
    interpreter.emit(error_json(message));
    if !interpreter.is_running().await {
        interpreter.emit(complete_json());
    }
}

async fn send_loop(
    mut sink: Sink,
    mut direct: mpsc::UnboundedReceiver<Value>,
    session: Arc<Session>,
    attachment: Attachment,
    state: AppState,
    reader_done: CancellationToken,
) {
    // A connection that took over waits for the previous one's sender to finish.
    let guard = tokio::select! {
        guard = session.sender_lock.lock() => Some(guard),
        () = attachment.token.cancelled() => None,
        () = state.shutdown.cancelled() => None,
    };
    if guard.is_some() {
        pump(&mut sink, &mut direct, &session, &attachment, &state).await;
    }
    let farewell = if state.shutdown.is_cancelled() {
        Some(close(CLOSE_GOING_AWAY, "server shutting down"))
    } else {
        match attachment.reason() {
            Some(CloseReason::TakenOver) => Some(close(
                CLOSE_TAKEN_OVER,
                "another connection took over this session",
            )),
            Some(CloseReason::SessionEnded) => Some(close(CLOSE_SESSION_ENDED, "session ended")),
            None => None,
        }
    };
    if let Some(farewell) = farewell {
        let _ = send(&mut sink, farewell).await;
    }
    attachment.token.cancel();
    // The newcomer replays once this connection's reader has taken in the acks its client
    // already sent (bounded: a vanished client's socket may never say more).
    let _ = tokio::time::timeout(TAKEOVER_DRAIN, reader_done.cancelled()).await;
    drop(guard);
}

/// Sends until the connection ends: first what the outbox must replay, then direct replies,
/// new output, and overdue resends.
async fn pump(
    sink: &mut Sink,
    direct: &mut mpsc::UnboundedReceiver<Value>,
    session: &Session,
    attachment: &Attachment,
    state: &AppState,
) {
    let outbox = session.outbox();
    for chunk in outbox.replay() {
        if !send(sink, text(&chunk)).await {
            outbox.failed(chunk);
            return;
        }
        outbox.sent(&chunk);
    }
    let interpreter = session.interpreter();
    loop {
        let deadline = outbox.next_deadline();
        let resend = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => futures::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = attachment.token.cancelled() => return,
            () = state.shutdown.cancelled() => return,
            reply = direct.recv() => {
                let Some(reply) = reply else { return };
                if !send(sink, text(&reply)).await {
                    return;
                }
            }
            () = resend => {
                for chunk in outbox.overdue(Instant::now()) {
                    if !send(sink, text(&chunk)).await {
                        return;
                    }
                    outbox.sent(&chunk);
                }
            }
            chunk = interpreter.output() => {
                let Some(chunk) = chunk else { return };
                let chunk = outbox.prepare(chunk);
                session.touch();
                if !send(sink, text(&chunk)).await {
                    outbox.failed(chunk);
                    return;
                }
                outbox.sent(&chunk);
            }
        }
    }
}
