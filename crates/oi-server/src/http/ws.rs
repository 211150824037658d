//! One WebSocket connection to a session: in-band auth, then chunks in (to the session's
//! [`AsyncInterpreter`](crate::AsyncInterpreter)) and chunks out (through its outbox, with ids
//! and acks in acknowledge mode).
//!
//! The reader and the writer are independent tasks: the reader takes every frame as it comes
//! (acks, auth, `stop`, close) whatever the turn or the writer is doing, and never waits for a
//! turn; a client's close frame is answered at once, even while a send is under way. The
//! writer sends the session's output. Each connection builds its own input, numbering the
//! inputs it sends (so that each `complete` can say which it answers); a connection that is
//! taken over or drops leaves no half-built input behind. JSON is read and written only here
//! and in [`crate::frames`].

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt, StreamExt};
use oi_core::Chunk;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::frames::{ClientFrame, UserChunk, parse_client_frame};
use crate::input::{Input, InputBuilder, InputError, Step};
use crate::outgoing::{InputRef, Outgoing};
use crate::sessions::outbox::{Asks, Extras, Frame};
use crate::sessions::wire::{Body, auth_text};
use crate::sessions::{AttachGuard, Attachment, CloseReason, Session};
use crate::state::AppState;

/// How long one frame may take to go out before the connection is given up.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client that must authenticate has to send its auth frame.
const AUTH_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the closing handshake may take once the server closes or answers a close.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

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

/// What the reader asks the writer to send.
enum Control {
    /// A reply to the client (e.g. `{"auth": true}`).
    Text(Utf8Bytes),
    /// The client sent a close frame: answer it and end.
    CloseReply,
}

fn close(code: u16, reason: &str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: Utf8Bytes::from(reason),
    }))
}

/// Sends `message`; false when the socket failed, the send took too long, or the connection
/// must end (`stop` is cancelled: taken over, closed by the client, shut down). A send cut
/// short leaves the rest of its frame in the WebSocket's buffer, whole, for the final flush.
async fn send(sink: &mut Sink, message: Message, stop: &CancellationToken) -> bool {
    tokio::select! {
        biased;
        () = stop.cancelled() => false,
        sent = tokio::time::timeout(SEND_TIMEOUT, sink.send(message)) => matches!(sent, Ok(Ok(()))),
    }
}

/// Chunks already waiting are written together, one flush (one system call) for all.
const BATCH: usize = 64;

/// How long a streaming run's pieces are gathered before they go out as one frame.
const GATHER: Duration = Duration::from_millis(8);

/// When `batch` ends in a piece of streaming text, takes what follows within [`GATHER`]
/// too, then joins the pieces of each run (sessions/coalesce.rs says why: a burst of tokens
/// must not become hundreds of frames that fill a client's receive queue).
async fn gather(interpreter: &crate::AsyncInterpreter, batch: Vec<Outgoing>) -> Vec<Outgoing> {
    use crate::sessions::coalesce::{coalesce, is_text_piece};
    let deadline = Instant::now() + GATHER;
    // Joined first: a backlog (a turn that ran while no one was connected) fills the first
    // batch, and must still go out as few frames.
    let mut batch = coalesce(batch);
    while batch.len() < BATCH
        && batch.last().is_some_and(is_text_piece)
        && text_bytes(&batch) < BATCH_TEXT_BYTES
    {
        match tokio::time::timeout_at(deadline, interpreter.next_batch(BATCH - batch.len())).await {
            Ok(more) if !more.is_empty() => {
                batch.extend(more);
                batch = coalesce(batch);
            }
            _ => break,
        }
    }
    batch
}

/// How much text one gathered batch takes at most before it goes out: between batches the
/// writer answers a close first, so a backlog goes out in steps a close can come between.
const BATCH_TEXT_BYTES: usize = 256 * 1024;

/// The text a batch carries.
fn text_bytes(batch: &[Outgoing]) -> usize {
    batch
        .iter()
        .map(|out| match &out.chunk.content {
            Some(oi_core::Content::Text(text)) => text.len(),
            _ => 0,
        })
        .sum()
}

/// Sends `frames` with one flush at the end; false as [`send`].
async fn send_frames(
    sink: &mut Sink,
    frames: &[Frame],
    extras: Extras,
    stop: &CancellationToken,
) -> bool {
    let write = async {
        for frame in frames {
            sink.feed(Message::Text(frame.text_for(extras))).await?;
        }
        sink.flush().await
    };
    tokio::select! {
        biased;
        () = stop.cancelled() => false,
        sent = tokio::time::timeout(SEND_TIMEOUT, write) => matches!(sent, Ok(Ok(()))),
    }
}

