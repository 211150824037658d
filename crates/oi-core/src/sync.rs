//! The blocking face: [`OpenInterpreter`], Open Interpreter's Python API in Rust.

use std::sync::{Arc, MutexGuard};

use futures::StreamExt;

use crate::computer::Computer;
use crate::interpreter::{ChatInput, Decision, Interpreter, Turn, TurnError};
use crate::lmc::{Chunk, CodeContent, Content, Kind, Message};
use crate::model::LanguageModel;
use crate::settings::Settings;

/// A blocking interpreter: `chat(message)` returns the new messages.
///
/// Like Python's `interpreter.chat(message, display=False)`, [`chat`](Self::chat) runs code
/// whatever `auto_run` says: the confirmation chunk is information. Use
/// [`chat_with`](Self::chat_with) to approve, edit or decline each block, or
/// [`chat_stream`](Self::chat_stream) to read chunks as they come.
pub struct OpenInterpreter {
    core: Interpreter,
    runtime: tokio::runtime::Runtime,
}

impl OpenInterpreter {
    /// An interpreter with these settings, model and computer, and its own small runtime.
    pub fn new(
        settings: Settings,
        model: Arc<dyn LanguageModel>,
        computer: Arc<dyn Computer>,
    ) -> Result<Self, TurnError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| TurnError::Runtime(e.to_string()))?;
        Ok(OpenInterpreter {
            core: Interpreter::new(settings, model, computer),
            runtime,
        })
    }

    /// The async interpreter underneath (same conversation).
    pub fn interpreter(&self) -> &Interpreter {
        &self.core
    }

    /// A copy of the settings.
    pub fn settings(&self) -> Settings {
        self.core.settings()
    }

    /// The settings, to change in place: `oi.settings_mut().auto_run = true;`.
    pub fn settings_mut(&self) -> MutexGuard<'_, Settings> {
        self.core.settings_mut()
    }

    /// A copy of the conversation.
    pub fn messages(&self) -> Vec<Message> {
        self.core.messages()
    }

    /// Replaces the conversation.
    pub fn set_messages(&self, messages: Vec<Message>) {
        self.core.set_messages(messages);
    }

    /// Ends every language session and clears the conversation.
    pub fn reset(&self) {
        self.runtime.block_on(self.core.reset());
    }

    /// Runs one turn and returns the messages it added after the input.
    pub fn chat(&self, input: impl Into<ChatInput>) -> Result<Vec<Message>, TurnError> {
        self.chat_with(input, |_| Decision::Approve)
    }

    /// Runs one turn, asking `approve` about each code block (called only when `auto_run` is
    /// off), and returns the messages it added after the input.
    pub fn chat_with(
        &self,
        input: impl Into<ChatInput>,
        mut approve: impl FnMut(&CodeContent) -> Decision,
    ) -> Result<Vec<Message>, TurnError> {
        let mut turn = self.core.chat(input);
        self.runtime.block_on(async {
            while let Some(chunk) = turn.next().await {
                let chunk = chunk?;
                if chunk.kind == Some(Kind::Confirmation) {
                    if let Some(Content::Code(code)) = &chunk.content {
                        turn.decide(approve(code));
                    }
                }
            }
            Ok(turn.new_messages())
        })
    }

    /// Starts one turn and returns its chunks as a blocking iterator. Dropping the iterator
    /// stops the turn (and its running code).
    pub fn chat_stream(&self, input: impl Into<ChatInput>) -> ChatIter<'_> {
        ChatIter {
            turn: self.core.chat(input),
            runtime: &self.runtime,
        }
    }
}

/// Blocking iterator over a turn's chunks.
pub struct ChatIter<'a> {
    turn: Turn,
    runtime: &'a tokio::runtime::Runtime,
}

impl ChatIter<'_> {
    /// The turn, to decline or edit a confirmed block before reading on.
    pub fn turn(&self) -> &Turn {
        &self.turn
    }
}

impl Iterator for ChatIter<'_> {
    type Item = Result<Chunk, TurnError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.runtime.block_on(self.turn.next())
    }
}
