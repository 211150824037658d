//! [`AsyncInterpreter`]: the chunk-in / chunk-out face of an interpreter that the server (and
//! any other async program) drives (spec c.5).
//!
//! User chunks go in through [`AsyncInterpreter::input`]; each turn runs in its own task and
//! its chunks come out of [`AsyncInterpreter::output`], followed by
//! `{"role":"server","type":"status","content":"complete"}`. Stopping a turn drops it, which
//! drops the model request and kills the running code; nothing here ever blocks the runtime.

use std::sync::{Arc, Mutex as SyncMutex, MutexGuard};

use futures::StreamExt;
use oi_core::{ApprovalRequest, ChatInput, Chunk, Interpreter, Kind, Message, Turn, TurnEvent};
use serde_json::Value;
use tokio::sync::{Mutex, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::accumulate::{AccumulateError, Accumulator};
use crate::config::InterruptMode;

/// Why an input chunk was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The chunk could not be turned into messages.
    #[error(transparent)]
    Accumulate(#[from] AccumulateError),
    /// A `command` message other than `stop` or `go`.
    #[error("unknown command {0:?}: use \"stop\" or \"go\"")]
    UnknownCommand(String),
    /// The input being built grew past a limit; it was discarded.
    #[error(
        "{what} is over the limit of {limit} bytes before its `end`; the input was discarded (the rest of it up to `end` is ignored): send less, or start the server with a larger {flag}"
    )]
    TooLarge {
        /// What was too large: one message, or the whole pending input.
        what: &'static str,
        /// The limit, in bytes.
        limit: usize,
        /// The server flag that raises it.
        flag: &'static str,
    },
}

/// How much user input may wait for its `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    /// The most bytes one message (built from `start` and `content` chunks) may hold.
    pub max_message_bytes: usize,
    /// The most bytes all messages of one input may hold together.
    pub max_pending_bytes: usize,
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits {
            max_message_bytes: 16 * 1024 * 1024,
            max_pending_bytes: 32 * 1024 * 1024,
        }
    }
}

/// How a turn starts.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnStart {
    /// Append these user messages, then let the model answer.
    Chat(Vec<Message>),
    /// Approve the code block that waits: the parked turn goes on. When no turn is parked
    /// (e.g. it was stopped) but the conversation ends with code, a turn starts on the
    /// conversation as it is and that code's approval request is answered "run" (the user
    /// said `go` for exactly that block).
    Go,
}

/// The server's `complete` status chunk as JSON.
pub fn complete_json() -> Value {
    to_json(&Chunk::complete())
}

/// A server `error` chunk as JSON.
pub fn error_json(text: impl Into<String>) -> Value {
    to_json(&Chunk::server_error(text))
}

fn to_json(chunk: &Chunk) -> Value {
    serde_json::to_value(chunk).unwrap_or(Value::Null)
}

