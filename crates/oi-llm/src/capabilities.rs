//! What a model can do: tool calls, images, context window and reply length, from a table of
//! well-known models, overridden by the settings (`supports_functions`, `supports_vision`,
//! `context_window`, `max_tokens`). Unknown models get safe defaults and say so.

use oi_core::LlmSettings;

use crate::anthropic::anthropic_model_name;
use crate::local_model::{DEFAULT_LOCAL_CONTEXT, DEFAULT_LOCAL_MAX_TOKENS, is_embedded};
use crate::models::{supports_vision, uses_tool_calls};

/// Context window assumed for unknown models (Open Interpreter's fallback).
pub const FALLBACK_CONTEXT_WINDOW: u64 = 8000;

/// Reply length assumed for unknown models.
pub const FALLBACK_MAX_OUTPUT: u64 = 1000;

/// `(prefix of the model's own name, context window, max output tokens)`; the longest
/// matching prefix wins.
const TABLE: [(&str, u64, u64); 30] = [
    ("gpt-4o", 128_000, 16_384),
    ("chatgpt-4o", 128_000, 16_384),
    ("gpt-4.1", 1_047_576, 32_768),
    ("gpt-4-turbo", 128_000, 4_096),
    ("gpt-4-vision", 128_000, 4_096),
    ("gpt-4-32k", 32_768, 4_096),
    ("gpt-4", 8_192, 4_096),
    ("gpt-3.5-turbo", 16_385, 4_096),
    ("gpt-5", 400_000, 128_000),
    ("o1", 200_000, 100_000),
    ("o1-mini", 128_000, 65_536),
    ("o3", 200_000, 100_000),
    ("o4-mini", 200_000, 100_000),
    ("claude-3-5-sonnet", 200_000, 8_192),
    ("claude-3-5-haiku", 200_000, 8_192),
    ("claude-3-7-sonnet", 200_000, 64_000),
    ("claude-3", 200_000, 4_096),
    ("claude-sonnet-4", 200_000, 64_000),
    ("claude-opus-4", 200_000, 32_000),
    ("gemini", 1_048_576, 8_192),
    ("deepseek-chat", 64_000, 8_192),
    ("deepseek-coder", 128_000, 8_192),
    ("mistral-large", 128_000, 4_096),
    ("codestral", 32_000, 4_096),
    ("llama3.1", 128_000, 4_096),
    ("llama3.2", 128_000, 4_096),
    ("llama3.3", 128_000, 4_096),
    ("llama3", 8_192, 2_048),
    ("qwen2.5-coder", 32_768, 4_096),
    ("phi3", 4_096, 1_024),
];

/// What the model can do, after settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// Code comes as `execute` tool calls (else fenced blocks).
    pub functions: bool,
    /// Images are sent.
    pub vision: bool,
    /// Context window in tokens.
    pub context_window: u64,
    /// Longest reply in tokens.
    pub max_output: u64,
    /// Whether the window and reply length come from the table or the settings (false: the
    /// fallbacks were used).
    pub known: bool,
}

/// The model's own name: after the last `/`, lower-case, without an Ollama `:tag`.
fn own_name(model: &str) -> String {
    let name = model.rsplit('/').next().unwrap_or(model).trim();
    name.split(':').next().unwrap_or(name).to_lowercase()
}

fn lookup(model: &str) -> Option<(u64, u64)> {
    let name = own_name(&anthropic_model_name(model));
    TABLE
        .iter()
        .filter(|(prefix, _, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _, _)| prefix.len())
        .map(|(_, window, output)| (*window, *output))
}

/// The capabilities of `llm`'s model (settings win over the table).
pub fn capabilities(llm: &LlmSettings) -> Capabilities {
    let table = if is_embedded(llm) {
        Some((DEFAULT_LOCAL_CONTEXT, DEFAULT_LOCAL_MAX_TOKENS))
    } else {
        lookup(&llm.model)
    };
    let (window, output) = table.unwrap_or((FALLBACK_CONTEXT_WINDOW, FALLBACK_MAX_OUTPUT));
    let context_window = llm.context_window.filter(|w| *w > 0).unwrap_or(window);
    let max_output = llm.max_tokens.filter(|m| *m > 0).unwrap_or(output);
    Capabilities {
        functions: uses_tool_calls(llm) && !is_embedded(llm),
        vision: supports_vision(llm) && !(is_embedded(llm) && llm.supports_vision.is_none()),
        context_window,
        max_output,
        known: table.is_some() || llm.context_window.is_some(),
    }
}

/// A few lines for `%info`-style output.
pub fn describe(llm: &LlmSettings) -> String {
    let caps = capabilities(llm);
    let yes_no = |b: bool| if b { "yes" } else { "no" };
    let mut text = format!(
        "Model: {}\nTool calls: {}\nVision: {}\nContext window: {} tokens\nMax output: {} tokens",
        llm.model,
        yes_no(caps.functions),
        yes_no(caps.vision),
        caps.context_window,
        caps.max_output
    );
    if !caps.known {
        text.push_str(&format!(
            "\nNote: `{}` is not a model oi knows; it assumes a {FALLBACK_CONTEXT_WINDOW}-token context window, fenced code blocks and no images. Set --context_window, --max_tokens, --llm_supports_functions or --llm_supports_vision if the model can do more.",
            llm.model
        ));
    }
    text
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
    fn table_longest_prefix_and_overrides() {
        let caps = capabilities(&llm("gpt-4o-mini"));
        assert_eq!((caps.context_window, caps.max_output), (128_000, 16_384));
        assert!(caps.functions && caps.vision && caps.known);
        assert_eq!(capabilities(&llm("gpt-4")).context_window, 8_192);
        assert_eq!(capabilities(&llm("o1-mini")).max_output, 65_536);
        let claude = capabilities(&llm("anthropic/claude-3-5-sonnet-20240620"));
        assert_eq!((claude.context_window, claude.max_output), (200_000, 8_192));
        assert_eq!(capabilities(&llm("claude-3.5")).max_output, 8_192);
        assert_eq!(
            capabilities(&llm("ollama/llama3.1:latest")).context_window,
            128_000
        );
        let set = LlmSettings {
            context_window: Some(3000),
            max_tokens: Some(300),
            supports_vision: Some(false),
            ..llm("gpt-4o")
        };
        let caps = capabilities(&set);
        assert_eq!(
            (caps.context_window, caps.max_output, caps.vision),
            (3000, 300, false)
        );
    }

    #[test]
    fn unknown_models_fall_back_and_say_so() {
        let caps = capabilities(&llm("openai/my-finetune"));
        assert_eq!(
            (
                caps.context_window,
                caps.max_output,
                caps.functions,
                caps.vision,
                caps.known
            ),
            (8000, 1000, false, false, false)
        );
        assert!(describe(&llm("openai/my-finetune")).contains("is not a model oi knows"));
        assert!(!describe(&llm("gpt-4o")).contains("Note:"));
        let local = capabilities(&llm("local"));
        assert!(!local.functions && !local.vision && local.known);
    }
}
