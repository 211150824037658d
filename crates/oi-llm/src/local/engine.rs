//! The llama.cpp side: loading a GGUF once, and generating on a dedicated thread that keeps
//! one context (and its KV cache, so a conversation's shared prefix is not evaluated twice).

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use oi_core::ModelError;
use tokio::sync::mpsc::Sender;

use super::prompt::ChatTurn;
use super::stats::GenerationStats;
use super::utf8::Utf8Pieces;
use crate::local_model::check_model_file;

/// Prompt tokens evaluated per batch (smaller batches make cancelling faster).
const PROMPT_CHUNK: usize = 128;

/// llama.cpp's backend: initialised once per process (llama.cpp allows no second one).
static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

fn backend() -> Result<&'static LlamaBackend, ModelError> {
    let backend = BACKEND.get_or_init(|| {
        let mut backend = LlamaBackend::init().map_err(|e| e.to_string())?;
        backend.void_logs();
        Ok(backend)
    });
    backend
        .as_ref()
        .map_err(|e| ModelError::Config(format!("llama.cpp could not start: {e}")))
}

/// A GGUF model in memory. Load it once with [`LocalModel::load`] and share the `Arc`.
pub struct LocalModel {
    model: LlamaModel,
    template: LlamaChatTemplate,
    path: PathBuf,
    load_time: Duration,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("path", &self.path)
            .field("load_time", &self.load_time)
            .finish_non_exhaustive()
    }
}

impl LocalModel {
    /// Loads the GGUF at `path` (memory-mapped). Errors are written for the user.
    pub fn load(path: &Path) -> Result<Arc<LocalModel>, ModelError> {
        check_model_file(path)?;
        let backend = backend()?;
        let started = Instant::now();
        let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
            .map_err(|e| {
                ModelError::Config(format!(
                    "llama.cpp could not load the model {}: {e}. Is it a GGUF chat model?",
                    path.display()
                ))
            })?;
        // The template stored in the GGUF; ChatML (Qwen, SmolLM, …) when it has none.
        let template = match model.chat_template(None) {
            Ok(template) => template,
            Err(_) => LlamaChatTemplate::new("chatml")
                .map_err(|e| ModelError::Config(format!("bad chat template: {e}")))?,
        };
        Ok(Arc::new(LocalModel {
            model,
            template,
            path: path.to_owned(),
            load_time: started.elapsed(),
        }))
    }

    /// Where the model was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How long loading took.
    pub fn load_time(&self) -> Duration {
        self.load_time
    }

    /// The context length the model was trained with.
    pub fn trained_context(&self) -> u32 {
        self.model.n_ctx_train()
    }

    /// The conversation rendered with the model's chat template, ready for the reply.
    pub fn render(&self, turns: &[ChatTurn]) -> Result<String, ModelError> {
        let messages = turns
            .iter()
            .map(|t| LlamaChatMessage::new(t.role.clone(), t.content.replace('\0', "")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ModelError::Config(format!("bad chat message: {e}")))?;
        self.model
            .apply_chat_template(&self.template, &messages, true)
            .map_err(|e| ModelError::Config(format!("the model's chat template failed: {e}")))
    }
}

/// How a reply is generated.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateParams {
    /// 0 = greedy.
    pub temperature: f64,
    /// Longest reply in tokens.
    pub max_tokens: u32,
}

/// One reply to generate.
pub struct Job {
    /// The conversation.
    pub turns: Vec<ChatTurn>,
    /// Sampling and length.
    pub params: GenerateParams,
    /// Where text pieces go; closed by the receiver = cancelled.
    pub out: Sender<Result<String, ModelError>>,
}

/// Where the worker gets its model.
pub enum Source {
    /// Already loaded.
    Loaded(Arc<LocalModel>),
    /// Loaded from this file on the first request.
    Path(PathBuf),
}

/// Statistics shared between the worker and the provider.
pub type SharedStats = Arc<Mutex<Option<GenerationStats>>>;

/// The worker thread's body: serves jobs until the provider is dropped.
pub fn run_worker(source: Source, n_ctx: u32, jobs: Receiver<Job>, stats: SharedStats) {
    let Ok(first) = jobs.recv() else {
        return;
    };
    let model = match source {
        Source::Loaded(model) => Ok(model),
        Source::Path(path) => LocalModel::load(&path),
    };
    let model = match model {
        Ok(model) => model,
        Err(error) => return fail_all(first, &jobs, &error),
    };
    let n_ctx = n_ctx.min(model.trained_context().max(512));
    let mut session = match Session::new(&model, n_ctx) {
        Ok(session) => session,
        Err(error) => return fail_all(first, &jobs, &error),
    };
    for job in std::iter::once(first).chain(jobs.iter()) {
        let result = session.generate(&job);
        match result {
            Ok(mut run) => {
                run.load_time = model.load_time();
                *stats.lock().unwrap_or_else(PoisonError::into_inner) = Some(run);
            }
            Err(error) => {
                let _ = job.out.blocking_send(Err(error));
            }
        }
    }
}

/// Answers every job with `error` until the provider is dropped.
fn fail_all(first: Job, jobs: &Receiver<Job>, error: &ModelError) {
    for job in std::iter::once(first).chain(jobs.iter()) {
        let _ = job.out.blocking_send(Err(error.clone()));
    }
}

/// One context and what its KV cache holds.
struct Session<'m> {
    model: &'m LocalModel,
    ctx: LlamaContext<'m>,
    n_ctx: u32,
    evaluated: Vec<LlamaToken>,
    batch: LlamaBatch<'static>,
}

