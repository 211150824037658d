//! What a session sends: LMC chunks, each `complete` knowing which input it answers.
//!
//! Every input a connection sends (each `end` chunk: a message, `go` or `stop`) is numbered
//! 1, 2, 3, … on that connection. When the connection asked for it (`?input_numbers=true`),
//! the `complete` that answers it is sent with `"input": N`, so a client can tell its own
//! answer from the `complete` of an earlier input, of an earlier connection, or of a turn it
//! interrupted. Other connections get the original's `complete`, byte for byte.

use oi_core::Chunk;
use tokio::sync::mpsc;

/// The input a `complete` answers: the connection that sent it (per session) and its number
/// there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputRef {
    /// The connection, numbered per session from 1.
    pub connection: u64,
    /// The input's number on that connection, from 1.
    pub number: u64,
}

/// A chunk on its way out.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// The chunk.
    pub chunk: Chunk,
    /// For a `complete`: the input it answers, if it came from a connection.
    pub answers: Option<InputRef>,
    /// For a `complete`: the usage when it was sent (its turn's and the session's tokens and
    /// cost), for the connections that asked for it (`?usage=true`).
    pub usage: Option<oi_core::UsageReport>,
    /// For the error chunk of a failed turn: why it failed (its kind and the upstream status),
    /// for the edges that say it in their own way (the error chunk's `kind`, an HTTP status).
    pub failure: Option<oi_core::Failure>,
}

impl Outgoing {
    /// A chunk that answers nothing.
    pub fn plain(chunk: Chunk) -> Self {
        Outgoing {
            chunk,
            answers: None,
            usage: None,
            failure: None,
        }
    }

    /// The error chunk of a turn that failed with `error`.
    pub fn failed(error: &oi_core::TurnError) -> Self {
        let failure = oi_core::Failure::from(error);
        Outgoing {
            chunk: Chunk::server_error(failure.message.clone()),
            answers: None,
            usage: None,
            failure: Some(failure),
        }
    }

    /// The `complete` answering `input`.
    pub fn complete(input: Option<InputRef>) -> Self {
        Outgoing {
            chunk: Chunk::complete(),
            answers: input,
            usage: None,
            failure: None,
        }
    }

    /// The same `complete`, carrying `usage` for the connections that ask for it.
    pub fn with_usage(mut self, usage: oi_core::UsageReport) -> Self {
        self.usage = Some(usage);
        self
    }
}

/// Where a session's (or one turn's) chunks are sent.
pub type Sink = mpsc::UnboundedSender<Outgoing>;

/// The chunks of a turn run apart from the session's output (the OpenAI endpoint), up to and
/// including its `complete`; dropping it stops the turn.
pub struct TurnOutput(pub(crate) mpsc::UnboundedReceiver<Outgoing>);

impl TurnOutput {
    /// The next chunk, waiting for it; `None` once the turn is over.
    pub async fn recv(&mut self) -> Option<Chunk> {
        self.0.recv().await.map(|out| out.chunk)
    }

    /// The next chunk with what it carries (a failed turn's [`Failure`](oi_core::Failure)),
    /// waiting for it; `None` once the turn is over.
    pub async fn recv_out(&mut self) -> Option<Outgoing> {
        self.0.recv().await
    }
}
