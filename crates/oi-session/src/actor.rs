//! The one task that owns a session: its running turn, the approval it is parked at, the
//! inputs queued behind it (queue mode) and the pending input of
//! [`AsyncInterpreter::input`](crate::AsyncInterpreter::input).
//!
//! Handles send it [`Command`]s in order over one channel; turns' tasks send it their events
//! over another, tagged with the turn's generation. It alone decides what goes out and where
//! (the session's output, or a `run_separately` receiver), so an event of a turn that is no
//! longer the current one (stopped, replaced) is dropped here: after a stop is handled, nothing
//! of the stopped turn goes out. It ends when the last handle is dropped (the command channel
//! closes), stopping its turn.

use std::sync::Arc;

use oi_core::{Chunk, Interpreter, TurnEvent};
use tokio::sync::{mpsc, oneshot, watch};

use crate::frames::UserChunk;
use crate::input::{Input, InputBuilder, InputError, Step};
use crate::interrupt::InterruptMode;
use crate::outgoing::{InputRef, Outgoing, Sink};
use crate::turns::{Queued, TurnReport, TurnStart, Turns};

/// What a handle asks of the session's actor.
pub(crate) enum Command {
    /// A user chunk of the actor's own input; the reply says whether it was taken.
    Input {
        chunk: UserChunk,
        reply: oneshot::Sender<Result<(), InputError>>,
    },
    /// What a chunk did to an input built elsewhere (`start`, `end` of a message, `go`, `stop`).
    Act {
        step: Step,
        answers: Option<InputRef>,
    },
    /// An input that failed at its `end`: its error and `complete`, in its turn.
    ActFailed {
        error: String,
        answers: Option<InputRef>,
    },
    /// Drops the actor's own input not yet ended.
    Discard,
    /// How many bytes of the actor's own input wait for their `end`.
    PendingBytes(oneshot::Sender<usize>),
    /// Puts a chunk on the session's output.
    Emit(Outgoing),
    /// Stops the running turn only; the reply comes once it is stopped.
    Stop(oneshot::Sender<()>),
    /// Starts (or, for `go`, resumes) a turn whose chunks go to `sink`.
    RunSeparately { start: TurnStart, sink: Sink },
}

/// What others read without asking the actor.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Status {
    /// Whether a turn runs (as of the last command sent).
    pub(crate) running: bool,
    /// How many commands were sent (the number of the last one).
    pub(crate) sent: u64,
}

/// A command and its number (see [`Status::sent`]).
pub(crate) type Numbered = (u64, Command);

/// The session's actor.
pub(crate) struct Actor {
    interpreter: Interpreter,
    mode: InterruptMode,
    /// The input of callers without a connection.
    input: InputBuilder,
    /// The session's output.
    out: Sink,
    turns: Turns,
    status: Arc<watch::Sender<Status>>,
    /// The number of the last command handled.
    handled: u64,
    commands: mpsc::UnboundedReceiver<Numbered>,
    reports: mpsc::UnboundedReceiver<TurnReport>,
}

impl Actor {
    /// An actor for `interpreter`, taking commands from `commands`, sending to `out`.
    pub(crate) fn new(
        interpreter: Interpreter,
        mode: InterruptMode,
        input: InputBuilder,
        out: Sink,
        status: Arc<watch::Sender<Status>>,
        commands: mpsc::UnboundedReceiver<Numbered>,
    ) -> Self {
        let (reports_tx, reports) = mpsc::unbounded_channel();
        Actor {
            interpreter,
            mode,
            input,
            out,
            turns: Turns::new(reports_tx),
            status,
            handled: 0,
            commands,
            reports,
        }
    }

