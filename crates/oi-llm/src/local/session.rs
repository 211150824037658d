//! One llama.cpp context and what its KV cache holds.
//!
//! A request's prompt is evaluated in the batches of its [`PromptLayout`]; batches the context
//! already holds (equal in place and tokens) are kept; the system turn is read from its
//! prompt-state file when one was written, and the file is written after the turn is
//! evaluated. The reply is then generated token by token, and afterwards the context is cut
//! back to the prompt: the reply's tokens were evaluated one at a time, so the next prompt,
//! which contains them, evaluates them again in its own batches. What the context holds is
//! therefore always the prompt, cut the prompt's way, whether the reader of the reply stopped
//! early or read it to the end (see [`super::chunks`]).

use std::num::NonZeroU32;
use std::ops::Range;
use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::token::LlamaToken;
use oi_core::ModelError;

use super::chunks::{CHUNK, end_of, kept_chunks};
use super::job::Job;
use super::layout::PromptLayout;
use super::model::{LocalModel, backend};
use super::prefix_cache::{Loaded, PrefixCache};
use super::sampler::sampler;
use super::stats::GenerationStats;
use super::utf8::Utf8Pieces;

/// Tokens per llama.cpp batch (no prompt batch is longer than [`CHUNK`]).
const N_BATCH: u32 = 512;

/// One context and what its KV cache holds.
pub struct Session<'m> {
    model: &'m LocalModel,
    ctx: LlamaContext<'m>,
    n_ctx: u32,
    /// The context's settings, as the prompt-state files' key names them.
    settings: String,
    /// The tokens the KV cache holds, and the batches they were evaluated in.
    held: Vec<LlamaToken>,
    held_chunks: Vec<Range<usize>>,
    batch: LlamaBatch<'static>,
    files: Option<PrefixCache>,
}

fn engine_error(what: &str, error: impl std::fmt::Display) -> ModelError {
    ModelError::Stream(format!("the local model failed while {what}: {error}"))
}

impl<'m> Session<'m> {
    /// A context of `n_ctx` tokens run by `threads` threads; `files` keeps system turns.
    pub fn new(
        model: &'m LocalModel,
        n_ctx: u32,
        threads: usize,
        files: Option<PrefixCache>,
    ) -> Result<Self, ModelError> {
        let n_threads = i32::try_from(threads).unwrap_or(1).max(1);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(N_BATCH)
            .with_n_threads(n_threads)
            .with_n_threads_batch(n_threads);
        let settings = format!(
            "n_ctx={n_ctx} n_batch={N_BATCH} n_ubatch={} threads={n_threads} chunk={CHUNK} type_k=f16 type_v=f16 flash_attn=auto",
            params.n_ubatch()
        );
        let started = Instant::now();
        let ctx = model
            .model
            .new_context(backend()?, params)
            .map_err(|e| ModelError::Config(format!("llama.cpp could not make a context: {e}")))?;
        let seconds = started.elapsed().as_secs_f64();
        tracing::info!(
            threads = n_threads,
            n_ctx,
            seconds,
            "local model context: {n_ctx} tokens, {n_threads} threads, made in {seconds:.3} s"
        );
        Ok(Session {
            model,
            ctx,
            n_ctx,
            settings,
            held: Vec::new(),
            held_chunks: Vec::new(),
            batch: LlamaBatch::new(CHUNK, 1),
            files,
        })
    }

    /// Generates one reply into `job.out`. Returns early (Ok) when the receiver is gone.
    pub fn generate(&mut self, job: &Job) -> Result<GenerationStats, ModelError> {
        let layout = PromptLayout::new(self.model, &job.turns)?;
        let n = layout.tokens.len();
        if n == 0 {
            return Err(engine_error("reading the prompt", "it has no tokens"));
        }
        let n_ctx = usize::try_from(self.n_ctx).unwrap_or(usize::MAX);
        if n + 16 >= n_ctx {
            return Err(ModelError::Config(format!(
                "The conversation is {n} tokens long, more than the local model's context of {} tokens: start a new conversation (%reset) or set a smaller context_window.",
                self.n_ctx
            )));
        }
        let mut stats = GenerationStats {
            prompt_tokens: n,
            ..GenerationStats::default()
        };
        let started = Instant::now();
        let ready = self.prepare(&layout, &mut stats, job);
        stats.prompt_time = started.elapsed();
        if !self.ok_or_reset(ready)? {
            return Ok(stats);
        }
        let reply = self.reply(job, n, &mut stats);
        if reply.is_ok() {
            self.forget_reply(n);
        }
        self.ok_or_reset(reply)?;
        Ok(stats)
    }

