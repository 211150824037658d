//! Ollama's own API beside its OpenAI-compatible `/v1`: the models it has (`/api/tags`) and a
//! model's context length (`/api/show`), as Open Interpreter's `Llm.load` reads them (spec
//! e.7). Both are best effort: an unreachable Ollama gives `None`/an error, never a hang
//! (3-second limit).

use std::time::Duration;

use oi_core::ModelError;
use serde_json::{Value, json};

/// How long a look-up may take.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(3);

/// The largest answer read from a look-up (a real one is a few kilobytes; a longer one is cut,
/// so it does not parse and the look-up gives up).
const LOOKUP_MAX_BYTES: usize = 1 << 20;

/// Ollama's address from a chat base URL (`http://host:11434/v1` → `http://host:11434`).
pub fn host_of(chat_base: &str) -> String {
    let base = chat_base.trim_end_matches('/');
    base.strip_suffix("/v1").unwrap_or(base).to_owned()
}

/// The model name Ollama knows: `:latest` is implied, so it is left out.
pub fn model_name(name: &str) -> &str {
    name.strip_suffix(":latest").unwrap_or(name)
}

/// Ollama's "model not found" answer said as what to do: pull the model.
pub fn not_pulled(error: ModelError, model: &str) -> ModelError {
    match &error {
        ModelError::Status { status: 404, body } if body.contains("not found") => {
            ModelError::Config(format!(
                "Ollama does not have the model `{model}`: run `ollama pull {model}` (oi offers to pull it when started from the terminal)."
            ))
        }
        _ => error,
    }
}

/// The context length of `model` from `POST {host}/api/show` (`model_info.*.context_length`).
pub async fn context_length(client: &reqwest::Client, host: &str, model: &str) -> Option<u64> {
    let url = format!("{}/api/show", host.trim_end_matches('/'));
    let request = client
        .post(url)
        .json(&json!({ "model": model, "name": model }))
        .timeout(LOOKUP_TIMEOUT);
    let response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let text = crate::transport::read_capped(response, LOOKUP_MAX_BYTES).await;
    let body: Value = serde_json::from_str(&text).ok()?;
    body.get("model_info")?
        .as_object()?
        .iter()
        .find(|(key, _)| key.ends_with(".context_length"))
        .and_then(|(_, value)| value.as_u64())
}

/// The models Ollama has (`GET {host}/api/tags`), without `:latest`.
pub async fn list_models(client: &reqwest::Client, host: &str) -> Result<Vec<String>, ModelError> {
    let url = format!("{}/api/tags", host.trim_end_matches('/'));
    let unreachable =
        |reason: String| crate::unreachable::said(&url, reason, oi_core::UnreachableKind::Other);
    let response = client
        .get(&url)
        .timeout(LOOKUP_TIMEOUT)
        .send()
        .await
        .map_err(|e| crate::unreachable::from_reqwest(&url, &e))?;
    let text = crate::transport::read_capped(response, LOOKUP_MAX_BYTES).await;
    let body: Value = serde_json::from_str(&text).map_err(|e| {
        unreachable(format!(
            "the answer is not the JSON Ollama sends ({e}; at most {LOOKUP_MAX_BYTES} bytes are read)"
        ))
    })?;
    Ok(body["models"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["name"].as_str())
        .map(|name| model_name(name).to_owned())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_names() {
        assert_eq!(
            host_of("http://localhost:11434/v1/"),
            "http://localhost:11434"
        );
        assert_eq!(host_of("http://h:1"), "http://h:1");
        assert_eq!(model_name("llama3.1:latest"), "llama3.1");
        assert_eq!(model_name("llama3.1:8b"), "llama3.1:8b");
    }

    #[test]
    fn a_model_not_found_is_said_as_a_pull() {
        let error = ModelError::Status {
            status: 404,
            body: r#"{"error":{"message":"model \"llama9\" not found, try pulling it first"}}"#
                .into(),
        };
        let text = not_pulled(error, "llama9").to_string();
        assert!(text.contains("ollama pull llama9"), "{text}");
        let other = ModelError::Status {
            status: 500,
            body: "boom".into(),
        };
        assert_eq!(not_pulled(other.clone(), "x"), other);
    }
}
