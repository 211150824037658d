//! One client's input being built from streamed user chunks (spec c.5), bounded in size.
//!
//! Every connection builds its own input, so a connection that drops half-way through an
//! input leaves nothing behind for the next one, and a takeover cannot mix two clients' chunks
//! into one message. [`crate::AsyncInterpreter::input`] keeps one of its own for callers
//! without a connection.

use oi_core::{Kind, Message};

use crate::accumulate::{AccumulateError, Accumulator};
use crate::frames::{FrameError, UserChunk};

/// Why an input chunk was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The frame is not a user chunk.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The chunk could not be turned into messages.
    #[error(transparent)]
    Accumulate(#[from] AccumulateError),
    /// A `command` message other than `stop` or `go`.
    #[error("unknown command {0:?}: use \"stop\" or \"go\"")]
    UnknownCommand(String),
    /// The input being built grew past a limit; it was discarded.
    #[error(
        "{what} is over the limit of {limit} bytes before its `end`; the input was discarded (the rest of it up to `end` is ignored): send less, or start the server with a larger {flag}"
    )]
    TooLarge {
        /// What was too large: one message, or the whole pending input.
        what: &'static str,
        /// The limit, in bytes.
        limit: usize,
        /// The server flag that raises it.
        flag: &'static str,
    },
}

/// How much user input may wait for its `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    /// The most bytes one message (built from `start` and `content` chunks) may hold.
    pub max_message_bytes: usize,
    /// The most bytes all messages of one input may hold together.
    pub max_pending_bytes: usize,
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits {
            max_message_bytes: 16 * 1024 * 1024,
            max_pending_bytes: 32 * 1024 * 1024,
        }
    }
}

/// A finished input: what its `end` asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// New user messages (possibly none: answer the conversation as it is).
    Messages(Vec<Message>),
    /// The `stop` command.
    Stop,
    /// The `go` command.
    Go,
}

/// What one user chunk did.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Nothing to act on yet (content, or a chunk that adds nothing).
    Pending,
    /// A `start`: a new input opens (in interrupt mode, the running turn stops now).
    Opened,
    /// An `end`: the input is complete.
    Ended(Input),
    /// The `end` of an input that was discarded for its size: nothing to run (its error was
    /// already reported).
    Discarded,
}

/// One input under construction.
#[derive(Debug, Default)]
pub struct InputBuilder {
    accumulator: Accumulator,
    limits: InputLimits,
    /// The input went over a limit: its chunks are ignored up to `end`.
    discarding: bool,
}

impl InputBuilder {
    /// An empty input bounded by `limits`.
    pub fn new(limits: InputLimits) -> Self {
        InputBuilder {
            accumulator: Accumulator::new(),
            limits,
            discarding: false,
        }
    }

    /// Takes one user chunk. A `start` opens an input (and ends the discarding of an
    /// oversized one), `content` extends it, `end` completes it; a last message of type
    /// `command` becomes [`Input::Stop`] or [`Input::Go`].
    pub fn take(&mut self, chunk: &UserChunk) -> Result<Step, InputError> {
        if chunk.start {
            self.discarding = false;
            self.accumulator.push(chunk);
            self.check_size()?;
            return Ok(Step::Opened);
        }
        if chunk.content.is_some() {
            if !self.discarding {
                self.accumulator.push(chunk);
                self.check_size()?;
            }
            return Ok(Step::Pending);
        }
        if !chunk.end {
            return Ok(Step::Pending);
        }
        if std::mem::take(&mut self.discarding) {
            return Ok(Step::Discarded);
        }
        let mut messages = self.accumulator.take()?;
        let command = messages
            .last()
            .filter(|m| m.kind == Kind::Command)
            .map(|m| m.text().trim().to_owned());
        if command.is_some() {
            messages.pop();
        }
        match command.as_deref() {
            Some("stop") => Ok(Step::Ended(Input::Stop)),
            Some("go") => Ok(Step::Ended(Input::Go)),
            Some(other) => Err(InputError::UnknownCommand(other.to_owned())),
            None => Ok(Step::Ended(Input::Messages(messages))),
        }
    }

    /// Drops what was received and not ended.
    pub fn clear(&mut self) {
        self.accumulator.clear();
        self.discarding = false;
    }

    /// Roughly how many bytes wait for their `end`.
    pub fn bytes(&self) -> usize {
        self.accumulator.bytes()
    }

    /// Discards the input when it grew past a limit (and ignores the rest of it).
    fn check_size(&mut self) -> Result<(), InputError> {
        let limits = self.limits;
        let over = if self.accumulator.last_message_bytes() > limits.max_message_bytes {
            Some((
                "one message",
                limits.max_message_bytes,
                "--max-message-bytes",
            ))
        } else if self.accumulator.bytes() > limits.max_pending_bytes {
            Some(("the input", limits.max_pending_bytes, "--max-pending-bytes"))
        } else {
            None
        };
        let Some((what, limit, flag)) = over else {
            return Ok(());
        };
        self.accumulator.clear();
        self.discarding = true;
        Err(InputError::TooLarge { what, limit, flag })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn chunk(value: serde_json::Value) -> UserChunk {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_message_then_commands() {
        let mut input = InputBuilder::default();
        assert_eq!(
            input.take(&chunk(json!({"role": "user", "start": true}))),
            Ok(Step::Opened)
        );
        assert_eq!(
            input.take(&chunk(json!({"role": "user", "content": "hi"}))),
            Ok(Step::Pending)
        );
        assert_eq!(
            input.take(&chunk(json!({"role": "user", "end": true}))),
            Ok(Step::Ended(Input::Messages(vec![Message::user("hi")])))
        );
        for (word, expected) in [("stop", Input::Stop), ("go", Input::Go)] {
            input
                .take(&chunk(
                    json!({"role": "user", "type": "command", "content": word}),
                ))
                .unwrap();
            assert_eq!(
                input.take(&chunk(json!({"role": "user", "end": true}))),
                Ok(Step::Ended(expected))
            );
        }
        input
            .take(&chunk(
                json!({"role": "user", "type": "command", "content": "jump"}),
            ))
            .unwrap();
        assert!(matches!(
            input.take(&chunk(json!({"role": "user", "end": true}))),
            Err(InputError::UnknownCommand(_))
        ));
    }

    #[test]
    fn an_oversized_input_is_discarded_up_to_its_end() {
        let mut input = InputBuilder::new(InputLimits {
            max_message_bytes: 1000,
            max_pending_bytes: 2000,
        });
        input
            .take(&chunk(json!({"role": "user", "start": true})))
            .unwrap();
        let big = "x".repeat(1500);
        assert!(matches!(
            input.take(&chunk(json!({"role": "user", "content": big}))),
            Err(InputError::TooLarge { .. })
        ));
        assert_eq!(input.bytes(), 0);
        assert_eq!(
            input.take(&chunk(json!({"role": "user", "content": "more"}))),
            Ok(Step::Pending)
        );
        assert_eq!(
            input.take(&chunk(json!({"role": "user", "end": true}))),
            Ok(Step::Discarded)
        );
        input
            .take(&chunk(json!({"role": "user", "content": "ok"})))
            .unwrap();
        assert_eq!(
            input.take(&chunk(json!({"role": "user", "end": true}))),
            Ok(Step::Ended(Input::Messages(vec![Message::user("ok")])))
        );
    }
}
