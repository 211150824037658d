//! The async face: [`Interpreter`], which starts [`Turn`]s on one conversation.

use std::sync::{Arc, MutexGuard};

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::computer::Computer;
use crate::lmc::Message;
use crate::model::LanguageModel;
use crate::policy::Judge;
use crate::respond::{TurnContext, respond};
use crate::runtime::RuntimeState;
use crate::settings::Settings;
use crate::state::Shared;
use crate::turn::Turn;

/// What to say to the interpreter (spec f.3).
#[derive(Debug, Clone, PartialEq)]
pub enum ChatInput {
    /// A user text message, appended.
    Text(String),
    /// One message, appended.
    Message(Message),
    /// Messages appended together (e.g. a text and an image sent as one input).
    Append(Vec<Message>),
    /// A list that replaces the whole conversation (the original's `chat([...])`).
    Messages(Vec<Message>),
}

impl From<&str> for ChatInput {
    fn from(text: &str) -> Self {
        ChatInput::Text(text.to_owned())
    }
}

impl From<String> for ChatInput {
    fn from(text: String) -> Self {
        ChatInput::Text(text)
    }
}

impl From<Message> for ChatInput {
    fn from(message: Message) -> Self {
        ChatInput::Message(message)
    }
}

impl From<Vec<Message>> for ChatInput {
    fn from(messages: Vec<Message>) -> Self {
        ChatInput::Messages(messages)
    }
}

/// The async interpreter. Cloning gives another handle to the same conversation.
#[derive(Clone)]
pub struct Interpreter {
    shared: Arc<Shared>,
}

impl Interpreter {
    /// An interpreter with these settings, model, computer and judge (the judge decides
    /// which code blocks run, are asked about or are blocked; `oi_judge::judge()` is oi's,
    /// and `oi-config` always installs it).
    pub fn new(
        settings: Settings,
        model: Arc<dyn LanguageModel>,
        computer: Arc<dyn Computer>,
        judge: Arc<dyn Judge>,
    ) -> Self {
        Interpreter {
            shared: Arc::new(Shared::new(settings, model, computer, judge)),
        }
    }

    /// A copy of the settings.
    pub fn settings(&self) -> Settings {
        self.shared.settings().clone()
    }

    /// The settings, to change them in place (`interpreter.settings_mut().auto_run = true`).
    /// Changes apply from the next turn.
    pub fn settings_mut(&self) -> MutexGuard<'_, Settings> {
        self.shared.settings()
    }

    /// A copy of the runtime state beside the settings: the conversation's file name and
    /// what its requests have cost.
    pub fn runtime(&self) -> RuntimeState {
        self.shared.runtime().clone()
    }

    /// The runtime state, to change in place (`interpreter.runtime_mut().conversation_filename
    /// = Some(name)` to resume a saved conversation into its file). Do not hold the guard
    /// while locking the settings.
    pub fn runtime_mut(&self) -> MutexGuard<'_, RuntimeState> {
        self.shared.runtime()
    }

    /// A copy of the conversation.
    pub fn messages(&self) -> Vec<Message> {
        self.shared.messages().clone()
    }

    /// The number of messages in the conversation.
    pub fn message_count(&self) -> usize {
        self.shared.messages().len()
    }

    /// The conversation, locked, to read or change it in place without copying it. Do not
    /// hold the guard across an `.await`.
    pub fn messages_mut(&self) -> MutexGuard<'_, Vec<Message>> {
        self.shared.messages()
    }

    /// Replaces the conversation.
    pub fn set_messages(&self, messages: Vec<Message>) {
        *self.shared.messages() = messages;
    }

    /// Appends messages to the conversation, atomically.
    pub fn append_messages(&self, messages: impl IntoIterator<Item = Message>) {
        self.shared.messages().extend(messages);
    }

    /// The computer that runs code.
    pub fn computer(&self) -> &Arc<dyn Computer> {
        &self.shared.computer
    }

    /// The judge that approves or blocks code blocks.
    pub fn judge(&self) -> &Arc<dyn Judge> {
        &self.shared.judge
    }

    /// The language model.
    pub fn model(&self) -> &Arc<dyn LanguageModel> {
        &self.shared.model
    }

    /// The shared state (the computer API serves its calls on it).
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// What this interpreter's model requests have cost so far, in USD, as the providers
    /// reported (or estimated) their usage. Kept across [`Interpreter::reset`]; `max_budget`
    /// is checked against it before every request.
    pub fn spent(&self) -> f64 {
        self.shared.spent()
    }

    /// Ends every language session and clears the conversation (the settings and the spend
    /// stay, and a new conversation file will be chosen on the next save).
    pub async fn reset(&self) {
        self.shared.computer.terminate().await;
        self.shared.messages().clear();
        self.shared.runtime().conversation_filename = None;
        *self.shared.saved() = None;
    }

    /// Adds `input` to the conversation (atomically) and starts a turn. The conversation is
    /// saved when the turn ends (if `conversation_history` is on).
    pub fn chat(&self, input: impl Into<ChatInput>) -> Turn {
        let first_new = {
            let mut messages = self.shared.messages();
            match input.into() {
                ChatInput::Text(text) => messages.push(Message::user(text)),
                ChatInput::Message(message) => messages.push(message),
                ChatInput::Append(list) => messages.extend(list),
                ChatInput::Messages(list) => *messages = list,
            }
            messages.len()
        };
        self.start_turn(first_new, true)
    }

    /// Starts a turn on the conversation as it is, without saving it afterwards: the model
    /// answers the last message, or, when the last message is code, that code is judged (and
    /// approved or not) and runs first.
    pub fn respond(&self) -> Turn {
        let first_new = self.shared.messages().len();
        self.start_turn(first_new, false)
    }

    fn start_turn(&self, first_new: usize, save_history: bool) -> Turn {
        self.shared.start_turn_tally();
        let stop = CancellationToken::new();
        let ctx = TurnContext {
            shared: self.shared.clone(),
            settings: self.settings(),
            model: self.shared.model.clone(),
            computer: self.shared.computer.clone(),
            judge: self.shared.judge.clone(),
            save_history,
        };
        Turn::new(respond(ctx).boxed(), stop, self.shared.clone(), first_new)
    }
}
