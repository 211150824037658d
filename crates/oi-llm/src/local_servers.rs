//! The local model servers `oi --local` can use when the embedded model is not built in: the
//! original's local-model menu (Ollama, LM Studio, llamafile / llama.cpp's server), without the
//! menu. Each is asked on its default port (or where its variable says) for its models, at
//! the same time and briefly.

use std::time::Duration;

use oi_core::ModelError;
use serde_json::Value;

use crate::env::Env;
use crate::local_model::not_built_error;
use crate::provider_table::{OLLAMA_DEFAULT, OLLAMA_HOST_VAR};

/// How long each server is given to answer.
const PROBE_TIMEOUT: Duration = Duration::from_millis(700);

/// The largest answer read from a server.
const PROBE_MAX_BYTES: usize = 1 << 20;

/// Models named in an offer, at most.
const MODELS_SHOWN: usize = 3;

/// A local server that answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundServer {
    /// What it is (`Ollama`, `LM Studio`, `llama.cpp server`).
    pub name: &'static str,
    /// Where it answered.
    pub url: String,
    /// The models it has.
    pub models: Vec<String>,
    /// The provider prefix that reaches it (`ollama`, `lm_studio`, `llamafile`).
    pub prefix: &'static str,
    /// The variable that moves it, when not on its default address.
    pub base_var: &'static str,
}

/// One kind of server: where to ask and how to read the answer.
struct Candidate {
    name: &'static str,
    prefix: &'static str,
    base_var: &'static str,
    default_base: &'static str,
    models_path: &'static str,
    ollama: bool,
}

const CANDIDATES: [Candidate; 3] = [
    Candidate {
        name: "Ollama",
        prefix: "ollama",
        base_var: OLLAMA_HOST_VAR,
        default_base: OLLAMA_DEFAULT,
        models_path: "/api/tags",
        ollama: true,
    },
    Candidate {
        name: "LM Studio",
        prefix: "lm_studio",
        base_var: "LM_STUDIO_API_BASE",
        default_base: "http://localhost:1234/v1",
        models_path: "/models",
        ollama: false,
    },
    Candidate {
        name: "llama.cpp server",
        prefix: "llamafile",
        base_var: "LLAMAFILE_API_BASE",
        default_base: "http://localhost:8080/v1",
        models_path: "/models",
        ollama: false,
    },
];

/// The model names in a `/api/tags` or `/v1/models` answer.
fn model_names(body: &Value, ollama: bool) -> Vec<String> {
    let (list, key) = if ollama {
        (&body["models"], "name")
    } else {
        (&body["data"], "id")
    };
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m[key].as_str())
        .map(|name| crate::ollama::model_name(name).to_owned())
        .collect()
}

async fn probe(client: &reqwest::Client, env: &Env, candidate: &Candidate) -> Option<FoundServer> {
    let base = env
        .get(candidate.base_var)
        .map(str::trim)
        .unwrap_or(candidate.default_base);
    let base = if base.contains("://") {
        base.trim_end_matches('/').to_owned()
    } else {
        format!("http://{}", base.trim_end_matches('/'))
    };
    let response = client
        .get(format!("{base}{}", candidate.models_path))
        .timeout(PROBE_TIMEOUT)
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let text = crate::transport::read_capped(response, PROBE_MAX_BYTES).await;
    let body: Value = serde_json::from_str(&text).ok()?;
    Some(FoundServer {
        name: candidate.name,
        url: base,
        models: model_names(&body, candidate.ollama),
        prefix: candidate.prefix,
        base_var: candidate.base_var,
    })
}

/// The local servers that answer, in the order Ollama, LM Studio, llama.cpp server.
pub async fn find(client: &reqwest::Client, env: &Env) -> Vec<FoundServer> {
    let [ollama, studio, llama] = &CANDIDATES;
    let (a, b, c) = futures::join!(
        probe(client, env, ollama),
        probe(client, env, studio),
        probe(client, env, llama)
    );
    [a, b, c].into_iter().flatten().collect()
}

/// What to type to use `server`.
pub fn command_for(server: &FoundServer) -> String {
    let model = server.models.first().map_or("MODEL", String::as_str);
    let default = CANDIDATES
        .iter()
        .any(|c| c.prefix == server.prefix && c.default_base.trim_end_matches('/') == server.url);
    if default {
        format!("oi --model {}/{model}", server.prefix)
    } else {
        format!(
            "{}={} oi --model {}/{model}",
            server.base_var, server.url, server.prefix
        )
    }
}

/// The lines offering the servers found (or saying none answered).
pub fn offer(found: &[FoundServer]) -> String {
    if found.is_empty() {
        return "No local model server answered on its default port (Ollama 11434, LM Studio 1234, llama.cpp server 8080): start one, or pass --api_base with its address.".to_owned();
    }
    let mut lines = vec!["These local model servers are running; use one with:".to_owned()];
    for server in found {
        let mut models: Vec<&str> = server
            .models
            .iter()
            .take(MODELS_SHOWN)
            .map(String::as_str)
            .collect();
        if server.models.len() > MODELS_SHOWN {
            models.push("…");
        }
        let models = if models.is_empty() {
            "no models yet".to_owned()
        } else {
            models.join(", ")
        };
        lines.push(format!(
            "  {} at {} ({models}): {}",
            server.name,
            server.url,
            command_for(server)
        ));
    }
    lines.join("\n")
}

/// The error of `oi --local` in a build without the embedded model: one line on how to get
/// it, then the local servers that can be used instead.
pub async fn not_built_with_offers(client: &reqwest::Client, env: &Env) -> ModelError {
    let found = find(client, env).await;
    let ModelError::Config(first) = not_built_error() else {
        return not_built_error();
    };
    ModelError::Config(format!("{first}\n{}", offer(&found)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_name_the_command() {
        let found = vec![
            FoundServer {
                name: "Ollama",
                url: "http://localhost:11434".into(),
                models: vec!["llama3.1".into(), "qwen2.5-coder:7b".into()],
                prefix: "ollama",
                base_var: OLLAMA_HOST_VAR,
            },
            FoundServer {
                name: "LM Studio",
                url: "http://127.0.0.1:9999/v1".into(),
                models: Vec::new(),
                prefix: "lm_studio",
                base_var: "LM_STUDIO_API_BASE",
            },
        ];
        let text = offer(&found);
        assert!(
            text.contains("Ollama at http://localhost:11434 (llama3.1, qwen2.5-coder:7b): oi --model ollama/llama3.1"),
            "{text}"
        );
        assert!(
            text.contains("LM_STUDIO_API_BASE=http://127.0.0.1:9999/v1 oi --model lm_studio/MODEL"),
            "{text}"
        );
        assert!(offer(&[]).contains("No local model server answered"));
    }
}
