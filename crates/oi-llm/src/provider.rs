//! Choosing a provider for the settings, from the model name as users write it:
//!
//! | model | provider |
//! |---|---|
//! | `local`, `local/PATH.gguf` (no `api_base`) | the embedded llama.cpp model (feature `local`) |
//! | `anthropic/NAME`, `claude-…` (no `api_base` for `claude-…`) | Anthropic Messages API |
//! | `gpt-4o`, `PREFIX/NAME` for an OpenAI-compatible provider of [`crate::provider_table`] (`openai`, `azure`, `ollama`, `groq`, `gemini`, `mistral`, `openrouter`, …), anything with `api_base` | OpenAI-compatible |
//!
//! [`provider_for`] returns a [`Router`] that makes this choice again for every request, so a
//! model changed during a session (e.g. `%model`-style commands) reaches the right wire.

use std::sync::{Arc, OnceLock};

use futures::StreamExt;
use oi_core::{LanguageModel, LlmSettings, ModelDelta, ModelError, ModelRequest, ModelStream};

use crate::convert::Mode;
use crate::prompt::Prompt;

use crate::anthropic::Anthropic;
use crate::env::Env;
use crate::local_model;
use crate::openai::OpenAiCompatible;
use crate::provider_table::{self, TableWire};
use crate::spend::{self, Tariff};

/// Which wire a model is spoken to over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// OpenAI-compatible chat completions.
    OpenAiCompatible,
    /// Anthropic Messages.
    Anthropic,
    /// The embedded GGUF model.
    Embedded,
}

/// The wire for `llm` (see the module docs and [`crate::provider_table`]); an unknown or
/// unsupported provider prefix without `api_base` is a [`ModelError::Config`].
pub fn wire_for(llm: &LlmSettings) -> Result<Wire, ModelError> {
    if local_model::is_embedded(llm) {
        return Ok(Wire::Embedded);
    }
    let has_base = llm
        .api_base
        .as_deref()
        .is_some_and(|b| !b.trim().is_empty());
    let model = llm.model.trim();
    if let Some(prefix) = provider_table::prefix_of(model) {
        return match provider_table::find(prefix).map(|p| (p, p.wire)) {
            Some((_, TableWire::Anthropic)) => Ok(Wire::Anthropic),
            Some((_, TableWire::OpenAiCompatible)) => Ok(Wire::OpenAiCompatible),
            Some((provider, TableWire::Unsupported(_))) if !has_base => {
                Err(provider_table::unsupported_error(provider))
            }
            None if !has_base => Err(provider_table::unknown_prefix(prefix)),
            _ => Ok(Wire::OpenAiCompatible),
        };
    }
    if !has_base && model.starts_with("claude") {
        return Ok(Wire::Anthropic);
    }
    Ok(Wire::OpenAiCompatible)
}

/// The provider for `llm`: a [`Router`] over the OpenAI-compatible, Anthropic and embedded
/// providers. Fails now (nothing sent) when the settings cannot work: an unknown provider, or
/// `model: local` without the model file. Missing API keys, and `model: local` in a build
/// without the `local` feature (with the local servers found running), are reported by the
/// first request, before anything is sent.
pub fn provider_for(llm: &LlmSettings, env: Env) -> Result<Arc<dyn LanguageModel>, ModelError> {
    let router = Router::new(env);
    // Without the `local` feature the first request explains how to get the embedded model
    // and offers the local servers that are running (an async look-up).
    if wire_for(llm)? == Wire::Embedded && cfg!(feature = "local") {
        router.embedded(llm)?;
    }
    Ok(Arc::new(router))
}

/// A model whose every request fails with `error` (for programs that must build an
/// interpreter even when the settings cannot work, and show the reason on first use).
pub fn unavailable(error: ModelError) -> Arc<dyn LanguageModel> {
    Arc::new(Unavailable(error))
}

struct Unavailable(ModelError);

impl LanguageModel for Unavailable {
    fn uses_tool_calls(&self, _llm: &LlmSettings) -> bool {
        false
    }

