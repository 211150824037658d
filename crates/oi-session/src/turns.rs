//! The turns of one session: the one running (or parked at an approval), the inputs queued
//! behind it, and where each turn's chunks go.
//!
//! A turn runs in its own task and forwards its events as LMC chunks to its [`Route`]: the
//! session's output queue, or an HTTP response. An approval request is shown as its
//! confirmation chunk and `complete`, and the request is kept (the turn is *parked*) until
//! `go` approves it or a new input stops the turn. Stopping is immediate and synchronous: the
//! route is closed first, so not one more chunk of a stopped turn goes out, then the task is
//! cancelled (which drops the model request and kills the running code).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::StreamExt;
use oi_core::{
    ApprovalRequest, ChatInput, Chunk, Interpreter, Kind, Message, Role, StopHandle, Turn,
    TurnEvent,
};
use tokio_util::sync::CancellationToken;

use crate::outgoing::{InputRef, Outgoing, Sink};

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
    /// An input that could not be taken (an unknown command, a bad role): its error chunk and
    /// `complete` are sent in its turn, after the inputs before it.
    Fail(String),
}

/// Where a turn's chunks go, and which input its `complete` answers. Closed when the turn is
/// stopped, so a stopped turn sends nothing.
#[derive(Clone)]
pub(crate) struct Route(Arc<Mutex<Option<Target>>>);

/// An open route.
struct Target {
    sink: Sink,
    answers: Option<InputRef>,
}

impl Route {
    pub(crate) fn new(sink: Sink, answers: Option<InputRef>) -> Self {
        Route(Arc::new(Mutex::new(Some(Target { sink, answers }))))
    }

    /// Sends `chunk`; false when the route is closed or its consumer is gone.
    fn send(&self, chunk: Chunk) -> bool {
        lock(&self.0)
            .as_ref()
            .is_some_and(|target| target.sink.send(Outgoing::plain(chunk)).is_ok())
    }

    /// Sends `out` (a chunk with what it carries); false as [`send`](Self::send).
    fn send_out(&self, out: Outgoing) -> bool {
        lock(&self.0)
            .as_ref()
            .is_some_and(|target| target.sink.send(out).is_ok())
    }

    /// Sends the `complete` of the input the turn answers now, with `usage`.
    fn complete(&self, usage: oi_core::UsageReport) -> bool {
        lock(&self.0).as_ref().is_some_and(|target| {
            target
                .sink
                .send(Outgoing::complete(target.answers).with_usage(usage))
                .is_ok()
        })
    }

    /// From now on the turn's chunks go to `sink`, and its `complete` answers `answers`.
    fn redirect(&self, sink: Sink, answers: Option<InputRef>) {
        let mut route = lock(&self.0);
        if route.is_some() {
            *route = Some(Target { sink, answers });
        }
    }

    fn close(&self) {
        *lock(&self.0) = None;
    }
}

/// A turn in its task.
pub(crate) struct Running {
    cancel: CancellationToken,
    route: Route,
    /// The approval request the turn waits on, if it is parked.
    parked: Arc<Mutex<Option<ApprovalRequest>>>,
    /// The core turn's own stop switch (set once the turn has started).
    stop: Arc<Mutex<Option<StopHandle>>>,
    finished: Arc<std::sync::atomic::AtomicBool>,
    /// Which turn of the session this is.
    pub(crate) generation: u64,
}

impl Running {
    /// Stops the turn now: nothing more of it goes out; its model request and code are
    /// stopped as its task ends (at once).
    pub(crate) fn stop(&self) {
        self.route.close();
        if let Some(stop) = lock(&self.stop).as_ref() {
            stop.stop();
        }
        self.cancel.cancel();
        // A parked request dropped here declines nothing: the turn is stopped first.
        lock(&self.parked).take();
    }

    /// Whether it waits for an approval.
    pub(crate) fn is_parked(&self) -> bool {
        lock(&self.parked).is_some()
    }

