//! The async face: [`Interpreter`] and its [`Turn`] stream.

use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures::stream::BoxStream;
use futures::{FutureExt, Stream, StreamExt};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::computer::Computer;
use crate::history::HistoryError;
use crate::lmc::{Chunk, Message};
use crate::model::{LanguageModel, ModelError};
use crate::respond::{TurnContext, respond};
use crate::settings::Settings;

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
    /// The blocking face could not start its runtime.
    #[error("could not start the async runtime: {0}")]
    Runtime(String),
}

/// What the consumer decided about a code block after its confirmation chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it (also what happens when the consumer simply keeps reading).
    Approve,
    /// Do not run it; "I have declined to run this code." goes to the model and the turn ends.
    Decline,
    /// Run this edited code instead (it replaces the stored code).
    Edit(String),
}

/// Shared between a turn and the one who drives it: the decision and the cancel switch.
#[derive(Debug, Default)]
pub(crate) struct TurnControl {
    decision: Mutex<Option<Decision>>,
    cancel: CancellationToken,
}

impl TurnControl {
    pub(crate) fn take_decision(&self) -> Option<Decision> {
        lock(&self.decision).take()
    }
}

/// State shared by an interpreter and its turns.
pub(crate) struct Shared {
    settings: Mutex<Settings>,
    messages: Mutex<Vec<Message>>,
    model: Arc<dyn LanguageModel>,
    computer: Arc<dyn Computer>,
}

/// Locks a mutex; a poisoned lock still holds valid data here (every writer leaves it whole).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Shared {
    pub(crate) fn messages(&self) -> MutexGuard<'_, Vec<Message>> {
        lock(&self.messages)
    }

    pub(crate) fn settings(&self) -> MutexGuard<'_, Settings> {
        lock(&self.settings)
    }
}

/// What to say to the interpreter (spec f.3): text, one message, or a whole new history.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatInput {
    /// A user text message, appended.
    Text(String),
    /// One message, appended.
    Message(Message),
    /// A list that replaces the whole conversation.
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
    /// An interpreter with these settings, model and computer.
    pub fn new(
        settings: Settings,
        model: Arc<dyn LanguageModel>,
        computer: Arc<dyn Computer>,
    ) -> Self {
        Interpreter {
            shared: Arc::new(Shared {
                settings: Mutex::new(settings),
                messages: Mutex::new(Vec::new()),
                model,
                computer,
            }),
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

    /// A copy of the conversation.
    pub fn messages(&self) -> Vec<Message> {
        self.shared.messages().clone()
    }

    /// Replaces the conversation.
    pub fn set_messages(&self, messages: Vec<Message>) {
        *self.shared.messages() = messages;
    }

    /// The computer that runs code.
    pub fn computer(&self) -> &Arc<dyn Computer> {
        &self.shared.computer
    }

    /// The language model.
    pub fn model(&self) -> &Arc<dyn LanguageModel> {
        &self.shared.model
    }

    /// Ends every language session and clears the conversation (the settings stay, and a new
    /// conversation file will be chosen on the next save).
    pub async fn reset(&self) {
        self.shared.computer.terminate().await;
        self.shared.messages().clear();
        self.shared.settings().conversation_filename = None;
    }

    /// Adds `input` to the conversation and starts a turn. The conversation is saved when the
    /// turn ends (if `conversation_history` is on).
    pub fn chat(&self, input: impl Into<ChatInput>) -> Turn {
        {
            let mut messages = self.shared.messages();
            match input.into() {
                ChatInput::Text(text) => messages.push(Message::user(text)),
                ChatInput::Message(message) => messages.push(message),
                ChatInput::Messages(list) => *messages = list,
            }
        }
        self.start_turn(true)
    }

    /// Starts a turn on the conversation as it is, without saving it afterwards: the model
    /// answers the last message, or, when the last message is code, that code runs first
    /// (this is how a pending block is approved later, e.g. the server's `go`).
    pub fn respond(&self) -> Turn {
        self.start_turn(false)
    }

    fn start_turn(&self, save_history: bool) -> Turn {
        let control = Arc::new(TurnControl::default());
        let first_new = self.shared.messages().len();
        let ctx = TurnContext {
            shared: self.shared.clone(),
            settings: self.settings(),
            model: self.shared.model.clone(),
            computer: self.shared.computer.clone(),
            control: control.clone(),
            save_history,
        };
        Turn {
            cancelled: Box::pin(control.cancel.clone().cancelled_owned()),
            inner: Some(respond(ctx).boxed()),
            control,
            shared: self.shared.clone(),
            first_new,
        }
    }
}

/// A running turn: a stream of framed LMC chunks (spec a.3/a.4).
///
/// Dropping it, or cancelling it through a [`CancelHandle`], stops the model request and the
/// running code. When `auto_run` is off, a confirmation chunk comes before each code block:
/// reading on approves it; call [`decline`](Self::decline) or [`edit`](Self::edit) before
/// reading on to decide otherwise.
pub struct Turn {
    inner: Option<BoxStream<'static, Result<Chunk, TurnError>>>,
    cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
    control: Arc<TurnControl>,
    shared: Arc<Shared>,
    first_new: usize,
}

impl Turn {
    /// Approves the code block just confirmed (the default).
    pub fn approve(&self) {
        *lock(&self.control.decision) = Some(Decision::Approve);
    }

    /// Declines the code block just confirmed.
    pub fn decline(&self) {
        *lock(&self.control.decision) = Some(Decision::Decline);
    }

    /// Runs `code` instead of the block just confirmed.
    pub fn edit(&self, code: impl Into<String>) {
        *lock(&self.control.decision) = Some(Decision::Edit(code.into()));
    }

    /// Decides about the code block just confirmed.
    pub fn decide(&self, decision: Decision) {
        *lock(&self.control.decision) = Some(decision);
    }

    /// A handle that stops this turn from anywhere.
    pub fn cancel_handle(&self) -> CancelHandle {
        CancelHandle(self.control.cancel.clone())
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
    type Item = Result<Chunk, TurnError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if this.cancelled.poll_unpin(cx).is_ready() {
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
pub struct CancelHandle(CancellationToken);

impl CancelHandle {
    /// Stops the turn.
    pub fn cancel(&self) {
        self.0.cancel();
    }
}
