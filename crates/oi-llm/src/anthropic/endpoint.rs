//! Where a Messages request goes, the model name sent, and the key.

use oi_core::{LlmSettings, ModelError};

use crate::env::Env;

/// Anthropic's API.
pub const ANTHROPIC_BASE: &str = "https://api.anthropic.com";

/// The API version header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A resolved Messages endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnthropicEndpoint {
    /// The full URL, e.g. `https://api.anthropic.com/v1/messages`.
    pub url: String,
    /// The model name sent (`anthropic/` removed, aliases resolved).
    pub model: String,
    /// The `x-api-key`, if any.
    pub api_key: Option<String>,
}

/// The model name as Anthropic knows it: `anthropic/` removed, aliases resolved.
pub fn anthropic_model_name(model: &str) -> String {
    let name = model.trim();
    let name = name.strip_prefix("anthropic/").unwrap_or(name);
    crate::model_table::resolve_alias(name).to_owned()
}

fn explicit_base(llm: &LlmSettings) -> Option<&str> {
    llm.api_base
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty())
}

/// The base URL (no trailing `/`) that `llm`'s Messages requests go to: `llm.api_base`,
/// `ANTHROPIC_BASE_URL` or Anthropic's.
pub(crate) fn base_url(llm: &LlmSettings, env: &Env) -> String {
    explicit_base(llm)
        .or_else(|| env.get("ANTHROPIC_BASE_URL"))
        .unwrap_or(ANTHROPIC_BASE)
        .trim_end_matches('/')
        .to_owned()
}

/// Resolves where `llm` sends Messages requests: base `llm.api_base`, `ANTHROPIC_BASE_URL` or
/// Anthropic's; key `llm.api_key` or `ANTHROPIC_API_KEY`, required for Anthropic's own API.
pub fn resolve_anthropic(llm: &LlmSettings, env: &Env) -> Result<AnthropicEndpoint, ModelError> {
    let model = anthropic_model_name(&llm.model);
    if model.is_empty() {
        return Err(ModelError::Config(
            "No model is set: pass one with --model (for example --model claude-3-5-sonnet)."
                .to_owned(),
        ));
    }
    let explicit_base = explicit_base(llm);
    let base = base_url(llm, env);
    let base = base.as_str();
    // `llm.api_key` only where it was configured to go (crate::bound_key).
    let env_key_allowed =
        crate::bound_key::env_key_allowed("anthropic", base, explicit_base.is_some());
    let api_key = crate::bound_key::key_for(llm, base)
        .or_else(|| {
            env.get("ANTHROPIC_API_KEY")
                .filter(|_| env_key_allowed)
                .map(str::trim)
                .map(str::to_owned)
        })
        .filter(|k| !k.is_empty());
    if api_key.is_none() && explicit_base.is_none() {
        return Err(ModelError::Config(
            "No Anthropic API key is set: pass one with --api_key or set the ANTHROPIC_API_KEY environment variable."
                .to_owned(),
        ));
    }
    let url = if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    };
    Ok(AnthropicEndpoint {
        url,
        model,
        api_key,
    })
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
    fn aliases_prefix_and_keys() {
        for alias in [
            "claude-3.5",
            "claude-3-5",
            "anthropic/claude-3.5-sonnet",
            "claude-3-5-sonnet",
        ] {
            assert_eq!(anthropic_model_name(alias), "claude-3-5-sonnet-20240620");
        }
        assert_eq!(
            anthropic_model_name("anthropic/claude-3-opus-20240229"),
            "claude-3-opus-20240229"
        );
        let error = resolve_anthropic(&llm("claude-3.5"), &Env::empty()).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("--api_key") && text.contains("ANTHROPIC_API_KEY"),
            "{text}"
        );
        let ok = resolve_anthropic(
            &llm("claude-3.5"),
            &Env::empty().with("ANTHROPIC_API_KEY", "k"),
        )
        .unwrap();
        assert_eq!(ok.url, "https://api.anthropic.com/v1/messages");
        assert_eq!(ok.api_key.as_deref(), Some("k"));
        let based = LlmSettings {
            api_base: Some("http://127.0.0.1:9/v1/".into()),
            ..llm("anthropic/x")
        };
        assert_eq!(
            resolve_anthropic(&based, &Env::empty()).unwrap().url,
            "http://127.0.0.1:9/v1/messages"
        );
    }
}
