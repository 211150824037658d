//! A scripted in-process [`LanguageModel`]: no HTTP, no provider; each request takes the next
//! scripted reply and is recorded. For fast tests of the respond loop.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::StreamExt;
use oi_core::{
    LanguageModel, LlmSettings, ModelDelta, ModelError, ModelRequest, ModelStream, Usage,
};

/// One scripted reply: deltas (or errors) in order, then the end of the stream, or a stream
/// that never ends (to test stopping a turn while the model "thinks").
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelReply {
    items: Vec<Result<ModelDelta, ModelError>>,
    hang: bool,
}

impl ModelReply {
    /// A text reply.
    pub fn text(text: &str) -> Self {
        ModelReply::default().then_text(text)
    }

    /// A reply that is one code block.
    pub fn code(language: &str, code: &str) -> Self {
        ModelReply::default().then_code(language, code)
    }

    /// A reply that fails with `error` at once.
    pub fn error(error: ModelError) -> Self {
        ModelReply::default().then_error(error)
    }

    /// A reply that never ends and sends nothing.
    pub fn hang() -> Self {
        ModelReply::default().then_hang()
    }

    /// The same reply, then more text.
    pub fn then_text(mut self, text: &str) -> Self {
        self.items.push(Ok(ModelDelta::Message(text.to_owned())));
        self
    }

    /// The same reply, then a piece of code.
    pub fn then_code(mut self, language: &str, code: &str) -> Self {
        self.items.push(Ok(ModelDelta::Code {
            language: language.to_owned(),
            code: code.to_owned(),
        }));
        self
    }

    /// The same reply, then a usage report (what the request used and cost).
    pub fn then_usage(mut self, usage: Usage) -> Self {
        self.items.push(Ok(ModelDelta::Usage(usage)));
        self
    }

    /// The same reply, then an error (the stream ends with it).
    pub fn then_error(mut self, error: ModelError) -> Self {
        self.items.push(Err(error));
        self
    }

    /// The same reply, then nothing more, ever.
    pub fn then_hang(mut self) -> Self {
        self.hang = true;
        self
    }
}

#[derive(Debug, Default)]
struct State {
    replies: VecDeque<ModelReply>,
    requests: Vec<ModelRequest>,
}

/// A language model that answers from a script and records every request.
#[derive(Debug, Clone, Default)]
pub struct ScriptedModel {
    state: Arc<Mutex<State>>,
    tool_calls: bool,
}

impl ScriptedModel {
    /// A model that gives these replies, one per request, in order. When they run out, a
    /// request fails with a configuration error that says so.
    pub fn new(replies: impl IntoIterator<Item = ModelReply>) -> Self {
        ScriptedModel {
            state: Arc::new(Mutex::new(State {
                replies: replies.into_iter().collect(),
                requests: Vec::new(),
            })),
            tool_calls: true,
        }
    }

    /// The same model, claiming fenced-code (text) mode instead of tool calls.
    pub fn in_text_mode(mut self) -> Self {
        self.tool_calls = false;
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.state().requests.clone()
    }

    /// How many requests were made.
    pub fn request_count(&self) -> usize {
        self.state().requests.len()
    }

    /// How many scripted replies are left.
    pub fn replies_left(&self) -> usize {
        self.state().replies.len()
    }
}

impl LanguageModel for ScriptedModel {
    fn uses_tool_calls(&self, _llm: &LlmSettings) -> bool {
        self.tool_calls
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let reply = {
            let mut state = self.state();
            state.requests.push(request);
            state.replies.pop_front()
        };
        let Some(reply) = reply else {
            let error = ModelError::Config("the scripted model has no reply left".to_owned());
            return futures::stream::once(std::future::ready(Err(error))).boxed();
        };
        let items = futures::stream::iter(reply.items);
        if reply.hang {
            items.chain(futures::stream::pending()).boxed()
        } else {
            items.boxed()
        }
    }
}
