//! The environment variables a provider reads, injected so tests do not depend on the real
//! environment.

use std::collections::BTreeMap;

/// The variables a provider may read ([`KNOWN_VARS`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

/// The variables [`Env::from_process`] copies: every provider's key and base variables
/// (see [`crate::provider_table`]), the local model's path and the reply limits. Names ending in
/// `_API_KEY` are keys, which programs withhold from the code they run.
pub const KNOWN_VARS: [&str; 58] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "OLLAMA_HOST",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_API_BASE",
    "AZURE_OPENAI_ENDPOINT",
    "AZURE_API_VERSION",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_API_BASE",
    "GROQ_API_KEY",
    "GROQ_API_BASE",
    "MISTRAL_API_KEY",
    "MISTRAL_API_BASE",
    "CODESTRAL_API_KEY",
    "CODESTRAL_API_BASE",
    "OPENROUTER_API_KEY",
    "OPENROUTER_API_BASE",
    "DEEPSEEK_API_KEY",
    "DEEPSEEK_API_BASE",
    "TOGETHERAI_API_KEY",
    "TOGETHER_API_KEY",
    "TOGETHER_AI_API_KEY",
    "TOGETHERAI_API_BASE",
    "FIREWORKS_AI_API_KEY",
    "FIREWORKS_API_KEY",
    "FIREWORKS_AI_API_BASE",
    "XAI_API_KEY",
    "XAI_API_BASE",
    "PERPLEXITYAI_API_KEY",
    "PERPLEXITY_API_KEY",
    "PERPLEXITY_API_BASE",
    "CEREBRAS_API_KEY",
    "CEREBRAS_API_BASE",
    "HUGGINGFACE_API_KEY",
    "HUGGINGFACE_API_BASE",
    "COHERE_API_KEY",
    "COHERE_API_BASE",
    "DEEPINFRA_API_KEY",
    "DEEPINFRA_API_BASE",
    "NVIDIA_NIM_API_KEY",
    "NVIDIA_NIM_API_BASE",
    "SAMBANOVA_API_KEY",
    "SAMBANOVA_API_BASE",
    "LM_STUDIO_API_KEY",
    "LM_STUDIO_API_BASE",
    "LLAMAFILE_API_BASE",
    "HOSTED_VLLM_API_KEY",
    "HOSTED_VLLM_API_BASE",
    "OI_MODEL_PATH",
    CACHE_DIR_VAR,
    REPLY_BYTES_VAR,
    LINE_BYTES_VAR,
    BODY_BYTES_VAR,
];

/// The environment variable overriding where oi keeps caches (the embedded model's
/// prompt-state files go in its `prompt-state` folder).
pub const CACHE_DIR_VAR: &str = "OI_CACHE_DIR";
/// The variable that sets the longest reply, in bytes (`ReplyLimits::max_reply_bytes`).
pub const REPLY_BYTES_VAR: &str = "OI_MAX_REPLY_BYTES";
/// The variable that sets the longest server-sent-events line (`ReplyLimits::max_line_bytes`).
pub const LINE_BYTES_VAR: &str = "OI_MAX_SSE_LINE_BYTES";
/// The variable that sets the largest reply body (`ReplyLimits::max_body_bytes`).
pub const BODY_BYTES_VAR: &str = "OI_MAX_REPLY_BODY_BYTES";

impl Env {
    /// No variables at all.
    pub fn empty() -> Self {
        Env::default()
    }

    /// The [`KNOWN_VARS`] of this process.
    pub fn from_process() -> Self {
        let mut env = Env::empty();
        for key in KNOWN_VARS {
            if let Ok(value) = std::env::var(key) {
                env.vars.insert(key.to_owned(), value);
            }
        }
        env
    }

    /// The same environment with `key` set to `value`.
    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.vars.insert(key.to_owned(), value.to_owned());
        self
    }

    /// A variable's value, if set and not blank.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_variable_is_read() {
        for name in crate::provider_table::variables() {
            assert!(KNOWN_VARS.contains(&name), "{name} is not in KNOWN_VARS");
        }
    }
}
