//! The model providers oi knows by the prefix users already type (`groq/llama-3.1-70b-versatile`,
//! `gemini/gemini-1.5-flash`, …), as Open Interpreter accepted them through its LLM library:
//! where each one's API is, which environment variable holds its key, which wire it speaks,
//! and how the prefix is taken off the model name.
//!
//! What each model can do (context window, reply length, tools, images) is in
//! [`crate::model_table`]; a row there may be tied to one provider.

use oi_core::ModelError;

/// The wire a row of this table speaks (the wire chosen for one request, which may be the
/// embedded model, is [`crate::provider::Wire`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableWire {
    /// OpenAI-compatible chat completions.
    OpenAiCompatible,
    /// Anthropic's Messages API.
    Anthropic,
    /// Not supported; the text says what to use instead.
    Unsupported(&'static str),
}

/// How the model name is sent once the prefix is taken off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// The rest as it is (`groq/llama3-8b-8192` → `llama3-8b-8192`,
    /// `openrouter/anthropic/claude-3.5-sonnet` → `anthropic/claude-3.5-sonnet`).
    Rest,
    /// Ollama: `:latest` is implied, so it is left out.
    Ollama,
    /// Fireworks: a bare name gets `accounts/fireworks/models/` in front.
    Fireworks,
    /// Hugging Face's router: `PROVIDER/ORG/MODEL` becomes `ORG/MODEL:PROVIDER`.
    HuggingFace,
}

/// How the key is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyHeader {
    /// `Authorization: Bearer KEY`.
    Bearer,
    /// `api-key: KEY` (Azure OpenAI).
    ApiKey,
}

/// One provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provider {
    /// The model-name prefix, before the first `/`.
    pub prefix: &'static str,
    /// Its name, for messages.
    pub name: &'static str,
    /// The wire it speaks.
    pub wire: TableWire,
    /// Its API's base URL (chat completions are at `BASE/chat/completions`); `None`: the
    /// user gives it (`--api_base` or [`base_vars`](Self::base_vars)).
    pub base_url: Option<&'static str>,
    /// Variables that move the base URL, first found wins (after `--api_base`).
    pub base_vars: &'static [&'static str],
    /// Variables that hold the key, first found wins (after `--api_key`).
    pub key_vars: &'static [&'static str],
    /// Whether a request to the default base URL needs a key (a base the user gave may not).
    pub key_required: bool,
    /// The models run on the user's machine: unknown ones get fenced code blocks, not tools.
    pub local: bool,
    /// How the model name is sent.
    pub naming: Naming,
    /// How the key is sent.
    pub key_header: KeyHeader,
}

const fn remote(
    prefix: &'static str,
    name: &'static str,
    base_url: &'static str,
    base_vars: &'static [&'static str],
    key_vars: &'static [&'static str],
) -> Provider {
    Provider {
        prefix,
        name,
        wire: TableWire::OpenAiCompatible,
        base_url: Some(base_url),
        base_vars,
        key_vars,
        key_required: true,
        local: false,
        naming: Naming::Rest,
        key_header: KeyHeader::Bearer,
    }
}

const fn local(
    prefix: &'static str,
    name: &'static str,
    base_url: Option<&'static str>,
    base_vars: &'static [&'static str],
    key_vars: &'static [&'static str],
) -> Provider {
    Provider {
        prefix,
        name,
        wire: TableWire::OpenAiCompatible,
        base_url,
        base_vars,
        key_vars,
        key_required: false,
        local: true,
        naming: Naming::Rest,
        key_header: KeyHeader::Bearer,
    }
}

const fn unsupported(prefix: &'static str, name: &'static str, instead: &'static str) -> Provider {
    Provider {
        prefix,
        name,
        wire: TableWire::Unsupported(instead),
        base_url: None,
        base_vars: &[],
        key_vars: &[],
        key_required: false,
        local: false,
        naming: Naming::Rest,
        key_header: KeyHeader::Bearer,
    }
}

const fn naming(mut provider: Provider, naming: Naming) -> Provider {
    provider.naming = naming;
    provider
}

/// OpenAI's API.
pub const OPENAI_BASE: &str = "https://api.openai.com/v1";

/// Ollama's default address (its OpenAI-compatible API is under `/v1`).
pub const OLLAMA_DEFAULT: &str = "http://localhost:11434";

