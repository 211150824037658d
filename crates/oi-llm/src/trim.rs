//! Context-window trimming (spec b.7). Tokens are estimated as characters / 4; when the
//! estimate comes near the budget and the model is in OpenAI's family, they are counted with
//! its real tokenizer (tiktoken: `o200k_base` for gpt-4o/o-series/gpt-4.1+/gpt-5, `cl100k_base`
//! for gpt-4 and gpt-3.5). The tokenizer is loaded only then, since loading it costs time.
//!
//! The budget is `context_window - max_tokens - 25`, with the window and the reply length from
//! the settings, else from the model table ([`crate::model_table`]), else Open Interpreter's
//! 8000-token default; without `max_tokens` the reply gets the model's longest reply, at most a
//! fifth of the window. The system message is always kept; the newest messages that
//! fit are kept; the boundary string message is shortened from the middle; older ones go.
//! A tool result is never kept without the call before it.

use oi_core::LlmSettings;

use crate::capabilities::capabilities;

use crate::prompt::{Part, Prompt, PromptMessage};

/// Tokens counted for each message's framing.
const PER_MESSAGE: usize = 4;

/// Characters of wire framing counted for each message (`{"role":…,"content":…}`).
const MESSAGE_FRAMING: usize = 32;

/// Characters of wire framing counted for a part that is not plain text.
const PART_FRAMING: usize = 40;

fn chars_to_tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

/// Tokens counted for an image: providers charge by its pixels, not by its data URL's length
/// (OpenAI's `"detail": "low"` is 85 tokens; Anthropic's largest is about 1 600).
const IMAGE_TOKENS: usize = 1600;

/// Estimated tokens of one message (characters / 4, plus framing; images by
/// [`IMAGE_TOKENS`]).
pub fn estimate_tokens(message: &PromptMessage) -> usize {
    let chars: usize = message
        .parts
        .iter()
        .map(|part| match part {
            Part::Text(text) => text.chars().count(),
            Part::Image(_) => IMAGE_TOKENS * 4 + PART_FRAMING,
            Part::ToolCall(call) => call.name.len() + call.arguments.chars().count() + PART_FRAMING,
            Part::ToolResult(result) => result.content.chars().count() + PART_FRAMING,
        })
        .sum();
    PER_MESSAGE + chars_to_tokens(chars + MESSAGE_FRAMING)
}

/// Bytes of text the tokenizer reads at once. Its merging slows down with the square of a
/// word's length, so a reply of one endless word is counted in pieces; the sum of the pieces'
/// counts is at least the whole's (a cut never merges), which keeps trimming on the safe side.
const PIECE_BYTES: usize = 4096;

/// `text` in pieces of about [`PIECE_BYTES`], cut after whitespace where there is some.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() <= PIECE_BYTES {
            return Some(std::mem::take(&mut rest));
        }
        let mut end = PIECE_BYTES;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        if let Some(space) = rest[..end].rfind(char::is_whitespace) {
            if space > PIECE_BYTES / 2 {
                end = space;
            }
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
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

    /// Tokens of `text` alone.
    pub fn text(&self, text: &str) -> usize {
        match self {
            Counter::Estimate => chars_to_tokens(text.chars().count() + MESSAGE_FRAMING),
            Counter::Tiktoken(bpe) => pieces(text)
                .map(|piece| bpe.encode_ordinary(piece).len())
                .sum(),
        }
    }

    /// Tokens of one message: a plain text counted by the tokenizer, other parts (tool
    /// calls, images) estimated, plus the per-message framing.
    pub fn count(&self, message: &PromptMessage) -> usize {
        match (self, message.as_text()) {
            (Counter::Tiktoken(_), Some(text)) => PER_MESSAGE + self.text(text),
            _ => estimate_tokens(message),
        }
    }
}

/// Tokens a reply is given room for: `max_tokens` when set (a fifth of the window when it is
/// larger than the window, as the original), else the model's longest reply from the table,
/// at most a fifth of the window (the original's `Llm.load`).
fn reply_room(llm: &LlmSettings, window: u64, table_max_output: u64) -> u64 {
    match llm.max_tokens.filter(|m| *m > 0) {
        Some(max) if max < window => max,
        Some(_) => window / 5,
        None => table_max_output.min(window / 5),
    }
}