    fn stream(&self, _request: ModelRequest) -> ModelStream {
        Box::pin(futures::stream::once(std::future::ready(Err(self
            .0
            .clone()))))
    }
}

/// Picks the provider for each request by [`wire_for`]. The embedded model is loaded once,
/// on first use, and kept.
pub struct Router {
    openai: OpenAiCompatible,
    anthropic: Anthropic,
    env: Env,
    local: OnceLock<Result<Arc<dyn LanguageModel>, ModelError>>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router").finish_non_exhaustive()
    }
}

impl Router {
    /// A router whose providers read `env`.
    pub fn new(env: Env) -> Self {
        Router {
            openai: OpenAiCompatible::new().with_env(env.clone()),
            anthropic: Anthropic::new().with_env(env.clone()),
            env,
            local: OnceLock::new(),
        }
    }

    fn embedded(&self, llm: &LlmSettings) -> Result<Arc<dyn LanguageModel>, ModelError> {
        self.local.get_or_init(|| embedded(llm, &self.env)).clone()
    }

    fn pick(&self, llm: &LlmSettings) -> Result<(Wire, Arc<dyn LanguageModel>), ModelError> {
        let wire = wire_for(llm)?;
        let model: Arc<dyn LanguageModel> = match wire {
            Wire::OpenAiCompatible => Arc::new(self.openai.clone()),
            Wire::Anthropic => Arc::new(self.anthropic.clone()),
            Wire::Embedded => self.embedded(llm)?,
        };
        Ok((wire, model))
    }
}

/// The trimming note for wires that do not show it themselves (the OpenAI-compatible one
/// does, from the prompt it builds anyway): the prompt is built once more to count what is
/// left out, which costs a tokenizer pass only when the conversation is near the window.
fn trimming_note(wire: Wire, model: &dyn LanguageModel, request: &ModelRequest) -> Option<String> {
    if wire == Wire::OpenAiCompatible || crate::context_note::already_noted(&request.messages) {
        return None;
    }
    let mode = mode_of(model, &request.llm);
    crate::context_note::note_for(&Prompt::build(request, mode), request)
}

/// How `model` takes code for `llm`.
fn mode_of(model: &dyn LanguageModel, llm: &LlmSettings) -> Mode {
    if model.uses_tool_calls(llm) {
        Mode::Tools
    } else {
        Mode::Text
    }
}

impl LanguageModel for Router {
    fn uses_tool_calls(&self, llm: &LlmSettings) -> bool {
        self.pick(llm).is_ok_and(|(_, m)| m.uses_tool_calls(llm))
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        match self.pick(&request.llm) {
            Ok((wire, model)) => {
                let tariff = Tariff::of(&request.llm, wire == Wire::Embedded);
                if let Err(error) = spend::check(&request.llm, tariff) {
                    return Unavailable(error).stream(request);
                }
                let estimate_from = spend::needs_estimate(&request.llm, tariff)
                    .then(|| (request.clone(), mode_of(model.as_ref(), &request.llm)));
                let reply = match trimming_note(wire, model.as_ref(), &request) {
                    Some(note) => {
                        let first = futures::stream::once(std::future::ready(Ok(
                            ModelDelta::Message(note),
                        )));
                        Box::pin(first.chain(model.stream(request))) as ModelStream
                    }
                    None => model.stream(request),
                };
                spend::metered(reply, tariff, estimate_from)
            }
            Err(_) if !cfg!(feature = "local") && wire_for(&request.llm) == Ok(Wire::Embedded) => {
                let env = self.env.clone();
                Box::pin(futures::stream::once(async move {
                    let client = crate::http_client::client();
                    Err(crate::local_servers::not_built_with_offers(&client, &env).await)
                }))
            }
            Err(error) => Unavailable(error).stream(request),
        }
    }
}