/// The variable naming Ollama's address.
pub const OLLAMA_HOST_VAR: &str = "OLLAMA_HOST";

/// The API version sent to Azure OpenAI when neither `--api_version` nor
/// `AZURE_API_VERSION` gives one.
pub const AZURE_DEFAULT_API_VERSION: &str = "2024-10-21";

/// Every provider, by prefix.
pub const PROVIDERS: &[Provider] = &[
    remote(
        "openai",
        "OpenAI",
        OPENAI_BASE,
        &["OPENAI_BASE_URL", "OPENAI_API_BASE"],
        &["OPENAI_API_KEY"],
    ),
    Provider {
        key_required: false,
        key_header: KeyHeader::ApiKey,
        base_url: None,
        ..remote(
            "azure",
            "Azure OpenAI",
            "",
            &["AZURE_API_BASE", "AZURE_OPENAI_ENDPOINT"],
            &["AZURE_API_KEY", "AZURE_OPENAI_API_KEY"],
        )
    },
    Provider {
        wire: TableWire::Anthropic,
        ..remote(
            "anthropic",
            "Anthropic",
            "https://api.anthropic.com",
            &["ANTHROPIC_BASE_URL"],
            &["ANTHROPIC_API_KEY"],
        )
    },
    naming(
        local(
            "ollama",
            "Ollama",
            Some(OLLAMA_DEFAULT),
            &[OLLAMA_HOST_VAR],
            &[],
        ),
        Naming::Ollama,
    ),
    naming(
        local(
            "ollama_chat",
            "Ollama",
            Some(OLLAMA_DEFAULT),
            &[OLLAMA_HOST_VAR],
            &[],
        ),
        Naming::Ollama,
    ),
    remote(
        "gemini",
        "Google Gemini",
        "https://generativelanguage.googleapis.com/v1beta/openai",
        &["GEMINI_API_BASE"],
        &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    ),
    remote(
        "groq",
        "Groq",
        "https://api.groq.com/openai/v1",
        &["GROQ_API_BASE"],
        &["GROQ_API_KEY"],
    ),
    remote(
        "mistral",
        "Mistral",
        "https://api.mistral.ai/v1",
        &["MISTRAL_API_BASE"],
        &["MISTRAL_API_KEY"],
    ),
    remote(
        "codestral",
        "Mistral Codestral",
        "https://codestral.mistral.ai/v1",
        &["CODESTRAL_API_BASE"],
        &["CODESTRAL_API_KEY"],
    ),
    remote(
        "openrouter",
        "OpenRouter",
        "https://openrouter.ai/api/v1",
        &["OPENROUTER_API_BASE"],
        &["OPENROUTER_API_KEY"],
    ),
    remote(
        "deepseek",
        "DeepSeek",
        "https://api.deepseek.com/v1",
        &["DEEPSEEK_API_BASE"],
        &["DEEPSEEK_API_KEY"],
    ),
    remote(
        "together_ai",
        "Together AI",
        "https://api.together.xyz/v1",
        &["TOGETHERAI_API_BASE"],
        &[
            "TOGETHERAI_API_KEY",
            "TOGETHER_API_KEY",
            "TOGETHER_AI_API_KEY",
        ],
    ),
    naming(
        remote(
            "fireworks_ai",
            "Fireworks AI",
            "https://api.fireworks.ai/inference/v1",
            &["FIREWORKS_AI_API_BASE"],
            &["FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"],
        ),
        Naming::Fireworks,
    ),
    remote(
        "xai",
        "xAI",
        "https://api.x.ai/v1",
        &["XAI_API_BASE"],
        &["XAI_API_KEY"],
    ),
    remote(
        "perplexity",
        "Perplexity",
        "https://api.perplexity.ai",
        &["PERPLEXITY_API_BASE"],
        &["PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"],
    ),
    remote(
        "cerebras",
        "Cerebras",
        "https://api.cerebras.ai/v1",
        &["CEREBRAS_API_BASE"],
        &["CEREBRAS_API_KEY"],
    ),
    naming(
        remote(
            "huggingface",
            "Hugging Face",
            "https://router.huggingface.co/v1",
            &["HUGGINGFACE_API_BASE"],
            &["HUGGINGFACE_API_KEY"],
        ),
        Naming::HuggingFace,
    ),
    remote(
        "cohere",
        "Cohere",
        "https://api.cohere.ai/compatibility/v1",
        &["COHERE_API_BASE"],
        &["COHERE_API_KEY"],
    ),
    remote(
        "deepinfra",
        "DeepInfra",
        "https://api.deepinfra.com/v1/openai",
        &["DEEPINFRA_API_BASE"],
        &["DEEPINFRA_API_KEY"],
    ),
    remote(
        "nvidia_nim",
        "NVIDIA NIM",
        "https://integrate.api.nvidia.com/v1",
        &["NVIDIA_NIM_API_BASE"],
        &["NVIDIA_NIM_API_KEY"],
    ),
    remote(
        "sambanova",
        "SambaNova",
        "https://api.sambanova.ai/v1",
        &["SAMBANOVA_API_BASE"],
        &["SAMBANOVA_API_KEY"],
    ),
    local(
        "lm_studio",
        "LM Studio",
        Some("http://localhost:1234/v1"),
        &["LM_STUDIO_API_BASE"],
        &["LM_STUDIO_API_KEY"],
    ),
    local(
        "llamafile",
        "llamafile",
        Some("http://localhost:8080/v1"),
        &["LLAMAFILE_API_BASE"],
        &[],
    ),
    local(
        "hosted_vllm",
        "vLLM",
        None,
        &["HOSTED_VLLM_API_BASE"],
        &["HOSTED_VLLM_API_KEY"],
    ),
    unsupported(
        "bedrock",
        "AWS Bedrock",
        "oi does not sign AWS requests: use Bedrock's OpenAI-compatible endpoint (`--model openai/MODEL --api_base https://bedrock-runtime.REGION.amazonaws.com/openai/v1 --api_key BEDROCK_API_KEY`) or a LiteLLM proxy (`--api_base http://localhost:4000`), or the provider directly (anthropic/…)",
    ),
    unsupported(
        "vertex_ai",
        "Google Vertex AI",
        "oi does not sign Google Cloud requests: use gemini/MODEL with GEMINI_API_KEY (Google AI Studio), or a LiteLLM proxy with --api_base",
    ),
];

