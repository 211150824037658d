//! What a model name tells: its family, tool-calling and vision support.

use oi_core::LlmSettings;

/// Prefixes of models known to take tools (matched against the last `/`-segment, lower-case).
const FUNCTION_CALLING: [&str; 14] = [
    "gpt-4",
    "gpt-3.5-turbo",
    "gpt-5",
    "o1",
    "o3",
    "o4",
    "chatgpt-4o",
    "claude",
    "gemini",
    "mistral-large",
    "mistral-small",
    "command-r",
    "grok",
    "deepseek-chat",
];

/// Prefixes of models known to take images.
const VISION: [&str; 9] = [
    "gpt-4o",
    "gpt-4.1",
    "gpt-4-turbo",
    "gpt-4-vision",
    "gpt-5",
    "o1",
    "o3",
    "o4",
    "claude-3",
];

/// Provider prefixes whose models are local and, by default, get fenced-code (text) mode.
const LOCAL_PREFIXES: [&str; 2] = ["ollama", "ollama_chat"];

/// The model's own name: the last `/`-separated segment, lower-case.
fn base_name(model: &str) -> String {
    model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .trim()
        .to_lowercase()
}

fn is_local(model: &str) -> bool {
    model
        .split_once('/')
        .is_some_and(|(prefix, _)| LOCAL_PREFIXES.contains(&prefix))
}

/// Whether `llm` uses the `execute` tool: `supports_functions` when set, else whether the
/// model is a well-known function-calling model (`openai/local`, Ollama models: no).
pub fn uses_tool_calls(llm: &LlmSettings) -> bool {
    if let Some(explicit) = llm.supports_functions {
        return explicit;
    }
    if is_local(&llm.model) {
        return false;
    }
    let name = base_name(&llm.model);
    FUNCTION_CALLING
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// Whether images are sent to the model: `supports_vision` when set, else by model name.
pub fn supports_vision(llm: &LlmSettings) -> bool {
    if let Some(explicit) = llm.supports_vision {
        return explicit;
    }
    if is_local(&llm.model) {
        return false;
    }
    let name = base_name(&llm.model);
    VISION.iter().any(|prefix| name.starts_with(prefix))
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
