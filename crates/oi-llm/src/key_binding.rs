//! A key goes only to the endpoint it was configured for. A server binds its `--api_key` to
//! the base URL its own settings send requests to ([`bind_key`]); from then on a request whose
//! settings point elsewhere (a client switched the model to `ollama/x`, so requests go to
//! `127.0.0.1:11434`) goes without that key ([`key_for`]). Unbound keys (the CLI) go wherever
//! the settings point, as before. Keys from provider variables (`GROQ_API_KEY`, …) go only to
//! their provider's own address ([`env_key_allowed`], in `bound_key` below every provider).

use oi_core::LlmSettings;

pub use crate::bound_key::{env_key_allowed, key_for};
use crate::env::Env;
use crate::provider::{Wire, wire_for};

/// The base URL (no trailing `/`) that requests for `llm` go to, or `None` for the embedded
/// model and settings that cannot be resolved.
pub fn key_target(llm: &LlmSettings, env: &Env) -> Option<String> {
    match wire_for(llm).ok()? {
        Wire::Embedded => None,
        Wire::Anthropic => Some(crate::anthropic::endpoint::base_url(llm, env)),
        Wire::OpenAiCompatible => crate::endpoint::base_url(llm, env).ok(),
    }
}

/// What a key is bound to when the settings it came with send requests to no endpoint (the
/// embedded model, a provider whose base URL is not known yet): no base URL is ever this, so
/// the key goes nowhere until it is bound again (`--allow-network-credentials`).
pub const BOUND_TO_NO_ENDPOINT: &str = "oi:no-endpoint";

/// Binds `llm.api_key` (if any) to the endpoint `llm` sends requests to now. Fails closed:
/// settings that send requests nowhere (`--model local`, `azure/x` without a base) bind the
/// key to [`BOUND_TO_NO_ENDPOINT`], so a model moved later does not take it along.
pub fn bind_key(llm: &mut LlmSettings, env: &Env) {
    llm.api_key_for = llm
        .api_key
        .as_ref()
        .map(|_| key_target(llm, env).unwrap_or_else(|| BOUND_TO_NO_ENDPOINT.to_owned()));
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::bound_key::same_endpoint;

    /// A key given with settings that send requests nowhere is bound to nothing: moving the
    /// model later does not take it along (it was sent to 127.0.0.1:11434 in the review).
    #[test]
    fn a_key_given_with_no_endpoint_goes_nowhere() {
        let env = Env::empty();
        for model in ["local", "azure/dep"] {
            let mut llm = LlmSettings {
                model: model.to_owned(),
                api_key: Some("sk-BOUND".to_owned()),
                ..LlmSettings::default()
            };
            bind_key(&mut llm, &env);
            assert_eq!(
                llm.api_key_for.as_deref(),
                Some(BOUND_TO_NO_ENDPOINT),
                "{model}"
            );
            llm.model = "ollama/x".to_owned();
            let moved = resolve(&llm, &env).unwrap();
            assert_eq!(moved.api_key, None, "{model}");
        }
    }
    use crate::endpoint::resolve;

    fn server(model: &str, base: Option<&str>, env: &Env) -> LlmSettings {
        let mut llm = LlmSettings {
            model: model.to_owned(),
            api_base: base.map(str::to_owned),
            api_key: Some("sk-server".to_owned()),
            ..LlmSettings::default()
        };
        bind_key(&mut llm, env);
        llm
    }

    #[test]
    fn a_bound_key_goes_only_to_its_endpoint() {
        let env = Env::empty().with("OLLAMA_HOST", "127.0.0.1:11434");
        let mut llm = server("gpt-4o", None, &env);
        assert_eq!(
            llm.api_key_for.as_deref(),
            Some("https://api.openai.com/v1")
        );
        assert_eq!(
            resolve(&llm, &env).unwrap().api_key.as_deref(),
            Some("sk-server")
        );
        // A client points the model at Ollama: the request goes, without the key.
        llm.model = "ollama/x".to_owned();
        let moved = resolve(&llm, &env).unwrap();
        assert!(
            moved.url.starts_with("http://127.0.0.1:11434/"),
            "{}",
            moved.url
        );
        assert_eq!(moved.api_key, None);
        // To Anthropic's API: not sent there either (and Anthropic needs a key: refused).
        llm.model = "anthropic/claude-3-5-sonnet".to_owned();
        let anthropic = crate::anthropic::endpoint::resolve_anthropic(&llm, &env);
        assert!(anthropic.is_err(), "{anthropic:?}");
        // Another model on the same endpoint keeps it.
        llm.model = "openai/gpt-4o-mini".to_owned();
        assert_eq!(
            resolve(&llm, &env).unwrap().api_key.as_deref(),
            Some("sk-server")
        );
    }

    #[test]
    fn a_key_bound_to_a_base_follows_the_base_not_the_model_name() {
        let env = Env::empty();
        let mut llm = server("openai/local", Some("http://proxy:4000/v1/"), &env);
        assert_eq!(llm.api_key_for.as_deref(), Some("http://proxy:4000/v1"));
        llm.model = "ollama/llama3".to_owned();
        assert_eq!(
            resolve(&llm, &env).unwrap().api_key.as_deref(),
            Some("sk-server")
        );
        llm.api_base = Some("http://elsewhere:4000/v1".to_owned());
        assert_eq!(resolve(&llm, &env).unwrap().api_key, None);
        assert!(same_endpoint(
            "HTTP://Proxy:4000/v1/",
            "http://proxy:4000/v1"
        ));
        assert!(!same_endpoint(
            "http://proxy:4000/v1",
            "http://proxy:4001/v1"
        ));
    }

    #[test]
    fn unbound_keys_go_where_the_settings_point() {
        let llm = LlmSettings {
            model: "ollama/x".to_owned(),
            api_key: Some("k".to_owned()),
            ..LlmSettings::default()
        };
        assert_eq!(
            resolve(&llm, &Env::empty()).unwrap().api_key.as_deref(),
            Some("k")
        );
    }
}