/// The provider whose prefix is `prefix`.
pub fn find(prefix: &str) -> Option<&'static Provider> {
    PROVIDERS.iter().find(|p| p.prefix == prefix)
}

/// The provider a model name starts with, and the rest of the name (`groq/llama3` →
/// Groq, `llama3`). `None` when the name has no known prefix.
pub fn split(model: &str) -> Option<(&'static Provider, &str)> {
    let (prefix, rest) = model.trim().split_once('/')?;
    find(prefix).map(|provider| (provider, rest))
}

/// The prefix of `model` (before the first `/`), if it has one.
pub fn prefix_of(model: &str) -> Option<&str> {
    model.trim().split_once('/').map(|(prefix, _)| prefix)
}

/// Whether `model` names a provider whose models run on the user's machine (Ollama, LM
/// Studio, llamafile, vLLM).
pub fn is_local(model: &str) -> bool {
    split(model).is_some_and(|(provider, _)| provider.local)
}

/// The model name as `provider` expects it, from the part after its prefix.
pub fn model_name(provider: &Provider, rest: &str) -> String {
    let rest = rest.trim();
    match provider.naming {
        Naming::Rest => rest.to_owned(),
        Naming::Ollama => crate::ollama::model_name(rest).to_owned(),
        Naming::Fireworks => {
            if rest.starts_with("accounts/") {
                rest.to_owned()
            } else {
                format!("accounts/fireworks/models/{rest}")
            }
        }
        Naming::HuggingFace => {
            let parts: Vec<&str> = rest.splitn(3, '/').collect();
            match parts.as_slice() {
                [provider, org, model] if !model.contains(':') => {
                    format!("{org}/{model}:{provider}")
                }
                _ => rest.to_owned(),
            }
        }
    }
}

/// The prefixes oi knows, comma-separated (for messages).
pub fn known_prefixes() -> String {
    let names: Vec<&str> = PROVIDERS
        .iter()
        .filter(|p| !matches!(p.wire, TableWire::Unsupported(_)))
        .map(|p| p.prefix)
        .collect();
    names.join(", ")
}

