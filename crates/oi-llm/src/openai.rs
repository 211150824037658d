//! The OpenAI-compatible chat-completions provider.

use std::time::Duration;

use futures::StreamExt;
use oi_core::fence::FenceParser;
use oi_core::{LanguageModel, LlmSettings, ModelDelta, ModelError, ModelRequest, ModelStream};
use serde_json::Value;
use tokio::time::Instant;

use crate::convert::Mode;
use crate::endpoint::{Endpoint, resolve};
use crate::env::Env;
use crate::models::uses_tool_calls;
use crate::request::request_body;
use crate::retry::{RetryPolicy, parse_retry_after, retryable_status};
use crate::sse::{Limits, ReadError, SseItem, read_events};
use crate::text::{error_chain, shorten};
use crate::tool_stream::ToolCallReader;

/// The default longest time without any byte from the server.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

/// Characters of an HTTP error body kept in [`ModelError::Status`].
const STATUS_BODY_CHARS: usize = 500;

/// A model behind an OpenAI-compatible `chat/completions` endpoint (OpenAI, Azure, Ollama,
/// LM Studio, llama.cpp, vLLM, …). Settings come with each request.
#[derive(Debug, Clone)]
pub struct OpenAiCompatible {
    client: reqwest::Client,
    env: Env,
    retry: RetryPolicy,
    idle_timeout: Option<Duration>,
    deadline: Option<Duration>,
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
            client: reqwest::Client::new(),
            env: Env::from_process(),
            retry: RetryPolicy::default(),
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            deadline: None,
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

    /// Where `request` would go and the exact JSON body that would be sent.
    pub fn prepare(&self, request: &ModelRequest) -> Result<(Endpoint, Value), ModelError> {
        let endpoint = resolve(&request.llm, &self.env)?;
        let mode = if self.uses_tool_calls(&request.llm) {
            Mode::Tools
        } else {
            Mode::Text
        };
        let body = request_body(request, &endpoint.model, mode);
        Ok((endpoint, body))
    }

    /// Sends the request and checks the status; errors say whether a retry may help.
    async fn send(
        &self,
        endpoint: &Endpoint,
        body: &Value,
        limits: Limits,
    ) -> Result<reqwest::Response, Failure> {
        let mut builder = self.client.post(&endpoint.url).json(body);
        if let Some(key) = &endpoint.api_key {
            builder = builder.bearer_auth(key);
        }
        let sent = match limits.next_wait() {
            Some((wait, by_deadline)) => match tokio::time::timeout(wait, builder.send()).await {
                Ok(sent) => sent,
                Err(_) => {
                    let reason = limits.timeout_message(by_deadline);
                    return Err(Failure::retry(
                        ModelError::Unreachable {
                            url: endpoint.url.clone(),
                            reason,
                        },
                        None,
                    ));
                }
            },
            None => builder.send().await,
        };
        let response = sent.map_err(|e| {
            let reason = error_chain(&e);
            Failure::retry(
                ModelError::Unreachable {
                    url: endpoint.url.clone(),
                    reason,
                },
                None,
            )
        })?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let text = response.text().await.unwrap_or_default();
        let error = ModelError::Status {
            status: status.as_u16(),
            body: status_body(&text),
        };
        if retryable_status(status.as_u16()) {
            Err(Failure::retry(error, retry_after))
        } else {
            Err(Failure::fatal(error))
        }
    }
}

/// The readable part of an HTTP error body: OpenAI's `error.message` when there is one.
fn status_body(text: &str) -> String {
    let message = serde_json::from_str::<Value>(text).ok().and_then(|v| {
        v.pointer("/error/message")
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    shorten(message.as_deref().unwrap_or(text), STATUS_BODY_CHARS)
}

/// A failed attempt.
struct Failure {
    error: ModelError,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    fn retry(error: ModelError, retry_after: Option<Duration>) -> Self {
        Failure {
            error,
            retryable: true,
            retry_after,
        }
    }

    fn fatal(error: ModelError) -> Self {
        Failure {
            error,
            retryable: false,
            retry_after: None,
        }
    }
}

impl From<ReadError> for Failure {
    fn from(error: ReadError) -> Self {
        let retryable = error.retryable();
        Failure {
            error: error.into_model_error(),
            retryable,
            retry_after: None,
        }
    }
}

/// Turns chunks into deltas, in the mode of the request.
enum Decoder {
    Tools(ToolCallReader),
    Text(FenceParser),
}

impl Decoder {
    fn push(&mut self, chunk: &Value) -> Result<Vec<ModelDelta>, ModelError> {
        if let Some(error) = chunk.get("error") {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_owned);
            return Err(ModelError::Stream(format!(
                "the server reported an error: {}",
                shorten(&message, 300)
            )));
        }
        let Some(delta) = chunk.pointer("/choices/0/delta") else {
            return Ok(Vec::new());
        };
        Ok(match self {
            Decoder::Tools(reader) => reader.push(delta),
            Decoder::Text(parser) => match delta.get("content").and_then(Value::as_str) {
                Some(text) if !text.is_empty() => parser.push(text),
                _ => Vec::new(),
            },
        })
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
            let (endpoint, body) = match this.prepare(&request) {
                Ok(prepared) => prepared,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            let tools = body.get("tools").is_some();
            let limits = Limits {
                idle: this.idle_timeout,
                deadline: this.deadline.map(|d| Instant::now() + d),
            };
            let mut retry = 0;
            'attempts: loop {
                let failure = 'attempt: {
                    let response = match this.send(&endpoint, &body, limits).await {
                        Ok(response) => response,
                        Err(failure) => break 'attempt failure,
                    };
                    let mut decoder =
                        if tools { Decoder::Tools(ToolCallReader::new()) } else { Decoder::Text(FenceParser::new()) };
                    let mut events = Box::pin(read_events(response, limits));
                    let (mut received, mut yielded) = (false, false);
                    while let Some(item) = events.next().await {
                        match item {
                            Ok(SseItem::Done) => break,
                            Ok(SseItem::Data(chunk)) => {
                                received = true;
                                match decoder.push(&chunk) {
                                    Ok(deltas) => {
                                        for delta in deltas {
                                            yielded = true;
                                            yield Ok(delta);
                                        }
                                    }
                                    Err(error) => {
                                        yield Err(error);
                                        return;
                                    }
                                }
                                if decoder.is_done() {
                                    return;
                                }
                            }
                            Err(error) => {
                                let failure = Failure::from(error);
                                if yielded {
                                    yield Err(failure.error);
                                    return;
                                }
                                break 'attempt failure;
                            }
                        }
                    }
                    if !received {
                        break 'attempt Failure::retry(
                            ModelError::Stream("the server ended the reply without sending anything".to_owned()),
                            None,
                        );
                    }
                    for delta in decoder.finish() {
                        yield Ok(delta);
                    }
                    return;
                };
                let delay = if failure.retryable { this.retry.delay(retry, failure.retry_after) } else { None };
                match delay {
                    Some(delay) => {
                        retry += 1;
                        tokio::time::sleep(delay).await;
                        continue 'attempts;
                    }
                    None => {
                        yield Err(failure.error);
                        return;
                    }
                }
            }
        })
    }
}
