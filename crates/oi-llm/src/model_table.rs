//! One table of the models oi knows: context window, longest reply, whether they take the
//! `execute` tool and images, and what they cost. Capabilities ([`crate::capabilities`]),
//! trimming, `%tokens` and `max_budget` all read it.
//!
//! A model is found by the longest table prefix of its own name: the part after the last `/`
//! (`openai/gpt-4o` → `gpt-4o`), lower-case, without an Ollama `:tag`, with Open Interpreter's
//! Claude aliases resolved (`claude-3.5` → `claude-3-5-sonnet-20240620`).

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Per million prompt tokens.
    pub input: f64,
    /// Per million reply tokens.
    pub output: f64,
}

impl Price {
    /// The cost of a request, in USD.
    pub fn cost(&self, prompt_tokens: u64, reply_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.input + reply_tokens as f64 * self.output) / 1_000_000.0
    }
}

/// What the table says about a model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelInfo {
    /// The provider prefix this row is for (`Some("cerebras")`), or `None` for every provider.
    pub provider: Option<&'static str>,
    /// The prefix of the model's own name this row matches.
    pub prefix: &'static str,
    /// Context window in tokens.
    pub context_window: u64,
    /// Longest reply in tokens.
    pub max_output: u64,
    /// Takes the `execute` tool (else fenced code blocks in text).
    pub tools: bool,
    /// Takes images.
    pub vision: bool,
    /// What it costs, where published.
    pub price: Option<Price>,
}

const fn row(
    prefix: &'static str,
    context_window: u64,
    max_output: u64,
    tools: bool,
    vision: bool,
    price: Option<(f64, f64)>,
) -> ModelInfo {
    ModelInfo {
        provider: None,
        prefix,
        context_window,
        max_output,
        tools,
        vision,
        price: match price {
            Some((input, output)) => Some(Price { input, output }),
            None => None,
        },
    }
}

/// A row for one provider's serving of a model (its limits differ from other hosts').
const fn on(provider: &'static str, info: ModelInfo) -> ModelInfo {
    ModelInfo {
        provider: Some(provider),
        ..info
    }
}

const T: bool = true;
const F: bool = false;

