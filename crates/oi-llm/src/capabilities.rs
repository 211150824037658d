//! What a model can do: tool calls, images, context window and reply length, from the model
//! table ([`crate::model_table`]), overridden by the settings (`supports_functions`,
//! `supports_vision`, `context_window`, `max_tokens`). Unknown models get safe defaults and say
//! so.

use oi_core::LlmSettings;

use crate::local_model::{DEFAULT_LOCAL_CONTEXT, DEFAULT_LOCAL_MAX_TOKENS, is_embedded};
use crate::model_table::lookup;

/// Context window assumed for unknown models (Open Interpreter's fallback).
pub const FALLBACK_CONTEXT_WINDOW: u64 = 8000;

/// Reply length assumed for unknown models.
pub const FALLBACK_MAX_OUTPUT: u64 = 1000;

fn is_local(model: &str) -> bool {
    crate::provider_table::is_local(model)
}

/// Whether `llm` uses the `execute` tool: `supports_functions` when set, else whether the
/// table says the model takes tools (`openai/local`, unknown and Ollama models: no).
pub fn uses_tool_calls(llm: &LlmSettings) -> bool {
    if let Some(explicit) = llm.supports_functions {
        return explicit;
    }
    !is_local(&llm.model) && lookup(&llm.model).is_some_and(|info| info.tools)
}

/// Whether images are sent to the model: `supports_vision` when set, else by the table.
pub fn supports_vision(llm: &LlmSettings) -> bool {
    if let Some(explicit) = llm.supports_vision {
        return explicit;
    }
    !is_local(&llm.model) && lookup(&llm.model).is_some_and(|info| info.vision)
}

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

/// The capabilities of `llm`'s model (settings win over the table).
pub fn capabilities(llm: &LlmSettings) -> Capabilities {
    let table = if is_embedded(llm) {
        Some((DEFAULT_LOCAL_CONTEXT, DEFAULT_LOCAL_MAX_TOKENS))
    } else {
        lookup(&llm.model).map(|info| (info.context_window, info.max_output))
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

    #[test]
    fn tool_calls_by_model_name() {
        for model in [
            "gpt-4o",
            "gpt-4o-mini",
            "gpt-4.1",
            "gpt-3.5-turbo",
            "o3-mini",
            "gpt-5",
            "openai/gpt-4o",
            "claude-3-5-sonnet-20240620",
        ] {
            assert!(uses_tool_calls(&llm(model)), "{model}");
        }
        for model in [
            "openai/local",
            "local",
            "ollama/llama3.1",
            "ollama/gpt-4o",
            "mixtral-8x7b",
            "i",
        ] {
            assert!(!uses_tool_calls(&llm(model)), "{model}");
        }
        let forced = LlmSettings {
            supports_functions: Some(true),
            ..llm("openai/local")
        };
        assert!(uses_tool_calls(&forced));
        let off = LlmSettings {
            supports_functions: Some(false),
            ..llm("gpt-4o")
        };
        assert!(!uses_tool_calls(&off));
    }

    #[test]
    fn vision_by_model_name() {
        assert!(supports_vision(&llm("gpt-4o")));
        assert!(!supports_vision(&llm("gpt-3.5-turbo")));
        assert!(!supports_vision(&llm("openai/local")));
        assert!(supports_vision(&LlmSettings {
            supports_vision: Some(true),
            ..llm("x")
        }));
    }
}