    /// Runs until the last handle is gone.
    pub(crate) async fn run(mut self) {
        loop {
            // The consumer of a running turn's chunks; its going away stops the turn.
            let watched = self
                .turns
                .current
                .as_ref()
                .filter(|running| running.parked.is_none())
                .map(|running| running.sink.clone());
            tokio::select! {
                command = self.commands.recv() => {
                    let Some((number, command)) = command else {
                        break;
                    };
                    // What the turn sent before this command goes out before it.
                    while let Ok((generation, event)) = self.reports.try_recv() {
                        self.event(generation, event);
                    }
                    self.handled = number;
                    self.command(command);
                }
                Some((generation, event)) = self.reports.recv() => self.event(generation, event),
                () = gone(watched) => {
                    self.turns.stop_current();
                    self.settled();
                }
            }
            self.publish();
        }
        self.turns.stop_current();
    }

    /// Tells the handles whether a turn runs, unless a command they sent since would say
    /// otherwise (it says so when it is handled).
    fn publish(&self) {
        let running = self.turns.busy();
        self.status.send_if_modified(|status| {
            let change = status.sent == self.handled && status.running != running;
            if change {
                status.running = running;
            }
            change
        });
    }

    fn emit(&self, out: Outgoing) {
        // The receiver lives as long as the handles.
        let _ = self.out.send(out);
    }

    fn usage(&self) -> oi_core::UsageReport {
        self.interpreter.runtime_mut().usage()
    }

    fn command(&mut self, command: Command) {
        match command {
            Command::Input { chunk, reply } => {
                let taken = self.input.take(&chunk).map(|step| self.act(step, None));
                self.publish();
                let _ = reply.send(taken);
            }
            Command::Act { step, answers } => self.act(step, answers),
            Command::ActFailed { error, answers } => {
                self.start(TurnStart::Fail(error), self.out.clone(), answers);
            }
            Command::Discard => self.input.clear(),
            Command::PendingBytes(reply) => {
                let _ = reply.send(self.input.bytes());
            }
            Command::Emit(out) => self.emit(out),
            Command::Stop(reply) => {
                self.turns.stop_current();
                self.publish();
                let _ = reply.send(());
            }
            Command::RunSeparately { start, sink } => {
                if start != TurnStart::Go {
                    self.turns.stop_current();
                }
                self.start(start, sink, None);
            }
        }
    }

    fn act(&mut self, step: Step, answers: Option<InputRef>) {
        match step {
            Step::Pending | Step::Discarded => {}
            Step::Opened => {
                if self.mode == InterruptMode::Interrupt {
                    self.turns.stop_current();
                }
            }
            Step::Ended(Input::Stop) => {
                self.stop_all();
                self.emit(Outgoing::complete(answers).with_usage(self.usage()));
            }
            Step::Ended(Input::Go) => self.start(TurnStart::Go, self.out.clone(), answers),
            Step::Ended(Input::Messages(messages)) => {
                self.start(TurnStart::Chat(messages), self.out.clone(), answers);
            }
        }
    }

    /// Stops the running turn and drops the queued inputs, each answered with an error and
    /// `complete` (every input gets its `complete`).
    fn stop_all(&mut self) {
        self.turns.stop_current();
        for queued in self.turns.queue.drain(..) {
            let _ = queued.sink.send(Outgoing::plain(Chunk::server_error(
                "stopped before its turn began: a `stop` came while it waited",
            )));
            let _ = queued.sink.send(Outgoing::complete(queued.answers));
        }
    }

    /// Starts `start` (for `go`, resumes the parked turn), or queues it behind the running
    /// turn in queue mode.
    fn start(&mut self, start: TurnStart, sink: Sink, answers: Option<InputRef>) {
        if start == TurnStart::Go {
            if let Some(running) = self.turns.current.as_mut() {
                if let Some(request) = running.parked.take() {
                    // The rest of the turn goes where the `go` came from, and answers it.
                    running.sink = sink;
                    running.answers = answers;
                    request.approve();
                    return;
                }
            }
        }
        if self.mode == InterruptMode::Queue {
            if self.turns.busy() {
                self.turns.queue.push_back(Queued {
                    start,
                    sink,
                    answers,
                });
                return;
            }
            if !self.turns.queue.is_empty() {
                // Nothing runs (a turn was stopped): the inputs waiting go first.
                self.turns.queue.push_back(Queued {
                    start,
                    sink,
                    answers,
                });
                self.settled();
                return;
            }
        }
        self.turns.launch(&self.interpreter, start, sink, answers);
    }

