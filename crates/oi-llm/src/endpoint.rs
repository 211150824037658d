//! Where a request goes: URL, model name and key, from the settings, the environment and the
//! provider table ([`crate::provider_table`]).

use oi_core::{LlmSettings, ModelError};

use crate::env::Env;
use crate::provider_table::{self, KeyHeader, Provider, TableWire};
pub use crate::provider_table::{OLLAMA_DEFAULT, OPENAI_BASE};

/// A resolved chat-completions endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The full URL, e.g. `https://api.openai.com/v1/chat/completions?api-version=…`.
    pub url: String,
    /// The model name sent in the body (`openai/local` → `local`, `ollama/llama3` → `llama3`).
    pub model: String,
    /// The key, if any.
    pub api_key: Option<String>,
    /// How the key is sent (`Authorization: Bearer` for all but Azure's `api-key`).
    pub key_header: KeyHeader,
}

/// The first of `names` that is set in `env`, trimmed.
fn first_var<'e>(env: &'e Env, names: &[&str]) -> Option<&'e str> {
    names.iter().find_map(|name| env.get(name)).map(str::trim)
}

/// A setting's value, trimmed, if it is set and not blank.
fn given(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// Ollama's OpenAI-compatible base: `OLLAMA_HOST` (with `http://` added when it has no
/// scheme) or `http://localhost:11434`, plus `/v1`.
fn ollama_base(env: &Env) -> String {
    let host = env
        .get(provider_table::OLLAMA_HOST_VAR)
        .map(str::trim)
        .unwrap_or(OLLAMA_DEFAULT);
    let host = if host.contains("://") {
        host.to_owned()
    } else {
        format!("http://{host}")
    };
    format!("{}/v1", host.trim_end_matches('/'))
}

/// OpenAI's row of the provider table.
fn openai() -> Result<&'static Provider, ModelError> {
    provider_table::find("openai")
        .ok_or_else(|| ModelError::Config("oi's provider table has no OpenAI entry".to_owned()))
}

/// Resolves where `llm` sends its requests.
///
/// A model named `PREFIX/NAME` with a prefix from [`provider_table::PROVIDERS`] goes to that
/// provider: base `llm.api_base`, else the provider's base variables (`GROQ_API_BASE`, …;
/// `OLLAMA_HOST` for Ollama), else its default; key `llm.api_key`, else its key variables
/// (`GROQ_API_KEY`, …), required when the default base is used. Any other model goes to
/// `llm.api_base`, `OPENAI_BASE_URL` or OpenAI, with `llm.api_key` or `OPENAI_API_KEY`
/// (required for OpenAI itself). An unknown prefix without `api_base` is an error listing the
/// known ones.
pub fn resolve(llm: &LlmSettings, env: &Env) -> Result<Endpoint, ModelError> {
    let Route {
        provider,
        model,
        base,
        default_base,
        explicit_base,
    } = route(llm, env)?;
    let base = base.as_str();
    // `llm.api_key` only where it was configured to go (crate::bound_key); a provider's key
    // variable only to that provider's own address (crate::bound_key::env_key_allowed).
    let explicit_key = crate::bound_key::key_for(llm, base);
    let api_key = explicit_key.or_else(|| {
        crate::bound_key::env_key_allowed(provider.prefix, base, explicit_base)
            .then(|| first_var(env, provider.key_vars).map(str::to_owned))
            .flatten()
    });
    let needs_key = provider.key_required && (default_base || is_openai(base));
    if api_key.is_none() && needs_key {
        return Err(provider_table::missing_key(provider));
    }
    let url = chat_url(provider, base, &model, llm, env);
    Ok(Endpoint {
        url,
        model,
        api_key,
        key_header: provider.key_header,
    })
}

/// Where a request for `llm` goes: the provider, the model name it is sent, the base URL
/// (no trailing `/`) and whether that is the provider's default.
struct Route {
    provider: &'static Provider,
    model: String,
    base: String,
    default_base: bool,
    /// Whether the base is `llm.api_base` (not the provider's own address).
    explicit_base: bool,
}

