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
//!
//! One task, the session's actor ([`crate::actor`]), owns the session's state: the running
//! turn, the approval it is parked at, the queue and the pending input of
//! [`input`](AsyncInterpreter::input). A handle's methods send it commands over one channel, in
//! order (the sync ones, `act`, `act_failed`, `emit`, without waiting); it sends the chunks out.
//! What others read at once ([`running`](AsyncInterpreter::running)) is in a `watch` channel,
//! set by each command as it is sent (so it is right the moment `act` returns) and by the actor.
//! The actor starts on the runtime of the first call made inside one (a Python program makes
//! one outside any runtime).
//!
//! The output's receiver is the one lock: an mpsc receiver has one owner, and it is read by
//! one consumer at a time but from different tasks over time (a WebSocket writer, then the next
//! connection's). It sits in a `tokio::sync::Mutex` rather than in the actor because reading
//! must be cancel-safe: a writer that times out or is dropped while waiting leaves the chunk in
//! the queue, which a request answered by the actor over a oneshot could not promise.

use std::sync::Arc;

use oi_core::{Chunk, Interpreter};
use tokio::sync::{mpsc, oneshot, watch};

use crate::actor::{Actor, Command, Numbered, Status};
use crate::frames::UserChunk;
pub use crate::input::{Input, InputBuilder, InputError, InputLimits, Step};
use crate::interrupt::InterruptMode;
use crate::outgoing::{InputRef, Outgoing, TurnOutput};
use crate::turns::TurnStart;

struct Inner {
    interpreter: Interpreter,
    mode: InterruptMode,
    limits: InputLimits,
    /// To the actor.
    commands: mpsc::UnboundedSender<Numbered>,
    /// Whether a turn runs, and how many commands were sent.
    status: Arc<watch::Sender<Status>>,
    /// The actor until a runtime runs it (then empty).
    idle: watch::Sender<Option<Actor>>,
    /// The session's output (see the module doc for why it is behind a lock).
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
        let (commands, commands_rx) = mpsc::unbounded_channel();
        let status = Arc::new(watch::Sender::new(Status::default()));
        let actor = Actor::new(
            interpreter.clone(),
            mode,
            InputBuilder::new(limits),
            tx,
            status.clone(),
            commands_rx,
        );
        let this = AsyncInterpreter {
            inner: Arc::new(Inner {
                interpreter,
                mode,
                limits,
                commands,
                status,
                idle: watch::Sender::new(Some(actor)),
                rx: tokio::sync::Mutex::new(rx),
            }),
        };
        this.wake();
        this
    }

    /// Starts the actor if it waits and a runtime is there to run it.
    fn wake(&self) {
        if self.inner.idle.borrow().is_none() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if let Some(actor) = self.inner.idle.send_replace(None) {
            runtime.spawn(actor.run());
        }
    }

    /// Sends `command` to the actor; `running`, when given, is whether a turn runs once it is
    /// handled.
    fn send(&self, command: Command, running: Option<bool>) {
        self.inner.status.send_modify(|status| {
            status.sent += 1;
            // The actor lives as long as the handles.
            let _ = self.inner.commands.send((status.sent, command));
            if let Some(running) = running {
                status.running = running;
            }
        });
        self.wake();
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
            crate::frames::ClientFrame::Chunk(chunk) => self.take_input(chunk).await,
            // Auth and ack frames mean nothing without a connection.
            _ => Ok(()),
        }
    }

    /// [`input`](Self::input) for a chunk already read from its frame.
    pub async fn input_chunk(&self, chunk: &UserChunk) -> Result<(), InputError> {
        self.take_input(chunk.clone()).await
    }

    async fn take_input(&self, chunk: UserChunk) -> Result<(), InputError> {
        let (reply, answer) = oneshot::channel();
        self.send(Command::Input { chunk, reply }, None);
        // The actor answers every input it takes; it is gone only with the last handle.
        answer.await.unwrap_or(Ok(()))
    }

    /// Acts on what one user chunk did to an input built elsewhere (a connection's own
    /// [`InputBuilder`]); the input's `complete` will answer `answers`.
    pub fn act(&self, step: Step, answers: Option<InputRef>) {
        let running = match &step {
            Step::Pending | Step::Discarded => return,
            Step::Opened if self.inner.mode == InterruptMode::Interrupt => Some(false),
            Step::Opened => None,
            Step::Ended(Input::Stop) => Some(false),
            Step::Ended(_) => Some(true),
        };
        self.send(Command::Act { step, answers }, running);
    }

    /// Answers an input that failed at its `end` (an unknown command, a bad field) with its
    /// error and `complete`, in its turn (after the inputs before it, in queue mode).
    pub fn act_failed(&self, error: &InputError, answers: Option<InputRef>) {
        let error = error.to_string();
        self.send(Command::ActFailed { error, answers }, None);
    }

    /// Drops the input received so far that has not been ended (of [`input`](Self::input)).
    pub async fn discard_pending(&self) {
        self.send(Command::Discard, None);
    }

    /// Roughly how many bytes of input wait for their `end` (of [`input`](Self::input)).
    pub async fn pending_bytes(&self) -> usize {
        let (reply, answer) = oneshot::channel();
        self.send(Command::PendingBytes(reply), None);
        answer.await.unwrap_or(0)
    }

    /// The next outgoing chunk, waiting for one: the turns' framed LMC chunks (confirmations
    /// included), `error` chunks, and `complete` after each input.
    pub async fn output(&self) -> Option<Chunk> {
        self.next_out().await.map(|out| out.chunk)
    }

    /// [`output`](Self::output) with the input each `complete` answers.
    pub async fn next_out(&self) -> Option<Outgoing> {
        self.wake();
        self.inner.rx.lock().await.recv().await
    }

    /// Waits for the next outgoing chunk, then takes the ones already waiting behind it, up to
    /// `max` in all (to be written to the socket together); empty once the output is closed.
    pub async fn next_batch(&self, max: usize) -> Vec<Outgoing> {
        self.wake();
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

    /// Puts `out` on the output (after what the commands sent before it put there).
    pub fn emit_out(&self, out: Outgoing) {
        self.send(Command::Emit(out), None);
    }

    /// Whether a turn is running (a turn parked at an approval waits; it does not run).
    pub async fn is_running(&self) -> bool {
        self.running()
    }

    /// [`is_running`](Self::is_running), without waiting.
    pub fn running(&self) -> bool {
        self.inner.status.borrow().running
    }

    /// Stops the running turn, if any (its code is killed; no `complete` is sent for it).
    pub async fn stop(&self) {
        let (reply, done) = oneshot::channel();
        self.send(Command::Stop(reply), Some(false));
        let _ = done.await;
    }

    /// Starts a turn (or, for [`TurnStart::Go`], resumes the parked one) whose chunks go to
    /// the returned receiver instead of [`output`](Self::output), ending with `complete`; any
    /// other turn is stopped first. Dropping the receiver stops the turn. This is how the
    /// OpenAI-compatible endpoint runs turns.
    pub async fn run_separately(&self, start: TurnStart) -> TurnOutput {
        let (sink, rx) = mpsc::unbounded_channel();
        let running = (!matches!(start, TurnStart::Fail(_))).then_some(true);
        self.send(Command::RunSeparately { start, sink }, running);
        TurnOutput(rx)
    }
}