async fn send_frame(
    sink: &mut Sink,
    frame: &Frame,
    extras: Extras,
    stop: &CancellationToken,
) -> bool {
    send(sink, Message::Text(frame.text_for(extras)), stop).await
}

/// Whether a connection must authenticate in-band before it may attach to its session.
pub fn needs_auth_frame(state: &AppState, header_authenticated: bool) -> bool {
    state.config.ws_auth_required() && !header_authenticated
}

/// Serves one upgraded socket on `session`. `guard` is the attachment made when the upgrade
/// was accepted (so that connections take over in the order they were accepted), or `None`
/// when the client must first authenticate with a frame. With `asks.input_numbers`, each
/// `complete` answering an input of this connection carries `"input": N`; with `asks.usage`,
/// each `complete` carries `"usage"`.
pub async fn serve_socket(
    mut socket: WebSocket,
    state: AppState,
    session: Arc<Session>,
    guard: Option<AttachGuard>,
    asks: Asks,
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
    if session.outbox().log_unbegun() {
        let empty = session
            .interpreter()
            .interpreter()
            .messages_mut()
            .is_empty();
        session.outbox().begin_log(empty);
    }
    let (sink, stream) = socket.split();
    let (control_tx, control_rx) = mpsc::unbounded_channel();
    let reader_done = CancellationToken::new();
    let writer = tokio::spawn(write_loop(
        sink,
        control_rx,
        session.clone(),
        attachment.clone(),
        state.clone(),
        reader_done.clone(),
        asks,
    ));
    let client_closed = read_loop(stream, &control_tx, &session, &attachment, &state).await;
    reader_done.cancel();
    if client_closed {
        let _ = control_tx.send(Control::CloseReply);
    }
    attachment.token.cancel();
    let _ = writer.await;
    drop(guard);
}

