//! The OpenAI-compatible chat-completions provider.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::StreamExt;
use oi_core::{
    LanguageModel, LlmSettings, ModelDelta, ModelError, ModelRequest, ModelStream, Usage,
};
use serde_json::Value;

use crate::capabilities::uses_tool_calls;
use crate::context_note::note_for;
use crate::convert::Mode;
use crate::endpoint::{Endpoint, resolve};
use crate::env::Env;
use crate::ollama;
use crate::openai_body::openai_body_json;
use crate::prompt::Prompt;
use crate::provider_table::KeyHeader;
use crate::reply_limits::ReplyLimits;
use crate::retry::RetryPolicy;
use crate::text::{printable, shorten};
use crate::text_mode::TextDecoder;
use crate::tool_stream::ToolCallReader;
use crate::transport::{Decode, HttpCall, Transport};

/// The default longest time without any byte from the server.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// A model behind an OpenAI-compatible `chat/completions` endpoint (OpenAI, Azure, Ollama,
/// LM Studio, llama.cpp, vLLM, …). Settings come with each request.
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    client: reqwest::Client,
    env: Env,
    retry: RetryPolicy,
    idle_timeout: Option<Duration>,
    deadline: Option<Duration>,
    /// Context lengths Ollama reported, by chat URL and model (looked up once).
    ollama_context: Arc<Mutex<HashMap<String, Option<u64>>>>,
    /// Chat URLs whose server refused `stream_options` (asked without it from then on).
    no_usage_option: Arc<Mutex<HashSet<String>>>,
}

impl Default for OpenAiCompatible {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenAiCompatible {
    /// A provider reading `OPENAI_API_KEY`, `OPENAI_BASE_URL` and `OLLAMA_HOST` from this
    /// process, with default retries and a 300 s idle timeout.
    pub fn new() -> Self {
        OpenAiCompatible {
            client: crate::http_client::client(),
            env: Env::from_process(),
            retry: RetryPolicy::default(),
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            deadline: None,
            ollama_context: Arc::default(),
            no_usage_option: Arc::default(),
        }
    }

    /// The same provider reading these variables instead of the process environment.
    pub fn with_env(mut self, env: Env) -> Self {
        self.env = env;
        self
    }

    /// The same provider using this HTTP client.
    pub fn with_client(mut self, client: reqwest::Client) -> Self {
        self.client = client;
        self
    }

    /// The same provider with this retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The same provider giving up after this long without a byte (`None`: never).
    pub fn with_idle_timeout(mut self, idle: Option<Duration>) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// The same provider giving up when a whole reply takes longer than this (`None`: never).
    pub fn with_deadline(mut self, deadline: Option<Duration>) -> Self {
        self.deadline = deadline;
        self
    }

    /// Ollama's context length for this model (`/api/show`), looked up once.
    async fn ollama_context_length(&self, llm: &LlmSettings) -> Option<u64> {
        let endpoint = resolve(llm, &self.env).ok()?;
        let key = format!("{} {}", endpoint.url, endpoint.model);
        if let Some(known) = self
            .ollama_context
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
        {
            return *known;
        }
        let base = endpoint.url.trim_end_matches("/chat/completions");
        let host = ollama::host_of(base.split('?').next().unwrap_or(base));
        let found = ollama::context_length(&self.client, &host, &endpoint.model).await;
        self.ollama_context
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, found);
        found
    }

    fn transport(&self) -> Transport {
        Transport {
            client: self.client.clone(),
            retry: self.retry,
            idle_timeout: self.idle_timeout,
            deadline: self.deadline,
            sizes: ReplyLimits::from_env(&self.env),
        }
    }

    /// Where `request` would go and the exact JSON body that would be sent.
    pub fn prepare(&self, request: &ModelRequest) -> Result<(Endpoint, Value), ModelError> {
        self.prepared(request).map(|prepared| {
            let body = serde_json::from_slice(&prepared.body).unwrap_or(Value::Null);
            (prepared.endpoint, body)
        })
    }

    /// The endpoint, the body, and the note to show first when trimming left messages out.
    fn prepared(&self, request: &ModelRequest) -> Result<Prepared, ModelError> {
        self.prepared_asking(request, true)
    }

    /// Whether the server at `url` refused `stream_options` before.
    fn refuses_usage_option(&self, url: &str) -> bool {
        self.no_usage_option
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(url)
    }

    /// [`prepared`](Self::prepared), asking for the reply's usage when `ask_usage` and the
    /// server has not refused the field.
    fn prepared_asking(
        &self,
        request: &ModelRequest,
        ask_usage: bool,
    ) -> Result<Prepared, ModelError> {
        let endpoint = resolve(&request.llm, &self.env)?;
        let mode = if self.uses_tool_calls(&request.llm) {
            Mode::Tools
        } else {
            Mode::Text
        };
        let prompt = Prompt::build(request, mode);
        let ask_usage = ask_usage && !self.refuses_usage_option(&endpoint.url);
        let body = openai_body_json(&prompt, &endpoint.model, request, ask_usage).into();
        let note = note_for(&prompt, request);
        Ok(Prepared {
            endpoint,
            body,
            tools: !prompt.tools.is_empty(),
            note,
            asked_usage: ask_usage,
        })
    }
}