/// The one-line error for a model prefix oi does not know.
pub fn unknown_prefix(prefix: &str) -> ModelError {
    ModelError::Config(format!(
        "The model provider `{prefix}` is not one oi knows: use one of {} (for example --model groq/llama-3.1-70b-versatile), a model such as gpt-4o or claude-3-5-sonnet, or --api_base for any OpenAI-compatible server.",
        known_prefixes()
    ))
}

/// The one-line error for a provider oi does not speak to.
pub fn unsupported_error(provider: &Provider) -> ModelError {
    let instead = match provider.wire {
        TableWire::Unsupported(instead) => instead,
        _ => "its models are not served over the OpenAI-compatible wire",
    };
    ModelError::Config(format!(
        "{} (`{}/…`) is not supported: {instead}.",
        provider.name, provider.prefix
    ))
}

/// The error for a missing key: names the variable to set.
pub fn missing_key(provider: &Provider) -> ModelError {
    let variable = provider
        .key_vars
        .first()
        .copied()
        .unwrap_or("the key variable");
    ModelError::Config(format!(
        "No {} API key is set: pass one with --api_key or set the {variable} environment variable.",
        provider.name
    ))
}

/// Every variable the providers read (bases and keys), without duplicates.
pub fn variables() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for provider in PROVIDERS {
        for name in provider.base_vars.iter().chain(provider.key_vars) {
            if !out.contains(name) {
                out.push(name);
            }
        }
    }
    out.push("AZURE_API_VERSION");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_split_and_names() {
        let (groq, rest) = split("groq/llama-3.1-70b-versatile").unwrap();
        assert_eq!((groq.name, rest), ("Groq", "llama-3.1-70b-versatile"));
        assert_eq!(model_name(groq, rest), "llama-3.1-70b-versatile");
        let (router, rest) = split("openrouter/anthropic/claude-3.5-sonnet").unwrap();
        assert_eq!(model_name(router, rest), "anthropic/claude-3.5-sonnet");
        let (fw, rest) = split("fireworks_ai/llama-v3p1-70b-instruct").unwrap();
        assert_eq!(
            model_name(fw, rest),
            "accounts/fireworks/models/llama-v3p1-70b-instruct"
        );
        assert_eq!(
            model_name(fw, "accounts/me/models/x"),
            "accounts/me/models/x"
        );
        let (hf, _) = split("huggingface/x").unwrap();
        assert_eq!(
            model_name(hf, "together/deepseek-ai/DeepSeek-R1"),
            "deepseek-ai/DeepSeek-R1:together"
        );
        assert_eq!(
            model_name(hf, "meta-llama/Llama-3.1-8B-Instruct"),
            "meta-llama/Llama-3.1-8B-Instruct"
        );
        let (ollama, rest) = split("ollama/llama3.1:latest").unwrap();
        assert_eq!(model_name(ollama, rest), "llama3.1");
        assert!(split("cohere2/x").is_none());
        assert!(split("gpt-4o").is_none());
        assert!(is_local("lm_studio/qwen") && is_local("ollama/x") && !is_local("groq/x"));
    }

    #[test]
    fn errors_name_what_to_do() {
        let text = unknown_prefix("cohere2").to_string();
        assert!(!text.contains('\n'), "{text}");
        for prefix in ["groq", "gemini", "openrouter", "lm_studio", "hosted_vllm"] {
            assert!(text.contains(prefix), "{text}");
        }
        assert!(!text.contains("bedrock"), "{text}");
        let text = missing_key(find("groq").unwrap()).to_string();
        assert!(
            text.contains("GROQ_API_KEY") && text.contains("--api_key"),
            "{text}"
        );
        let text = unsupported_error(find("bedrock").unwrap()).to_string();
        assert!(
            text.contains("not supported") && text.contains("--api_base"),
            "{text}"
        );
    }

    #[test]
    fn every_remote_provider_has_a_base_and_a_key_variable() {
        for provider in PROVIDERS {
            if provider.key_required {
                assert!(provider.base_url.is_some(), "{}", provider.prefix);
                assert!(!provider.key_vars.is_empty(), "{}", provider.prefix);
            }
            for key in provider.key_vars {
                assert!(
                    key.ends_with("_API_KEY"),
                    "{key} would not be withheld from code"
                );
            }
        }
    }
}
