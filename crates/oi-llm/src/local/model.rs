//! A GGUF model in memory: llama.cpp's backend, loading, the chat template, tokens.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;
use oi_core::ModelError;

use super::prompt::ChatTurn;
use crate::local_model::check_model_file;

/// llama.cpp's backend: initialised once per process (llama.cpp allows no second one).
static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();

/// The process's llama.cpp backend, started on first use.
pub(super) fn backend() -> Result<&'static LlamaBackend, ModelError> {
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
    pub(super) model: LlamaModel,
    template: LlamaChatTemplate,
    path: PathBuf,
    load_time: Duration,
    /// What identifies the file on disk, for the prompt-state cache (computed once, on use).
    pub(super) fingerprint: OnceLock<Option<String>>,
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
        let load_time = started.elapsed();
        tracing::info!(
            path = %path.display(),
            seconds = load_time.as_secs_f64(),
            "local model loaded in {:.2} s",
            load_time.as_secs_f64()
        );
        Ok(Arc::new(LocalModel {
            model,
            template,
            path: path.to_owned(),
            load_time,
            fingerprint: OnceLock::new(),
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
        self.render_with(turns, true)
    }

    /// The conversation rendered with the model's chat template; `reply_header` adds the
    /// assistant header the reply follows.
    pub(super) fn render_with(
        &self,
        turns: &[ChatTurn],
        reply_header: bool,
    ) -> Result<String, ModelError> {
        let messages = turns
            .iter()
            .map(|t| LlamaChatMessage::new(t.role.clone(), t.content.replace('\0', "")))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ModelError::Config(format!("bad chat message: {e}")))?;
        self.model
            .apply_chat_template(&self.template, &messages, reply_header)
            .map_err(|e| ModelError::Config(format!("the model's chat template failed: {e}")))
    }

    /// The tokens of a rendered prompt (the template writes any BOS itself; special tokens
    /// such as `<|im_start|>` are parsed).
    pub(super) fn tokenize(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), false, true)
    }

    /// The bytes `token` stands for in a rendered prompt (special tokens spelled out).
    pub(super) fn prompt_piece_len(&self, token: LlamaToken) -> usize {
        self.model.vocab().token_to_piece(token, true, None).len()
    }
}
