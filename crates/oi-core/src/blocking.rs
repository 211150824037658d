//! The blocking face: [`OpenInterpreter`], Open Interpreter's Python API in Rust.

use std::sync::{Arc, MutexGuard};

use futures::StreamExt;

use crate::approval::{ApprovalRequest, Decision};
use crate::computer::Computer;
use crate::interpreter::{ChatInput, Interpreter};
use crate::lmc::Message;
use crate::model::LanguageModel;
use crate::policy::Judge;
use crate::runtime::RuntimeState;
use crate::settings::Settings;
use crate::turn::{Turn, TurnError, TurnEvent};

/// A blocking interpreter: `chat(message)` returns the new messages.
///
/// Like Python's `interpreter.chat(message, display=False)`, [`chat`](Self::chat) runs code
/// whatever `auto_run` says. Use [`chat_with`](Self::chat_with) to approve, edit or decline
/// each block, or [`chat_stream`](Self::chat_stream) to read the turn's events as they come.
pub struct OpenInterpreter {
    core: Interpreter,
    runtime: tokio::runtime::Runtime,
}

impl OpenInterpreter {
    /// An interpreter with these settings, model, computer and judge, and its own small
    /// runtime.
    pub fn new(
        settings: Settings,
        model: Arc<dyn LanguageModel>,
        computer: Arc<dyn Computer>,
        judge: Arc<dyn Judge>,
    ) -> Result<Self, TurnError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| TurnError::Runtime(e.to_string()))?;
        Ok(OpenInterpreter {
            core: Interpreter::new(settings, model, computer, judge),
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

    /// A copy of the runtime state beside the settings (the conversation's file name, the
    /// spend).
    pub fn runtime(&self) -> RuntimeState {
        self.core.runtime()
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

    /// Runs one turn, running every code block, and returns the messages it added after the
    /// input.
    pub fn chat(&self, input: impl Into<ChatInput>) -> Result<Vec<Message>, TurnError> {
        self.chat_with(input, |_| Decision::Approve)
    }

    /// Runs one turn, asking `approve` about each code block the approval rules ask about
    /// (with `auto_run` off), and returns the messages it added after the input.
    pub fn chat_with(
        &self,
        input: impl Into<ChatInput>,
        mut approve: impl FnMut(&ApprovalRequest) -> Decision,
    ) -> Result<Vec<Message>, TurnError> {
        let mut turn = self.core.chat(input);
        self.runtime.block_on(async {
            while let Some(event) = turn.next().await {
                match event {
                    TurnEvent::Chunk(_) | TurnEvent::Complete => {}
                    TurnEvent::Approval(request) => {
                        let decision = approve(&request);
                        request.decide(decision);
                    }
                    TurnEvent::Error(error) => return Err(error),
                }
            }
            Ok(turn.new_messages())
        })
    }

    /// Starts one turn and returns its events as a blocking iterator. Answer (or drop) each
    /// [`TurnEvent::Approval`] before asking for the next event: the turn waits for it.
    /// Dropping the iterator stops the turn (and its running code).
    pub fn chat_stream(&self, input: impl Into<ChatInput>) -> ChatEvents<'_> {
        ChatEvents {
            turn: self.core.chat(input),
            runtime: &self.runtime,
        }
    }
}

/// Blocking iterator over a turn's events.
pub struct ChatEvents<'a> {
    turn: Turn,
    runtime: &'a tokio::runtime::Runtime,
}

impl ChatEvents<'_> {
    /// The turn (to stop it or read its new messages).
    pub fn turn(&mut self) -> &mut Turn {
        &mut self.turn
    }
}

impl Iterator for ChatEvents<'_> {
    type Item = TurnEvent;

    fn next(&mut self) -> Option<Self::Item> {
        self.runtime.block_on(self.turn.next())
    }
}