/// The models, by prefix of their own name (the longest matching prefix wins).
pub const MODELS: &[ModelInfo] = &[
    row("gpt-4o", 128_000, 16_384, T, T, Some((2.5, 10.0))),
    row("gpt-4o-mini", 128_000, 16_384, T, T, Some((0.15, 0.6))),
    row("chatgpt-4o", 128_000, 16_384, T, T, Some((5.0, 15.0))),
    row("gpt-4.1", 1_047_576, 32_768, T, T, Some((2.0, 8.0))),
    row("gpt-4.1-mini", 1_047_576, 32_768, T, T, Some((0.4, 1.6))),
    row("gpt-4.1-nano", 1_047_576, 32_768, T, T, Some((0.1, 0.4))),
    row("gpt-4-turbo", 128_000, 4_096, T, T, Some((10.0, 30.0))),
    row("gpt-4-vision", 128_000, 4_096, T, T, Some((10.0, 30.0))),
    row("gpt-4-32k", 32_768, 4_096, T, F, Some((60.0, 120.0))),
    row("gpt-4", 8_192, 4_096, T, F, Some((30.0, 60.0))),
    row("gpt-3.5-turbo", 16_385, 4_096, T, F, Some((0.5, 1.5))),
    row("gpt-5", 400_000, 128_000, T, T, Some((1.25, 10.0))),
    row("gpt-5-mini", 400_000, 128_000, T, T, Some((0.25, 2.0))),
    row("gpt-5-nano", 400_000, 128_000, T, T, Some((0.05, 0.4))),
    row("o1", 200_000, 100_000, T, T, Some((15.0, 60.0))),
    row("o1-mini", 128_000, 65_536, T, F, Some((1.1, 4.4))),
    row("o3", 200_000, 100_000, T, T, Some((2.0, 8.0))),
    row("o3-mini", 200_000, 100_000, T, F, Some((1.1, 4.4))),
    row("o4-mini", 200_000, 100_000, T, T, Some((1.1, 4.4))),
    row("claude-3-5-sonnet", 200_000, 8_192, T, T, Some((3.0, 15.0))),
    row("claude-3-5-haiku", 200_000, 8_192, T, T, Some((0.8, 4.0))),
    row(
        "claude-3-7-sonnet",
        200_000,
        64_000,
        T,
        T,
        Some((3.0, 15.0)),
    ),
    row("claude-3-opus", 200_000, 4_096, T, T, Some((15.0, 75.0))),
    row("claude-3-haiku", 200_000, 4_096, T, T, Some((0.25, 1.25))),
    row("claude-3", 200_000, 4_096, T, T, Some((3.0, 15.0))),
    row("claude-sonnet-4", 200_000, 64_000, T, T, Some((3.0, 15.0))),
    row("claude-opus-4", 200_000, 32_000, T, T, Some((15.0, 75.0))),
    row("gemini", 1_048_576, 8_192, T, T, None),
    row("gemini-2.5", 1_048_576, 65_536, T, T, None),
    row("deepseek-chat", 64_000, 8_192, T, F, Some((0.27, 1.1))),
    row("deepseek-reasoner", 64_000, 8_192, F, F, Some((0.55, 2.19))),
    row("deepseek-coder", 128_000, 8_192, F, F, None),
    row("mistral-large", 128_000, 4_096, T, F, Some((2.0, 6.0))),
    row("mistral-small", 32_000, 4_096, T, F, Some((0.2, 0.6))),
    row("codestral", 32_000, 4_096, F, F, None),
    row("command-r", 128_000, 4_096, T, F, None),
    row("grok", 131_072, 4_096, T, F, None),
    row("llama3.1", 128_000, 4_096, F, F, None),
    row("llama3.2", 128_000, 4_096, F, F, None),
    row("llama3.3", 128_000, 4_096, F, F, None),
    row("llama3", 8_192, 2_048, F, F, None),
    row("qwen2.5-coder", 32_768, 4_096, F, F, None),
    row("phi3", 4_096, 1_024, F, F, None),
    // Gemini (gemini/…, through its OpenAI-compatible endpoint).
    row("gemini-1.5-pro", 2_097_152, 8_192, T, T, Some((1.25, 5.0))),
    row(
        "gemini-1.5-flash",
        1_048_576,
        8_192,
        T,
        T,
        Some((0.075, 0.3)),
    ),
    row("gemini-2.0-flash", 1_048_576, 8_192, T, T, Some((0.1, 0.4))),
    // Mistral (mistral/…, codestral/…).
    row("mistral-medium", 131_072, 8_192, T, F, Some((0.4, 2.0))),
    row(
        "open-mistral-nemo",
        128_000,
        4_096,
        T,
        F,
        Some((0.15, 0.15)),
    ),
    row("open-mixtral-8x22b", 64_000, 4_096, T, F, Some((2.0, 6.0))),
    row("pixtral-large", 128_000, 4_096, T, T, Some((2.0, 6.0))),
    row("ministral", 128_000, 4_096, T, F, None),
    // Open-weight families as hosted by Groq, Together, Fireworks, OpenRouter, DeepInfra, ….
    row("llama-3.1", 131_072, 8_192, T, F, None),
    row("llama-3.3", 131_072, 8_192, T, F, None),
    row("llama-4", 131_072, 8_192, T, T, None),
    row("meta-llama-3.1", 131_072, 4_096, T, F, None),
    row("llama3-70b-8192", 8_192, 8_192, T, F, Some((0.59, 0.79))),
    row("llama3-8b-8192", 8_192, 8_192, T, F, Some((0.05, 0.08))),
    row(
        "llama-3.1-8b-instant",
        131_072,
        8_192,
        T,
        F,
        Some((0.05, 0.08)),
    ),
    row(
        "llama-3.3-70b-versatile",
        131_072,
        32_768,
        T,
        F,
        Some((0.59, 0.79)),
    ),
    row(
        "llama-3.1-70b-versatile",
        131_072,
        8_192,
        T,
        F,
        Some((0.59, 0.79)),
    ),
    row("llama-v3p1", 131_072, 16_384, T, F, None),
    row("llama-v3p3", 131_072, 16_384, T, F, None),
    row(
        "mixtral-8x7b-32768",
        32_768,
        32_768,
        T,
        F,
        Some((0.24, 0.24)),
    ),
    row("gemma2-9b-it", 8_192, 8_192, T, F, Some((0.2, 0.2))),
    row("gpt-oss", 131_072, 32_768, T, F, None),
    row("qwen-2.5-coder", 131_072, 8_192, T, F, None),
    row("qwen2.5-72b", 131_072, 8_192, T, F, None),
    row("deepseek-v3", 131_072, 8_192, T, F, None),
    row("deepseek-r1", 131_072, 8_192, F, F, None),
    // xAI.
    row("grok-2-vision", 32_768, 4_096, T, T, Some((2.0, 10.0))),
    row("grok-3", 131_072, 16_384, T, F, Some((3.0, 15.0))),
    row("grok-4", 256_000, 32_768, T, T, Some((3.0, 15.0))),
    // Perplexity: no tool calls.
    row("sonar", 127_072, 8_000, F, F, Some((1.0, 1.0))),
    row("sonar-pro", 200_000, 8_000, F, F, Some((3.0, 15.0))),
    row("sonar-reasoning", 127_072, 8_000, F, F, Some((1.0, 5.0))),
    // Cohere.
    row("command-r-plus", 128_000, 4_096, T, F, Some((2.5, 10.0))),
    row("command-a", 256_000, 8_000, T, F, Some((2.5, 10.0))),
    // Cerebras serves every model with a smaller window.
    on("cerebras", row("", 8_192, 8_192, T, F, None)),
];

