//! Context-window trimming (spec b.7). Tokens are estimated as characters / 4; when the
//! estimate comes near the budget and the model is in OpenAI's family, they are counted with
//! its real tokenizer (tiktoken: `o200k_base` for gpt-4o/o-series/gpt-4.1+/gpt-5, `cl100k_base`
//! for gpt-4 and gpt-3.5). The tokenizer is loaded only then, since loading it costs time.
//!
//! With `context_window` set, the budget is `context_window - max_tokens - 25` (or the whole
//! window without `max_tokens`). The system message is always kept; the newest messages that
//! fit are kept; the boundary string message is shortened from the middle; older ones go.
//! A tool result is never kept without the call before it.

use oi_core::LlmSettings;
use serde_json::Value;

/// Tokens counted for each message's framing.
const PER_MESSAGE: usize = 4;

/// Estimated tokens of one message.
pub fn estimate_tokens(message: &Value) -> usize {
    PER_MESSAGE + message.to_string().chars().count().div_ceil(4)
}

/// How tokens are counted for one model.
#[derive(Clone, Copy)]
pub enum Counter {
    /// Characters / 4 (models whose tokenizer oi does not ship).
    Estimate,
    /// An OpenAI tokenizer.
    Tiktoken(&'static tiktoken_rs::CoreBPE),
}

impl Counter {
    /// The real tokenizer for OpenAI-family model names, else the estimate. Loads the tokenizer.
    pub fn for_model(model: &str) -> Counter {
        let name = model.rsplit('/').next().unwrap_or(model);
        let newer = [
            "gpt-4o",
            "gpt-4.1",
            "gpt-4.5",
            "gpt-5",
            "o1",
            "o3",
            "o4",
            "chatgpt-4o",
        ];
        if newer.iter().any(|prefix| name.starts_with(prefix)) {
            Counter::Tiktoken(tiktoken_rs::o200k_base_singleton())
        } else if name.starts_with("gpt-4") || name.starts_with("gpt-3.5") {
            Counter::Tiktoken(tiktoken_rs::cl100k_base_singleton())
        } else {
            Counter::Estimate
        }
    }

    /// Tokens of one message: its text content counted by the tokenizer, other parts
    /// (tool calls, images) estimated, plus the per-message framing.
    pub fn count(&self, message: &Value) -> usize {
        match self {
            Counter::Estimate => estimate_tokens(message),
            Counter::Tiktoken(bpe) => match message["content"].as_str() {
                Some(text) if message.get("tool_calls").is_none() => {
                    PER_MESSAGE + bpe.encode_ordinary(text).len()
                }
                _ => estimate_tokens(message),
            },
        }
    }
}

/// Trims `messages` to fit `llm.context_window`; unchanged when no window is known.
pub fn trim_messages(messages: Vec<Value>, llm: &LlmSettings) -> Vec<Value> {
    let Some(window) = llm.context_window else {
        return messages;
    };
    let reserve = llm.max_tokens.map_or(0, |m| m + 25);
    let budget = usize::try_from(window.saturating_sub(reserve)).unwrap_or(usize::MAX);
    let estimate: usize = messages.iter().map(estimate_tokens).sum();
    if estimate.saturating_mul(10) <= budget.saturating_mul(7) {
        return messages;
    }
    let counter = Counter::for_model(&llm.model);
    let count = |m: &Value| counter.count(m);
    let total: usize = messages.iter().map(count).sum();
    if total <= budget {
        return messages;
    }
    let (system, rest): (Vec<Value>, Vec<Value>) = {
        let mut iter = messages.into_iter().peekable();
        let system: Vec<Value> = iter
            .next_if(|m| m["role"] == "system")
            .into_iter()
            .collect();
        (system, iter.collect())
    };
    let mut system = system;
    let mut left = budget;
    if let Some(first) = system.first_mut() {
        let cost = count(first);
        if cost > budget / 2 {
            shorten_content(first, budget / 2);
        }
        left = left.saturating_sub(count(first));
    }
    let mut kept: Vec<Value> = Vec::new();
    for mut message in rest.into_iter().rev() {
        let cost = count(&message);
        if cost <= left {
            left -= cost;
            kept.push(message);
            continue;
        }
        if message["content"].is_string()
            && message.get("tool_calls").is_none()
            && left > PER_MESSAGE + 16
        {
            shorten_content(&mut message, left);
            let mut target = left;
            for _ in 0..8 {
                if count(&message) <= left {
                    break;
                }
                target = target * 3 / 4;
                shorten_content(&mut message, target);
            }
            kept.push(message);
        }
        break;
    }
    kept.reverse();
    // A tool result needs its call: drop results left at the front without one.
    while kept.first().is_some_and(|m| m["role"] == "tool") {
        kept.remove(0);
    }
    system.extend(kept);
    system
}

/// Shortens a string `content` from the middle (`left...right`) to about `tokens` tokens.
fn shorten_content(message: &mut Value, tokens: usize) {
    let Some(text) = message["content"].as_str() else {
        return;
    };
    let keep_chars = tokens.saturating_sub(PER_MESSAGE + 8) * 4;
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= keep_chars {
        return;
    }
    let half = keep_chars / 2;
    let left: String = chars[..half].iter().collect();
    let right: String = chars[chars.len() - half..].iter().collect();
    message["content"] = Value::String(format!("{left}...{right}"));
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn llm(window: Option<u64>) -> LlmSettings {
        LlmSettings {
            context_window: window,
            max_tokens: None,
            ..LlmSettings::default()
        }
    }

    #[test]
    fn untouched_without_window_or_when_it_fits() {
        let messages = vec![
            json!({"role": "system", "content": "s"}),
            json!({"role": "user", "content": "hi"}),
        ];
        assert_eq!(trim_messages(messages.clone(), &llm(None)), messages);
        assert_eq!(trim_messages(messages.clone(), &llm(Some(1000))), messages);
    }

    #[test]
    fn counts_openai_models_with_their_tokenizer() {
        let message = serde_json::json!({"role": "user", "content": "hello world"});
        assert_eq!(
            Counter::for_model("gpt-4o").count(&message),
            PER_MESSAGE + 2
        );
        assert_eq!(
            Counter::for_model("openai/gpt-3.5-turbo").count(&message),
            PER_MESSAGE + 2
        );
        assert!(matches!(
            Counter::for_model("openai/local"),
            Counter::Estimate
        ));
    }

    #[test]
    fn keeps_system_and_newest() {
        let long = "x".repeat(4000);
        let messages = vec![
            json!({"role": "system", "content": "sys"}),
            json!({"role": "user", "content": long}),
            json!({"role": "assistant", "content": "older"}),
            json!({"role": "user", "content": "newest"}),
        ];
        let settings = llm(Some(200));
        let out = trim_messages(messages, &settings);
        assert_eq!(out[0]["content"], "sys");
        assert_eq!(out.last().unwrap()["content"], "newest");
        let counter = Counter::for_model(&settings.model);
        let total: usize = out.iter().map(|m| counter.count(m)).sum();
        assert!(total <= 200, "{total}");
        assert!(out[1]["content"].as_str().unwrap().contains("..."));
    }
}