    /// Whether its task has ended.
    pub(crate) fn is_finished(&self) -> bool {
        self.finished.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Approves the parked request, sending the rest of the turn to `sink` (its `complete`
    /// answers `answers`, the `go`); false when the turn is not parked.
    pub(crate) fn go(&self, sink: Sink, answers: Option<InputRef>) -> bool {
        let Some(request) = lock(&self.parked).take() else {
            return false;
        };
        self.route.redirect(sink, answers);
        request.approve();
        true
    }
}

/// An input waiting for the turn before it (queue mode).
pub(crate) struct Queued {
    pub(crate) start: TurnStart,
    pub(crate) sink: Sink,
    /// The input it answers.
    pub(crate) answers: Option<InputRef>,
}

/// The session's turns.
#[derive(Default)]
pub(crate) struct Turns {
    pub(crate) current: Option<Running>,
    pub(crate) queue: VecDeque<Queued>,
    next_generation: u64,
}

impl Turns {
    /// Whether a turn runs (a parked turn waits; it does not run).
    pub(crate) fn busy(&self) -> bool {
        self.current
            .as_ref()
            .is_some_and(|running| !running.is_finished() && !running.is_parked())
    }

    /// Stops the current turn, if any.
    pub(crate) fn stop_current(&mut self) {
        if let Some(running) = self.current.take() {
            running.stop();
        }
    }

    /// Starts `start` now, its chunks going to `sink` and its `complete` answering `answers`;
    /// `settled` runs in the task with the turn's generation when the turn ends by itself or
    /// parks at an approval (to start what was queued).
    pub(crate) fn spawn(
        &mut self,
        interpreter: &Interpreter,
        start: TurnStart,
        sink: Sink,
        answers: Option<InputRef>,
        settled: Settled,
    ) {
        self.next_generation += 1;
        let generation = self.next_generation;
        let running = Running {
            cancel: CancellationToken::new(),
            route: Route::new(sink, answers),
            parked: Arc::default(),
            stop: Arc::default(),
            finished: Arc::default(),
            generation,
        };
        let task = TurnTask {
            interpreter: interpreter.clone(),
            route: running.route.clone(),
            parked: running.parked.clone(),
            stop: running.stop.clone(),
            settled: settled.clone(),
            generation,
        };
        let cancel = running.cancel.clone();
        let finished = running.finished.clone();
        tokio::spawn(async move {
            let ended = tokio::select! {
                biased;
                () = cancel.cancelled() => false,
                () = task.run(start) => true,
            };
            finished.store(true, std::sync::atomic::Ordering::SeqCst);
            if ended {
                settled(generation);
            }
        });
        self.current = Some(running);
    }
}

/// Called with a turn's generation when it ends by itself or parks at an approval.
pub(crate) type Settled = Arc<dyn Fn(u64) + Send + Sync>;

/// What a turn's task holds.
struct TurnTask {
    interpreter: Interpreter,
    route: Route,
    parked: Arc<Mutex<Option<ApprovalRequest>>>,
    stop: Arc<Mutex<Option<StopHandle>>>,
    settled: Settled,
    generation: u64,
}

impl TurnTask {
    /// The usage a `complete` of this turn carries.
    fn usage(&self) -> oi_core::UsageReport {
        self.interpreter.runtime_mut().usage()
    }

    async fn run(&self, start: TurnStart) {
        let (turn, go_for) = match start {
            TurnStart::Fail(message) => {
                self.route.send(Chunk::server_error(message));
                self.route.complete(self.usage());
                return;
            }
            TurnStart::Chat(messages) => (self.interpreter.chat(ChatInput::Append(messages)), None),
            TurnStart::Go => {
                let pending = self
                    .interpreter
                    .messages_mut()
                    .last()
                    .filter(|m| m.role == Role::Assistant && m.kind == Kind::Code)
                    .map(|m| m.text().to_owned());
                (self.interpreter.respond(), pending)
            }
        };
        *lock(&self.stop) = Some(turn.stop_handle());
        self.forward(turn, go_for).await;
    }

    /// Forwards a turn's events until it ends or its consumer goes away (which stops it).
    async fn forward(&self, mut turn: Turn, mut go_for: Option<String>) {
        while let Some(event) = turn.next().await {
            let sent = match event {
                TurnEvent::Chunk(chunk) => self.route.send(chunk),
                TurnEvent::Approval(request) => {
                    if go_for.take().is_some_and(|code| code == request.code()) {
                        request.approve();
                        continue;
                    }
                    let shown = self.route.send(request.confirmation());
                    *lock(&self.parked) = Some(request);
                    let answered = shown && self.route.complete(self.usage());
                    (self.settled)(self.generation);
                    answered
                }
                TurnEvent::Error(error) => {
                    self.route.send_out(Outgoing::failed(&error));
                    self.route.complete(self.usage())
                }
                TurnEvent::Complete => self.route.complete(self.usage()),
            };
            if !sent {
                return;
            }
        }
    }
}