/// The base URL (no trailing `/`) that `llm`'s OpenAI-compatible requests go to.
pub(crate) fn base_url(llm: &LlmSettings, env: &Env) -> Result<String, ModelError> {
    route(llm, env).map(|route| route.base)
}

fn route(llm: &LlmSettings, env: &Env) -> Result<Route, ModelError> {
    let model_in = llm.model.trim();
    let explicit_base = given(llm.api_base.as_deref());
    let (provider, model) = match provider_table::split(model_in) {
        Some((provider, rest)) if provider.wire == TableWire::OpenAiCompatible => {
            (provider, provider_table::model_name(provider, rest))
        }
        // A server the user named gets the whole name (a LiteLLM proxy, for one).
        _ if explicit_base.is_some() => (openai()?, model_in.to_owned()),
        Some((provider, _)) => return Err(provider_table::unsupported_error(provider)),
        None => match provider_table::prefix_of(model_in) {
            Some(prefix) => return Err(provider_table::unknown_prefix(prefix)),
            None => (openai()?, model_in.to_owned()),
        },
    };
    if model.is_empty() {
        return Err(ModelError::Config(
            "No model is set: pass one with --model (for example --model gpt-4o).".to_owned(),
        ));
    }
    let (base, default_base) = base_for(provider, explicit_base, env)?;
    Ok(Route {
        provider,
        model,
        base: base.trim_end_matches('/').to_owned(),
        default_base,
        explicit_base: explicit_base.is_some(),
    })
}

/// The base URL for `provider`, and whether it is the provider's default one.
fn base_for(
    provider: &Provider,
    explicit: Option<&str>,
    env: &Env,
) -> Result<(String, bool), ModelError> {
    if let Some(base) = explicit {
        return Ok((base.to_owned(), false));
    }
    if provider.prefix.starts_with("ollama") {
        return Ok((ollama_base(env), false));
    }
    if let Some(base) = first_var(env, provider.base_vars) {
        return Ok((base.to_owned(), false));
    }
    match provider.base_url {
        Some(base) => Ok((base.to_owned(), true)),
        None => Err(ModelError::Config(format!(
            "{} has no default address: pass its URL with --api_base or set {}.",
            provider.name,
            provider.base_vars.join(" or ")
        ))),
    }
}

