//! The system turn's evaluated state, kept on disk between processes: written once after the
//! turn is evaluated, read into the context instead of evaluating it again.
//!
//! The state only ever comes back into llama.cpp when it passes every check: the file is this
//! user's and nobody else may write it ([`StateStore`]), its checksum holds, its key names
//! this model file, this program and these context settings, and its tokens are exactly the
//! prompt's. What reaches llama.cpp is therefore bytes this very build produced for this very
//! model and context shape; llama.cpp bounds-checks them again while reading.

use std::time::Instant;

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::session::LlamaStateSeqFlags;
use llama_cpp_2::token::LlamaToken;

use super::cache_key::{file_name, key_text};
use super::state_file::{decode, encode};
use super::state_store::{MAX_FILE, StateStore};

/// The sequence the session uses.
const SEQ: i32 = 0;

/// What [`PrefixCache::load`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loaded {
    /// There was no usable file; the context is untouched.
    Nothing,
    /// The context now holds exactly the prefix.
    Prefix,
    /// llama.cpp refused the state; the context was emptied.
    Refused,
}

/// Prompt-state files for one model in one program.
#[derive(Debug, Clone)]
pub struct PrefixCache {
    store: StateStore,
    model: String,
    program: String,
}

impl PrefixCache {
    /// Files in `store` for the model file fingerprinted `model`, run by the program `program`.
    pub fn new(store: StateStore, model: String, program: String) -> Self {
        PrefixCache {
            store,
            model,
            program,
        }
    }

    fn key(&self, context: &str, prefix_text: &str) -> String {
        key_text(&self.model, &self.program, context, prefix_text)
    }

    /// Puts the state of `tokens` (the system turn, rendered as `prefix_text`, evaluated
    /// with the `context` settings) into `ctx` when a valid file has it.
    pub fn load(
        &self,
        ctx: &mut LlamaContext<'_>,
        context: &str,
        prefix_text: &str,
        tokens: &[LlamaToken],
    ) -> Loaded {
        let started = Instant::now();
        let key = self.key(context, prefix_text);
        let raw: Vec<i32> = tokens.iter().map(|t| t.0).collect();
        let name = file_name(&key, &raw);
        let Some(bytes) = self.store.read(&name) else {
            return Loaded::Nothing;
        };
        let path = self.store.path(&name);
        let file = match decode(&bytes) {
            Ok(file) => file,
            Err(error) => {
                tracing::warn!(path = %path.display(), "prompt-state file ignored: {error}");
                return Loaded::Nothing;
            }
        };
        if file.key != key || file.tokens != raw {
            tracing::warn!(path = %path.display(), "prompt-state file ignored: it was computed for another model, program, context or prompt");
            return Loaded::Nothing;
        }
        ctx.clear_kv_cache();
        // SAFETY: `set_data_ext` reads at most `file.state.len()` bytes from that slice (the
        // length is passed along) and copies them into the context's own KV buffers; the
        // slice lives until the call returns. The bytes are what `save` below got from
        // llama.cpp for this model, program and context settings (checksum, key and owner
        // checked above), and llama.cpp validates their shape again, returning 0 on mismatch.
        let set =
            unsafe { ctx.state_seq_set_data_ext(file.state, SEQ, LlamaStateSeqFlags::empty()) };
        let last = i32::try_from(tokens.len()).map_or(-1, |n| n - 1);
        if !set || ctx.kv_cache_seq_pos_max(SEQ) != last {
            ctx.clear_kv_cache();
            tracing::warn!(path = %path.display(), "prompt-state file ignored: llama.cpp did not take its state");
            return Loaded::Refused;
        }
        tracing::info!(
            path = %path.display(),
            tokens = tokens.len(),
            bytes = bytes.len(),
            ms = started.elapsed().as_secs_f64() * 1e3,
            "prompt-state file read: {} tokens, {} bytes, in {:.2} ms",
            tokens.len(),
            bytes.len(),
            started.elapsed().as_secs_f64() * 1e3
        );
        Loaded::Prefix
    }

    /// Writes the state `ctx` holds, which must be exactly `tokens` (see [`Self::load`]).
    pub fn save(
        &self,
        ctx: &LlamaContext<'_>,
        context: &str,
        prefix_text: &str,
        tokens: &[LlamaToken],
    ) {
        let started = Instant::now();
        let flags = LlamaStateSeqFlags::empty();
        let size = ctx.state_seq_get_size_ext(SEQ, flags);
        if size as u64 > MAX_FILE / 2 {
            tracing::info!(bytes = size, "prompt state not kept: it is too large");
            return;
        }
        let mut state = vec![0u8; size];
        // SAFETY: `state` has `size` writable bytes, the size llama.cpp just reported for this
        // sequence; nothing changes the context in between (this thread owns it), so
        // llama.cpp writes exactly that many bytes (checked below).
        let written = unsafe { ctx.state_seq_get_data_ext(state.as_mut_ptr(), SEQ, flags) };
        if written != size {
            tracing::warn!(
                size,
                written,
                "prompt state not kept: llama.cpp wrote an unexpected size"
            );
            return;
        }
        let key = self.key(context, prefix_text);
        let raw: Vec<i32> = tokens.iter().map(|t| t.0).collect();
        let name = file_name(&key, &raw);
        let bytes = encode(&key, &raw, &state);
        if self.store.write(&name, &bytes) {
            tracing::info!(
                path = %self.store.path(&name).display(),
                tokens = tokens.len(),
                bytes = bytes.len(),
                "prompt-state file written: {} tokens, {} bytes, in {:.2} ms",
                tokens.len(),
                bytes.len(),
                started.elapsed().as_secs_f64() * 1e3
            );
        }
    }
}
