//! The queue of replies the server works through.

use std::collections::VecDeque;

use crate::calculator;
use crate::reply::Reply;

/// What the scripted server answers: a queue of replies (one per request) or the built-in
/// calculator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    mode: Mode,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Mode {
    Queue {
        replies: VecDeque<Reply>,
        total: usize,
    },
    Calculator,
}

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
        }
    }

    /// The built-in calculator: asked to compute e.g. `239023*79043`, it answers with Python
    /// code (a tool call when the request has `tools`, else a fenced block); given the code's
    /// output, it answers "The result is …."; anything else gets a greeting.
    pub fn calculator() -> Self {
        Script {
            mode: Mode::Calculator,
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
        }
    }
}

impl From<Vec<Reply>> for Script {
    fn from(replies: Vec<Reply>) -> Self {
        Script::new(replies)
    }
}
