//! What a request costs, for `max_budget`: the usage a provider reports is priced from the
//! model table ([`crate::model_table`]); a request to a model whose price oi does not know is
//! refused before anything is sent while `max_budget` is set; and when the server did not
//! report usage, the request is counted from the prompt and the reply with the tokenizer.
//!
//! Models that run on the user's machine (the embedded model, Ollama, LM Studio, …, or any
//! `api_base` on a loopback address) cost nothing.

use futures::StreamExt;
use oi_core::{LlmSettings, ModelDelta, ModelError, ModelRequest, ModelStream, Usage};

use crate::convert::Mode;
use crate::model_table::{Price, price};
use crate::prompt::Prompt;
use crate::provider_table;
use crate::trim::Counter;

/// What one model costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tariff {
    /// It runs on this machine.
    Free,
    /// A published price.
    Priced(Price),
    /// oi does not know.
    Unknown,
}

impl Tariff {
    /// The tariff of the model in `llm`; `embedded` when it is the built-in GGUF model.
    pub fn of(llm: &LlmSettings, embedded: bool) -> Tariff {
        if embedded || provider_table::is_local(&llm.model) || on_loopback(llm.api_base.as_deref())
        {
            return Tariff::Free;
        }
        price(&llm.model).map_or(Tariff::Unknown, Tariff::Priced)
    }

    /// The cost of this many tokens; `None` when the price is not known.
    pub fn cost(&self, prompt_tokens: u64, reply_tokens: u64) -> Option<f64> {
        match self {
            Tariff::Free => Some(0.0),
            Tariff::Priced(price) => Some(price.cost(prompt_tokens, reply_tokens)),
            Tariff::Unknown => None,
        }
    }
}

/// Whether `api_base` names this machine (`localhost`, `127.x.x.x`, `[::1]`).
fn on_loopback(api_base: Option<&str>) -> bool {
    let Some(url) = api_base.and_then(|base| reqwest::Url::parse(base.trim()).ok()) else {
        return false;
    };
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The error for `max_budget` with a model whose price oi does not know.
pub fn unknown_price_error(model: &str) -> ModelError {
    ModelError::Config(format!(
        "max_budget is set, but oi does not know what the model '{model}' costs, so it cannot \
         keep this session under budget; nothing was sent. Unset max_budget (--max_budget, \
         `max_budget:` in the profile) for this model, or use a model with a published price \
         (docs/providers.md lists them)."
    ))
}

/// Refuses a request while `max_budget` is set to a model whose price oi does not know.
pub fn check(llm: &LlmSettings, tariff: Tariff) -> Result<(), ModelError> {
    if llm.max_budget.is_some() && tariff == Tariff::Unknown {
        return Err(unknown_price_error(&llm.model));
    }
    Ok(())
}

/// Whether a request with these settings must be counted when the server reports no usage:
/// `max_budget` is set and the model is not free.
pub fn needs_estimate(llm: &LlmSettings, tariff: Tariff) -> bool {
    llm.max_budget.is_some() && tariff != Tariff::Free
}

/// `inner` with every usage report priced by `tariff`; with `estimate_from` (the request and
/// how its prompt is built), ended by a usage report counted from the prompt and the reply
/// when the server sent none.
pub fn metered(
    inner: ModelStream,
    tariff: Tariff,
    estimate_from: Option<(ModelRequest, Mode)>,
) -> ModelStream {
    Box::pin(async_stream::stream! {
        let mut inner = inner;
        let mut reported = false;
        let mut reply = String::new();
        while let Some(item) = inner.next().await {
            match item {
                Ok(ModelDelta::Usage(usage)) => {
                    reported = true;
                    yield Ok(ModelDelta::Usage(priced(usage, tariff)));
                }
                Ok(delta) => {
                    if estimate_from.is_some() {
                        keep_reply_text(&delta, &mut reply);
                    }
                    yield Ok(delta);
                }
                Err(error) => {
                    yield Err(error);
                    return;
                }
            }
        }
        if let (false, Some((request, mode))) = (reported, estimate_from) {
            let usage = estimate(&request, mode, &reply);
            tracing::info!(
                prompt_tokens = usage.prompt_tokens,
                reply_tokens = usage.reply_tokens,
                "the server reported no usage: counted from the prompt and the reply"
            );
            yield Ok(ModelDelta::Usage(priced(usage, tariff)));
        }
    })
}

/// `usage` with its cost from `tariff` (a cost the provider gave stays).
fn priced(usage: Usage, tariff: Tariff) -> Usage {
    Usage {
        cost: usage
            .cost
            .or_else(|| tariff.cost(usage.prompt_tokens, usage.reply_tokens)),
        ..usage
    }
}

/// Appends the text a delta carries (its message or code) to `reply`.
fn keep_reply_text(delta: &ModelDelta, reply: &mut String) {
    match delta {
        ModelDelta::Message(text) => reply.push_str(text),
        ModelDelta::Code { code, .. } => reply.push_str(code),
        ModelDelta::Usage(_) => {}
    }
}

/// The usage of `request` and `reply`, counted with the model's tokenizer (or estimated).
fn estimate(request: &ModelRequest, mode: Mode, reply: &str) -> Usage {
    let counter = Counter::for_model(&request.llm.model);
    let prompt = Prompt::build(request, mode);
    let prompt_tokens = counter.text(&prompt.system)
        + prompt
            .messages
            .iter()
            .map(|message| counter.count(message))
            .sum::<usize>();
    Usage {
        prompt_tokens: u64::try_from(prompt_tokens).unwrap_or(u64::MAX),
        reply_tokens: u64::try_from(counter.text(reply)).unwrap_or(u64::MAX),
        cost: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llm(model: &str, api_base: Option<&str>) -> LlmSettings {
        LlmSettings {
            model: model.to_owned(),
            api_base: api_base.map(str::to_owned),
            ..LlmSettings::default()
        }
    }

    #[test]
    fn local_models_are_free_and_others_priced_or_unknown() {
        assert_eq!(Tariff::of(&llm("ollama/llama3", None), false), Tariff::Free);
        assert_eq!(Tariff::of(&llm("local", None), true), Tariff::Free);
        assert_eq!(
            Tariff::of(&llm("openai/x", Some("http://127.0.0.1:8080/v1")), false),
            Tariff::Free
        );
        assert_eq!(
            Tariff::of(&llm("openai/x", Some("http://localhost:1234/v1")), false),
            Tariff::Free
        );
        assert!(matches!(
            Tariff::of(&llm("gpt-4o", None), false),
            Tariff::Priced(_)
        ));
        assert_eq!(
            Tariff::of(&llm("openai/x", Some("https://example.com/v1")), false),
            Tariff::Unknown
        );
    }
}