/// The tokens a prompt may take for `llm`: its context window (the setting, else the model
/// table's, else 8000 for models oi does not know) less the room for the reply and 25 tokens
/// of margin (spec b.7).
pub fn budget(llm: &LlmSettings) -> usize {
    let caps = capabilities(llm);
    let window = caps.context_window;
    let reserve = reply_room(llm, window, caps.max_output) + 25;
    usize::try_from(window.saturating_sub(reserve)).unwrap_or(usize::MAX)
}

/// Trims `prompt` to fit `llm`'s context window ([`budget`]): always, with the window from the
/// settings or the model table. Takes oi's own notes out of the history first, and counts in
/// `prompt.left_out` the messages left out.
pub fn trim_prompt(prompt: &mut Prompt, llm: &LlmSettings) {
    crate::context_note::strip_from_prompt(&mut prompt.messages);
    let budget = budget(llm);
    let system_estimate =
        PER_MESSAGE + chars_to_tokens(prompt.system.chars().count() + MESSAGE_FRAMING);
    let estimate: usize =
        system_estimate + prompt.messages.iter().map(estimate_tokens).sum::<usize>();
    if estimate.saturating_mul(10) <= budget.saturating_mul(7) {
        return;
    }
    // No text longer than this can fit: shorten it before the tokenizer reads it, so a
    // 16 MiB reply costs what the window costs, not what the reply does.
    let cap = budget.saturating_mul(MAX_CHARS_PER_TOKEN);
    shorten_chars(&mut prompt.system, cap);
    for message in &mut prompt.messages {
        for part in &mut message.parts {
            match part {
                Part::Text(text) => shorten_chars(text, cap),
                Part::ToolResult(result) => shorten_chars(&mut result.content, cap),
                Part::Image(_) | Part::ToolCall(_) => {}
            }
        }
    }
    let counter = Counter::for_model(&llm.model);
    let system_cost = |system: &str| PER_MESSAGE + counter.text(system);
    let left = budget.saturating_sub(system_cost(&prompt.system));
    if fits(&prompt.messages, left, &counter) {
        return;
    }
    if system_cost(&prompt.system) > budget / 2 {
        shorten_text(&mut prompt.system, budget / 2);
    }
    let left = budget.saturating_sub(system_cost(&prompt.system));
    let before = prompt.messages.len();
    let mut kept = newest_that_fit(std::mem::take(&mut prompt.messages), left, &counter);
    // A tool result needs its call: drop results left at the front without one.
    let orphan = |m: &PromptMessage| m.parts.iter().all(|p| matches!(p, Part::ToolResult(_)));
    while kept.first().is_some_and(orphan) {
        kept.remove(0);
    }
    prompt.left_out += before - kept.len();
    prompt.messages = kept;
}

/// The most characters one token is assumed to stand for when shortening before counting
/// (English averages 4; a text denser than this is shortened a little more than needed).
const MAX_CHARS_PER_TOKEN: usize = 8;

/// Whether all `messages` fit in `left` tokens (counted newest first, only until they do not).
fn fits(messages: &[PromptMessage], mut left: usize, counter: &Counter) -> bool {
    for message in messages.iter().rev() {
        let cost = counter.count(message);
        if cost > left {
            return false;
        }
        left -= cost;
    }
    true
}

/// The newest `messages` that fit in `left` tokens, the boundary text message shortened from
/// the middle to fit; counted newest first, and only until the budget is spent.
fn newest_that_fit(
    mut messages: Vec<PromptMessage>,
    mut left: usize,
    counter: &Counter,
) -> Vec<PromptMessage> {
    let mut kept: Vec<PromptMessage> = Vec::new();
    while let Some(mut message) = messages.pop() {
        let cost = counter.count(&message);
        if cost <= left {
            left -= cost;
            kept.push(message);
            continue;
        }
        if message.as_text().is_some() && left > PER_MESSAGE + 16 {
            let mut target = left;
            for _ in 0..8 {
                if let Some(Part::Text(text)) = message.parts.first_mut() {
                    shorten_text(text, target);
                }
                if counter.count(&message) <= left {
                    break;
                }
                target = target * 3 / 4;
            }
            kept.push(message);
        }
        break;
    }
    kept.reverse();
    kept
}

/// Shortens `text` from the middle to at most about `chars` characters.
fn shorten_chars(text: &mut String, chars: usize) {
    if text.len() <= chars {
        return;
    }
    let count = text.chars().count();
    if count <= chars {
        return;
    }
    let half = chars / 2;
    let left: String = text.chars().take(half).collect();
    let right: String = text.chars().skip(count - half).collect();
    *text = format!("{left}...{right}");
}

