//! The queue of replies the server works through.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::calculator;
use crate::reply::Reply;

/// What the scripted server answers: a queue of replies (one per request), the built-in
/// calculator, or a function of each request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    mode: Mode,
    record: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    Queue {
        replies: VecDeque<Reply>,
        total: usize,
    },
    Calculator,
    Responder(Responder),
}

/// A function from a request body to its reply.
#[derive(Clone)]
struct Responder(Arc<dyn Fn(&serde_json::Value) -> Reply + Send + Sync>);

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder(..)")
    }
}

impl PartialEq for Responder {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Responder {}

/// What the server should do with one request.
#[derive(Debug)]
pub(crate) enum Next {
    /// Answer with this reply.
    Reply(Reply),
    /// The queue is empty.
    Exhausted {
        /// How many replies the script had.
        total: usize,
    },
}

impl Script {
    /// A queue of replies, consumed one per chat-completions request.
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        let replies: VecDeque<Reply> = replies.into_iter().collect();
        let total = replies.len();
        Script {
            mode: Mode::Queue { replies, total },
            record: true,
        }
    }

    /// Answers each request with `respond(body)`, for as many requests as come: a model
    /// that reacts to what it is asked (e.g. to the last user message), for long runs.
    pub fn responder(
        respond: impl Fn(&serde_json::Value) -> Reply + Send + Sync + 'static,
    ) -> Self {
        Script {
            mode: Mode::Responder(Responder(Arc::new(respond))),
            record: true,
        }
    }

    /// The same script, with requests counted but not kept (a long run's requests, each
    /// with the whole conversation, would otherwise fill the memory).
    pub fn without_recording(mut self) -> Self {
        self.record = false;
        self
    }

    /// Whether requests are kept for [`ScriptedServer::requests`](crate::ScriptedServer::requests).
    pub(crate) fn records(&self) -> bool {
        self.record
    }

    /// The built-in calculator: asked to compute e.g. `239023*79043`, it answers with Python
    /// code (a tool call when the request has `tools`, else a fenced block); given the code's
    /// output, it answers "The result is …."; anything else gets a greeting.
    pub fn calculator() -> Self {
        Script {
            mode: Mode::Calculator,
            record: true,
        }
    }

    /// The answer to the request `body`.
    pub(crate) fn next(&mut self, body: &serde_json::Value) -> Next {
        match &mut self.mode {
            Mode::Queue { replies, total } => match replies.pop_front() {
                Some(reply) => Next::Reply(reply),
                None => Next::Exhausted { total: *total },
            },
            Mode::Calculator => Next::Reply(calculator::answer(body)),
            Mode::Responder(respond) => Next::Reply((respond.0)(body)),
        }
    }
}

impl From<Vec<Reply>> for Script {
    fn from(replies: Vec<Reply>) -> Self {
        Script::new(replies)
    }
}