/// Model names Open Interpreter accepts for Claude (spec b.9).
const CLAUDE_ALIASES: [(&str, &str); 4] = [
    ("claude-3.5", "claude-3-5-sonnet-20240620"),
    ("claude-3-5", "claude-3-5-sonnet-20240620"),
    ("claude-3.5-sonnet", "claude-3-5-sonnet-20240620"),
    ("claude-3-5-sonnet", "claude-3-5-sonnet-20240620"),
];

/// `name` with Open Interpreter's Claude aliases resolved.
pub fn resolve_alias(name: &str) -> &str {
    CLAUDE_ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, full)| full)
}

/// The model's own name: after the last `/`, aliases resolved, lower-case, no `:tag`.
pub fn own_name(model: &str) -> String {
    let name = model.rsplit('/').next().unwrap_or(model).trim();
    let name = resolve_alias(name);
    name.split(':').next().unwrap_or(name).to_lowercase()
}

/// The row for `model`, if the table knows it: the longest matching row for the model's
/// provider (`cerebras/…`), else the longest matching row for every provider.
pub fn lookup(model: &str) -> Option<&'static ModelInfo> {
    let name = own_name(model);
    let provider = crate::provider_table::split(model).map(|(p, _)| p.prefix);
    let best = |for_provider: Option<&str>| {
        MODELS
            .iter()
            .filter(|info| info.provider == for_provider && name.starts_with(info.prefix))
            .max_by_key(|info| info.prefix.len())
    };
    provider.and_then(|p| best(Some(p))).or_else(|| best(None))
}

/// What `model` costs, if published.
pub fn price(model: &str) -> Option<Price> {
    lookup(model).and_then(|info| info.price)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_of_the_own_name() {
        let get = |m: &str| lookup(m).map(|i| i.prefix);
        assert_eq!(get("gpt-4o-mini-2024-07-18"), Some("gpt-4o-mini"));
        assert_eq!(get("openai/gpt-4o"), Some("gpt-4o"));
        assert_eq!(get("gpt-4-0613"), Some("gpt-4"));
        assert_eq!(get("claude-3.5"), Some("claude-3-5-sonnet"));
        assert_eq!(
            get("anthropic/claude-3-haiku-20240307"),
            Some("claude-3-haiku")
        );
        assert_eq!(get("ollama/llama3.1:latest"), Some("llama3.1"));
        assert_eq!(get("my-finetune"), None);
        assert_eq!(
            get("groq/llama-3.1-70b-versatile"),
            Some("llama-3.1-70b-versatile")
        );
        assert_eq!(
            get("together_ai/meta-llama/Llama-3.3-70B-Instruct-Turbo"),
            Some("llama-3.3")
        );
        assert_eq!(
            get("fireworks_ai/accounts/fireworks/models/llama-v3p1-70b-instruct"),
            Some("llama-v3p1")
        );
        assert_eq!(get("gemini/gemini-1.5-flash"), Some("gemini-1.5-flash"));
        assert_eq!(get("openrouter/google/gemini-2.5-pro"), Some("gemini-2.5"));
        assert_eq!(get("perplexity/sonar-pro"), Some("sonar-pro"));
        let cerebras = lookup("cerebras/llama-3.3-70b").unwrap();
        assert_eq!(
            (cerebras.provider, cerebras.context_window),
            (Some("cerebras"), 8_192)
        );
    }

    #[test]
    fn prices() {
        let p = price("gpt-4o").unwrap_or(Price {
            input: 0.0,
            output: 0.0,
        });
        assert!((p.cost(1_000_000, 100_000) - 3.5).abs() < 1e-9);
        assert_eq!(price("llama3"), None);
    }
}