/// The chat-completions URL: `BASE/chat/completions`, with `?api-version=` when one is set;
/// for Azure, a resource URL without `/openai/` becomes its deployment's URL.
fn chat_url(provider: &Provider, base: &str, model: &str, llm: &LlmSettings, env: &Env) -> String {
    let azure = provider.prefix == "azure";
    let mut version = given(llm.api_version.as_deref());
    if azure && version.is_none() {
        version = Some(
            env.get("AZURE_API_VERSION")
                .map(str::trim)
                .unwrap_or(provider_table::AZURE_DEFAULT_API_VERSION),
        );
    }
    let mut url = if azure && !base.contains("/openai") {
        format!("{base}/openai/deployments/{model}/chat/completions")
    } else {
        format!("{base}/chat/completions")
    };
    if let Some(version) = version {
        let separator = if url.contains('?') { '&' } else { '?' };
        url = format!("{url}{separator}api-version={version}");
    }
    url
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
                key_header: KeyHeader::Bearer,
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
                api_key: None,
                key_header: KeyHeader::Bearer,
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
                api_key: None,
                key_header: KeyHeader::Bearer,
            }
        );
        let ok = resolve(
            &llm("ollama/qwen"),
            &Env::empty().with("OLLAMA_HOST", "10.0.0.2:11434"),
        )
        .unwrap();
        assert_eq!(ok.url, "http://10.0.0.2:11434/v1/chat/completions");
    }

    #[test]
    fn providers_by_prefix_with_their_bases_and_key_variables() {
        let env = Env::empty()
            .with("GROQ_API_KEY", "gsk")
            .with("OPENAI_API_KEY", "sk-not-for-groq");
        let ok = resolve(&llm("groq/llama-3.1-70b-versatile"), &env).unwrap();
        assert_eq!(
            ok,
            Endpoint {
                url: "https://api.groq.com/openai/v1/chat/completions".into(),
                model: "llama-3.1-70b-versatile".into(),
                api_key: Some("gsk".into()),
                key_header: KeyHeader::Bearer,
            }
        );
        let missing = resolve(&llm("gemini/gemini-1.5-flash"), &env).unwrap_err();
        assert!(missing.to_string().contains("GEMINI_API_KEY"), "{missing}");
        let gemini = resolve(
            &llm("gemini/gemini-1.5-flash"),
            &Env::empty().with("GOOGLE_API_KEY", "g"),
        )
        .unwrap();
        assert_eq!(
            gemini.url,
            "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"
        );
        let moved = resolve(
            &llm("groq/x"),
            &Env::empty().with("GROQ_API_BASE", "http://127.0.0.1:9/openai/v1"),
        )
        .unwrap();
        assert_eq!(moved.url, "http://127.0.0.1:9/openai/v1/chat/completions");
        assert_eq!(moved.api_key, None, "a base the user moved needs no key");
        let flag = LlmSettings {
            api_base: Some("http://10.0.0.1:8000/v1".into()),
            ..llm("mistral/mistral-large-latest")
        };
        let ok = resolve(&flag, &Env::empty()).unwrap();
        assert_eq!(
            (ok.url.as_str(), ok.model.as_str()),
            (
                "http://10.0.0.1:8000/v1/chat/completions",
                "mistral-large-latest"
            )
        );
    }

    #[test]
    fn local_servers_need_no_key_and_vllm_needs_a_base() {
        let ok = resolve(&llm("lm_studio/qwen2.5-7b-instruct"), &Env::empty()).unwrap();
        assert_eq!(ok.url, "http://localhost:1234/v1/chat/completions");
        assert_eq!(ok.api_key, None);
        let error = resolve(&llm("hosted_vllm/meta-llama/Llama-3.1-8B"), &Env::empty())
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("--api_base") && error.contains("HOSTED_VLLM_API_BASE"),
            "{error}"
        );
        let env = Env::empty().with("HOSTED_VLLM_API_BASE", "http://gpu:8000/v1");
        let ok = resolve(&llm("hosted_vllm/meta-llama/Llama-3.1-8B"), &env).unwrap();
        assert_eq!(
            (ok.url.as_str(), ok.model.as_str()),
            (
                "http://gpu:8000/v1/chat/completions",
                "meta-llama/Llama-3.1-8B"
            )
        );
    }

    #[test]
    fn azure_deployments_versions_and_the_api_key_header() {
        let env = Env::empty()
            .with("AZURE_API_KEY", "az")
            .with("AZURE_API_BASE", "https://r.openai.azure.com/");
        let ok = resolve(&llm("azure/my-gpt4o"), &env).unwrap();
        assert_eq!(
            ok.url,
            "https://r.openai.azure.com/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21"
        );
        assert_eq!(
            (ok.api_key.as_deref(), ok.key_header),
            (Some("az"), KeyHeader::ApiKey)
        );
        let full = LlmSettings {
            api_base: Some("https://r.openai.azure.com/openai/deployments/d".into()),
            api_version: Some("2024-02-01".into()),
            ..llm("azure/d")
        };
        assert_eq!(
            resolve(&full, &env).unwrap().url,
            "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-02-01"
        );
    }

    #[test]
    fn unknown_and_unsupported_prefixes() {
        let error = resolve(&llm("cohere2/command"), &Env::empty()).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("groq") && text.contains("--api_base"),
            "{text}"
        );
        let bedrock = resolve(&llm("bedrock/anthropic.claude-v2"), &Env::empty()).unwrap_err();
        assert!(bedrock.to_string().contains("not supported"), "{bedrock}");
        let proxied = LlmSettings {
            api_base: Some("http://localhost:4000".into()),
            ..llm("bedrock/anthropic.claude-v2")
        };
        let ok = resolve(&proxied, &Env::empty()).unwrap();
        assert_eq!(
            ok.model, "bedrock/anthropic.claude-v2",
            "a proxy gets the whole name"
        );
    }
}
