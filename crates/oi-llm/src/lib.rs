//! # oi-llm
//!
//! Model providers for oi. [`OpenAiCompatible`] implements [`oi_core::LanguageModel`] over
//! any OpenAI-compatible `chat/completions` endpoint with streamed server-sent events, in
//! Open Interpreter's two modes: the single `execute` tool, or fenced code blocks in text.
//!
//! The modules are small and public so that their pieces can be tested and reused:
//! history conversion ([`convert`]), the tool schema ([`schema`]), partial JSON
//! ([`partial_json`]), endpoint resolution ([`endpoint`]), retries ([`retry`]) and context
//! trimming ([`trim`]).

pub mod anthropic;
mod bound_key;
pub mod capabilities;
pub mod context_note;
pub mod convert;
pub mod endpoint;
pub mod env;
pub mod fence;
mod http_client;
pub mod image_shrink;
pub mod images;
pub mod key_binding;
#[cfg(feature = "local")]
pub mod local;
pub mod local_model;
pub mod local_servers;
pub mod model_table;
pub mod ollama;
mod openai;
pub mod openai_body;
pub mod partial_json;
pub mod prompt;
mod prompt_build;
pub mod provider;
pub mod provider_table;
pub mod pull;
mod reparse;
pub mod reply_limits;
pub mod retry;
pub mod schema;
pub mod spend;
mod sse;
pub mod sse_events;
mod text;
pub mod text_mode;
pub mod tool_args;
pub mod tool_stream;
mod transport;
pub mod trim;
mod unreachable;

pub use anthropic::Anthropic;
pub use endpoint::Endpoint;
pub use env::Env;
pub use openai::{DEFAULT_IDLE_TIMEOUT, OpenAiCompatible};
pub use provider::{Router, Wire, provider_for, unavailable, wire_for};
pub use reply_limits::ReplyLimits;
pub use retry::RetryPolicy;