/// A request ready to send.
struct Prepared {
    endpoint: Endpoint,
    /// The JSON body, as sent.
    body: bytes::Bytes,
    /// Whether it offers tools (their calls are read from the reply).
    tools: bool,
    note: Option<String>,
    /// Whether the body asks for the reply's usage (`stream_options`).
    asked_usage: bool,
}

/// Whether `error` is a server refusing the `stream_options` field (servers older than
/// OpenAI's usage in streams answer 400 or 422 naming the field).
fn refused_usage_option(error: &ModelError) -> bool {
    matches!(error, ModelError::Status { status: 400 | 422, body }
        if body.contains("stream_options") || body.contains("include_usage"))
}

/// Turns chunks into deltas, in the mode of the request.
enum Decoder {
    Tools(ToolCallReader),
    Text(TextDecoder),
}

/// Bytes of a string field, 0 when absent.
fn str_len(value: Option<&Value>) -> usize {
    value.and_then(Value::as_str).map_or(0, str::len)
}

/// The usage a chunk reports (`usage` with `prompt_tokens`; OpenAI sends it in a last chunk
/// when asked with `stream_options.include_usage`, some servers always). Priced later.
fn reported_usage(chunk: &Value) -> Option<ModelDelta> {
    let usage = chunk.get("usage")?;
    let prompt_tokens = usage.get("prompt_tokens")?.as_u64()?;
    let reply_tokens = usage
        .get("completion_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Some(ModelDelta::Usage(Usage {
        prompt_tokens,
        reply_tokens,
        cost: None,
    }))
}

impl Decode for Decoder {
    fn content_len(&self, chunk: &Value) -> usize {
        let Some(delta) = chunk.pointer("/choices/0/delta") else {
            return 0;
        };
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        let call_bytes: usize = calls
            .into_iter()
            .flatten()
            .map(|call| {
                str_len(call.pointer("/function/name"))
                    + str_len(call.pointer("/function/arguments"))
            })
            .sum();
        str_len(delta.get("content")) + call_bytes
    }

    fn push(&mut self, chunk: &Value) -> Result<Vec<ModelDelta>, ModelError> {
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(ModelError::Stream(format!(
                "the server reported an error: {}",
                printable(&shorten(&message, 300))
            )));
        }
        let usage = reported_usage(chunk);
        let Some(delta) = chunk.pointer("/choices/0/delta") else {
            return Ok(usage.into_iter().collect());
        };
        let mut deltas = match self {
            Decoder::Tools(reader) => reader.push(delta),
            Decoder::Text(parser) => match delta.get("content").and_then(Value::as_str) {
                Some(text) if !text.is_empty() => parser.push(text),
                _ => Vec::new(),
            },
        };
        deltas.extend(usage);
        Ok(deltas)
    }

    fn is_done(&self) -> bool {
        matches!(self, Decoder::Text(parser) if parser.is_done())
    }

    fn finish(&mut self) -> Vec<ModelDelta> {
        match self {
            Decoder::Tools(reader) => reader.finish(),
            Decoder::Text(parser) => parser.finish(),
        }
    }
}

impl LanguageModel for OpenAiCompatible {
    fn uses_tool_calls(&self, llm: &LlmSettings) -> bool {
        uses_tool_calls(llm)
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let this = self.clone();
        Box::pin(async_stream::stream! {
            let mut request = request;
            if request.llm.context_window.is_none() && is_ollama(&request.llm.model) {
                request.llm.context_window = this.ollama_context_length(&request.llm).await;
            }
            let mut ask_usage = true;
            let mut noted = false;
            loop {
                let Prepared { endpoint, body, tools, note, asked_usage } =
                    match this.prepared_asking(&request, ask_usage) {
                        Ok(prepared) => prepared,
                        Err(error) => {
                            yield Err(error);
                            return;
                        }
                    };
                if let Some(note) = note.filter(|_| !noted) {
                    noted = true;
                    yield Ok(ModelDelta::Message(note));
                }
                let (headers, bearer) = match (endpoint.key_header, endpoint.api_key) {
                    (KeyHeader::ApiKey, Some(key)) => (vec![("api-key", key)], None),
                    (_, key) => (Vec::new(), key),
                };
                let url = endpoint.url;
                let call = HttpCall { url: url.clone(), headers, bearer, body };
                let offered = request.tools.clone();
                let mut replies = Box::pin(this.transport().stream(call, move || {
                    if tools { Decoder::Tools(ToolCallReader::offering(offered.clone())) } else { Decoder::Text(TextDecoder::offering(offered.clone())) }
                }));
                let ollama_model = is_ollama(&request.llm.model).then_some(endpoint.model);
                let mut first = true;
                let mut refused = false;
                while let Some(item) = replies.next().await {
                    if let (true, true, Err(error)) = (first, asked_usage, &item) {
                        if refused_usage_option(error) {
                            tracing::info!(%url, "the server refused stream_options: asked again without it");
                            this.no_usage_option
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .insert(url.clone());
                            refused = true;
                            break;
                        }
                    }
                    first = false;
                    yield item.map_err(|error| match &ollama_model {
                        Some(model) => ollama::not_pulled(error, model),
                        None => error,
                    });
                }
                if refused {
                    ask_usage = false;
                    continue;
                }
                return;
            }
        })
    }
}

fn is_ollama(model: &str) -> bool {
    model.starts_with("ollama/") || model.starts_with("ollama_chat/")
}
