//! Which key a request carries: `llm.api_key` goes only to the endpoint it was bound to
//! ([`crate::key_binding`] binds it at start). Below every provider, so the endpoints that
//! ask it name nothing above them.

use oi_core::LlmSettings;

/// `llm.api_key` (trimmed, not blank) for a request that goes to `base`: `None` when the key
/// is bound to another endpoint.
pub fn key_for(llm: &LlmSettings, base: &str) -> Option<String> {
    let key = llm
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())?;
    match &llm.api_key_for {
        Some(bound) if !same_endpoint(bound, base) => None,
        _ => Some(key.to_owned()),
    }
}

/// Whether the key variables of the provider `prefix` (`GROQ_API_KEY`, `ANTHROPIC_API_KEY`, …)
/// may go with a request to `base` when that is `llm.api_base` (`explicit_base`) rather than
/// the provider's own address (its default or its `*_API_BASE` variable). Only OpenAI's may go
/// anywhere (a LiteLLM proxy or a local server given with `--api_base` gets `OPENAI_API_KEY`,
/// as in the original), and Azure's to Azure's hosts (Azure has no default address): in the
/// stop-32 review a client of a server started with `--api_base` switched the model to
/// `groq/x`, `mistral/x` and `anthropic/x`, and the server sent those variables' keys to that
/// base. Pass such a key with `--api_key` to send it to another address.
pub fn env_key_allowed(prefix: &str, base: &str, explicit_base: bool) -> bool {
    if !explicit_base || prefix == "openai" {
        return true;
    }
    if prefix == "azure" {
        let host = base
            .split_once("://")
            .map_or(base, |(_, rest)| rest)
            .split(['/', ':', '?', '#'])
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        return [".azure.com", ".azure-api.net", ".azure.us", ".azure.cn"]
            .iter()
            .any(|suffix| host.ends_with(suffix));
    }
    false
}

/// Whether two base URLs name the same endpoint (trailing `/` and the case of the scheme and
/// host aside).
pub(crate) fn same_endpoint(a: &str, b: &str) -> bool {
    let canonical = |url: &str| {
        let url = url.trim().trim_end_matches('/');
        match url.split_once("://") {
            Some((scheme, rest)) => {
                let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
                format!(
                    "{}://{}/{path}",
                    scheme.to_ascii_lowercase(),
                    host.to_ascii_lowercase()
                )
            }
            None => url.to_owned(),
        }
    };
    canonical(a) == canonical(b)
}