    /// Gets the context to hold the whole prompt; false when the reader left meanwhile.
    fn prepare(
        &mut self,
        layout: &PromptLayout,
        stats: &mut GenerationStats,
        job: &Job,
    ) -> Result<bool, ModelError> {
        let mut kept = kept_chunks(
            &self.held_chunks,
            &self.held,
            &layout.chunks,
            &layout.tokens,
        );
        let mut from_file = 0;
        let prefix = layout.prefix_chunks.filter(|p| kept < *p);
        if let (Some(p), Some(files)) = (prefix, &self.files) {
            let end = end_of(&layout.chunks, p);
            let tokens = &layout.tokens[..end];
            match files.load(&mut self.ctx, &self.settings, &layout.prefix_text, tokens) {
                Loaded::Prefix => {
                    self.held = tokens.to_vec();
                    self.held_chunks = layout.chunks[..p].to_vec();
                    kept = p;
                    from_file = end;
                }
                Loaded::Refused => {
                    self.held.clear();
                    self.held_chunks.clear();
                    kept = 0;
                }
                Loaded::Nothing => {}
            }
        }
        if from_file == 0 {
            self.keep(layout, kept);
        }
        stats.cached_tokens = end_of(&layout.chunks, kept);
        stats.file_tokens = from_file;
        let write_after = prefix.filter(|_| from_file == 0 && self.files.is_some());
        for (i, chunk) in layout.chunks.iter().enumerate().skip(kept) {
            if job.out.is_closed() {
                return Ok(false);
            }
            self.decode(&layout.tokens[chunk.clone()])?;
            self.held_chunks.push(chunk.clone());
            if write_after == Some(i + 1) {
                self.save_prefix(&layout.prefix_text);
            }
        }
        Ok(true)
    }

    /// Writes the prompt-state file of what the context holds: the system turn.
    fn save_prefix(&self, prefix_text: &str) {
        if let Some(files) = &self.files {
            files.save(&self.ctx, &self.settings, prefix_text, &self.held);
        }
    }

    /// Keeps the first `kept` batches of `layout` (which the context holds) and drops the rest.
    fn keep(&mut self, layout: &PromptLayout, kept: usize) {
        let end = end_of(&layout.chunks, kept);
        let cut = u32::try_from(end)
            .ok()
            .and_then(|p0| self.ctx.clear_kv_cache_seq(Some(0), Some(p0), None).ok())
            .unwrap_or(false);
        if cut {
            self.held.truncate(end);
            self.held_chunks.truncate(kept);
        } else {
            self.reset();
        }
    }

    /// Generates the reply after the prompt's `n` tokens.
    fn reply(
        &mut self,
        job: &Job,
        n: usize,
        stats: &mut GenerationStats,
    ) -> Result<(), ModelError> {
        let started = Instant::now();
        let mut sampler = sampler(job.params.temperature);
        let mut text = Utf8Pieces::default();
        let n_ctx = usize::try_from(self.n_ctx).unwrap_or(usize::MAX);
        let room = n_ctx.saturating_sub(n + 1);
        let max_tokens = usize::try_from(job.params.max_tokens)
            .unwrap_or(usize::MAX)
            .min(room);
        let vocab = self.model.model.vocab();
        let mut position = n;
        while stats.generated_tokens < max_tokens {
            let token = sampler.sample(&self.ctx, self.batch.n_tokens() - 1);
            if stats.first_token.is_none() {
                stats.first_token = Some(job.created.elapsed());
            }
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
            self.decode_at(&[token], position)?;
            position += 1;
        }
        let rest = text.finish();
        if !rest.is_empty() {
            let _ = job.out.blocking_send(Ok(rest));
        }
        stats.generation_time = started.elapsed();
        Ok(())
    }

    /// Cuts the context back to the prompt's `n` tokens.
    fn forget_reply(&mut self, n: usize) {
        let cut = u32::try_from(n)
            .ok()
            .and_then(|p0| self.ctx.clear_kv_cache_seq(Some(0), Some(p0), None).ok())
            .unwrap_or(false);
        if !cut {
            self.reset();
        }
    }

    /// On an error the context's content is unknown: start from nothing.
    fn ok_or_reset<T>(&mut self, result: Result<T, ModelError>) -> Result<T, ModelError> {
        if result.is_err() {
            self.reset();
        }
        result
    }

    fn reset(&mut self) {
        self.ctx.clear_kv_cache();
        self.held.clear();
        self.held_chunks.clear();
    }

    /// Evaluates prompt `tokens` after what the context holds; logits for the last one.
    fn decode(&mut self, tokens: &[LlamaToken]) -> Result<(), ModelError> {
        self.decode_at(tokens, self.held.len())?;
        self.held.extend_from_slice(tokens);
        Ok(())
    }

    /// Evaluates `tokens` at positions from `start`; logits for the last one.
    fn decode_at(&mut self, tokens: &[LlamaToken], start: usize) -> Result<(), ModelError> {
        self.batch.clear();
        let last = tokens.len().saturating_sub(1);
        for (i, token) in tokens.iter().enumerate() {
            let pos = i32::try_from(start + i).map_err(|e| engine_error("placing a token", e))?;
            self.batch
                .add(*token, pos, &[0], i == last)
                .map_err(|e| engine_error("batching tokens", e))?;
        }
        self.ctx
            .decode(&mut self.batch)
            .map_err(|e| engine_error("evaluating tokens", e))
    }
}
