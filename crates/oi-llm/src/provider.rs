//! Choosing a provider for the settings.

use std::sync::Arc;

use oi_core::{LanguageModel, LlmSettings, ModelError};

use crate::env::Env;
use crate::openai::OpenAiCompatible;

/// Model prefixes served by [`OpenAiCompatible`] without an `api_base`.
const OPENAI_COMPATIBLE_PREFIXES: [&str; 4] = ["openai", "ollama", "ollama_chat", "azure"];

/// The provider for `llm`. Only OpenAI-compatible servers are supported for now: plain model
/// names and `openai/…`, `azure/…`, `ollama/…` models, and any model when `api_base` is set.
pub fn provider_for(llm: &LlmSettings, env: Env) -> Result<Arc<dyn LanguageModel>, ModelError> {
    let has_base = llm
        .api_base
        .as_deref()
        .is_some_and(|b| !b.trim().is_empty());
    if let Some((prefix, _)) = llm.model.split_once('/') {
        if !has_base && !OPENAI_COMPATIBLE_PREFIXES.contains(&prefix) {
            return Err(ModelError::Config(format!(
                "The model provider `{prefix}` is not supported yet: use an OpenAI-compatible server with --api_base, or a model such as gpt-4o or ollama/llama3.1."
            )));
        }
    }
    Ok(Arc::new(OpenAiCompatible::new().with_env(env)))
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
    fn known_prefixes_and_bases() {
        assert!(provider_for(&llm("gpt-4o"), Env::empty()).is_ok());
        assert!(provider_for(&llm("ollama/llama3"), Env::empty()).is_ok());
        assert!(matches!(
            provider_for(&llm("anthropic/claude-3"), Env::empty()),
            Err(ModelError::Config(_))
        ));
        let with_base = LlmSettings {
            api_base: Some("http://localhost:8000/v1".into()),
            ..llm("hf/x")
        };
        assert!(provider_for(&with_base, Env::empty()).is_ok());
    }
}