fn lock<T>(mutex: &SyncMutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Where a turn's output goes: the session's output queue, or an HTTP response. A parked turn
/// can be handed to another consumer (a `go` over the WebSocket, a "yes" over HTTP).
#[derive(Clone)]
struct Route(Arc<SyncMutex<mpsc::UnboundedSender<Value>>>);

impl Route {
    fn new(sink: mpsc::UnboundedSender<Value>) -> Self {
        Route(Arc::new(SyncMutex::new(sink)))
    }

    /// Sends `chunk`; false when the consumer is gone.
    fn send(&self, chunk: Value) -> bool {
        lock(&self.0).send(chunk).is_ok()
    }

    fn redirect(&self, sink: mpsc::UnboundedSender<Value>) {
        *lock(&self.0) = sink;
    }
}

/// The approval request a parked turn waits on.
type Parked = Arc<SyncMutex<Option<ApprovalRequest>>>;

/// A turn running in its task.
struct Running {
    token: CancellationToken,
    handle: JoinHandle<()>,
    route: Route,
    parked: Parked,
}

impl Running {
    /// Stops the turn and waits (asynchronously, briefly) for its task to end.
    async fn stop(self) {
        self.token.cancel();
        // The task ends at its next poll: dropping the turn is synchronous.
        let _ = self.handle.await;
    }
}

#[derive(Default)]
struct State {
    accumulator: Accumulator,
    /// The input being received went over a limit: its chunks are ignored up to `end`.
    discarding: bool,
    running: Option<Running>,
}

struct Inner {
    interpreter: Interpreter,
    mode: InterruptMode,
    limits: InputLimits,
    state: Mutex<State>,
    tx: mpsc::UnboundedSender<Value>,
    rx: Mutex<mpsc::UnboundedReceiver<Value>>,
}

/// An interpreter driven by streamed chunks. Cloning gives another handle to the same one.
#[derive(Clone)]
pub struct AsyncInterpreter {
    inner: Arc<Inner>,
}

impl AsyncInterpreter {
    /// Wraps `interpreter`; `mode` says what a new input does while a turn runs. Input is
    /// bounded by the default [`InputLimits`].
    pub fn new(interpreter: Interpreter, mode: InterruptMode) -> Self {
        Self::with_limits(interpreter, mode, InputLimits::default())
    }

    /// Wraps `interpreter` with these input limits.
    pub fn with_limits(interpreter: Interpreter, mode: InterruptMode, limits: InputLimits) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        AsyncInterpreter {
            inner: Arc::new(Inner {
                interpreter,
                mode,
                limits,
                state: Mutex::new(State::default()),
                tx,
                rx: Mutex::new(rx),
            }),
        }
    }

    /// The wrapped interpreter (settings, messages, computer).
    pub fn interpreter(&self) -> &Interpreter {
        &self.inner.interpreter
    }

    /// Takes one user chunk (spec c.5): `start` interrupts a running turn (or, in queue mode,
    /// lets it finish) and opens a message, `content` extends it, `end` starts the turn. A last
    /// message of type `command` is removed first: `stop` stops the running turn and reports
    /// `complete`, `go` runs the pending code block.
    pub async fn input(&self, chunk: &Value) -> Result<(), InputError> {
        let Some(object) = chunk.as_object() else {
            return Err(AccumulateError::NotAnObject(chunk.to_string()).into());
        };
        let mut state = self.inner.state.lock().await;
        if object.contains_key("start") {
            if self.inner.mode == InterruptMode::Interrupt {
                if let Some(running) = state.running.take() {
                    running.stop().await;
                }
            }
            state.discarding = false;
            state.accumulator.push(object);
            self.check_size(&mut state)?;
        } else if object.contains_key("content") {
            if !state.discarding {
                state.accumulator.push(object);
                self.check_size(&mut state)?;
            }
        } else if object.contains_key("end") {
            if std::mem::take(&mut state.discarding) {
                return Ok(());
            }
            let mut messages = state.accumulator.take()?;
            let command = messages
                .last()
                .filter(|m| m.kind == Kind::Command)
                .map(|m| m.text().trim().to_owned());
            if command.is_some() {
                messages.pop();
            }
            match command.as_deref() {
                Some("stop") => {
                    if let Some(running) = state.running.take() {
                        running.stop().await;
                    }
                    self.emit(complete_json());
                }
                Some("go") => {
                    self.start(&mut state, TurnStart::Go, self.inner.tx.clone())
                        .await;
                }
                Some(other) => return Err(InputError::UnknownCommand(other.to_owned())),
                None => {
                    self.start(&mut state, TurnStart::Chat(messages), self.inner.tx.clone())
                        .await;
                }
            }
        }
        Ok(())
    }

    /// Discards the pending input when it grew past a limit (and ignores the rest of it).
    fn check_size(&self, state: &mut State) -> Result<(), InputError> {
        let limits = self.inner.limits;
        let over = if state.accumulator.last_message_bytes() > limits.max_message_bytes {
            Some((
                "one message",
                limits.max_message_bytes,
                "--max-message-bytes",
            ))
        } else if state.accumulator.bytes() > limits.max_pending_bytes {
            Some(("the input", limits.max_pending_bytes, "--max-pending-bytes"))
        } else {
            None
        };
        let Some((what, limit, flag)) = over else {
            return Ok(());
        };
        state.accumulator.clear();
        state.discarding = true;
        Err(InputError::TooLarge { what, limit, flag })
    }

    /// Drops the input received so far that has not been ended (its connection closed).
    pub async fn discard_pending(&self) {
        let mut state = self.inner.state.lock().await;
        state.accumulator.clear();
        state.discarding = false;
    }

    /// Roughly how many bytes of input wait for their `end`.
    pub async fn pending_bytes(&self) -> usize {
        self.inner.state.lock().await.accumulator.bytes()
    }

    /// The next outgoing chunk, waiting for one. Chunks are JSON objects: the turn's framed
    /// LMC chunks (confirmations included), `error` chunks, and `complete` after each turn.
    pub async fn output(&self) -> Option<Value> {
        self.inner.rx.lock().await.recv().await
    }

    /// Puts `chunk` on the output (e.g. a server error about a malformed frame).
    pub fn emit(&self, chunk: Value) {
        // The receiver lives as long as `self`.
        let _ = self.inner.tx.send(chunk);
    }

    /// Whether a turn is running (a turn parked at an approval is waiting, not running).
    pub async fn is_running(&self) -> bool {
        let state = self.inner.state.lock().await;
        state
            .running
            .as_ref()
            .is_some_and(|running| !running.handle.is_finished() && lock(&running.parked).is_none())
    }

    /// Stops the running turn, if any (its code is killed; no `complete` is sent for it).
    pub async fn stop(&self) {
        let running = self.inner.state.lock().await.running.take();
        if let Some(running) = running {
            running.stop().await;
        }
    }

    /// Starts a turn (or, for [`TurnStart::Go`], resumes the parked one) whose chunks go to
    /// the returned receiver instead of [`output`](Self::output), ending with `complete`; any
    /// other running turn is stopped first. Dropping the receiver stops the turn. This is how
    /// the OpenAI-compatible endpoint runs turns.
    pub async fn run_separately(&self, start: TurnStart) -> mpsc::UnboundedReceiver<Value> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = self.inner.state.lock().await;
        if start != TurnStart::Go {
            if let Some(running) = state.running.take() {
                running.stop().await;
            }
        }
        self.start(&mut state, start, tx).await;
        rx
    }

    async fn start(&self, state: &mut State, start: TurnStart, sink: mpsc::UnboundedSender<Value>) {
        if start == TurnStart::Go {
            if let Some(running) = state.running.as_ref() {
                if let Some(request) = lock(&running.parked).take() {
                    running.route.redirect(sink);
                    request.approve();
                    return;
                }
            }
        }
        let previous = state.running.take();
        let (token, previous) = match (self.inner.mode, previous) {
            (InterruptMode::Queue, Some(previous))
                if !previous.handle.is_finished() && lock(&previous.parked).is_none() =>
            {
                (previous.token.clone(), Some(previous.handle))
            }
            (_, Some(previous)) => {
                previous.stop().await;
                (CancellationToken::new(), None)
            }
            (_, None) => (CancellationToken::new(), None),
        };
        let interpreter = self.inner.interpreter.clone();
        let cancelled = token.clone();
        let route = Route::new(sink);
        let parked: Parked = Arc::default();
        let (task_route, task_parked) = (route.clone(), parked.clone());
        let handle = tokio::spawn(async move {
            if let Some(previous) = previous {
                let _ = previous.await;
            }
            tokio::select! {
                () = cancelled.cancelled() => {}
                () = drive(interpreter, start, task_route, task_parked) => {}
            }
        });
        state.running = Some(Running {
            token,
            handle,
            route,
            parked,
        });
    }
}

