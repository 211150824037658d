//! Pulling an Ollama model that is not there yet, as Open Interpreter offered (spec e.7):
//! `/api/tags` says which models Ollama has; a missing one is pulled with `/api/pull` once the
//! user agrees (or at once with `-y`), its progress shown line by line.

use std::io::Write;
use std::time::Duration;

use futures::StreamExt;
use oi_core::{LlmSettings, ModelError};
use serde_json::{Value, json};

use crate::endpoint::resolve;
use crate::env::Env;
use crate::ollama;
use crate::provider_table;

/// The longest time a pull may go without a byte from Ollama.
const PULL_IDLE: Duration = Duration::from_secs(120);

/// The longest progress line read (a real one is about 150 bytes).
const MAX_LINE: usize = 64 << 10;

/// An Ollama model the settings name that Ollama does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingModel {
    /// Ollama's address (`http://localhost:11434`).
    pub host: String,
    /// The model's name as Ollama knows it (`llama3.1`, `qwen2.5-coder:7b`).
    pub name: String,
}

/// One progress line of a pull.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullProgress {
    /// What Ollama is doing (`pulling manifest`, `pulling 6a0746a1ec1a`, `success`).
    pub status: String,
    /// Bytes done of the current layer.
    pub completed: Option<u64>,
    /// Bytes of the current layer.
    pub total: Option<u64>,
}

/// Whether `llm` names an Ollama model that Ollama does not have. `None` when it is not an
/// Ollama model, when Ollama has it, or when Ollama cannot be asked (the request then says
/// why).
pub async fn missing_ollama_model(
    client: &reqwest::Client,
    llm: &LlmSettings,
    env: &Env,
) -> Option<MissingModel> {
    let (provider, _) = provider_table::split(&llm.model)?;
    if !provider.prefix.starts_with("ollama") {
        return None;
    }
    let endpoint = resolve(llm, env).ok()?;
    let base = endpoint.url.trim_end_matches("/chat/completions");
    let host = ollama::host_of(base.split('?').next().unwrap_or(base));
    let have = ollama::list_models(client, &host).await.ok()?;
    let wanted = ollama::model_name(&endpoint.model);
    let present = have.iter().any(|name| ollama::model_name(name) == wanted);
    (!present).then(|| MissingModel {
        host,
        name: wanted.to_owned(),
    })
}

/// Pulls `model` from `host`, calling `on_progress` for each progress line; an error line from
/// Ollama, a broken stream or a stream that ends without `success` is an error.
pub async fn pull(
    client: &reqwest::Client,
    host: &str,
    model: &str,
    mut on_progress: impl FnMut(&PullProgress),
) -> Result<(), ModelError> {
    let url = format!("{}/api/pull", host.trim_end_matches('/'));
    let response = client
        .post(&url)
        .json(&json!({ "model": model, "name": model, "stream": true }))
        .send()
        .await
        .map_err(|e| crate::unreachable::from_reqwest(&url, &e))?;
    if !response.status().is_success() {
        let status = response.status().as_u16();
        let body = crate::transport::read_capped(response, MAX_LINE).await;
        return Err(ModelError::Status {
            status,
            body: crate::text::printable(&crate::text::shorten(&body, 300)),
        });
    }
    let mut bytes = response.bytes_stream();
    let mut line: Vec<u8> = Vec::new();
    loop {
        let next = tokio::time::timeout(PULL_IDLE, bytes.next())
            .await
            .map_err(|_| {
                let reason = format!(
                    "Ollama sent nothing for {} s while pulling",
                    PULL_IDLE.as_secs()
                );
                crate::unreachable::said(&url, reason, oi_core::UnreachableKind::TimedOut)
            })?;
        let Some(chunk) = next else {
            return Err(ModelError::Stream(format!(
                "Ollama's pull of `{model}` ended before it said success"
            )));
        };
        let chunk = chunk.map_err(|e| crate::unreachable::from_reqwest(&url, &e))?;
        for byte in chunk {
            if byte != b'\n' {
                if line.len() >= MAX_LINE {
                    return Err(ModelError::Stream(format!(
                        "a progress line from Ollama is longer than {MAX_LINE} bytes"
                    )));
                }
                line.push(byte);
                continue;
            }
            if let Some(done) = progress_line(&line, model, &mut on_progress)? {
                return Ok(done);
            }
            line.clear();
        }
    }
}

