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
