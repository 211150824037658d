//! The language-model trait: LMC messages in, a cancellable stream of LMC-shaped deltas out.
//! Implemented by `oi-llm`; core never speaks HTTP.

use futures::stream::BoxStream;

use crate::lmc::Message;
use crate::settings::{LlmSettings, Templates};

/// What the respond loop asks the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// The system message first, then the conversation (and, in loop mode, the hidden loop
    /// message last). Text-mode execution instructions are NOT yet appended: the provider
    /// appends `llm.execution_instructions` when it uses fenced blocks.
    pub messages: Vec<Message>,
    /// Lower-case names of the languages the computer can run (the `execute` tool's enum).
    pub languages: Vec<String>,
    /// Model settings.
    pub llm: LlmSettings,
    /// How to turn history back into provider messages.
    pub templates: Templates,
    /// Tools offered beside `execute` (the computer's [`crate::Computer::tools`]): provider
    /// functions in tool mode, described in the system text in text mode.
    pub tools: Vec<crate::tools::OfferedTool>,
}

/// What one request used, as the provider reported it (or estimated it, when the server did
/// not say), and what that cost where the price is known.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Usage {
    /// Tokens of the prompt.
    pub prompt_tokens: u64,
    /// Tokens of the reply.
    pub reply_tokens: u64,
    /// The cost in USD; `None` when the model's price is not known, `Some(0.0)` for a model
    /// that costs nothing (a local one).
    pub cost: Option<f64>,
}

/// One piece of the model's reply, already in LMC terms.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelDelta {
    /// Assistant text.
    Message(String),
    /// A piece of code in `language` (the language is fixed for a whole block).
    Code {
        /// The language, lower-case, as the model named it.
        language: String,
        /// The next piece of code.
        code: String,
    },
    /// What the request used; not part of the reply. Counted against `max_budget`.
    Usage(Usage),
}

/// A stream of deltas; dropping it cancels the request.
pub type ModelStream = BoxStream<'static, Result<ModelDelta, ModelError>>;

/// Why a model request failed. Messages are written for the person who reads them.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    /// The settings cannot work (no API key, bad model name, …); nothing was sent.
    #[error("{0}")]
    Config(String),
    /// The model server could not be reached.
    #[error(
        "could not reach the model server at {url}: {reason}. Check that it is running and that --api_base is right."
    )]
    Unreachable {
        /// The URL tried.
        url: String,
        /// What went wrong (the library's words).
        reason: String,
        /// What kind of failure it was, for front ends to say what to do.
        kind: UnreachableKind,
    },
    /// The server answered with an HTTP error none of the variants below names.
    #[error("the model server answered HTTP {status}: {body}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The body (shortened).
        body: String,
    },
    /// The server refused the request's credentials (HTTP 401 or 403).
    #[error(
        "the model server refused the credentials (HTTP {status}): {body}. Check the API key (--api_key, or the provider's key variable such as OPENAI_API_KEY) and that it may use this model."
    )]
    Unauthorized {
        /// The HTTP status code.
        status: u16,
        /// The provider's message (shortened).
        body: String,
    },
    /// The server kept refusing for too many requests or an exhausted quota (HTTP 429), after
    /// the retries.
    #[error(
        "the model server is limiting requests (HTTP {status}): {body}. Wait and try again, or check the account's rate limits and quota."
    )]
    RateLimited {
        /// The HTTP status code.
        status: u16,
        /// The provider's message (shortened).
        body: String,
    },
    /// The prompt does not fit the model's context window, as the provider said.
    #[error(
        "the conversation does not fit the model's context window (HTTP {status}): {body}. Set context_window (--context_window) to the model's real window so oi trims the conversation to it, or start a new conversation."
    )]
    ContextWindowExceeded {
        /// The HTTP status code.
        status: u16,
        /// The provider's message (shortened).
        body: String,
    },
    /// The reply could not be understood or was cut off.
    #[error("the model's reply broke off or could not be read: {0}")]
    Stream(String),
}

/// Why a model server could not be reached, as the provider tells it from the connection's
/// error (front ends say what to do from this, not from the library's text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnreachableKind {
    /// The address is not a URL (no scheme, a relative path).
    BadUrl,
    /// The connection was refused: nothing listens there.
    Refused,
    /// The host name could not be resolved.
    UnknownHost,
    /// The secure connection failed (certificate, TLS).
    Tls,
    /// No answer in time.
    TimedOut,
    /// Anything else (the reason says what).
    Other,
}

impl ModelError {
    /// The HTTP status the model server answered, when the error is one.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ModelError::Status { status, .. }
            | ModelError::Unauthorized { status, .. }
            | ModelError::RateLimited { status, .. }
            | ModelError::ContextWindowExceeded { status, .. } => Some(*status),
            ModelError::Config(_) | ModelError::Unreachable { .. } | ModelError::Stream(_) => None,
        }
    }
}

/// A language model.
pub trait LanguageModel: Send + Sync {
    /// Whether code comes back as calls of the `execute` tool (true) or as fenced code blocks
    /// in the text (false), for these settings.
    fn uses_tool_calls(&self, llm: &LlmSettings) -> bool;

    /// Starts a streamed reply. The request is sent when the stream is first polled; dropping
    /// the stream cancels it.
    fn stream(&self, request: ModelRequest) -> ModelStream;
}