/// Handles one NDJSON line: `Some(())` once Ollama says success.
fn progress_line(
    line: &[u8],
    model: &str,
    on_progress: &mut impl FnMut(&PullProgress),
) -> Result<Option<()>, ModelError> {
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return Ok(None);
    };
    if let Some(error) = value.get("error") {
        let text = error
            .as_str()
            .map_or_else(|| error.to_string(), str::to_owned);
        return Err(ModelError::Config(format!(
            "Ollama could not pull `{model}`: {}. Check the name on ollama.com/library.",
            crate::text::printable(&crate::text::shorten(&text, 300))
        )));
    }
    let progress = PullProgress {
        status: value["status"].as_str().unwrap_or_default().to_owned(),
        completed: value["completed"].as_u64(),
        total: value["total"].as_u64(),
    };
    on_progress(&progress);
    Ok((progress.status == "success").then_some(()))
}

/// Writes pull progress for a person: a line when the step changes, and one per tenth of a
/// layer.
#[derive(Debug, Default)]
pub struct ProgressPrinter {
    status: String,
    tenth: Option<u64>,
}

impl ProgressPrinter {
    /// The line to show for `progress`, if anything changed enough.
    pub fn line(&mut self, progress: &PullProgress) -> Option<String> {
        let tenth = match (progress.completed, progress.total) {
            (Some(done), Some(total)) if total > 0 => Some(done.min(total) * 10 / total),
            _ => None,
        };
        if progress.status == self.status && (tenth.is_none() || tenth == self.tenth) {
            return None;
        }
        self.status.clone_from(&progress.status);
        self.tenth = tenth;
        Some(match (progress.completed, progress.total) {
            (Some(done), Some(total)) if total > 0 => format!(
                "{}: {}% of {}",
                crate::text::printable(&progress.status),
                done.min(total) * 100 / total,
                megabytes(total)
            ),
            _ => crate::text::printable(&progress.status),
        })
    }
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1_000_000.0)
}

/// What the CLI does before the first turn with an Ollama model (spec e.7): when Ollama does
/// not have it, asks `ask` whether to pull it (unless `yes`), pulls it with its progress on
/// `out`, and says so; `offline` never pulls (it says how to). An error means the model is
/// not there and was not pulled.
pub async fn offer_ollama_pull(
    llm: &LlmSettings,
    env: &Env,
    yes: bool,
    offline: bool,
    ask: impl FnOnce(&str) -> bool,
    out: &mut dyn Write,
) -> Result<(), ModelError> {
    let client = crate::http_client::client();
    let Some(missing) = missing_ollama_model(&client, llm, env).await else {
        return Ok(());
    };
    let name = &missing.name;
    if offline {
        return Err(ModelError::Config(format!(
            "The Ollama model `{name}` is not pulled, and offline mode downloads nothing: run `ollama pull {name}`, then start oi again."
        )));
    }
    if !yes
        && !ask(&format!(
            "The Ollama model `{name}` is not pulled yet. Download it now with Ollama at {}? (y/n) ",
            missing.host
        ))
    {
        return Err(ModelError::Config(format!(
            "The Ollama model `{name}` is not pulled: run `ollama pull {name}`, or answer y (or pass -y) to let oi pull it."
        )));
    }
    let _ = writeln!(out, "Pulling `{name}` with Ollama…");
    let mut printer = ProgressPrinter::default();
    pull(&client, &missing.host, name, |progress| {
        if let Some(line) = printer.line(progress) {
            let _ = writeln!(out, "  {line}");
        }
    })
    .await?;
    let _ = writeln!(out, "Model `{name}` pulled.");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn progress(status: &str, done: Option<u64>) -> PullProgress {
        PullProgress {
            status: status.into(),
            completed: done,
            total: done.map(|_| 1_000_000),
        }
    }

    #[test]
    fn progress_lines_per_step_and_tenth() {
        let mut printer = ProgressPrinter::default();
        let shown: Vec<String> = [
            progress("pulling manifest", None),
            progress("pulling manifest", None),
            progress("pulling ab", Some(0)),
            progress("pulling ab", Some(50_000)),
            progress("pulling ab", Some(150_000)),
            progress("pulling ab", Some(1_000_000)),
            progress("success", None),
        ]
        .iter()
        .filter_map(|p| printer.line(p))
        .collect();
        assert_eq!(
            shown,
            [
                "pulling manifest",
                "pulling ab: 0% of 1.0 MB",
                "pulling ab: 15% of 1.0 MB",
                "pulling ab: 100% of 1.0 MB",
                "success"
            ]
        );
    }
}