fn engine_error(what: &str, error: impl std::fmt::Display) -> ModelError {
    ModelError::Stream(format!("the local model failed while {what}: {error}"))
}

impl<'m> Session<'m> {
    fn new(model: &'m LocalModel, n_ctx: u32) -> Result<Self, ModelError> {
        let threads =
            std::thread::available_parallelism().map_or(2, |n| i32::try_from(n.get()).unwrap_or(2));
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(512)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        let ctx = model
            .model
            .new_context(backend()?, params)
            .map_err(|e| ModelError::Config(format!("llama.cpp could not make a context: {e}")))?;
        Ok(Session {
            model,
            ctx,
            n_ctx,
            evaluated: Vec::new(),
            batch: LlamaBatch::new(PROMPT_CHUNK, 1),
        })
    }

    /// Generates one reply into `job.out`. Returns early (Ok) when the receiver is gone.
    fn generate(&mut self, job: &Job) -> Result<GenerationStats, ModelError> {
        let prompt = self.model.render(&job.turns)?;
        // The template already writes any BOS; special tokens (<|im_start|>, …) are parsed.
        let tokens = self
            .model
            .model
            .vocab()
            .tokenize(prompt.as_bytes(), false, true);
        if tokens.is_empty() {
            return Err(engine_error("reading the prompt", "it has no tokens"));
        }
        let n_ctx = usize::try_from(self.n_ctx).unwrap_or(usize::MAX);
        if tokens.len() + 16 >= n_ctx {
            return Err(ModelError::Config(format!(
                "The conversation is {} tokens long, more than the local model's context of {} tokens: start a new conversation (%reset) or set a smaller context_window.",
                tokens.len(),
                self.n_ctx
            )));
        }
        let mut stats = GenerationStats {
            prompt_tokens: tokens.len(),
            ..GenerationStats::default()
        };
        let started = Instant::now();
        let cached = self.reuse_prefix(&tokens);
        stats.cached_tokens = cached;
        for chunk in tokens[cached..].chunks(PROMPT_CHUNK) {
            if job.out.is_closed() {
                return Ok(stats);
            }
            self.decode(chunk)?;
        }
        stats.prompt_time = started.elapsed();

        let started = Instant::now();
        let mut sampler = sampler(job.params.temperature);
        let mut text = Utf8Pieces::default();
        let room = n_ctx.saturating_sub(tokens.len() + 1);
        let max_tokens = usize::try_from(job.params.max_tokens)
            .unwrap_or(usize::MAX)
            .min(room);
        let vocab = self.model.model.vocab();
        while stats.generated_tokens < max_tokens {
            let token = sampler.sample(&self.ctx, self.batch.n_tokens() - 1);
            if vocab.is_eog(token) {
                break;
            }
            stats.generated_tokens += 1;
            let piece = text.push(&vocab.token_to_piece(token, false, None));
            if !piece.is_empty() && job.out.blocking_send(Ok(piece)).is_err() {
                break;
            }
            if job.out.is_closed() {
                break;
            }
            self.decode(&[token])?;
        }
        let rest = text.finish();
        if !rest.is_empty() {
            let _ = job.out.blocking_send(Ok(rest));
        }
        stats.generation_time = started.elapsed();
        Ok(stats)
    }

    /// Keeps the longest cached prefix of `tokens` (at least one token is always evaluated,
    /// for its logits); returns its length.
    fn reuse_prefix(&mut self, tokens: &[LlamaToken]) -> usize {
        let common = self
            .evaluated
            .iter()
            .zip(tokens)
            .take_while(|(a, b)| a == b)
            .count()
            .min(tokens.len().saturating_sub(1));
        let kept = u32::try_from(common)
            .ok()
            .and_then(|p0| self.ctx.clear_kv_cache_seq(Some(0), Some(p0), None).ok())
            .unwrap_or(false);
        if kept {
            self.evaluated.truncate(common);
            common
        } else {
            self.ctx.clear_kv_cache();
            self.evaluated.clear();
            0
        }
    }

    /// Evaluates `tokens` after what is cached; logits for the last one.
    fn decode(&mut self, tokens: &[LlamaToken]) -> Result<(), ModelError> {
        self.batch.clear();
        let last = tokens.len().saturating_sub(1);
        for (i, token) in tokens.iter().enumerate() {
            let pos = i32::try_from(self.evaluated.len() + i)
                .map_err(|e| engine_error("placing a token", e))?;
            self.batch
                .add(*token, pos, &[0], i == last)
                .map_err(|e| engine_error("batching tokens", e))?;
        }
        self.ctx
            .decode(&mut self.batch)
            .map_err(|e| engine_error("evaluating tokens", e))?;
        self.evaluated.extend_from_slice(tokens);
        Ok(())
    }
}

/// Greedy at temperature 0; otherwise top-k 40, top-p 0.95, min-p 0.05, then temperature.
fn sampler(temperature: f64) -> LlamaSampler {
    if temperature <= 0.0 {
        return LlamaSampler::greedy();
    }
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    #[allow(clippy::cast_possible_truncation)]
    let temperature = temperature as f32;
    LlamaSampler::chain_simple([
        LlamaSampler::top_k(40),
        LlamaSampler::top_p(0.95, 1),
        LlamaSampler::min_p(0.05, 1),
        LlamaSampler::temp(temperature),
        LlamaSampler::dist(seed),
    ])
}