/// The embedded model (`model: local`): its file must exist; it loads on the first request.
#[cfg(feature = "local")]
fn embedded(llm: &LlmSettings, env: &Env) -> Result<Arc<dyn LanguageModel>, ModelError> {
    let path = local_model::model_path(llm, env)?;
    let n_ctx = llm
        .context_window
        .unwrap_or(local_model::DEFAULT_LOCAL_CONTEXT)
        .clamp(512, 131_072);
    let config = crate::local::LocalConfig {
        n_ctx: u32::try_from(n_ctx).unwrap_or(u32::MAX),
        prompt_cache: local_model::prompt_cache_dir(env),
        threads: None,
    };
    Ok(Arc::new(
        crate::local::LocalProvider::from_path_with_config(path, config)?,
    ))
}

/// Without the `local` feature the embedded model is not there: say how to get it.
#[cfg(not(feature = "local"))]
fn embedded(_llm: &LlmSettings, _env: &Env) -> Result<Arc<dyn LanguageModel>, ModelError> {
    Err(local_model::not_built_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llm(model: &str) -> LlmSettings {
        LlmSettings {
            model: model.to_owned(),
            ..LlmSettings::default()
        }
    }

    #[test]
    fn wires_by_model_name() {
        let cases = [
            ("gpt-4o", Wire::OpenAiCompatible),
            ("openai/local", Wire::OpenAiCompatible),
            ("ollama/llama3", Wire::OpenAiCompatible),
            ("azure/gpt-4o", Wire::OpenAiCompatible),
            ("anthropic/claude-3-opus-20240229", Wire::Anthropic),
            ("claude-3.5", Wire::Anthropic),
            ("claude-3-5-sonnet", Wire::Anthropic),
            ("local", Wire::Embedded),
            ("groq/llama-3.1-70b-versatile", Wire::OpenAiCompatible),
            ("gemini/gemini-1.5-flash", Wire::OpenAiCompatible),
            (
                "openrouter/anthropic/claude-3.5-sonnet",
                Wire::OpenAiCompatible,
            ),
            ("lm_studio/qwen", Wire::OpenAiCompatible),
            ("hosted_vllm/x", Wire::OpenAiCompatible),
        ];
        for (model, wire) in cases {
            assert_eq!(wire_for(&llm(model)).unwrap(), wire, "{model}");
        }
        assert!(matches!(
            wire_for(&llm("cohere2/command")),
            Err(ModelError::Config(_))
        ));
        let with_base = |model: &str| LlmSettings {
            api_base: Some("http://localhost:8000/v1".into()),
            ..llm(model)
        };
        assert_eq!(
            wire_for(&with_base("hf/x")).unwrap(),
            Wire::OpenAiCompatible
        );
        assert_eq!(
            wire_for(&with_base("claude-3.5")).unwrap(),
            Wire::OpenAiCompatible
        );
        assert_eq!(
            wire_for(&with_base("local")).unwrap(),
            Wire::OpenAiCompatible
        );
        assert_eq!(
            wire_for(&with_base("anthropic/claude-3.5")).unwrap(),
            Wire::Anthropic
        );
    }

    #[test]
    fn provider_for_checks_what_it_can_up_front() {
        assert!(provider_for(&llm("gpt-4o"), Env::empty()).is_ok());
        assert!(provider_for(&llm("claude-3.5"), Env::empty()).is_ok());
        assert!(provider_for(&llm("cohere2/x"), Env::empty()).is_err());
        assert!(provider_for(&llm("groq/llama3-8b-8192"), Env::empty()).is_ok());
        assert!(provider_for(&llm("bedrock/x"), Env::empty()).is_err());
        let missing = provider_for(
            &llm("local"),
            Env::empty().with(local_model::MODEL_PATH_VAR, "/nonexistent/m.gguf"),
        );
        if cfg!(feature = "local") {
            let Err(ModelError::Config(text)) = missing else {
                panic!("expected a config error");
            };
            assert!(text.contains("cargo xtask fetch-model"), "{text}");
        } else {
            assert!(missing.is_ok(), "the first request explains");
        }
    }
}
