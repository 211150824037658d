//! [`AsyncInterpreter`]: the chunk-in / chunk-out face of an interpreter that the server (and
//! any other async program) drives (spec c.5).
//!
//! User chunks go in through [`AsyncInterpreter::input`] (or, for a connection that builds
//! its own inputs, [`AsyncInterpreter::act`]); each input's turn runs in its own task and its
//! chunks come out of [`AsyncInterpreter::output`], followed by
//! `{"role":"server","type":"status","content":"complete"}`. Every input gets its own turn and
//! its own `complete`, in input order, except a turn that a newer input or `stop` interrupted
//! (it sends nothing more): a new input interrupts the running turn, or, in queue mode, waits
//! for it. Nothing here blocks: taking an input never waits for a turn to end.

use std::sync::{Arc, Mutex};

use oi_core::{Chunk, Interpreter};
use tokio::sync::mpsc;

use crate::frames::UserChunk;
pub use crate::input::{Input, InputBuilder, InputError, InputLimits, Step};
use crate::interrupt::InterruptMode;
use crate::outgoing::{InputRef, Outgoing, Sink, TurnOutput};
use crate::turns::{Queued, Settled, TurnStart, Turns, lock};

struct Inner {
    interpreter: Interpreter,
    mode: InterruptMode,
    limits: InputLimits,
    /// The input of callers without a connection ([`AsyncInterpreter::input`]).
    input: Mutex<InputBuilder>,
    turns: Mutex<Turns>,
    tx: Sink,
    rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Outgoing>>,
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
                input: Mutex::new(InputBuilder::new(limits)),
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

    /// The limits an input is built under (for a connection's own [`InputBuilder`]).
    pub fn limits(&self) -> InputLimits {
        self.inner.limits
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
        let step = lock(&self.inner.input).take(chunk)?;
        self.act(step, None);
        Ok(())
    }

    /// Acts on what one user chunk did to an input built elsewhere (a connection's own
    /// [`InputBuilder`]); the input's `complete` will answer `answers`.
    pub fn act(&self, step: Step, answers: Option<InputRef>) {
        match step {
            Step::Pending | Step::Discarded => {}
            Step::Opened => {
                if self.inner.mode == InterruptMode::Interrupt {
                    lock(&self.inner.turns).stop_current();
                }
            }
            Step::Ended(Input::Stop) => {
                self.stop_all();
                let usage = self.interpreter().runtime_mut().usage();
                self.emit_out(Outgoing::complete(answers).with_usage(usage));
            }
            Step::Ended(Input::Go) => self.start(TurnStart::Go, self.inner.tx.clone(), answers),
            Step::Ended(Input::Messages(messages)) => {
                self.start(TurnStart::Chat(messages), self.inner.tx.clone(), answers);
            }
        }
    }

    /// Answers an input that failed at its `end` (an unknown command, a bad field) with its
    /// error and `complete`, in its turn (after the inputs before it, in queue mode).
    pub fn act_failed(&self, error: &InputError, answers: Option<InputRef>) {
        self.start(
            TurnStart::Fail(error.to_string()),
            self.inner.tx.clone(),
            answers,
        );
    }

    /// Drops the input received so far that has not been ended (of [`input`](Self::input)).
    pub async fn discard_pending(&self) {
        lock(&self.inner.input).clear();
    }

    /// Roughly how many bytes of input wait for their `end` (of [`input`](Self::input)).
    pub async fn pending_bytes(&self) -> usize {
        lock(&self.inner.input).bytes()
    }

    /// The next outgoing chunk, waiting for one: the turns' framed LMC chunks (confirmations
    /// included), `error` chunks, and `complete` after each input.
    pub async fn output(&self) -> Option<Chunk> {
        self.next_out().await.map(|out| out.chunk)
    }

    /// [`output`](Self::output) with the input each `complete` answers.
    pub async fn next_out(&self) -> Option<Outgoing> {
        self.inner.rx.lock().await.recv().await
    }

