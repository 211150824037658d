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
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

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
}

/// Where a turn's chunks go. Closed when the turn is stopped, so a stopped turn sends nothing.
#[derive(Clone)]
pub(crate) struct Route(Arc<Mutex<Option<mpsc::UnboundedSender<Chunk>>>>);

impl Route {
    pub(crate) fn new(sink: mpsc::UnboundedSender<Chunk>) -> Self {
        Route(Arc::new(Mutex::new(Some(sink))))
    }

    /// Sends `chunk`; false when the route is closed or its consumer is gone.
    fn send(&self, chunk: Chunk) -> bool {
        lock(&self.0)
            .as_ref()
            .is_some_and(|sink| sink.send(chunk).is_ok())
    }

    /// From now on the turn's chunks go to `sink`.
    fn redirect(&self, sink: mpsc::UnboundedSender<Chunk>) {
        let mut route = lock(&self.0);
        if route.is_some() {
            *route = Some(sink);
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

    /// Approves the parked request, sending the rest of the turn to `sink`; false when the
    /// turn is not parked.
    pub(crate) fn go(&self, sink: mpsc::UnboundedSender<Chunk>) -> bool {
        let Some(request) = lock(&self.parked).take() else {
            return false;
        };
        self.route.redirect(sink);
        request.approve();
        true
    }
}

/// An input waiting for the turn before it (queue mode).
pub(crate) struct Queued {
    pub(crate) start: TurnStart,
    pub(crate) sink: mpsc::UnboundedSender<Chunk>,
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

    /// Starts `start` now, its chunks going to `sink`; `on_end` runs in the task when the turn
    /// ends by itself (to start what was queued).
    pub(crate) fn spawn(
        &mut self,
        interpreter: &Interpreter,
        start: TurnStart,
        sink: mpsc::UnboundedSender<Chunk>,
        on_end: impl FnOnce(u64) + Send + 'static,
    ) {
        self.next_generation += 1;
        let generation = self.next_generation;
        let running = Running {
            cancel: CancellationToken::new(),
            route: Route::new(sink),
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
                on_end(generation);
            }
        });
        self.current = Some(running);
    }
}

/// What a turn's task holds.
struct TurnTask {
    interpreter: Interpreter,
    route: Route,
    parked: Arc<Mutex<Option<ApprovalRequest>>>,
    stop: Arc<Mutex<Option<StopHandle>>>,
}

impl TurnTask {
    async fn run(&self, start: TurnStart) {
        let (turn, go_for) = match start {
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
                    shown && self.route.send(Chunk::complete())
                }
                TurnEvent::Error(error) => {
                    self.route.send(Chunk::server_error(error.to_string()));
                    self.route.send(Chunk::complete())
                }
                TurnEvent::Complete => self.route.send(Chunk::complete()),
            };
            if !sent {
                return;
            }
        }
    }
}
