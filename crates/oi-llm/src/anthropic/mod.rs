//! The Anthropic Messages API provider: streamed events, the `execute` tool as an Anthropic
//! tool, `tool_use`/`tool_result` history with matching ids, base64 images, and the system
//! message as the top-level `system` field. Retries, time limits and error handling are the
//! same as for the OpenAI-compatible wire.

mod body;
mod decode;
pub(crate) mod endpoint;

use std::time::Duration;

use futures::StreamExt;
use oi_core::{LanguageModel, LlmSettings, ModelError, ModelRequest, ModelStream};
use serde_json::Value;

pub use body::{DEFAULT_MAX_TOKENS, messages_body};
pub use endpoint::{
    ANTHROPIC_BASE, ANTHROPIC_VERSION, AnthropicEndpoint, anthropic_model_name, resolve_anthropic,
};

use crate::capabilities::capabilities;
use crate::capabilities::uses_tool_calls;
use crate::convert::Mode;
use crate::env::Env;
use crate::openai::DEFAULT_IDLE_TIMEOUT;
use crate::retry::RetryPolicy;
use crate::transport::{HttpCall, Transport};
use decode::EventDecoder;

/// A Claude model behind the Anthropic Messages API (or a compatible proxy).
#[derive(Debug, Clone)]
pub struct Anthropic {
    client: reqwest::Client,
    env: Env,
    retry: RetryPolicy,
    idle_timeout: Option<Duration>,
    deadline: Option<Duration>,
}

impl Default for Anthropic {
    fn default() -> Self {
        Self::new()
    }
}

impl Anthropic {
    /// A provider reading `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` from this process,
    /// with default retries and a 300 s idle timeout.
    pub fn new() -> Self {
        Anthropic {
            client: crate::http_client::client(),
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
    pub fn prepare(
        &self,
        request: &ModelRequest,
    ) -> Result<(AnthropicEndpoint, Value), ModelError> {
        let endpoint = resolve_anthropic(&request.llm, &self.env)?;
        let mode = if uses_tool_calls(&request.llm) {
            Mode::Tools
        } else {
            Mode::Text
        };
        let max_tokens = request
            .llm
            .max_tokens
            .filter(|t| *t > 0)
            .unwrap_or_else(|| {
                let caps = capabilities(&request.llm);
                if caps.known {
                    caps.max_output
                } else {
                    DEFAULT_MAX_TOKENS
                }
            });
        let body = messages_body(request, &endpoint.model, mode, max_tokens);
        Ok((endpoint, body))
    }

    fn transport(&self) -> Transport {
        Transport {
            client: self.client.clone(),
            retry: self.retry,
            idle_timeout: self.idle_timeout,
            deadline: self.deadline,
            sizes: crate::reply_limits::ReplyLimits::from_env(&self.env),
        }
    }
}

impl LanguageModel for Anthropic {
    fn uses_tool_calls(&self, llm: &LlmSettings) -> bool {
        uses_tool_calls(llm)
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let prepared = self.prepare(&request);
        let transport = self.transport();
        Box::pin(async_stream::stream! {
            let (endpoint, body) = match prepared {
                Ok(prepared) => prepared,
                Err(error) => {
                    yield Err(error);
                    return;
                }
            };
            let tools = body.get("tools").is_some();
            let mut headers = vec![("anthropic-version", ANTHROPIC_VERSION.to_owned())];
            if let Some(key) = endpoint.api_key {
                headers.push(("x-api-key", key));
            }
            let body = serde_json::to_vec(&body).unwrap_or_default().into();
            let call = HttpCall { url: endpoint.url, headers, bearer: None, body };
            let offered = request.tools.clone();
            let mut replies = Box::pin(transport.stream(call, move || EventDecoder::new(tools, offered.clone())));
            while let Some(item) = replies.next().await {
                yield item;
            }
        })
    }
}
