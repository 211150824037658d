//! A running turn: the events it emits and the handle that stops it.
//!
//! ```text
//!   inputs                         Turn (a Stream of TurnEvent)
//!   ──────                         ─────────────────────────────
//!   Interpreter::chat(input) ───▶  Chunk(start) Chunk(…) Chunk(end)      framed LMC chunks
//!                                  Approval(request) ── parked ──┐        code waits
//!   request.approve() / decline() / edit(code) / drop ◀──────────┘
//!                                  Chunk(console …) …
//!   StopHandle::stop() / drop(turn)   → the stream ends at once (no terminal event)
//!                                  Complete | Error(e)                    exactly one, last
//! ```

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::stream::BoxStream;
use futures::{FutureExt, Stream, StreamExt};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::approval::ApprovalRequest;
use crate::history::HistoryError;
use crate::lmc::{Chunk, Message};
use crate::model::ModelError;
use crate::state::Shared;

/// Why a turn failed.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// The model request failed.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// There was nothing to respond to.
    #[error("User message was not passed in. You need to pass in at least one message.")]
    NoMessage,
    /// The conversation could not be saved (the messages in memory are intact).
    #[error("the conversation could not be saved: {0}")]
    History(#[from] HistoryError),
    /// The session's spending cap was reached; nothing more is sent to the model.
    #[error(
        "Max budget exceeded: this session has spent about ${spent:.4} of its ${budget:.4} budget (max_budget). Raise max_budget or start a new session."
    )]
    Budget {
        /// Estimated spend so far, in USD.
        spent: f64,
        /// The cap, in USD.
        budget: f64,
    },
    /// The blocking face could not start its runtime.
    #[error("could not start the async runtime: {0}")]
    Runtime(String),
}

/// One thing a turn reports, in order.
#[derive(Debug)]
pub enum TurnEvent {
    /// A framed LMC chunk: a `start`/`end` flag or a piece of a message, code or output.
    Chunk(Chunk),
    /// Code waits for a decision; the turn is parked until the request is answered (or dropped,
    /// which declines).
    Approval(ApprovalRequest),
    /// The turn failed; it is the last event.
    Error(TurnError),
    /// The turn ended normally (also after a declined block); it is the last event.
    Complete,
}

impl TurnEvent {
    /// The chunk, if this is one.
    pub fn chunk(&self) -> Option<&Chunk> {
        match self {
            TurnEvent::Chunk(chunk) => Some(chunk),
            _ => None,
        }
    }

    /// Whether this is the last event of its turn.
    pub fn is_last(&self) -> bool {
        matches!(self, TurnEvent::Error(_) | TurnEvent::Complete)
    }
}

/// A running turn: a stream of [`TurnEvent`]s.
///
/// Dropping it, or stopping it through a [`StopHandle`], stops the model request and the
/// running code at once; the stream then ends without a terminal event.
pub struct Turn {
    inner: Option<BoxStream<'static, TurnEvent>>,
    stopped: Pin<Box<WaitForCancellationFutureOwned>>,
    stop: CancellationToken,
    shared: Arc<Shared>,
    first_new: usize,
}

impl Turn {
    pub(crate) fn new(
        events: BoxStream<'static, TurnEvent>,
        stop: CancellationToken,
        shared: Arc<Shared>,
        first_new: usize,
    ) -> Turn {
        Turn {
            inner: Some(events),
            stopped: Box::pin(stop.clone().cancelled_owned()),
            stop,
            shared,
            first_new,
        }
    }

    /// A handle that stops this turn from anywhere (another task or thread).
    pub fn stop_handle(&self) -> StopHandle {
        StopHandle(self.stop.clone())
    }

    /// Stops the turn now: the model request is dropped and the running code stopped.
    pub fn stop(&mut self) {
        self.stop.cancel();
        self.inner = None;
    }

    /// The messages this turn added so far (after the user's input).
    pub fn new_messages(&self) -> Vec<Message> {
        self.shared
            .messages()
            .iter()
            .skip(self.first_new)
            .cloned()
            .collect()
    }
}

impl Stream for Turn {
    type Item = TurnEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.stopped.poll_unpin(cx).is_ready() {
            this.inner = None;
            return Poll::Ready(None);
        }
        let Some(inner) = this.inner.as_mut() else {
            return Poll::Ready(None);
        };
        let polled = inner.poll_next_unpin(cx);
        if let Poll::Ready(None) = polled {
            this.inner = None;
        }
        polled
    }
}

/// Stops a turn: the model request is dropped and the running code is stopped.
#[derive(Debug, Clone)]
pub struct StopHandle(CancellationToken);

impl StopHandle {
    /// Stops the turn.
    pub fn stop(&self) {
        self.0.cancel();
    }

    /// Whether the turn was stopped.
    pub fn is_stopped(&self) -> bool {
        self.0.is_cancelled()
    }
}