/// Waits for `{"auth": KEY}`; answers `{"auth": true|false}`; a bad key closes with 1008.
async fn authenticate(socket: &mut WebSocket, state: &AppState) -> bool {
    let first = tokio::time::timeout(AUTH_TIMEOUT, socket.recv()).await;
    let key = match first {
        Ok(Some(Ok(Message::Text(frame)))) => match parse_client_frame(frame.as_str()) {
            Ok(ClientFrame::Auth(key)) => Some(key),
            _ => None,
        },
        _ => None,
    };
    let ok = key
        .as_ref()
        .and_then(Option::as_deref)
        .is_some_and(|k| state.config.key_ok(Some(k)));
    let _ = socket.send(Message::Text(auth_text(ok).into())).await;
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

/// Reads frames until the connection ends; true when the client sent a close frame.
async fn read_loop(
    mut stream: SplitStream<WebSocket>,
    control: &mpsc::UnboundedSender<Control>,
    session: &Session,
    attachment: &Attachment,
    state: &AppState,
) -> bool {
    let mut input = ConnectionInput::new(session, attachment.connection());
    loop {
        let frame = tokio::select! {
            () = attachment.token.cancelled() => {
                if session.outbox().acknowledge() {
                    drain_acks(&mut stream, session).await;
                }
                return false;
            }
            () = state.shutdown.cancelled() => return false,
            frame = stream.next() => frame,
        };
        let Some(Ok(frame)) = frame else {
            return false;
        };
        session.touch();
        let text = match frame {
            Message::Text(text) => text,
            Message::Binary(_) => {
                report(
                    session,
                    "binary frames are not supported: send JSON text frames",
                );
                continue;
            }
            Message::Close(_) => return true,
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        match parse_client_frame(text.as_str()) {
            Ok(ClientFrame::Ack(id)) => {
                if let Some(id) = id {
                    session.ack(&id);
                }
            }
            Ok(ClientFrame::Auth(key)) => {
                let ok = !state.config.ws_auth_required()
                    || key.as_deref().is_some_and(|k| state.config.key_ok(Some(k)));
                let _ = control.send(Control::Text(auth_text(ok).into()));
            }
            Ok(ClientFrame::Chunk(chunk)) => input.take(&chunk),
            Err(e) => report(session, e.to_string()),
        }
    }
}

/// The input a connection is building, and how many inputs it has sent.
struct ConnectionInput<'a> {
    session: &'a Session,
    builder: InputBuilder,
    connection: u64,
    /// Inputs ended so far (`end` chunks).
    ended: u64,
}

impl<'a> ConnectionInput<'a> {
    fn new(session: &'a Session, connection: u64) -> Self {
        ConnectionInput {
            session,
            builder: InputBuilder::new(session.interpreter().limits()),
            connection,
            ended: 0,
        }
    }

    /// Takes one user chunk: every chunk belongs to the input being built, numbered one more
    /// than the inputs ended before it.
    fn take(&mut self, chunk: &UserChunk) {
        let answers = Some(InputRef {
            connection: self.connection,
            number: self.ended + 1,
        });
        if chunk.end {
            self.ended += 1;
        }
        let interpreter = self.session.interpreter();
        match self.builder.take(chunk) {
            Ok(step) => {
                if let Step::Ended(input) = &step {
                    log_input(self.session, input);
                }
                interpreter.act(step, answers);
            }
            Err(error @ InputError::TooLarge { .. }) => {
                // The input is discarded now: it is answered now (its `end` adds nothing).
                interpreter.emit(Chunk::server_error(error.to_string()));
                interpreter.emit_out(Outgoing::complete(answers));
            }
            Err(error) => interpreter.act_failed(&error, answers),
        }
    }
}

/// Logs an input as the chunks a replay shows (outbox.rs): each user message, or the command.
fn log_input(session: &Session, input: &Input) {
    let outbox = session.outbox();
    match input {
        Input::Messages(messages) => {
            for message in messages {
                outbox.log_input(Body::Message(for_the_log(message)));
            }
        }
        Input::Go | Input::Stop => {
            let word = if *input == Input::Go { "go" } else { "stop" };
            let command = Chunk::new(oi_core::Role::User, oi_core::Kind::Command, None, word);
            outbox.log_input(Body::Chunk(command));
        }
    }
}

/// A user message as the log keeps it: whole when it fits in one frame a client accepts
/// (sessions/coalesce.rs), else its start and a note of how much more the conversation holds
/// (`GET /sessions/{id}/messages` has it whole).
fn for_the_log(message: &oi_core::Message) -> oi_core::Message {
    use crate::sessions::coalesce::{MAX_PIECE_BYTES, json_len};
    let oi_core::Content::Text(text) = &message.content else {
        return message.clone();
    };
    if json_len(text) <= MAX_PIECE_BYTES {
        return message.clone();
    }
    let mut end = MAX_PIECE_BYTES / 6;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut kept = message.clone();
    kept.content = oi_core::Content::Text(format!(
        "{}\n[oi: {} more bytes of this message are in the conversation (/messages)]",
        &text[..end],
        text.len() - end
    ));
    kept
}

/// After a takeover: reads what the client already sent, for a short while, taking its acks
/// into account (the client vanished; its last acks may still be in the socket).
async fn drain_acks(stream: &mut SplitStream<WebSocket>, session: &Session) {
    let deadline = Instant::now() + TAKEOVER_DRAIN;
    while let Ok(Some(Ok(frame))) = tokio::time::timeout_at(deadline, stream.next()).await {
        let Message::Text(text) = frame else {
            continue;
        };
        if let Ok(ClientFrame::Ack(Some(id))) = parse_client_frame(text.as_str()) {
            session.ack(&id);
        }
    }
}

/// Reports a frame that is no input (not JSON, binary, not an object): a server error, then
/// `complete` if no turn is running (a client waiting for the end of its request learns it
/// failed; a running turn is not cut short).
fn report(session: &Session, message: impl Into<String>) {
    let interpreter = session.interpreter();
    interpreter.emit(Chunk::server_error(message));
    if !interpreter.running() {
        interpreter.emit(Chunk::complete());
    }
}

async fn write_loop(
    mut sink: Sink,
    mut control: mpsc::UnboundedReceiver<Control>,
    session: Arc<Session>,
    attachment: Attachment,
    state: AppState,
    reader_done: CancellationToken,
    asks: Asks,
) {
    // A connection that took over waits for the previous one's writer to finish.
    let guard = tokio::select! {
        guard = session.sender_lock.lock() => Some(guard),
        () = attachment.token.cancelled() => None,
        () = state.shutdown.cancelled() => None,
    };
    let end = match guard {
        Some(_) => {
            let extras = asks.extras(attachment.connection());
            let wire = Wire {
                extras,
                since: asks.replay,
            };
            pump(&mut sink, &mut control, &session, &attachment, &state, wire).await
        }
        None => Ending::Quietly,
    };
    attachment.token.cancel();
    if session.outbox().acknowledge() {
        // The newcomer replays once this connection's reader has taken in the acks its client
        // already sent (bounded: a vanished client's socket may never say more).
        let _ = tokio::time::timeout(TAKEOVER_DRAIN, reader_done.cancelled()).await;
    }
    // The outbox is handed over now: what follows only says goodbye to this client.
    drop(guard);
    let farewell = match end {
        Ending::ClientClosed => None,
        Ending::Quietly if state.shutdown.is_cancelled() => {
            Some(close(CLOSE_GOING_AWAY, "server shutting down"))
        }
        Ending::Quietly => match attachment.reason() {
            Some(CloseReason::TakenOver) => Some(close(
                CLOSE_TAKEN_OVER,
                "another connection took over this session",
            )),
            Some(CloseReason::SessionEnded) => Some(close(CLOSE_SESSION_ENDED, "session ended")),
            None => None,
        },
    };
    if let Some(farewell) = farewell {
        let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.send(farewell)).await;
    }
    // Flushes what the WebSocket library queued: the answer to a client's close frame, or
    // the close frame it wrote for a protocol error (1009 too big, 1007 not UTF-8).
    flush_farewell(&mut sink).await;
}