    /// Waits for the next outgoing chunk, then takes the ones already waiting behind it, up to
    /// `max` in all (to be written to the socket together); empty once the output is closed.
    pub async fn next_batch(&self, max: usize) -> Vec<Outgoing> {
        let mut rx = self.inner.rx.lock().await;
        let Some(first) = rx.recv().await else {
            return Vec::new();
        };
        let mut batch = vec![first];
        while batch.len() < max {
            match rx.try_recv() {
                Ok(out) => batch.push(out),
                Err(_) => break,
            }
        }
        batch
    }

    /// Puts `chunk` on the output (e.g. a server error about a malformed frame).
    pub fn emit(&self, chunk: Chunk) {
        self.emit_out(Outgoing::plain(chunk));
    }

    /// Puts `out` on the output.
    pub fn emit_out(&self, out: Outgoing) {
        // The receiver lives as long as `self`.
        let _ = self.inner.tx.send(out);
    }

    /// Whether a turn is running (a turn parked at an approval waits; it does not run).
    pub async fn is_running(&self) -> bool {
        self.running()
    }

    /// [`is_running`](Self::is_running), without waiting.
    pub fn running(&self) -> bool {
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
            let _ = queued.sink.send(Outgoing::plain(Chunk::server_error(
                "stopped before its turn began: a `stop` came while it waited",
            )));
            let _ = queued.sink.send(Outgoing::complete(queued.answers));
        }
    }

    /// Starts a turn (or, for [`TurnStart::Go`], resumes the parked one) whose chunks go to
    /// the returned receiver instead of [`output`](Self::output), ending with `complete`; any
    /// other turn is stopped first. Dropping the receiver stops the turn. This is how the
    /// OpenAI-compatible endpoint runs turns.
    pub async fn run_separately(&self, start: TurnStart) -> TurnOutput {
        let (tx, rx) = mpsc::unbounded_channel();
        if start != TurnStart::Go {
            lock(&self.inner.turns).stop_current();
        }
        self.start(start, tx, None);
        TurnOutput(rx)
    }

    /// Starts `start`, or queues it behind the running turn in queue mode.
    fn start(&self, start: TurnStart, sink: Sink, answers: Option<InputRef>) {
        let mut turns = lock(&self.inner.turns);
        if start == TurnStart::Go {
            if let Some(running) = turns.current.as_ref() {
                if running.go(sink.clone(), answers) {
                    return;
                }
            }
        }
        if self.inner.mode == InterruptMode::Queue && (turns.busy() || !turns.queue.is_empty()) {
            turns.queue.push_back(Queued {
                start,
                sink,
                answers,
            });
            return;
        }
        turns.stop_current();
        self.spawn(&mut turns, start, sink, answers);
    }

    fn spawn(&self, turns: &mut Turns, start: TurnStart, sink: Sink, answers: Option<InputRef>) {
        let next = Arc::downgrade(&self.inner);
        let settled: Settled = Arc::new(move |generation| {
            if let Some(inner) = next.upgrade() {
                AsyncInterpreter { inner }.turn_settled(generation);
            }
        });
        turns.spawn(&self.inner.interpreter, start, sink, answers, settled);
    }

    /// A turn ended by itself or parked at an approval (its `complete` is out): start the next
    /// queued input, if it is still this turn's turn. A parked turn is stopped for it, as a new
    /// message stops it in interrupt mode.
    fn turn_settled(&self, generation: u64) {
        let mut turns = lock(&self.inner.turns);
        let Some(current) = turns.current.as_ref() else {
            return;
        };
        if current.generation != generation {
            return;
        }
        if current.is_finished() {
            turns.current = None;
        }
        if let Some(next) = turns.queue.pop_front() {
            turns.stop_current();
            self.spawn(&mut turns, next.start, next.sink, next.answers);
        }
    }
}