/// Shortens `text` from the middle (`left...right`) to about `tokens` tokens.
fn shorten_text(text: &mut String, tokens: usize) {
    let keep_chars = tokens.saturating_sub(PER_MESSAGE + 8) * 4;
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= keep_chars {
        return;
    }
    let half = keep_chars / 2;
    let left: String = chars[..half].iter().collect();
    let right: String = chars[chars.len() - half..].iter().collect();
    *text = format!("{left}...{right}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::Mode;
    use crate::prompt::Speaker;

    fn llm(window: Option<u64>) -> LlmSettings {
        LlmSettings {
            context_window: window,
            max_tokens: None,
            ..LlmSettings::default()
        }
    }

    fn prompt(system: &str, messages: Vec<PromptMessage>) -> Prompt {
        Prompt {
            system: system.to_owned(),
            messages,
            tools: Vec::new(),
            mode: Mode::Text,
            left_out: 0,
        }
    }

    #[test]
    fn untouched_without_window_or_when_it_fits() {
        let original = prompt("s", vec![PromptMessage::text(Speaker::User, "hi")]);
        let mut p = original.clone();
        trim_prompt(&mut p, &llm(None));
        assert_eq!(p, original);
        trim_prompt(&mut p, &llm(Some(1000)));
        assert_eq!(p, original);
    }

    #[test]
    fn counts_openai_models_with_their_tokenizer() {
        let message = PromptMessage::text(Speaker::User, "hello world");
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
        let mut p = prompt(
            "sys",
            vec![
                PromptMessage::text(Speaker::User, long),
                PromptMessage::text(Speaker::Assistant, "older"),
                PromptMessage::text(Speaker::User, "newest"),
            ],
        );
        let settings = llm(Some(200));
        trim_prompt(&mut p, &settings);
        assert_eq!(p.system, "sys");
        assert_eq!(
            p.messages.last().and_then(PromptMessage::as_text),
            Some("newest")
        );
        let counter = Counter::for_model(&settings.model);
        let total: usize = PER_MESSAGE
            + counter.text(&p.system)
            + p.messages.iter().map(|m| counter.count(m)).sum::<usize>();
        assert!(total <= 200, "{total}");
        assert!(p.messages[0].as_text().is_some_and(|t| t.contains("...")));
        assert_eq!(
            p.left_out, 0,
            "the boundary message was shortened, not left out"
        );
    }

    #[test]
    fn the_model_table_sets_the_window_when_the_settings_do_not() {
        let gpt4o = LlmSettings {
            model: "gpt-4o".into(),
            ..llm(None)
        };
        assert_eq!(budget(&gpt4o), 128_000 - 16_384 - 25);
        let unknown = LlmSettings {
            model: "openai/my-finetune".into(),
            ..llm(None)
        };
        assert_eq!(budget(&unknown), 8000 - 1000 - 25);
        let too_long = LlmSettings {
            max_tokens: Some(50_000),
            ..llm(Some(10_000))
        };
        assert_eq!(budget(&too_long), 10_000 - 2_000 - 25);
        let huge = "word ".repeat(200_000);
        let mut p = prompt(
            "sys",
            vec![
                PromptMessage::text(Speaker::User, huge),
                PromptMessage::text(Speaker::Assistant, "older"),
                PromptMessage::text(Speaker::User, "newest"),
            ],
        );
        trim_prompt(&mut p, &gpt4o);
        let counter = Counter::for_model("gpt-4o");
        let total: usize = PER_MESSAGE
            + counter.text(&p.system)
            + p.messages.iter().map(|m| counter.count(m)).sum::<usize>();
        assert!(total <= budget(&gpt4o), "{total}");
        assert_eq!(
            p.messages.last().and_then(PromptMessage::as_text),
            Some("newest")
        );
    }

    #[test]
    fn long_texts_are_counted_in_pieces_in_linear_time() {
        let text = "abc def ".repeat(3000);
        let joined: String = pieces(&text).collect();
        assert_eq!(joined, text);
        assert!(pieces(&text).all(|p| p.len() <= PIECE_BYTES));
        let counter = Counter::for_model("gpt-4o");
        let whole = match counter {
            Counter::Tiktoken(bpe) => bpe.encode_ordinary(&text).len(),
            Counter::Estimate => 0,
        };
        assert!(counter.text(&text) >= whole);
        let started = std::time::Instant::now();
        let endless = "x".repeat(1 << 20);
        assert!(counter.text(&endless) > 0);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        let unicode = "é漢字".repeat(5000);
        assert_eq!(pieces(&unicode).collect::<String>(), unicode);
    }
}