/// Flushes the sink within [`CLOSE_TIMEOUT`], twice if the first fails: a frame a cancelled
/// send left in the split sink's slot is refused once the client's close has been read
/// (`SendAfterClosing`), and that error ends the first flush before the library writes its
/// queued answer to the close; the second flush writes it. (The soak saw it: 3 of 4 575 closes
/// in the middle of a streaming turn went unanswered.)
async fn flush_farewell(sink: &mut Sink) {
    let deadline = tokio::time::Instant::now() + CLOSE_TIMEOUT;
    for _ in 0..2 {
        match tokio::time::timeout_at(deadline, sink.flush()).await {
            Ok(Err(_)) => continue,
            Ok(Ok(())) | Err(_) => return,
        }
    }
}

/// Why the writer stopped.
enum Ending {
    /// The client closed: its close frame is answered, nothing else is sent.
    ClientClosed,
    /// Taken over, shut down, the session ended, or the socket failed.
    Quietly,
}

/// What a connection's frames carry, and from where in the log it starts (if it asked).
#[derive(Clone, Copy)]
struct Wire {
    extras: Extras,
    since: Option<u64>,
}

/// The frame that opens a replay: where the log stands (docs/protocol.md, the log).
fn replay_header(span: crate::sessions::event_log::Span) -> Message {
    #[derive(serde::Serialize)]
    struct Header {
        role: &'static str,
        #[serde(rename = "type")]
        kind: &'static str,
        first: u64,
        last: u64,
        whole: bool,
    }
    let header = Header {
        role: "server",
        kind: "replay",
        first: span.first,
        last: span.last,
        whole: span.whole,
    };
    Message::Text(Utf8Bytes::from(
        serde_json::to_string(&header).unwrap_or_else(|_| "{}".to_owned()),
    ))
}

/// Sends until the connection ends: first what the outbox must replay (or, when the
/// connection asked, the log after its `since`), then replies to the reader, new output, and
/// overdue resends.
async fn pump(
    sink: &mut Sink,
    control: &mut mpsc::UnboundedReceiver<Control>,
    session: &Session,
    attachment: &Attachment,
    state: &AppState,
    wire: Wire,
) -> Ending {
    let outbox = session.outbox();
    let stop = &attachment.token;
    let extras = wire.extras;
    let first = match wire.since {
        Some(since) => {
            let (span, frames) = outbox.replay_log(since);
            if !send(sink, replay_header(span), stop).await {
                return Ending::Quietly;
            }
            frames
        }
        None => outbox.replay(),
    };
    let mut replay = first.into_iter();
    while let Some(frame) = replay.next() {
        if !send_frame(sink, &frame, extras, stop).await {
            // This one and the rest go to the next connection, in order.
            outbox.failed(frame);
            replay.for_each(|rest| outbox.failed(rest));
            return Ending::Quietly;
        }
        outbox.sent(&frame);
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
            message = control.recv() => match message {
                Some(Control::Text(text)) => {
                    if !send(sink, Message::Text(text), stop).await {
                        return Ending::Quietly;
                    }
                }
                Some(Control::CloseReply) => return Ending::ClientClosed,
                None => return Ending::Quietly,
            },
            () = stop.cancelled() => return Ending::Quietly,
            () = state.shutdown.cancelled() => return Ending::Quietly,
            () = resend => {
                for frame in outbox.overdue(Instant::now()) {
                    if !send_frame(sink, &frame, extras, stop).await {
                        return Ending::Quietly;
                    }
                    outbox.sent(&frame);
                }
            }
            batch = interpreter.next_batch(BATCH) => {
                if batch.is_empty() {
                    return Ending::Quietly;
                }
                session.touch();
                let batch = gather(interpreter, batch).await;
                let frames: Vec<Frame> = batch.iter().map(|out| outbox.prepare_out(out)).collect();
                session.persist(&batch, &frames).await;
                if !send_frames(sink, &frames, extras, stop).await {
                    for frame in frames {
                        outbox.failed(frame);
                    }
                    return Ending::Quietly;
                }
                for frame in &frames {
                    outbox.sent(frame);
                }
            }
        }
    }
}
