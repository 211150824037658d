//! The turns of one session as the session's actor ([`crate::actor`]) holds them: the one
//! running (or parked at an approval), the inputs queued behind it, and where each turn's
//! chunks go.
//!
//! A turn runs in its own task, which only forwards the turn's [`TurnEvent`]s to the actor,
//! tagged with the turn's generation; the actor decides what goes out and where. Stopping a
//! turn is dropping its [`Running`]: that cancels its task (which drops the model request and
//! kills the running code), and the actor ignores whatever the task had already sent, so not
//! one more chunk of a stopped turn goes out.

use std::collections::VecDeque;

use futures::StreamExt;
use oi_core::{ApprovalRequest, ChatInput, Interpreter, Kind, Message, Role, Turn, TurnEvent};
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::outgoing::{InputRef, Outgoing, Sink};

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

/// What a turn's task sends the actor: its generation and its next event (`None` when its
/// stream ended).
pub(crate) type TurnReport = (u64, Option<TurnEvent>);

/// A turn in its task, as the actor holds it. Dropping it stops the turn.
pub(crate) struct Running {
    /// Cancels the turn's task when dropped (declared first: dropped before `parked`, so a
    /// parked request dropped with it declines nothing).
    stop: Option<DropGuard>,
    /// Which turn of the session this is.
    pub(crate) generation: u64,
    /// Where its chunks go.
    pub(crate) sink: Sink,
    /// The input its `complete` answers.
    pub(crate) answers: Option<InputRef>,
    /// The approval request the turn waits on, if it is parked.
    pub(crate) parked: Option<ApprovalRequest>,
    /// The code a `go` approved before the turn started (approved without asking).
    pub(crate) go_for: Option<String>,
}

impl Running {
    /// Lets its task end by itself (the turn is over: it may still save the conversation).
    fn detach(mut self) {
        if let Some(stop) = self.stop.take() {
            stop.disarm();
        }
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
pub(crate) struct Turns {
    pub(crate) current: Option<Running>,
    pub(crate) queue: VecDeque<Queued>,
    next_generation: u64,
    /// Given to each turn's task.
    reports: mpsc::UnboundedSender<TurnReport>,
}

impl Turns {
    /// No turn yet; the turns' tasks will report to `reports`.
    pub(crate) fn new(reports: mpsc::UnboundedSender<TurnReport>) -> Self {
        Turns {
            current: None,
            queue: VecDeque::new(),
            next_generation: 0,
            reports,
        }
    }

    /// Whether a turn runs (a parked turn waits; it does not run).
    pub(crate) fn busy(&self) -> bool {
        self.current
            .as_ref()
            .is_some_and(|running| running.parked.is_none())
    }

    /// Stops the current turn, if any.
    pub(crate) fn stop_current(&mut self) {
        self.current = None;
    }

    /// The current turn ended by itself: it is forgotten, its task ends on its own.
    pub(crate) fn finish_current(&mut self) {
        if let Some(running) = self.current.take() {
            running.detach();
        }
    }

    /// The current turn if it is the one of `generation`.
    pub(crate) fn current_of(&mut self, generation: u64) -> Option<&mut Running> {
        self.current
            .as_mut()
            .filter(|running| running.generation == generation)
    }

    /// Starts `start` now (stopping the current turn), its chunks going to `sink` and its
    /// `complete` answering `answers`. A [`TurnStart::Fail`] runs no task: its error chunk and
    /// `complete` are sent now, and false is returned (no turn runs); otherwise true.
    pub(crate) fn launch(
        &mut self,
        interpreter: &Interpreter,
        start: TurnStart,
        sink: Sink,
        answers: Option<InputRef>,
    ) -> bool {
        self.stop_current();
        let (turn, go_for) = match start {
            TurnStart::Fail(message) => {
                let _ = sink.send(Outgoing::plain(oi_core::Chunk::server_error(message)));
                let usage = interpreter.runtime_mut().usage();
                let _ = sink.send(Outgoing::complete(answers).with_usage(usage));
                return false;
            }
            TurnStart::Chat(messages) => (interpreter.chat(ChatInput::Append(messages)), None),
            TurnStart::Go => {
                let pending = interpreter
                    .messages_mut()
                    .last()
                    .filter(|m| m.role == Role::Assistant && m.kind == Kind::Code)
                    .map(|m| m.text().to_owned());
                (interpreter.respond(), pending)
            }
        };
        self.next_generation += 1;
        let generation = self.next_generation;
        let cancel = CancellationToken::new();
        tokio::spawn(forward(
            turn,
            generation,
            cancel.clone(),
            self.reports.clone(),
        ));
        self.current = Some(Running {
            stop: Some(cancel.drop_guard()),
            generation,
            sink,
            answers,
            parked: None,
            go_for,
        });
        true
    }
}

/// A turn's task: forwards its events, tagged with `generation`, until it ends or is
/// cancelled (which drops the turn: its model request and code stop).
async fn forward(
    mut turn: Turn,
    generation: u64,
    cancel: CancellationToken,
    reports: mpsc::UnboundedSender<TurnReport>,
) {
    loop {
        let event = tokio::select! {
            biased;
            () = cancel.cancelled() => return,
            event = turn.next() => event,
        };
        let ended = event.is_none();
        if reports.send((generation, event)).is_err() || ended {
            return;
        }
    }
}