/// Runs one turn, forwarding its chunks to `route`: an approval request is shown as its
/// confirmation chunk and `complete`, and parked until `go` (or a new input) answers it; the
/// turn ends with `complete` (after an `error` chunk when it failed).
async fn drive(interpreter: Interpreter, start: TurnStart, route: Route, parked: Parked) {
    let (turn, go_for) = match start {
        TurnStart::Chat(messages) => (interpreter.chat(ChatInput::Append(messages)), None),
        TurnStart::Go => {
            let pending = interpreter
                .messages_mut()
                .last()
                .filter(|m| m.role == oi_core::Role::Assistant && m.kind == Kind::Code)
                .map(|m| m.text().to_owned());
            (interpreter.respond(), pending)
        }
    };
    forward(turn, go_for, &route, &parked).await;
}

/// Forwards a turn's events until it ends or its consumer goes away (which stops it).
async fn forward(mut turn: Turn, mut go_for: Option<String>, route: &Route, parked: &Parked) {
    while let Some(event) = turn.next().await {
        let sent = match event {
            TurnEvent::Chunk(chunk) => route.send(to_json(&chunk)),
            TurnEvent::Approval(request) => {
                if go_for.take().is_some_and(|code| code == request.code()) {
                    request.approve();
                    continue;
                }
                let shown = route.send(to_json(&request.confirmation()));
                *lock(parked) = Some(request);
                shown && route.send(complete_json())
            }
            TurnEvent::Error(error) => {
                route.send(error_json(error.to_string()));
                route.send(complete_json())
            }
            TurnEvent::Complete => route.send(complete_json()),
        };
        if !sent {
            return;
        }
    }
}
