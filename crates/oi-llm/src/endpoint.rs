//! Where a request goes: URL, model name and key, from the settings and the environment.

use oi_core::{LlmSettings, ModelError};

use crate::env::Env;

/// OpenAI's API.
pub const OPENAI_BASE: &str = "https://api.openai.com/v1";

/// Ollama's default address.
pub const OLLAMA_DEFAULT: &str = "http://localhost:11434";

/// A resolved chat-completions endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The full URL, e.g. `https://api.openai.com/v1/chat/completions?api-version=…`.
    pub url: String,
    /// The model name sent in the body (`openai/local` → `local`, `ollama/llama3` → `llama3`).
    pub model: String,
    /// The bearer key, if any.
    pub api_key: Option<String>,
}

/// Resolves where `llm` sends its requests.
///
/// Base, first found: `llm.api_base`; for Ollama models `OLLAMA_HOST` or
/// `http://localhost:11434`, plus `/v1`; `OPENAI_BASE_URL`; OpenAI. Key, first found:
/// `llm.api_key`; `OPENAI_API_KEY` (not for Ollama). OpenAI itself without a key is a
/// [`ModelError::Config`].
pub fn resolve(llm: &LlmSettings, env: &Env) -> Result<Endpoint, ModelError> {
    let model_in = llm.model.trim();
    let explicit_base = llm
        .api_base
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty());
    let explicit_key = llm
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned);
    let ollama = model_in
        .strip_prefix("ollama/")
        .or_else(|| model_in.strip_prefix("ollama_chat/"));
    let (base, model, api_key) = if let Some(name) = ollama {
        let base = match explicit_base {
            Some(base) => base.to_owned(),
            None => {
                let host = env.get("OLLAMA_HOST").unwrap_or(OLLAMA_DEFAULT);
                let host = if host.contains("://") {
                    host.to_owned()
                } else {
                    format!("http://{host}")
                };
                format!("{}/v1", host.trim_end_matches('/'))
            }
        };
        (
            base,
            crate::ollama::model_name(name).to_owned(),
            explicit_key,
        )
    } else {
        let base = explicit_base
            .or_else(|| env.get("OPENAI_BASE_URL"))
            .unwrap_or(OPENAI_BASE)
            .to_owned();
        let model = model_in
            .strip_prefix("openai/")
            .unwrap_or(model_in)
            .to_owned();
        let key = explicit_key.or_else(|| env.get("OPENAI_API_KEY").map(|k| k.trim().to_owned()));
        (base, model, key)
    };
    if model.is_empty() {
        return Err(ModelError::Config(
            "No model is set: pass one with --model (for example --model gpt-4o).".to_owned(),
        ));
    }
    let base = base.trim_end_matches('/');
    if api_key.is_none() && is_openai(base) {
        return Err(ModelError::Config(
            "No OpenAI API key is set: pass one with --api_key or set the OPENAI_API_KEY environment variable."
                .to_owned(),
        ));
    }
    let mut url = format!("{base}/chat/completions");
    if let Some(version) = llm
        .api_version
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        let separator = if url.contains('?') { '&' } else { '?' };
        url = format!("{url}{separator}api-version={version}");
    }
    Ok(Endpoint {
        url,
        model,
        api_key,
    })
}

/// Whether `base` is OpenAI's own API.
fn is_openai(base: &str) -> bool {
    let host = base.split("://").nth(1).unwrap_or(base);
    let host = host.split(['/', ':']).next().unwrap_or(host);
    host.eq_ignore_ascii_case("api.openai.com")
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
    fn openai_needs_a_key() {
        let err = resolve(&llm("gpt-4o"), &Env::empty());
        assert!(
            matches!(&err, Err(ModelError::Config(m)) if m.contains("--api_key") && m.contains("OPENAI_API_KEY"))
        );
        let ok = resolve(
            &llm("gpt-4o"),
            &Env::empty().with("OPENAI_API_KEY", "sk-env"),
        )
        .unwrap();
        assert_eq!(
            ok,
            Endpoint {
                url: "https://api.openai.com/v1/chat/completions".into(),
                model: "gpt-4o".into(),
                api_key: Some("sk-env".into()),
            }
        );
        let explicit = LlmSettings {
            api_key: Some("sk-set".into()),
            ..llm("gpt-4o")
        };
        let ok = resolve(&explicit, &Env::empty().with("OPENAI_API_KEY", "sk-env")).unwrap();
        assert_eq!(ok.api_key.as_deref(), Some("sk-set"));
    }

    #[test]
    fn bases_prefixes_and_versions() {
        let local = LlmSettings {
            api_base: Some("http://localhost:1234/v1/".into()),
            ..llm("openai/local")
        };
        let ok = resolve(&local, &Env::empty()).unwrap();
        assert_eq!(
            ok,
            Endpoint {
                url: "http://localhost:1234/v1/chat/completions".into(),
                model: "local".into(),
                api_key: None
            }
        );

        let env = Env::empty().with("OPENAI_BASE_URL", "http://proxy:8080/v1");
        assert_eq!(
            resolve(&llm("gpt-4o"), &env).unwrap().url,
            "http://proxy:8080/v1/chat/completions"
        );

        let azure = LlmSettings {
            api_base: Some("https://x.openai.azure.com/openai/deployments/d".into()),
            api_version: Some("2024-02-01".into()),
            ..llm("gpt-4o")
        };
        assert_eq!(
            resolve(&azure, &Env::empty()).unwrap().url,
            "https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-02-01"
        );
    }

    #[test]
    fn ollama_models() {
        let ok = resolve(
            &llm("ollama/llama3.1"),
            &Env::empty().with("OPENAI_API_KEY", "sk"),
        )
        .unwrap();
        assert_eq!(
            ok,
            Endpoint {
                url: "http://localhost:11434/v1/chat/completions".into(),
                model: "llama3.1".into(),
                api_key: None
            }
        );
        let ok = resolve(
            &llm("ollama/qwen"),
            &Env::empty().with("OLLAMA_HOST", "10.0.0.2:11434"),
        )
        .unwrap();
        assert_eq!(ok.url, "http://10.0.0.2:11434/v1/chat/completions");
    }
}