    /// The current turn ended by itself or parked at an approval (its `complete` is out):
    /// start the next queued input. A parked turn is stopped for it, as a new message stops it
    /// in interrupt mode.
    fn settled(&mut self) {
        while let Some(next) = self.turns.queue.pop_front() {
            if self
                .turns
                .launch(&self.interpreter, next.start, next.sink, next.answers)
            {
                return;
            }
        }
    }

    /// An event of the turn of `generation` (`None`: its stream ended); dropped unless that
    /// turn is the current one.
    fn event(&mut self, generation: u64, event: Option<TurnEvent>) {
        let Some(running) = self.turns.current_of(generation) else {
            return;
        };
        match event {
            Some(TurnEvent::Chunk(chunk)) => {
                if running.sink.send(Outgoing::plain(chunk)).is_err() {
                    self.consumer_gone(generation);
                }
            }
            Some(TurnEvent::Approval(request)) => {
                if running
                    .go_for
                    .take()
                    .is_some_and(|code| code == request.code())
                {
                    request.approve();
                    return;
                }
                let shown = [
                    Outgoing::plain(request.confirmation()),
                    Outgoing::complete(running.answers)
                        .with_usage(self.interpreter.runtime_mut().usage()),
                ];
                let sink = running.sink.clone();
                running.parked = Some(request);
                self.send_then_settle(&sink, shown, generation);
            }
            Some(TurnEvent::Error(error)) => self.finish(Some(Outgoing::failed(&error))),
            Some(TurnEvent::Complete) => self.finish(None),
            None => {
                self.turns.finish_current();
                self.settled();
            }
        }
    }

    /// The current turn ended with `failure` (or none): its error chunk and `complete` go out,
    /// then the next queued input starts (a client that reads `complete` and then asks
    /// [`running`](crate::AsyncInterpreter::running) is told no turn runs, unless one does).
    fn finish(&mut self, failure: Option<Outgoing>) {
        let Some(running) = self.turns.current.as_ref() else {
            return;
        };
        let generation = running.generation;
        // Taken now: starting the next turn starts its own tally.
        let complete = Outgoing::complete(running.answers).with_usage(self.usage());
        let sink = running.sink.clone();
        self.turns.finish_current();
        let outs: Vec<Outgoing> = failure.into_iter().chain([complete]).collect();
        self.send_then_settle(&sink, outs, generation);
    }

    /// Sends `outs` (the end of the turn of `generation`, or its confirmation) to `sink`, then
    /// starts the next queued input. With nothing queued, the handles learn that no turn runs
    /// before `outs` go out.
    fn send_then_settle(
        &mut self,
        sink: &Sink,
        outs: impl IntoIterator<Item = Outgoing>,
        generation: u64,
    ) {
        if self.turns.queue.is_empty() {
            self.publish();
        }
        let delivered = outs.into_iter().all(|out| sink.send(out).is_ok());
        if !delivered && self.turns.current_of(generation).is_some() {
            // Its consumer is gone: the turn stops.
            self.turns.stop_current();
        }
        self.settled();
    }

    /// The consumer of the turn of `generation` is gone: the turn stops, if it is still the
    /// current one.
    fn consumer_gone(&mut self, generation: u64) {
        if self.turns.current_of(generation).is_some() {
            self.turns.stop_current();
            self.settled();
        }
    }
}

/// Resolves when the receiver of `sink` is dropped; never without a sink.
async fn gone(sink: Option<Sink>) {
    match sink {
        Some(sink) => sink.closed().await,
        None => std::future::pending().await,
    }
}
