//! The embedded local model (cargo feature `local`): a GGUF chat model run in-process by
//! llama.cpp (`llama-cpp-2`), always in text mode (small models write fenced blocks, and
//! JSON tool calls in text are turned into code too, see [`crate::text_mode`]).
//!
//! One [`LocalProvider`] owns one worker thread and one llama.cpp context; the weights
//! ([`LocalModel`]) are loaded once and can be shared between providers. Generation runs on
//! that thread; pieces travel to the async stream over a channel, and dropping the stream
//! closes the channel, which stops generation within one token.
//!
//! The context keeps what it evaluated of the last prompt, cut into batches the same way for
//! every request ([`chunks`]), so a reply at temperature 0 depends on the request alone, and
//! with [`LocalConfig::prompt_cache`] the evaluated system turn is kept on disk for the next
//! process ([`prefix_cache`]). Each reply's figures go to `tracing` (`--verbose` shows them).
//!
//! ```no_run
//! # fn demo() -> Result<(), oi_core::ModelError> {
//! use oi_llm::local::{LocalModel, LocalProvider};
//! let model = LocalModel::load(std::path::Path::new("qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"))?;
//! let provider = LocalProvider::new(model, 8192)?;
//! # Ok(()) }
//! ```

mod cache_key;
mod chunks;
mod hash;
mod job;
mod layout;
mod model;
mod prefix_cache;
mod prompt;
mod sampler;
mod session;
mod state_file;
mod state_store;
mod stats;
mod utf8;
mod worker;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use oi_core::{LanguageModel, LlmSettings, ModelError, ModelRequest, ModelStream};

pub use crate::local_model::physical_cores;
pub use model::LocalModel;
pub use prompt::{ChatTurn, chat_turns};
pub use stats::GenerationStats;

use crate::local_model::{DEFAULT_LOCAL_MAX_TOKENS, check_model_file};
use crate::text_mode::TextDecoder;
use job::{GenerateParams, Job};
use worker::{SharedStats, Source};

/// Text pieces buffered between the generating thread and the stream.
const CHANNEL: usize = 64;

/// How a [`LocalProvider`] runs its model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalConfig {
    /// The context in tokens (capped at the model's trained context).
    pub n_ctx: u32,
    /// The directory keeping evaluated system prompts between processes; `None`: not kept.
    pub prompt_cache: Option<PathBuf>,
    /// llama.cpp's threads; `None`: one per physical core ([`physical_cores`]).
    pub threads: Option<usize>,
}

impl LocalConfig {
    /// A context of `n_ctx` tokens, no prompt-state files, one thread per physical core.
    pub fn new(n_ctx: u32) -> Self {
        LocalConfig {
            n_ctx,
            prompt_cache: None,
            threads: None,
        }
    }
}

/// A [`LanguageModel`] running a GGUF model in this process.
pub struct LocalProvider {
    jobs: std::sync::mpsc::Sender<Job>,
    stats: SharedStats,
    n_ctx: u32,
}

impl std::fmt::Debug for LocalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalProvider")
            .field("n_ctx", &self.n_ctx)
            .finish_non_exhaustive()
    }
}

impl LocalProvider {
    /// A provider for an already loaded model, with a context of `n_ctx` tokens (capped at
    /// the model's trained context).
    pub fn new(model: Arc<LocalModel>, n_ctx: u32) -> Result<Self, ModelError> {
        Self::with_config(model, LocalConfig::new(n_ctx))
    }

    /// A provider for an already loaded model, run as `config` says.
    pub fn with_config(model: Arc<LocalModel>, config: LocalConfig) -> Result<Self, ModelError> {
        Self::start(Source::Loaded(model), config)
    }

    /// A provider for the GGUF at `path`, loaded on the first request (the file must exist).
    pub fn from_path(path: PathBuf, n_ctx: u32) -> Result<Self, ModelError> {
        Self::from_path_with_config(path, LocalConfig::new(n_ctx))
    }

    /// A provider for the GGUF at `path`, loaded on the first request, run as `config` says.
    pub fn from_path_with_config(path: PathBuf, config: LocalConfig) -> Result<Self, ModelError> {
        check_model_file(&path)?;
        Self::start(Source::Path(path), config)
    }

    fn start(source: Source, config: LocalConfig) -> Result<Self, ModelError> {
        let (jobs, receiver) = std::sync::mpsc::channel();
        let stats: SharedStats = Arc::new(Mutex::new(None));
        let shared = Arc::clone(&stats);
        let n_ctx = config.n_ctx;
        std::thread::Builder::new()
            .name("oi-local-model".to_owned())
            .spawn(move || worker::run_worker(source, &config, &receiver, &shared))
            .map_err(|e| ModelError::Config(format!("cannot start the local model thread: {e}")))?;
        Ok(LocalProvider { jobs, stats, n_ctx })
    }

    /// Timings of the last finished reply.
    pub fn last_stats(&self) -> Option<GenerationStats> {
        *self.stats.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The request as the engine sees it: the context window and reply length bounded by the
    /// context, the window shrunk by a quarter because trimming estimates tokens from
    /// characters (code has more tokens per character than prose).
    fn bounded(&self, mut request: ModelRequest) -> (Vec<ChatTurn>, GenerateParams) {
        let n_ctx = u64::from(self.n_ctx);
        let window = request
            .llm
            .context_window
            .unwrap_or(n_ctx)
            .clamp(256, n_ctx);
        let max_tokens = request
            .llm
            .max_tokens
            .filter(|t| *t > 0)
            .unwrap_or(DEFAULT_LOCAL_MAX_TOKENS)
            .min(window / 2);
        request.llm.context_window = Some(window * 3 / 4);
        request.llm.max_tokens = Some(max_tokens);
        let params = GenerateParams {
            temperature: request.llm.temperature,
            max_tokens: u32::try_from(max_tokens).unwrap_or(u32::MAX),
        };
        (chat_turns(&request), params)
    }
}

impl LanguageModel for LocalProvider {
    fn uses_tool_calls(&self, _llm: &LlmSettings) -> bool {
        false
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        let jobs = self.jobs.clone();
        let offered = request.tools.clone();
        let (turns, params) = self.bounded(request);
        Box::pin(async_stream::stream! {
            let (out, mut pieces) = tokio::sync::mpsc::channel(CHANNEL);
            let created = std::time::Instant::now();
            if jobs.send(Job { turns, params, out, created }).is_err() {
                yield Err(ModelError::Stream("the local model's thread has stopped".to_owned()));
                return;
            }
            let mut decoder = TextDecoder::offering(offered);
            while let Some(piece) = pieces.recv().await {
                match piece {
                    Ok(text) => {
                        for delta in decoder.push(&text) {
                            yield Ok(delta);
                        }
                        if decoder.is_done() {
                            return;
                        }
                    }
                    Err(error) => {
                        yield Err(error);
                        return;
                    }
                }
            }
            for delta in decoder.finish() {
                yield Ok(delta);
            }
        })
    }
}
