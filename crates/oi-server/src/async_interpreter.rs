//! [`AsyncInterpreter`]: the chunk-in / chunk-out face of an interpreter that the server (and
//! any other async program) drives (spec c.5).
//!
//! User chunks go in through [`AsyncInterpreter::input`]; each input's turn runs in its own
//! task and its chunks come out of [`AsyncInterpreter::output`], followed by
//! `{"role":"server","type":"status","content":"complete"}`. Every input gets its own turn and
//! its own `complete`: a new input interrupts the running turn, or, in queue mode, waits for
//! it. Nothing here blocks: taking an input never waits for a turn to end.

use std::sync::{Arc, Mutex};

use oi_core::{Chunk, Interpreter, Kind};
use tokio::sync::mpsc;

use crate::accumulate::{AccumulateError, Accumulator};
use crate::config::InterruptMode;
use crate::frames::{FrameError, UserChunk};
use crate::turns::{Queued, TurnStart, Turns, lock};

/// Why an input chunk was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The frame is not a user chunk.
    #[error(transparent)]
    Frame(#[from] FrameError),
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

/// The input being received.
#[derive(Default)]
struct InputState {
    accumulator: Accumulator,
    /// The input went over a limit: its chunks are ignored up to `end`.
    discarding: bool,
}

struct Inner {
    interpreter: Interpreter,
    mode: InterruptMode,
    limits: InputLimits,
    input: Mutex<InputState>,
    turns: Mutex<Turns>,
    tx: mpsc::UnboundedSender<Chunk>,
    rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Chunk>>,
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
                input: Mutex::default(),
                turns: Mutex::default(),
                tx,
                rx: tokio::sync::Mutex::new(rx),
            }),
        }
    }

    /// The wrapped interpreter (settings, messages, computer).
    pub fn interpreter(&self) -> &Interpreter {
        &self.inner.interpreter
    }

    /// Takes one user chunk (spec c.5): `start` interrupts a running turn (or, in queue mode,
    /// lets it finish) and opens a message, `content` extends it, `end` starts the turn. A last
    /// message of type `command` is removed first: `stop` stops the running turn (and drops
    /// the inputs queued behind it, each answered with an error and `complete`) and reports
    /// `complete`; `go` approves the block that waits.
    /// The chunk is given as JSON (a frame's object, a dict from Python); see
    /// [`input_chunk`](Self::input_chunk) for a chunk already read.
    pub async fn input(&self, chunk: &serde_json::Value) -> Result<(), InputError> {
        match crate::frames::client_frame(chunk.clone())? {
            crate::frames::ClientFrame::Chunk(chunk) => self.take_input(&chunk),
            // Auth and ack frames mean nothing without a connection.
            _ => Ok(()),
        }
    }

    /// [`input`](Self::input) for a chunk already read from its frame.
    pub async fn input_chunk(&self, chunk: &UserChunk) -> Result<(), InputError> {
        self.take_input(chunk)
    }

    fn take_input(&self, chunk: &UserChunk) -> Result<(), InputError> {
        if chunk.start {
            if self.inner.mode == InterruptMode::Interrupt {
                lock(&self.inner.turns).stop_current();
            }
            let mut input = lock(&self.inner.input);
            input.discarding = false;
            input.accumulator.push(chunk);
            return self.check_size(&mut input);
        }
        if chunk.content.is_some() {
            let mut input = lock(&self.inner.input);
            if !input.discarding {
                input.accumulator.push(chunk);
                return self.check_size(&mut input);
            }
            return Ok(());
        }
        if !chunk.end {
            return Ok(());
        }
        let mut messages = {
            let mut input = lock(&self.inner.input);
            if std::mem::take(&mut input.discarding) {
                return Ok(());
            }
            input.accumulator.take()?
        };
        let command = messages
            .last()
            .filter(|m| m.kind == Kind::Command)
            .map(|m| m.text().trim().to_owned());
        if command.is_some() {
            messages.pop();
        }
        match command.as_deref() {
            Some("stop") => {
                self.stop_all();
                self.emit(Chunk::complete());
            }
            Some("go") => self.start(TurnStart::Go, self.inner.tx.clone()),
            Some(other) => return Err(InputError::UnknownCommand(other.to_owned())),
            None => self.start(TurnStart::Chat(messages), self.inner.tx.clone()),
        }
        Ok(())
    }

    /// Discards the pending input when it grew past a limit (and ignores the rest of it).
    fn check_size(&self, input: &mut InputState) -> Result<(), InputError> {
        let limits = self.inner.limits;
        let over = if input.accumulator.last_message_bytes() > limits.max_message_bytes {
            Some((
                "one message",
                limits.max_message_bytes,
                "--max-message-bytes",
            ))
        } else if input.accumulator.bytes() > limits.max_pending_bytes {
            Some(("the input", limits.max_pending_bytes, "--max-pending-bytes"))
        } else {
            None
        };
        let Some((what, limit, flag)) = over else {
            return Ok(());
        };
        input.accumulator.clear();
        input.discarding = true;
        Err(InputError::TooLarge { what, limit, flag })
    }

    /// Drops the input received so far that has not been ended (its connection closed).
    pub async fn discard_pending(&self) {
        let mut input = lock(&self.inner.input);
        input.accumulator.clear();
        input.discarding = false;
    }

    /// Roughly how many bytes of input wait for their `end`.
    pub async fn pending_bytes(&self) -> usize {
        lock(&self.inner.input).accumulator.bytes()
    }

    /// The next outgoing chunk, waiting for one: the turns' framed LMC chunks (confirmations
    /// included), `error` chunks, and `complete` after each input.
    pub async fn output(&self) -> Option<Chunk> {
        self.inner.rx.lock().await.recv().await
    }

    /// Puts `chunk` on the output (e.g. a server error about a malformed frame).
    pub fn emit(&self, chunk: Chunk) {
        // The receiver lives as long as `self`.
        let _ = self.inner.tx.send(chunk);
    }

    /// Whether a turn is running (a turn parked at an approval waits; it does not run).
    pub async fn is_running(&self) -> bool {
        lock(&self.inner.turns).busy()
    }

    /// Stops the running turn, if any (its code is killed; no `complete` is sent for it).
    pub async fn stop(&self) {
        lock(&self.inner.turns).stop_current();
    }

    /// Stops the running turn and drops the queued inputs, each answered with an error and
    /// `complete` (every input gets its `complete`).
    fn stop_all(&self) {
        let dropped: Vec<Queued> = {
            let mut turns = lock(&self.inner.turns);
            turns.stop_current();
            turns.queue.drain(..).collect()
        };
        for queued in dropped {
            let _ = queued.sink.send(Chunk::server_error(
                "stopped before its turn began: a `stop` came while it waited",
            ));
            let _ = queued.sink.send(Chunk::complete());
        }
    }

    /// Starts a turn (or, for [`TurnStart::Go`], resumes the parked one) whose chunks go to
    /// the returned receiver instead of [`output`](Self::output), ending with `complete`; any
    /// other turn is stopped first. Dropping the receiver stops the turn. This is how the
    /// OpenAI-compatible endpoint runs turns.
    pub async fn run_separately(&self, start: TurnStart) -> mpsc::UnboundedReceiver<Chunk> {
        let (tx, rx) = mpsc::unbounded_channel();
        if start != TurnStart::Go {
            lock(&self.inner.turns).stop_current();
        }
        self.start(start, tx);
        rx
    }

    /// Starts `start`, or queues it behind the running turn in queue mode.
    fn start(&self, start: TurnStart, sink: mpsc::UnboundedSender<Chunk>) {
        let mut turns = lock(&self.inner.turns);
        if start == TurnStart::Go {
            if let Some(running) = turns.current.as_ref() {
                if running.go(sink.clone()) {
                    return;
                }
            }
        }
        if self.inner.mode == InterruptMode::Queue && turns.busy() {
            turns.queue.push_back(Queued { start, sink });
            return;
        }
        turns.stop_current();
        self.spawn(&mut turns, start, sink);
    }

    fn spawn(&self, turns: &mut Turns, start: TurnStart, sink: mpsc::UnboundedSender<Chunk>) {
        let next = Arc::downgrade(&self.inner);
        turns.spawn(&self.inner.interpreter, start, sink, move |generation| {
            if let Some(inner) = next.upgrade() {
                AsyncInterpreter { inner }.turn_ended(generation);
            }
        });
    }

    /// A turn ended by itself: start the next queued input, if it is still this turn's turn.
    fn turn_ended(&self, generation: u64) {
        let mut turns = lock(&self.inner.turns);
        if turns.current.as_ref().map(|r| r.generation) != Some(generation) {
            return;
        }
        turns.current = None;
        if let Some(next) = turns.queue.pop_front() {
            self.spawn(&mut turns, next.start, next.sink);
        }
    }
}
